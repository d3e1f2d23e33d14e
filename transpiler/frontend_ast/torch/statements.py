"""The torch model reader's statements: blocks, assignments, static loops and ifs, and
`if self.training:` branches read as training_select nodes."""

from __future__ import annotations

import libcst as cst

import libcst as cst

from transpiler.frontend_ast.keras.frontend import FrontendError
from transpiler.frontend_ast.torch import const_arrays, lazy_inputs, try_statements
from transpiler.frontend_ast.torch.modules import Unsupported
from transpiler.frontend_ast.interp import BatchDim, Env, FunctionRef, Return, Unknown
from transpiler.ir.graph import Span
from transpiler.frontend_ast.torch.support import _training_test, _code, _is_init_code
from transpiler.frontend_ast.torch.values import Mod, Tensor, RNNStates, Shape, _MaxResult, _Return, _AUG
from transpiler.ir.code_literals import bare_argument


class TorchStatements:
    """Mixin of TorchFrontend: statements."""

    # -- statements -------------------------------------------------------------------
    def _exec_block(self, body, env: Env) -> None:
        body = list(body)
        for i, stmt in enumerate(body):
            if isinstance(stmt, cst.If) and _training_test(stmt.test) is not None:
                self._training_if(stmt, body[i + 1:], env)
                return
            self._exec_stmt(stmt, env)

    # -- ``if self.training:`` ----------------------------------------------------------
    def _training_if(self, stmt: cst.If, rest: list, env: Env) -> None:
        """``if self.training: A else: B`` then ``rest``: both branches are read; the values
        they leave (or return) differently become ``training_select`` nodes. A branch that
        returns while the other falls through runs ``rest`` in the other one."""
        self.cur_span = span = self._span(stmt)
        if self.graph is None:
            raise Unsupported("self.training outside forward")
        orelse = [] if stmt.orelse is None else \
            [stmt.orelse] if isinstance(stmt.orelse, cst.If) else list(stmt.orelse.body.body)
        branches = [list(stmt.body.body), orelse]
        if not _training_test(stmt.test):
            branches.reverse()  # ``if not self.training:``
        (t_env, t_ret), (i_env, i_ret) = (self._run_branch(b, env) for b in branches)
        if (t_ret is None) != (i_ret is None):
            if t_ret is None:
                t_env, t_ret = self._run_branch(rest, t_env)
            else:
                i_env, i_ret = self._run_branch(rest, i_env)
            if t_ret is None or i_ret is None:
                raise Unsupported("`if self.training:` returns in one branch only, and the other does not "
                                  "return after it in the same block")
        if t_ret is not None:
            raise _Return(self._join_training(t_ret[0], i_ret[0], span, "select"))
        for name in set(t_env.vars) | set(i_env.vars):
            if name in t_env.vars and name in i_env.vars:
                env.vars[name] = self._join_training(t_env.vars[name], i_env.vars[name], span, name)
            else:  # bound in one branch only: unbound after the if
                env.vars.pop(name, None)
        self._exec_block(rest, env)

    def _run_branch(self, body: list, env: Env) -> tuple[Env, tuple | None]:
        """Run ``body`` in a copy of ``env``: the copy and ``(value,)`` if it returned."""
        fork = Env(env.parent)
        fork.vars = dict(env.vars)
        try:
            self._exec_block(body, fork)
        except _Return as ret:
            return fork, (ret.value,)
        return fork, None

    def _join_training(self, train, infer, span: Span, hint: str):
        """One value for both modes: a ``training_select`` of two different tensors, tuples
        joined element by element; other values must agree."""
        if train is infer:
            return train
        if isinstance(train, Tensor) and isinstance(infer, Tensor):
            if train.value is infer.value:
                return train
            return self._add("training_select", [train.value, infer.value], {}, span, hint)
        if isinstance(train, (tuple, list)) and type(train) is type(infer) and len(train) == len(infer):
            return type(train)(self._join_training(a, b, span, hint) for a, b in zip(train, infer))
        if not isinstance(train, (Tensor, Mod, Unknown)) and not isinstance(infer, (Tensor, Mod, Unknown)):
            try:
                if type(train) is type(infer) and train == infer:
                    return train
            except Exception:  # noqa: BLE001  (a value without a usable ==)
                pass
        raise Unsupported(f"{hint!r} differs between training and inference and is not a tensor "
                          "(only tensors can be selected by self.training)")

    def _freezes_bias_hh(self, stmt, env: Env) -> bool:
        """``self.lstm.bias_hh_l0.requires_grad_(False)``: the recurrent layer keeps one bias, as
        Keras' does (torch's second stays at its initial zeros); recorded for the training
        reader (the two biases no longer step together)."""
        if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and
                isinstance(stmt.body[0], cst.Expr) and isinstance(stmt.body[0].value, cst.Call)):
            return False
        call = stmt.body[0].value
        f = call.func
        if not (isinstance(f, cst.Attribute) and f.attr.value == "requires_grad_" and len(call.args) == 1 and
                _code(bare_argument(call.args[0].value)) == "False" and isinstance(f.value, cst.Attribute) and
                f.value.attr.value.startswith("bias_hh_l")):
            return False
        try:
            mod = self._eval(f.value.value, env)
        except (Unsupported, FrontendError, TypeError, KeyError, AttributeError):
            return False
        if not isinstance(mod, Mod) or mod.kind != "leaf":
            return False
        self.frozen_bias_hh.add(mod)
        return True

    def _exec_stmt(self, stmt, env: Env) -> None:
        self.cur_span = self._span(stmt)
        if self.init_calls is None and self._freezes_bias_hh(stmt, env):
            return
        if self.init_calls is None and _is_init_code(stmt):
            # a model's own weight initialisation: it only changes the initial weights (a
            # converted checkpoint is unaffected). What it draws for the module's own
            # nn.Parameters is read (their Keras initializers reproduce it); for anything
            # else Keras' initialisers are used instead
            if not self._read_inits(stmt, env):
                self.program.warn(self.cur_span, "custom weight initialisation or freezing is not translated "
                                                 "(Keras' default initialisers are used, every weight trains)",
                                  self.source_line(self.cur_span))
            return
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                self._exec_small(small, env)
        elif isinstance(stmt, cst.If):
            cond = self._eval(stmt.test, env)
            if isinstance(cond, (Unknown, Tensor)):
                raise Unsupported(f"the condition {_code(stmt.test)!r} is not known statically "
                                  "(data-dependent control flow needs a keras.Model subclass)")
            if cond:
                self._exec_block(stmt.body.body, env)
            elif stmt.orelse is not None:
                if isinstance(stmt.orelse, cst.If):
                    self._exec_stmt(stmt.orelse, env)
                else:
                    self._exec_block(stmt.orelse.body.body, env)
        elif isinstance(stmt, cst.For):
            items = self._eval(stmt.iter, env)
            items = self._iterate(items, stmt.iter)
            for item in items:
                self._assign(stmt.target, item, env)
                self._exec_block(stmt.body.body, env)
        elif isinstance(stmt, cst.With):
            self._exec_block(stmt.body.body, env)
        elif isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            env.vars[stmt.name.value] = FunctionRef(stmt) if isinstance(stmt, cst.FunctionDef) else Unknown()
        elif isinstance(stmt, cst.Try):
            try_statements.exec_try(self, stmt, env)
        else:
            raise Unsupported(f"{type(stmt).__name__} statements are not supported here")

    def _exec_small(self, small, env: Env) -> None:
        if isinstance(small, cst.Assign):
            value = self._eval(small.value, env)
            for t in small.targets:
                self._assign(t.target, value, env)
        elif isinstance(small, cst.AnnAssign):
            if small.value is not None:
                self._assign(small.target, self._eval(small.value, env), env)
        elif isinstance(small, cst.AugAssign):
            op = _AUG.get(type(small.operator))
            if op is None:
                raise Unsupported(f"augmented assignment {_code(small)!r}")
            left = self._eval(small.target, env)
            right = self._eval(small.value, env)
            self._assign(small.target, self._binop(op, left, right, small), env)
        elif isinstance(small, cst.Return):
            raise _Return(None if small.value is None else self._eval(small.value, env))
        elif isinstance(small, cst.Expr):
            if isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString)):
                return
            self._eval(small.value, env)
        elif isinstance(small, (cst.Pass,)):
            return
        elif isinstance(small, (cst.Import, cst.ImportFrom)):
            self._exec_import(small, env)
        elif isinstance(small, cst.Assert):
            return
        elif isinstance(small, cst.Raise):
            raise try_statements.raised(small)
        else:
            raise Unsupported(f"{type(small).__name__} is not supported here")

    def _assign(self, target, value, env: Env) -> None:
        if isinstance(target, cst.Name):
            env.vars[target.value] = value
            # the caller's name wins over one a submodule's forward gave it (``epsilon =
            # self.noise(z)`` whose forward said ``inputs = torch.randn_like(inputs)``)
            if isinstance(value, Tensor) and (value.value.var is None or
                                              self.var_depth.get(value.value, 0) > self.depth):
                value.value.var = target.value
                self.var_depth[value.value] = self.depth
        elif isinstance(target, (cst.Tuple, cst.List)):
            if isinstance(value, RNNStates):
                value = value.values
            if isinstance(value, Shape):  # b, c, h, w = x.size()
                value = (BatchDim(), *(lazy_inputs.axis_size(value.value, i) for i in range(1, len(value.value.shape))))
            if isinstance(value, _MaxResult):  # values, _ = torch.max(x, dim=1)
                value = (value.values, Unknown("the indices of torch.max are not translated"))
            if not isinstance(value, (tuple, list)) or len(value) != len(target.elements):
                raise Unsupported(f"cannot unpack into {_code(target)!r}")
            for el, v in zip(target.elements, value):
                self._assign(el.value, v, env)
        elif isinstance(target, cst.Attribute):
            obj = self._eval(target.value, env)
            if isinstance(obj, Mod) and obj.kind == "user":
                obj.attrs[target.attr.value] = value
            else:
                raise Unsupported(f"cannot assign to {_code(target)!r}")
        elif isinstance(target, cst.Subscript):
            base = self._eval(target.value, env)
            arr = const_arrays.as_const(base)
            if arr is None:
                raise Unsupported(f"item assignment {_code(target)!r} is not supported")
            const_arrays.set_items(arr, self._subscript_key(target, env), value)  # (a constant of __init__)
            if arr is not base and isinstance(target.value, cst.Name):
                env.vars[target.value.value] = arr
        else:
            raise Unsupported(f"cannot assign to {_code(target)!r}")

    def _iterate(self, items, node):
        if isinstance(items, Mod) and items.kind in ("sequential", "module_list"):
            return list(items.items)
        if isinstance(items, Mod) and items.kind == "module_dict":
            return list(items.items)
        if isinstance(items, (Unknown, Tensor)) or not hasattr(items, "__iter__"):
            raise Unsupported(f"cannot iterate over {_code(node)!r} statically")
        return list(items)
