"""The Keras reader's statements: blocks, assignments, imports, static loops and ifs, and
call(..., training) branches read as training_select nodes."""

from __future__ import annotations

from typing import Any
import libcst as cst

import libcst as cst

from transpiler.frontend_ast.keras.layers import Unsupported
from transpiler.frontend_ast.interp import AUGMENTED, Break, Continue, Env, FunctionRef, Return, Unknown
from transpiler.frontend_ast.keras.support import _names_in, _returns
from transpiler.frontend_ast.keras.values import (
    FrontendError, ModuleRef, ArrayVal, LayerObj, TensorVal, ModelObj, UserObj, WeightObj,
    TRAINING_MODE, TapeObj, DatasetObj, resolve_api)

_LAYERS_ITEM = "a layer of a model's .layers"  # (for layer in model.layers: the loop item)


class KerasStatements:
    """Mixin of KerasFrontend: statements."""

    # -- statements ---------------------------------------------------------------
    def _exec_block(self, body, env: Env, top: bool = False) -> None:
        for i, stmt in enumerate(body):
            if not top:
                if self.self_stack and isinstance(stmt, cst.If):
                    sense = self._mode_test(stmt.test, env)
                    known = getattr(self, "_known_modes", None)
                    if sense is not None and known:
                        # inside a branch on the mode (``elif training:`` after ``if not
                        # training:``): the mode is known there, the test decided
                        self._exec_block(_branch(stmt, taken=known[-1] == sense), env)
                        continue
                    if sense is not None:
                        if self._exec_mode_if(stmt, sense, env, body[i + 1:]):
                            return
                        continue
                self._exec_stmt(stmt, env, top)
                continue
            mark = len(self.models)
            try:
                self._exec_stmt(stmt, env, top)
            except (Unsupported, FrontendError) as exc:
                # a module-level statement that cannot be read: report it, drop the
                # models it touched (half-built), and go on with the rest of the file
                del self.models[mark:]
                touched = {id(v) for k, v in env.vars.items() if isinstance(v, ModelObj)
                           and k in _names_in(stmt)}
                self.models = [m for m in self.models if id(m[0]) not in touched]
                span = getattr(exc, "span", None) or self._span(stmt)
                self.program.stub(span, str(exc), self._line(span))

    def _exec_stmt(self, stmt: cst.CSTNode, env: Env, top: bool = False) -> None:
        self.stmt_stack.append(self.source_file.sid(stmt))
        self._stmt_nodes.append(stmt)
        try:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    self._exec_small(small, env, stmt)
            elif isinstance(stmt, cst.FunctionDef):
                env.set(stmt.name.value, FunctionRef(stmt, env))
                if top:
                    self.function_defs[stmt.name.value] = stmt
            elif isinstance(stmt, cst.ClassDef):
                env.set(stmt.name.value, self._class_ref(stmt, env))
            elif isinstance(stmt, cst.If):
                if top and self._is_main_guard(stmt):
                    return
                self._exec_if(stmt, env)
            elif isinstance(stmt, cst.For):
                self._exec_for(stmt, env)
            elif isinstance(stmt, cst.While):
                if self._constructs_layers(stmt.body, env):
                    raise self._err(stmt, "a while loop that builds layers has no static trip count")
            elif isinstance(stmt, cst.With):
                for item in stmt.items:
                    value = self._eval(item.item, env)
                    if isinstance(value, TapeObj):
                        self._record_loop("tape", stmt, item.item, value=None)
                    if item.asname is not None and isinstance(item.asname.name, cst.Name):
                        env.set(item.asname.name.value, value)
                self._exec_block(stmt.body.body, env)
            elif isinstance(stmt, cst.Try):
                self._exec_block(stmt.body.body, env)
        finally:
            self.stmt_stack.pop()
            self._stmt_nodes.pop()

    # -- call(..., training): branches on the mode --------------------------------------
    def _mode_test(self, test: cst.BaseExpression, env: Env) -> bool | None:
        """For an ``if`` test in call(): True when it holds exactly while training, False when
        exactly at inference, None when it does not read the mode (``training`` bound to a
        Python bool by the caller is an ordinary static test)."""
        if isinstance(test, cst.Name):
            try:
                return True if env.lookup(test.value) is TRAINING_MODE else None
            except KeyError:
                return None
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            inner = self._mode_test(test.expression, env)
            return None if inner is None else not inner
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
            target = test.comparisons[0]
            inner = self._mode_test(test.left, env)
            if inner is None or not isinstance(target.comparator, cst.Name) or \
                    target.comparator.value not in ("True", "False"):
                return None
            if not isinstance(target.operator, (cst.Is, cst.IsNot, cst.Equal, cst.NotEqual)):
                return None
            positive = isinstance(target.operator, (cst.Is, cst.Equal)) == (target.comparator.value == "True")
            return inner if positive else not inner
        if isinstance(test, cst.BooleanOperation):
            return self._mode_test_joined(test, env)
        return None

    def _mode_test_joined(self, test: cst.BooleanOperation, env: Env) -> bool | None:
        """``not training or self.regular_training`` with the other side a static bool that
        does not decide the test (False under ``or``, True under ``and``): the mode test alone.
        (A deciding side, or one only the running program knows: None, as before.)"""
        neutral = isinstance(test.operator, cst.Or) is False  # (``or False`` / ``and True``)
        for mode_side, other in ((test.left, test.right), (test.right, test.left)):
            inner = self._mode_test(mode_side, env)
            if inner is None or self._mode_test(other, env) is not None:
                continue
            try:
                value = self._eval(other, env)
            except Unsupported:
                return None
            return inner if isinstance(value, bool) and value is neutral else None
        return None

    def _exec_mode_if(self, stmt: cst.If, sense: bool, env: Env, rest: list) -> bool:
        """``if training: ...`` in call(): both branches run on the same tensors; every variable
        they bind differently (or the value they return) becomes a ``training_select`` of the
        two. ``if training: return a`` with no else takes the rest of the block as the
        inference branch. Returns True when the rest of the block was consumed."""
        body = list(stmt.body.body)
        if isinstance(stmt.orelse, cst.If):
            other = [stmt.orelse]
        elif isinstance(stmt.orelse, cst.Else):
            other = list(stmt.orelse.body.body)
        else:
            other = []
        consumed = False
        if stmt.orelse is None and body and _returns(body[-1]):
            other, consumed = list(rest), True
        train, infer = (body, other) if sense else (other, body)
        self.stmt_stack.append(self.source_file.sid(stmt))
        self._stmt_nodes.append(stmt)
        try:
            before = dict(env.vars)
            names = dict(self.uids)
            trained = self._run_branch(train, env, mode=True)
            # Keras traces call() with training=None: only the inference branch takes op names
            self.uids.clear()
            self.uids.update(names)
            env.vars = dict(before)
            inferred = self._run_branch(infer, env, mode=False)
            env.vars = dict(before)
            if trained[0] != inferred[0]:
                raise self._err(stmt.test, "one branch on `training` returns and the other does not")
            if trained[0] == "return":
                raise Return(self._join_modes(trained[1], inferred[1], stmt, "result"))
            for name in trained[1]:
                if name in inferred[1]:
                    t, i = trained[1][name], inferred[1][name]
                    env.vars[name] = t if t is i else self._join_modes(t, i, stmt, name)
        finally:
            self.stmt_stack.pop()
            self._stmt_nodes.pop()
        return consumed

    def _run_branch(self, stmts: list, env: Env, mode: bool) -> tuple[str, Any]:
        """Run one branch of an ``if`` on the mode, which is ``mode`` (training) there."""
        if not hasattr(self, "_known_modes"):
            self._known_modes: list[bool] = []
        self._known_modes.append(mode)
        try:
            self._exec_block(stmts, env)
        except Return as ret:
            return "return", ret.value
        finally:
            self._known_modes.pop()
        return "vars", dict(env.vars)

    def _join_modes(self, train: Any, infer: Any, stmt: cst.CSTNode, name: str | None) -> Any:
        if train is infer:
            return train
        if isinstance(train, (tuple, list)) and isinstance(infer, (tuple, list)) and len(train) == len(infer):
            return type(train)(self._join_modes(t, i, stmt, name) for t, i in zip(train, infer))
        numbers = (TensorVal, WeightObj, int, float)
        if isinstance(train, numbers) and isinstance(infer, numbers) and not isinstance(train, bool) \
                and not isinstance(infer, bool) and isinstance(train, (TensorVal, WeightObj)) == isinstance(
                    infer, (TensorVal, WeightObj)):
            def select(b):
                t, i = (v.value if isinstance(v, TensorVal) else self._as_tensor(v, stmt).value
                        if isinstance(v, WeightObj) else b.constant(v) for v in (train, infer))
                return b.add("training_select", [t, i], {}, name or "select")[0]

            out = self._tensor_math(select, self._span(stmt.test), "if training")
            if name not in (None, "result") and out.value.var is None:
                out.value.var = name
            return out
        if not isinstance(train, (TensorVal, WeightObj, LayerObj, ModelObj)) and \
                not isinstance(infer, (TensorVal, WeightObj, LayerObj, ModelObj)) and train == infer:
            return train
        raise self._err(stmt.test, f"the branches on `training` give {name!r} values of different kinds; "
                                   "not translated yet")

    def _exec_if(self, stmt: cst.If, env: Env) -> None:
        test = self._eval(stmt.test, env)
        if isinstance(test, (Unknown, TensorVal, ModelObj, LayerObj)) or test is ...:
            if self._constructs_layers(stmt, env):
                raise self._err(stmt.test, "a condition around layer code cannot be decided statically")
            return
        if test:
            self._exec_block(stmt.body.body, env)
        elif isinstance(stmt.orelse, cst.If):
            self._exec_if(stmt.orelse, env)
        elif isinstance(stmt.orelse, cst.Else):
            self._exec_block(stmt.orelse.body.body, env)

    def _read_loop_once(self, stmt: cst.For, item, env: Env) -> None:
        """A loop over run-time data read once, abstractly, with ``item`` as its target (for
        the training statements in it); what it binds or changes is run-time data after it."""
        self._assign(stmt.target, item, env, naming=False)
        try:
            self._exec_block(stmt.body.body, env)
        except (Break, Continue):
            pass
        _forget_loop_data(stmt, env)

    def _exec_for(self, stmt: cst.For, env: Env) -> None:
        iterable = self._eval(stmt.iter, env)
        if isinstance(iterable, ArrayVal) and iterable.values is not None:
            iterable = list(iterable.values)  # (np.linspace of static numbers)
        if isinstance(iterable, Unknown) or not hasattr(iterable, "__iter__") or isinstance(iterable, str):
            if self._constructs_layers(stmt.body, env):
                raise self._err(stmt.iter, "a loop that builds layers needs a static trip count")
            # a loop over run-time data (batches): read its body once, abstractly, for the
            # training statements in it
            item = Unknown(_LAYERS_ITEM if isinstance(stmt.iter, cst.Attribute) and stmt.iter.attr.value == "layers"
                           else "loop item")
            if isinstance(iterable, DatasetObj) and iterable.elements is not None and iterable.batch is not None:
                els = iterable.elements
                batched = tuple(ArrayVal("batch", (None, *e.shape), e.dtype)
                                for e in (els if isinstance(els, tuple) else (els,)))
                item = batched if isinstance(els, tuple) else batched[0]
            self._read_loop_once(stmt, item, env)
            return
        items = list(iterable)
        if len(items) > self.MAX_LOOP:
            _forget_loop_data(stmt, env)
            return
        if len(items) > self.DATA_LOOP and not self._constructs_layers(stmt.body, env):
            # a data loop (make_data's range(600)): what it computes is run-time data; read
            # the body once, abstractly, for any training statement in it
            self._read_loop_once(stmt, Unknown("loop item"), env)
            return
        for item in items:
            self._assign(stmt.target, item, env, naming=False)
            try:
                self._exec_block(stmt.body.body, env)
            except Break:
                break
            except Continue:
                continue

    def _exec_small(self, small: cst.CSTNode, env: Env, line: cst.SimpleStatementLine) -> None:
        if isinstance(small, cst.Assign):
            value = self._eval(small.value, env)
            for target in small.targets:
                self._assign(target.target, value, env)
            if len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
                self._record_object(small.targets[0].target.value, value, line, small.value)
        elif isinstance(small, cst.AnnAssign):
            if small.value is not None:
                self._assign(small.target, self._eval(small.value, env), env)
        elif isinstance(small, cst.AugAssign):
            current = self._eval(small.target, env)
            rhs = self._eval(small.value, env)
            value = self._binop(AUGMENTED[type(small.operator)], current, rhs, small)
            self._assign(small.target, value, env)
        elif isinstance(small, cst.Expr):
            self._eval(small.value, env)
        elif isinstance(small, cst.Return):
            value = None if small.value is None else self._eval(small.value, env)
            if isinstance(value, DatasetObj) and value.scope == tuple(self.scope_stack):
                self._record_object("", value, line, small.value)  # ``return tf.data.Dataset...``
            raise Return(value)
        elif isinstance(small, (cst.Import, cst.ImportFrom)):
            self._exec_import(small, env)
        elif isinstance(small, cst.Break):
            raise Break()
        elif isinstance(small, cst.Continue):
            raise Continue()

    def _exec_import(self, node, env: Env) -> None:
        if isinstance(node, cst.Import):
            for alias in node.names:
                full = cst.Module([]).code_for_node(alias.name)
                if alias.asname is not None:
                    env.set(alias.asname.name.value, resolve_api(full))
                else:
                    root = full.split(".")[0]
                    env.set(root, ModuleRef(root))
            return
        if node.module is None or node.relative:
            return
        base = cst.Module([]).code_for_node(node.module)
        if isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            name = cst.Module([]).code_for_node(alias.name)
            bound = alias.asname.name.value if alias.asname is not None else name
            env.set(bound, resolve_api(f"{base}.{name}"))

    def _assign(self, target: cst.BaseExpression, value: Any, env: Env, naming: bool = True) -> None:
        """Bind ``target`` to ``value``; ``naming`` lets the variable name a layer or tensor
        (not for loop variables, which name every element in turn)."""
        if isinstance(target, cst.Name):
            name = target.value
            if naming and isinstance(value, TensorVal) and value.value.var is None:
                value.value.var = name
            if naming and isinstance(value, TensorVal):
                where = id(self.module_stack[-1][0]) if self.module_stack else None
                value.value.scope_vars.setdefault(where, name)
            if naming and isinstance(value, LayerObj) and value.hint is None:
                value.hint = name
            if isinstance(value, ModelObj) and (self.stmt_stack[-1] if self.stmt_stack else None) \
                    not in value.made_under:  # not ``model = build_model(16, 3)``: it stays
                value.statements.add(self.stmt_stack[-1] if self.stmt_stack else None)
                if value.var is None:
                    value.var = name
            if isinstance(value, (list, tuple, dict)) and value and _all_tensors(value) and self.stmt_stack:
                # ``all_inputs = [sex, cp, ...]``: a statement gathering a model's tensors goes
                # with the model built from that list (frontend.py _make_functional)
                self.__dict__.setdefault("tensor_list_stmts", {})[id(value)] = (value, self.stmt_stack[-1])
            env.set(name, value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            if isinstance(value, Unknown):
                for el in target.elements:
                    self._assign(el.value, value, env, naming)
                return
            try:
                items = list(value)
            except TypeError:  # (one tensor where the source unpacks several)
                raise self._err(target, f"cannot unpack {type(value).__name__}: not a sequence") from None
            if len(items) != len(target.elements):
                raise self._err(target, "cannot unpack: the number of values differs")
            for el, item in zip(target.elements, items):
                self._assign(el.value, item, env, naming)
        elif isinstance(target, cst.Subscript):
            container = self._eval(target.value, env)
            if isinstance(container, (list, dict)) and len(target.slice) == 1:
                sl = target.slice[0].slice
                key = self._eval(sl.value, env) if isinstance(sl, cst.Index) else Unknown("slice")
                try:
                    if isinstance(key, Unknown):
                        raise KeyError(key)
                    container[key] = value
                except (KeyError, IndexError, TypeError):
                    # ``counts[c][y[i]] += 1``: an item chosen at run time; the container
                    # (the name it hangs from) is known only at run time from here on
                    self._forget_container(target, env)
        elif isinstance(target, cst.Attribute):
            base = self._eval(target.value, env)
            if target.attr.value == "trainable" and value is not True and (
                    isinstance(base, (LayerObj, ModelObj)) or self._layers_loop_item(target.value, env)):
                span = self._span(target)
                self.program.warn(span, "`.trainable = False` (frozen weights) is not translated: the torch "
                                        "optimizer updates these parameters and a frozen BatchNormalization "
                                        "follows model.train(); freeze them with requires_grad_(False) and "
                                        "eval()", self._line(span))
            if isinstance(base, ModelObj) and base.user is not None:
                base = base.user
            if isinstance(base, UserObj):
                self._store_attr(base, target.attr.value, value)

    def _layers_loop_item(self, node, env: Env) -> bool:
        """``layer`` of ``for layer in encoder.layers:`` whose items the reader does not know (a
        builder's model handed in as an argument): a Keras layer all the same."""
        value = self._eval(node, env) if isinstance(node, cst.Name) else None
        return isinstance(value, Unknown) and value.reason == _LAYERS_ITEM

    def _forget_container(self, target: cst.Subscript, env: Env) -> None:
        root = target.value
        while isinstance(root, cst.Subscript):
            root = root.value
        owner = env
        while isinstance(root, cst.Name) and owner is not None and root.value not in owner.vars:
            owner = owner.parent
        if owner is not None and isinstance(root, cst.Name) and isinstance(owner.vars[root.value], (list, dict)):
            owner.set(root.value, Unknown("a container the program changes at run time"))


def _branch(stmt: cst.If, taken: bool) -> list:
    """The statements ``stmt`` runs when its test is ``taken`` (an ``elif`` is an ``if``)."""
    if taken:
        return list(stmt.body.body)
    if isinstance(stmt.orelse, cst.If):
        return [stmt.orelse]
    return list(stmt.orelse.body.body) if isinstance(stmt.orelse, cst.Else) else []


#: methods that change a list, dict or set in place
_MUTATORS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse", "update",
                       "add", "discard", "setdefault", "popitem"})
#: plain Python data a loop may change (objects the reader tracks keep their identity)
_PLAIN = (bool, int, float, str, list, tuple, dict, set, type(None))


def _loop_changed_names(stmt: cst.For) -> set[str]:
    """The names a loop's body (and its target) binds or changes in place: assignment targets,
    ``x += ...``, ``x.append(...)`` (and other mutators), ``x[k] = ...``."""
    from transpiler.cst_fast import target_names, walk

    names: set[str] = set()

    def bound(target) -> None:  # (``counts[word] = ...``: the dict changes)
        names.update(target_names(target, subscripted=True))

    bound(stmt.target)
    for node in walk(stmt.body):
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        if isinstance(node, cst.Assign):
            for t in node.targets:
                bound(t.target)
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
            bound(node.target)
        elif isinstance(node, cst.For):
            bound(node.target)
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and \
                isinstance(node.func.value, cst.Name) and node.func.attr.value in _MUTATORS:
            names.add(node.func.value.value)
    return names


def _forget_loop_data(stmt: cst.For, env: Env) -> None:
    """After a loop whose trip count is only known when the program runs (read once,
    abstractly, or not at all): the plain data it binds or changes (``class_names.append(d)``
    for each folder, ``class_index += 1``) is run-time data, never the one pass's value (a
    ``Dense(len(class_names))`` must not become ``Linear(_, 1)``). Each such name is rebound, in
    the scope holding it, to an Unknown (its reads then print as their code: a run-time size)."""
    for name in sorted(_loop_changed_names(stmt)):
        scope = env
        while scope is not None and name not in scope.vars:
            scope = scope.parent
        if scope is None:
            continue
        value = scope.vars[name]
        if isinstance(value, _PLAIN) and type(value) is not Unknown:
            scope.set(name, Unknown(f"{name}: changed by a loop over run-time data"))


def _all_tensors(value) -> bool:
    """A list / tuple / dict holding symbolic tensors only (nested too)."""
    items = value.values() if isinstance(value, dict) else value
    return all(_all_tensors(v) if isinstance(v, (list, tuple, dict)) and v else isinstance(v, TensorVal)
               for v in items)
