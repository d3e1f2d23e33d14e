"""Keras callbacks in Keras → PyTorch programs: a script's ``keras.callbacks.Callback``
subclass becomes a subclass of the generated ``Callback`` (runtime/torch/callbacks.py), its
``self.model`` uses rewritten for the torch module and the optimizer fit() hands it."""

from __future__ import annotations

import re

import libcst as cst

from transpiler.ir import code_literals


def _pt_path(path: str) -> str:
    """A Keras file name literal (``"m.keras"``, ``"w.weights.h5"``) → the torch one (``.pt``)."""
    for ext in (".weights.h5", ".keras", ".h5"):
        if path.endswith(ext + '"') or path.endswith(ext + "'"):
            return path[: -len(ext) - 1] + ".pt" + path[-1]
    return path


def _callback_object_code(code: str) -> str:
    """``keras.callbacks.LambdaCallback(...)`` → the generated ``LambdaCallback(...)``."""
    return re.sub(r"^[\w.]*\bLambdaCallback\(", "LambdaCallback(", code)


#: Keras Model members a callback may reach through ``self.model`` that the torch module
#: lacks; a statement using one becomes a marked stub.
_KERAS_MODEL_MEMBERS = {"predict", "evaluate", "fit", "compile", "get_weights", "set_weights", "layers",
                        "get_layer", "summary", "history", "metrics", "metrics_names", "loss", "weights",
                        "trainable_weights", "trainable_variables", "non_trainable_weights", "variables",
                        "count_params", "to_json", "load_weights", "input", "output", "inputs", "outputs",
                        "train_on_batch", "test_on_batch", "predict_on_batch", "name", "losses"}
_OPTIMIZER_LR = ("learning_rate", "lr")


_dotted = code_literals.dotted_name


def _lr_target() -> cst.BaseExpression:
    return cst.parse_expression('self.model.optimizer.param_groups[0]["lr"]')


class _CallbackBody(cst.CSTTransformer):
    """``self.model`` as Keras has it → the torch module and optimizer the generated fit()
    hands the callback: the learning rate lives in ``optimizer.param_groups`` (fit() makes
    one group), ``save``/``save_weights`` become ``torch.save`` of the state dict."""

    def __init__(self, keras_names: set[str]):
        self.keras_names = keras_names
        self.unsupported: list[str] = []

    def _is_lr(self, node) -> bool:
        return _dotted(node) in (f"self.model.optimizer.{a}" for a in _OPTIMIZER_LR)

    def _keras_call(self, call: cst.Call, *suffixes: str) -> bool:
        name = _dotted(call.func) or ""
        return name.split(".")[0] in self.keras_names and name.endswith(suffixes)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        func = updated.func
        if isinstance(func, cst.Attribute) and func.attr.value == "numpy" and self._is_lr(func.value):
            return _lr_target()
        if self._keras_call(original, "backend.get_value", "ops.convert_to_numpy") and len(updated.args) == 1 \
                and self._is_lr(original.args[0].value):
            return _lr_target()
        name = _dotted(original.func) or ""
        if name in ("self.model.save", "self.model.save_weights") and updated.args:
            path = _pt_path(cst.Module([]).code_for_node(updated.args[0].value))
            return cst.parse_expression(f"torch.save(self.model.state_dict(), {path})")
        return updated

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        if self._is_lr(original):
            return _lr_target()
        return updated

    def leave_SimpleStatementLine(self, original, updated):
        small = updated.body[0]
        # lr.assign(v) / keras.backend.set_value(lr, v) → an assignment to the param group
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            call, orig = small.value, original.body[0].value
            value = None
            if isinstance(orig.func, cst.Attribute) and orig.func.attr.value == "assign" \
                    and self._is_lr(orig.func.value) and call.args:
                value = call.args[0].value
            elif isinstance(orig, cst.Call) and self._keras_call(orig, "backend.set_value") \
                    and len(orig.args) == 2 and self._is_lr(orig.args[0].value):
                value = call.args[1].value
            if value is not None:
                return updated.with_changes(body=[cst.Assign([cst.AssignTarget(_lr_target())], value)])
        text = cst.Module([]).code_for_node(updated)
        for found in re.finditer(r"\bself\.model\.(\w+)", text):
            member = found.group(1)
            if member in _KERAS_MODEL_MEMBERS or (member == "optimizer" and re.search(
                    r"self\.model\.optimizer\.(?!param_groups\b)\w+", text)):
                self.unsupported.append(text.strip())
                break
        return updated


def rewrite_callback_class(stmt: cst.ClassDef, keras_names: set[str], user_callbacks: set[str]):
    """The script's ``keras.callbacks.Callback`` subclass → a subclass of the generated
    ``Callback``, its ``self.model`` uses rewritten for the torch module. Returns the class
    and the source of statements that still need Keras (the caller stubs them)."""
    bases = []
    for arg in stmt.bases:
        name = _dotted(arg.value) or ""
        if name.split(".")[0] in keras_names and name.endswith("Callback"):
            arg = arg.with_changes(value=cst.Name("Callback"))
        elif name not in user_callbacks and name.split(".")[0] in keras_names:
            continue
        bases.append(arg)
    body = _CallbackBody(keras_names)
    new = stmt.with_changes(bases=bases).visit(body)
    return new, body.unsupported


#: training statements the printer replaces whole (their reads of a name go with them)
_REPLACED = ("compile", "fit", "callback_list", "optimizer_object", "loss_object", "callback_object",
             "schedule_object")


def _reads(source: str, var: str) -> int:
    """How many times ``source`` reads the name ``var`` (not as an attribute, a keyword or an
    assignment target; comments and strings aside)."""
    import io
    import tokenize

    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(source).readline)
                  if t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT,
                                    tokenize.DEDENT)]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return 0
    count = 0
    for i, tok in enumerate(tokens):
        if tok.type != tokenize.NAME or tok.string != var:
            continue
        before = tokens[i - 1].string if i else ""
        after = tokens[i + 1].string if i + 1 < len(tokens) else ""
        if before != "." and after != "=":
            count += 1
    return count


def read_elsewhere(program, var: str) -> bool:
    """The program reads ``var`` outside the training statements the printer replaces whole."""
    return _reads(program.source or "", var) - sum(
        _reads(ts.source, var) for ts in program.training if ts.kind in _REPLACED) > 0


def keep_binding(program, var: str, lines: list[str]) -> list[str]:
    """``lines`` (a comment standing for a Keras object the generated code does not need),
    plus ``var = None`` when the program still reads ``var`` elsewhere (passed to a function:
    ``train(model, [early_stopping])``), so that read finds a name."""
    elsewhere = _reads(program.source or "", var) - sum(
        _reads(ts.source, var) for ts in program.training if ts.kind in _REPLACED)
    if elsewhere <= 0:
        return lines
    return lines + [f"{var} = None  # (read below; the generated code does not need the Keras object)"]


def given_to_untranslated(program, var: str) -> str | None:
    """The method (``compile``/``fit``) of a call in the script that reads ``var`` (as a value,
    or through a callback list it is an item of) although the printer did not translate that
    call (its own stub says why); None when no such call reads it."""
    import libcst as cst

    from transpiler import cst_fast

    pattern = re.compile(rf"(?<![\w.]){re.escape(var)}\b(?!\s*=(?!=))")
    lists = [ts.model for ts in program.training if ts.kind == "callback_list" and ts.model != var
             and pattern.search(ts.source)]
    names = [pattern] + [re.compile(rf"(?<![\w.]){re.escape(v)}\b(?!\s*=(?!=))") for v in lists]
    for call in cst_fast.nodes_of(cst_fast.parse(program.source or ""), cst.Call):
        if isinstance(call.func, cst.Attribute) and call.func.attr.value in ("compile", "fit"):
            args = " ".join(cst_fast.code(a.value) for a in call.args)
            if any(p.search(args) for p in names):
                return call.func.attr.value
    return None


def used_by_compile_or_fit(program, var: str) -> bool:
    """``var`` (an optimizer, loss, callback or list of callbacks) goes to a translated
    compile() or fit(): named in its call, in a callback list it gets, or given through a
    function's parameter (``train(model, [es, ...])`` calling ``fit(callbacks=callbacks)``)."""
    from transpiler.ir import training as T

    # the name as a value, not as a keyword (compile(optimizer="sgd") does not use `optimizer`)
    pattern = re.compile(rf"(?<![\w.]){re.escape(var)}\b(?!\s*=(?!=))")
    if any(ts.kind in ("compile", "fit") and pattern.search(ts.source) for ts in program.training):
        return True
    if any(ts.kind == "fit" and isinstance(ts.config, T.Fit) and any(cb.var == var for cb in ts.config.callbacks)
           for ts in program.training):
        return True
    # an item of a callback list fit() is given (``callbacks = [es, ...]``)
    return any(ts.kind == "callback_list" and ts.model != var and pattern.search(ts.source) and
               used_by_compile_or_fit(program, ts.model) for ts in program.training)
