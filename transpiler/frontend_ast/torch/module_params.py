"""The torch model reader's module parameters and buffers: register_buffer/parameter, weight
initialisation code (nn.init), isinstance on modules, parameters used as tensors."""

from __future__ import annotations

from transpiler.frontend_ast.torch import const_arrays
from transpiler.frontend_ast.torch import modules as tm
from transpiler.frontend_ast.torch import params as torch_params
from transpiler.frontend_ast.torch.params import TensorData
from transpiler.frontend_ast.keras.frontend import FrontendError
from transpiler.frontend_ast.torch.modules import Unsupported
from transpiler.frontend_ast.interp import ClassRef, Env
from transpiler.ir.graph import Span
from transpiler.frontend_ast.torch.values import (
    Ref, Mod, LayerToken, ParamObj, Tensor, LayerParam, _SAFE_BUILTINS, torch_api)


class TorchModuleParams:
    """Mixin of TorchFrontend: module parameters and initialisation code."""

    # -- a module's own parameters and buffers ---------------------------------------------
    def _register(self, obj: Mod, method: str, args, kwargs, node):
        """``self.register_buffer(name, tensor)`` (a non-trainable weight) and
        ``self.register_parameter(name, param_or_None)``."""
        name = args[0] if args else kwargs.get("name")
        key = "tensor" if method == "register_buffer" else "param"
        value = args[1] if len(args) > 1 else kwargs.get(key)
        if not isinstance(name, str):
            raise Unsupported(f"{method}: the name must be known statically")
        if method == "register_parameter" or value is None:
            if value is not None and not isinstance(value, ParamObj):
                raise Unsupported(f"{method}({name!r}, ...): not an nn.Parameter")
            obj.attrs[name] = value
            return None
        persistent = args[2] if len(args) > 2 else kwargs.get("persistent", True)
        if persistent is not True:
            raise Unsupported(f"register_buffer({name!r}, persistent=False): a buffer outside the state_dict "
                              "has no Keras counterpart (every Keras weight is saved)")
        if isinstance(value, const_arrays.ConstArray):  # (computed in __init__: its expression, const_arrays.py)
            obj.attrs[name] = ParamObj(value.shape, self._span(node), init=value.init(), trainable=False, buffer=True)
            return None
        if not isinstance(value, TensorData):
            raise Unsupported(f"register_buffer({name!r}, ...): the tensor's shape is not known statically")
        obj.attrs[name] = ParamObj(value.shape, self._span(node), init=value.init, trainable=False, buffer=True)
        return None

    def _read_inits(self, stmt, env: Env) -> bool:
        """Run an initialisation statement (``self.reset_parameters()``), recording what its
        ``nn.init`` calls draw for the module's own parameters. False when it did anything
        else (initialised a submodule's weights, froze a weight, ...), which is not translated."""
        self.init_calls, self._init_running = [], set()
        ok = False
        try:
            self._exec_stmt(stmt, env)
            ok = not self.init_calls
        except (Unsupported, FrontendError, TypeError, KeyError, ValueError, IndexError, AttributeError):
            pass  # code the interpreter cannot follow: not translated, as before
        finally:
            self.init_calls = None
            for name in self._init_running:
                self.init_functions[name] = self.init_functions.get(name, True) and ok
        return ok

    def _nn_init(self, fn: str, args, kwargs):
        target = args[0] if args else kwargs.get("tensor")
        if self.init_calls is None:
            # (code the reader did not recognise as initialisation, ``self._initialize_weights()``
            # over ``import torch.nn.init as init``: it only draws initial weights; reported as the
            # recognised code Keras cannot reproduce is)
            self.program.warn(self.cur_span, f"nn.init.{fn}: custom weight initialisation is not translated "
                                             "(Keras' default initialisers are used)", self.source_line(self.cur_span))
            return target
        if isinstance(target, ParamObj):
            target.init = torch_params.init_of(fn, target.shape, list(args[1:]), dict(kwargs))
            if target.init is None:
                self.init_calls.append(fn)
        elif isinstance(target, LayerParam):
            self._layer_init(target, fn, list(args[1:]), {k: v for k, v in kwargs.items() if k != "tensor"})
        else:
            self.init_calls.append(fn)
        return target

    def _layer_init(self, target: LayerParam, fn: str, args: list, kwargs: dict) -> None:
        """What ``nn.init.<fn>`` draws for a leaf module's weight (its Keras initializer);
        one Keras cannot draw the same way is reported with the rest of the init code."""
        init = None if target.part else torch_params.init_of(fn, target.shape, args, kwargs)
        if init is None or target.name not in tm.KERAS_PARAM.get(target.mod.layer.op, {}):
            self.init_calls.append(fn)
        else:
            target.mod.inits[target.name] = init

    #: in-place tensor methods of initialisation code → the ``nn.init`` function drawing the same
    _INPLACE_INIT = {"normal_": "normal_", "uniform_": "uniform_", "fill_": "constant_", "zero_": "zeros_"}

    def _param_method(self, target: LayerParam, name: str, args, kwargs):
        """``m.weight.data.normal_(0.0, 0.02)``, ``m.bias.data.fill_(0)``, ``.zero_()``."""
        fn = self._INPLACE_INIT.get(name)
        if fn is None or self.init_calls is None:
            raise Unsupported(f"{target.name}.{name}(): not translated")
        kwargs = {{"value": "val", "from": "a", "to": "b"}.get(k, k): v for k, v in kwargs.items()}
        self._layer_init(target, fn, list(args), kwargs)
        return target

    def _isinstance(self, obj, classinfo=None, *rest):
        """``isinstance(m, nn.Conv2d)`` / ``isinstance(m, (nn.Conv2d, MyBlock))`` on modules;
        builtin types on plain values."""
        if rest or classinfo is None:
            raise Unsupported("isinstance takes an object and a class")
        infos = classinfo if isinstance(classinfo, tuple) else (classinfo,)
        for info in infos:
            if isinstance(info, type) and info in _SAFE_BUILTINS.values():
                if isinstance(obj, info) and not isinstance(obj, (Mod, Tensor)):
                    return True
                continue
            if not isinstance(obj, Mod):
                if isinstance(info, (Ref, ClassRef)):
                    continue  # a number or string is no module
                raise Unsupported("isinstance: the object or the class is not known statically")
            if isinstance(info, Ref):
                api = torch_api(info.path) or info.path
                short = api.split(".")[-1]
                if obj.kind != "user" and short == (obj.cls_name or ""):
                    return True
                if short == "Module" and api.startswith(("nn.", "torch.nn.")):
                    return True
            elif isinstance(info, ClassRef):
                cls = obj.cls if obj.kind == "user" else None
                while cls is not None:
                    if cls.node is info.node:
                        return True
                    cls = cls.base
            else:
                raise Unsupported("isinstance: the class is not known statically")
        return False

    def _variable(self, p: ParamObj, node, owner: "Mod | None" = None) -> Tensor:
        """A module's own parameter or buffer read in ``forward``: a ``variable`` node (one
        per read; the reads of one parameter share its Keras layer, named after its key).
        ``owner``: a module that is nothing but this weight (its forward returns it, the
        torch side of Keras' ``ModelWeight``): the layer is named after the module, as the
        Keras weight it stands for was (not ``<module>_<key>``)."""
        key = owner.path if owner is not None and owner.path else p.path
        name = (key or "weight").replace(".", "_")
        span = self._span(node)
        if p.init is None and f"init:{name}" not in self.warned:
            self.warned.add(f"init:{name}")
            self.program.warn(p.span, f"{p.path}: torch's initial value is not reproduced (Keras starts it at "
                                      "zeros; a converted checkpoint is unaffected)")
        out = self._add("variable", [], {"shape": tuple(p.shape), "trainable": p.trainable}, span, name, name=name)
        n = out.value.producer
        n.layer = self.layer_tokens.setdefault(name, LayerToken(p.span))
        n.from_torch.path = p.path
        n.from_torch.init = p.init
        n.from_torch.buffer = p.buffer
        n.source_name = name
        return out

    def _linear(self, args, kwargs, span: Span):
        """``F.linear(x, self.weight, self.bias)`` over a module's own parameters: a Dense
        layer holding them (named after the module; its checkpoint keys are the parameters')."""
        x = args[0] if args else kwargs.get("input")
        w = args[1] if len(args) > 1 else kwargs.get("weight")
        b = args[2] if len(args) > 2 else kwargs.get("bias")
        params = [t.value.producer for t in (w, b) if isinstance(t, Tensor)]
        if not isinstance(x, Tensor) or not isinstance(w, Tensor) or not (b is None or isinstance(b, Tensor)) or \
                any(p is None or p.op != "variable" for p in params):
            raise Unsupported("F.linear: only the module's own nn.Parameters as weight and bias are translated "
                              "(a computed weight is not)")
        wp, bp = params[0], (params[1] if b is not None else None)
        shape = tuple(wp.attrs["shape"])
        if len(shape) != 2 or x.value.shape[-1] != shape[1]:
            raise FrontendError(f"F.linear: weight {shape} on a tensor of shape {x.value.shape}", span)
        if bp is not None and tuple(bp.attrs["shape"]) != (shape[0],):
            raise FrontendError(f"F.linear: bias {tuple(bp.attrs['shape'])} for a weight {shape}", span)
        if not all(p.attrs["trainable"] for p in params):
            raise Unsupported("F.linear with a frozen weight or bias: a Keras Dense trains both")
        path = wp.from_torch.path
        owner = path.rsplit(".", 1)[0] if "." in path else ""
        name = self.linear_names.get(path)
        if name is None:
            name = self.linear_names[path] = self._fresh(owner.replace(".", "_") or "linear")
        out = self._add("dense", [x.value], {"units": shape[0], "use_bias": bp is not None}, span, "dense", name=name)
        n = out.value.producer
        n.layer = self.layer_tokens.setdefault(name, LayerToken(wp.layer.span))
        n.from_torch.path = owner
        n.from_torch.keys = {"weight": path, **({"bias": bp.from_torch.path} if bp is not None else {})}
        n.source_name = name
        inits = {"kernel": wp.from_torch.init, "bias": bp.from_torch.init if bp else None}
        if not torch_params.is_linear_default(inits["kernel"], inits["bias"], shape[1], bp is not None):
            # drawn as torch drew them (the kernel's bounds do not depend on its layout)
            n.from_torch.param_inits = inits
        return out
