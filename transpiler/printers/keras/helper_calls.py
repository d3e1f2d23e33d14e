"""Keras code for the calls of a torch script's training helpers (frontend_ast.torch.helper_calls):
``model.compile(...)`` before the first fit/evaluate of a model, ``model.fit``/``evaluate``/
``predict`` in place of the helpers' calls. Arrays keep their source expression; one that the
torch code transposed into the torch model's layout (``np.transpose(x, (0, 3, 1, 2))``) is
passed as it was before that transpose, since the Keras model takes Keras' layout. A model of
several outputs compiles with a list per output (``loss=[...]``, ``loss_weights=[...]``,
``metrics=[[...], [...]]``), and its targets and predictions are lists of arrays, each in its
output's layout."""

from __future__ import annotations

import ast

import libcst as cst

from transpiler.ir import training as T
from transpiler.ir.code_literals import dotted_name
from transpiler.printers.code import lit

NUMPY_TRANSPOSE = ("np.transpose", "numpy.transpose")
#: the PyTorch output's runtime helper (runtime/torch/layouts.py): ``np.transpose`` of an array
#: given the one-channel axis Keras' functional model adds to an array one axis short
LAYOUT_HELPERS = NUMPY_TRANSPOSE + ("one_channel_layout",)


def _code(node) -> str:
    return cst.Module([]).code_for_node(node)


def transposed(text: str) -> tuple[str, tuple] | None:
    """``np.transpose(E, (0, 3, 1, 2))`` → (E, perm); None for other code. A PyTorch output's
    ``one_channel_layout(E, perm)`` too: undone, E is what the Keras model takes (an array one
    axis short gains its channel axis inside the functional model)."""
    try:
        e = cst.parse_expression(text)
    except cst.ParserSyntaxError:
        return None
    if not isinstance(e, cst.Call) or dotted_name(e.func) not in LAYOUT_HELPERS or len(e.args) != 2 or \
            any(a.keyword is not None or a.star for a in e.args):
        return None
    try:
        perm = ast.literal_eval(_code(e.args[1].value))
    except (ValueError, SyntaxError):
        return None
    if not isinstance(perm, (tuple, list)) or not all(isinstance(i, int) for i in perm):
        return None
    return _code(e.args[0].value), tuple(perm)


def permuted(p, text: str, perm: tuple | None) -> str:
    """``text`` transposed by ``perm``, or what it transposed when the two cancel."""
    if perm is None:
        return text
    inner = transposed(text)
    if inner is not None and len(inner[1]) == len(perm) and all(inner[1][perm[i]] == i for i in range(len(perm))):
        return inner[0]
    p.imports.add("import numpy as np")
    return f"np.transpose({text}, {lit(perm)})"


def _compile_of(p, model: str) -> dict | None:
    ts = next((t for t in p.program.training if t.kind == "helper_compile" and t.model == model), None)
    return ts.config if ts is not None else None


def loss_arg(p, loss: T.Loss) -> str:
    """A Keras loss as compile takes it: its name when it is Keras' default form."""
    if not loss.from_logits and not loss.params and loss.reduction == "mean" and loss.kind in (
            "sparse_categorical_crossentropy", "categorical_crossentropy", "binary_crossentropy",
            "mean_squared_error", "mean_absolute_error"):
        return lit(loss.kind)
    return p.loss_expr(loss)


def compile_line(p, ts: T.TrainingStatement) -> str:
    cfg = ts.config
    c: T.Compile = cfg["compile"]
    args = []
    if c.optimizer is not None:
        var = cfg["optimizer_var"]
        args.append(f"optimizer={var if var and var not in cfg['inline'] else p.optimizer_expr(c.optimizer)}")
    var = cfg["loss_var"]
    if len(c.losses) > 1:  # one per output (the torch variable holds the torch functions)
        args.append("loss=[" + ", ".join(loss_arg(p, loss) for loss in c.losses) + "]")
    else:
        args.append(f"loss={var if var and var not in cfg['inline'] else loss_arg(p, c.losses[0])}")
    if c.loss_weights is not None:
        args.append(f"loss_weights={lit(list(c.loss_weights))}")
    if len(c.metrics) > 1 and any(c.metrics):
        args.append(f"metrics={lit([list(m) for m in c.metrics])}")
    elif c.metrics and c.metrics[0]:
        args.append(f"metrics={lit(list(c.metrics[0]))}")
    return f"{ts.model}.compile({', '.join(args)})"


def _inputs(p, ts, code: T.Code) -> str:
    """The model's input arrays in the Keras model's layout (a list of them for several inputs)."""
    from transpiler.ir.code_literals import list_items
    from transpiler.printers.keras.training import _atom, input_perm

    md = ts.model_def
    text = p.code(code)
    n = len(md.graph.inputs) if md is not None else 1
    perms = [input_perm(md, i) for i in range(n)]
    if n == 1 or all(perm is None for perm in perms):
        return permuted(p, text, perms[0])
    parts = list_items(text) if text.startswith("[") else None
    if parts is None or len(parts) != n:
        parts = [f"{_atom(text)}[{i}]" for i in range(n)]
    return "[" + ", ".join(permuted(p, part, perm) for part, perm in zip(parts, perms)) + "]"



def _targets(p, ts, code: T.Code) -> str:
    from transpiler.printers.keras.training import target_perm

    from transpiler.ir.code_literals import list_items

    cfg = _compile_of(p, ts.model)
    losses = cfg["compile"].losses if cfg else [T.Loss("mean_squared_error")]
    text = p.code(code)
    if len(losses) == 1:
        return permuted(p, text, target_perm(ts.model_def, 0, losses[0]))
    perms = [target_perm(ts.model_def, i, loss) for i, loss in enumerate(losses)]
    if all(perm is None for perm in perms):
        return text
    parts = list_items(text) if text.startswith(("[", "(")) else None
    if parts is None or len(parts) != len(perms):
        parts = [f"{text}[{i}]" for i in range(len(perms))]
    return "[" + ", ".join(permuted(p, part, perm) for part, perm in zip(parts, perms)) + "]"


def _pair(p, ts, code: T.Code) -> str:
    """``(x_val, y_val)`` with each array in the Keras model's layout."""
    from transpiler.ir.code_literals import list_items

    text = p.code(code)
    parts = list_items(text) if text.startswith("(") else None
    if parts is None or len(parts) != 2:
        return text
    return f"({_inputs(p, ts, T.Code(parts[0]))}, {_targets(p, ts, T.Code(parts[1]))})"


def expression(p, ts: T.TrainingStatement) -> str:
    cfg = ts.config
    if ts.kind == "helper_fit":
        f: T.Fit = cfg
        args = [_inputs(p, ts, f.x)] + ([_targets(p, ts, f.y)] if f.y is not None else []) + \
            [f"batch_size={p.code(f.batch_size)}", f"epochs={p.code(f.epochs)}"]
        if f.validation_split:
            args.append(f"validation_split={p.code(f.validation_split)}")
        if f.validation_data is not None:
            args.append(f"validation_data={_pair(p, ts, f.validation_data)}")
        if f.shuffle is not True:
            args.append(f"shuffle={p.code(f.shuffle)}")
        if f.verbose != "auto":
            args.append(f"verbose={p.code(f.verbose)}")
        return f"{ts.model}.fit({', '.join(args)})"
    if ts.kind == "helper_evaluate":
        e: T.Evaluate = cfg
        args = [_inputs(p, ts, e.x)] + ([_targets(p, ts, e.y)] if e.y is not None else [])
        if e.batch_size != 32:
            args.append(f"batch_size={p.code(e.batch_size)}")
        if e.return_dict:
            args.append(f"return_dict={p.code(e.return_dict)}")
        args.append("verbose=0")  # the torch helper prints nothing
        return f"{ts.model}.evaluate({', '.join(args)})"
    from transpiler.ir.program import output_perm

    pr: T.Predict = cfg["predict"]
    args = [_inputs(p, ts, pr.x)]
    if pr.batch_size != 32:
        args.append(f"batch_size={p.code(pr.batch_size)}")
    out = f"{ts.model}.predict({', '.join(args + ['verbose=0'])})"
    n_outputs = len(ts.model_def.graph.outputs) if ts.model_def is not None else 1
    perms = [output_perm(ts.model_def, i) for i in range(n_outputs)]
    outer = cfg.get("outer")
    if n_outputs == 1 and perms[0] is not None:
        out = f"np.transpose({out}, {lit(perms[0])})"
    elif any(perm is not None for perm in perms):  # several outputs: each in its own layout
        out = (f"[out if perm is None else np.transpose(out, perm) for out, perm in zip({out}, "
               f"{lit(perms)})]")
    if outer is not None:
        out = permuted(p, out, outer)
    if "np.transpose" in out:
        p.imports.add("import numpy as np")
    return out
