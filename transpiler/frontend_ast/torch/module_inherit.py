"""Module classes that inherit from other module classes: ``super()`` in the reader.

``class TransformerModel(nn.Transformer)`` calls ``super().__init__(d_model=..., ...)`` and reads
``self.encoder`` that torch's constructor made; ``class Deep(Base)`` extends the layers of the
file's own ``Base``; a mixin's ``forward`` calls ``super().forward(x)``. The reader runs the base
class's method on the same module, as Python does: the base is the one after the class that
defines the running method (zero-argument ``super()``) or after the class named
(``super(Cls, self)``), along the reader's single chain of bases (``ClassRef.base``: the file's
own classes and torch.nn's transformer definitions, ``zoo_nn.py``). ``nn.Module`` itself ends
the chain: its ``__init__`` means nothing here, any other method of it is refused by name.

Imports no deep-learning framework.
"""

from __future__ import annotations

from transpiler.frontend_ast.interp.values import ClassRef
from transpiler.frontend_ast.torch.modules import Unsupported
from transpiler.frontend_ast.torch.values import _Super


def _chain(cls):
    while cls is not None:
        yield cls
        cls = cls.base


def super_of(fe, args) -> _Super:
    """``super()`` / ``super(Cls, self)`` in the method the reader runs."""
    if len(args) == 2 and isinstance(args[0], ClassRef):
        return _Super(args[1], args[0].base)
    running = getattr(fe, "running_methods", None)
    if args or not running:
        return _Super()
    obj, fn = running[-1]
    for cls in _chain(getattr(obj, "forward_cls", None) or getattr(obj, "cls", None)):
        if any(stmt is fn for stmt in cls.node.body.body):
            return _Super(obj, cls.base)
    return _Super()


def call_super(fe, sup: _Super, name: str, args, kwargs, node):
    """``super().<name>(...)``: the base's method run on the module."""
    fn = sup.base.method(name) if sup.base is not None and sup.obj is not None else None
    if fn is None and name == "forward" and getattr(sup.obj, "forward_cls", None) is not None:
        return call_leaf(fe, sup.obj, args, kwargs, node)  # (the torch layer's own forward)
    if fn is None:
        if name == "__init__":  # (nn.Module's)
            return None
        raise Unsupported(f"super().{name}() is not supported")
    return fe._run_method(sup.obj, fn, list(args), dict(kwargs), node)


def leaf_base(fe, cls) -> str | None:
    """The torch layer class among the bases of ``cls`` or of its bases (``class
    Linear(Bottle, nn.Linear)``: ``"Linear"``); None for none."""
    for c in _chain(cls):
        for arg in c.node.bases:
            try:
                base = fe._eval(arg.value, fe.globals)
            except Exception:  # noqa: BLE001 - (a base the reader cannot name: not a torch layer)
                continue
            if torch_layer(base):
                return base.path.rsplit(".", 1)[1]
    return None


def torch_layer(base) -> bool:
    """A base class that is a torch layer the reader recognises (``nn.Linear``)."""
    from transpiler.frontend_ast.torch.modules import lookup_module

    path = getattr(base, "path", None)
    return isinstance(path, str) and path.startswith("torch.nn.") and path.count(".") == 2 and \
        lookup_module(path.rsplit(".", 1)[1]) is not None


def leaf_instance(fe, cls, args, kwargs, node):
    """A subclass of a torch layer built (``Linear(300, 100)`` of ``class Linear(Bottle,
    nn.Linear)``): the layer torch's constructor makes of the arguments (the subclass adds no
    constructor), its ``forward`` the subclass's when it has one (``Mod.forward_cls``: a mixin's
    ``super().forward(x)`` there is the layer's). The layer keeps torch's parameter names
    (``weight``, ``bias`` on the module itself). None when ``cls`` derives from no torch layer."""
    name = leaf_base(fe, cls)
    if name is None:
        return None
    if cls.method("__init__") is not None:
        raise Unsupported(f"{cls.node.name.value}: a subclass of nn.{name} with a constructor of its own is "
                          "not translated yet")
    if not args and not kwargs and cls.node is node:  # (a library class nothing builds: _class_models)
        raise Unsupported(f"a subclass of nn.{name} (torch's layer with the forward of "
                          f"{', '.join(c.node.name.value for c in _chain(cls))}): translated inside the models "
                          "that build it, and nothing in this file does")
    mod = fe._construct(name, list(args), dict(kwargs), fe._span(node))
    mod.forward_cls = cls if cls.method("forward") is not None else None
    return mod


def call_leaf(fe, mod, args, kwargs, node):
    """``super().forward(x)`` reaching the torch layer of ``mod`` (see ``leaf_instance``)."""
    calls = fe.__dict__.setdefault("leaf_calls", [])
    calls.append(mod)
    try:
        return fe._call_module(mod, list(args), dict(kwargs), fe._span(node))
    finally:
        calls.pop()


def is_mixin(fe, cls) -> bool:
    """A module class that is a mixin, not a module of its own: no constructor, a ``forward``
    calling ``super().forward(...)`` where nothing after it in its bases defines one (nn.Module
    has none: torch raises NotImplementedError calling it alone), and another class of the file
    deriving from it (snli's ``Bottle``, used as ``class Linear(Bottle, nn.Linear)``). Its
    forward runs as part of the classes deriving from it (``leaf_instance``)."""
    from transpiler.cst_fast import nodes_of
    import libcst as cst

    if not cls.is_module or cls.method("__init__") is not None or leaf_base(fe, cls) is not None:
        return False
    forward = cls.method("forward")
    owner = next((c for c in _chain(cls) if any(s is forward for s in c.node.body.body)), None)
    if forward is None or owner is None or (owner.base is not None and owner.base.method("forward") is not None):
        return False
    calls_super = any(isinstance(c.func, cst.Attribute) and c.func.attr.value == "forward"
                      and isinstance(c.func.value, cst.Call) and isinstance(c.func.value.func, cst.Name)
                      and c.func.value.func.value == "super" for c in nodes_of(forward, cst.Call))
    name = cls.node.name.value
    derived = any(isinstance(b.value, cst.Name) and b.value.value == name
                  for other in fe.classes.values() if other is not cls for b in other.node.bases)
    return calls_super and derived


def skip_mixin(fe, cls) -> bool:
    """A mixin (``is_mixin``) among the classes tried as models: recorded (the printer prints
    nothing for it) and reported as a warning; True when ``cls`` is one."""
    if not is_mixin(fe, cls):
        return False
    name = cls.node.name.value
    fe.program.from_torch.mixin_classes.append(name)
    span = fe._span(cls.node)
    fe.program.warn(span, f"{name} is a mixin (its forward calls super().forward, which nn.Module does not "
                    "define): not a model of its own; the classes deriving from it carry its forward",
                    fe.source_line(span))
    return True
