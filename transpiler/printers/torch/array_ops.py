"""``keras.ops`` on arrays outside any model (inspecting a batch, plotting patches) → torch.

In such code Keras runs the op eagerly on numpy arrays or tensors and returns a tensor of its
backend; the PyTorch program does what Keras' torch backend does: ``torch.as_tensor`` of the
argument, then the torch function (``ops.reshape(patch, (4, 4, 3))`` →
``torch.reshape(torch.as_tensor(patch), (4, 4, 3))``), and ``ops.convert_to_numpy(x)`` →
``torch.as_tensor(x).detach().cpu().numpy()`` (a model's output may require grad or sit
on a GPU). Only functions whose torch form takes the same arguments with the same meaning
are rewritten; a statement with any other Keras name left stays a stub.
"""

from __future__ import annotations

import libcst as cst

from transpiler.ir.code_literals import dotted_name

#: keras.ops function → (torch form with {x} for the tensor, keyword renames, positional names)
_FORMS: dict[str, tuple[str, dict[str, str], tuple[str, ...]]] = {
    "reshape": ("torch.reshape({x}, {newshape})", {}, ("x", "newshape")),
    "expand_dims": ("torch.unsqueeze({x}, {axis})", {}, ("x", "axis")),
    "squeeze": ("torch.squeeze({x}, {axis})", {}, ("x", "axis")),
    "argmax": ("torch.argmax({x}, dim={axis})", {}, ("x", "axis")),
    "argmin": ("torch.argmin({x}, dim={axis})", {}, ("x", "axis")),
    "convert_to_numpy": ("{x}.detach().cpu().numpy()", {}, ("x",)),
    "convert_to_tensor": ("{x}", {}, ("x",)),
    "transpose": ("{x}.permute({axes})", {}, ("x", "axes")),
    "sqrt": ("torch.sqrt({x})", {}, ("x",)),
    "exp": ("torch.exp({x})", {}, ("x",)),
    "abs": ("torch.abs({x})", {}, ("x",)),
    "square": ("torch.square({x})", {}, ("x",)),
    # float32 rows as Keras gives (an index outside [0, num_classes) raises here, Keras gives zeros)
    "one_hot": ("torch.nn.functional.one_hot({x}.long(), {num_classes}).float()", {}, ("x", "num_classes")),
}
_SUBMODULES = ("numpy.", "core.", "math.", "nn.")


def _keras_op(func: cst.BaseExpression, aliases: dict[str, str]) -> str | None:
    """``ops.reshape`` / ``keras.ops.reshape`` / ``keras.ops.numpy.reshape`` → ``reshape``."""
    name = dotted_name(func)
    if not name:
        return None
    head, _, rest = name.partition(".")
    path = aliases.get(head, head) + ("." + rest if rest else "")
    for root in ("keras.ops.", "tensorflow.keras.ops."):
        if path.startswith(root):
            last = path[len(root):]
            for sub in _SUBMODULES:
                last = last[len(sub):] if last.startswith(sub) else last
            return last if last in _FORMS else None
    return None


class _Rewrite(cst.CSTTransformer):
    def __init__(self, aliases: dict[str, str]):
        self.aliases = aliases
        self.changed = False
        self.refused = False

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        fn = _keras_op(updated.func, self.aliases)
        if fn is None:
            return updated
        form, _renames, names = _FORMS[fn]
        values: dict[str, str] = {}
        for i, arg in enumerate(updated.args):
            if arg.star:
                self.refused = True
                return updated
            key = arg.keyword.value if arg.keyword is not None else (names[i] if i < len(names) else None)
            key = {"shape": "newshape"}.get(key, key) if fn == "reshape" else key
            if key not in names or key in values:
                self.refused = True
                return updated
            values[key] = cst.Module([]).code_for_node(arg.value)
        if "x" not in values:
            self.refused = True
            return updated
        if fn == "squeeze" and values.get("axis", "None") == "None":
            form = "torch.squeeze({x})"
        if fn in ("argmax", "argmin") and values.get("axis", "None") == "None":
            form = form.replace(", dim={axis}", "")
        if fn == "transpose" and "axes" not in values:  # numpy's default: every axis reversed
            form = "{x}.permute(*reversed(range({x}.dim())))"
        if any("{" + n + "}" in form and n not in values for n in names):
            self.refused = True
            return updated
        values["x"] = f"torch.as_tensor({values['x']})"
        self.changed = True
        return cst.parse_expression(form.format(**values))


def rewrite(stmt: cst.SimpleStatementLine, aliases: dict[str, str]) -> cst.SimpleStatementLine | None:
    """``stmt`` with its keras.ops calls on arrays in torch; None when it has none, or one
    whose arguments this table does not cover."""
    rw = _Rewrite(aliases)
    new = stmt.visit(rw)
    if rw.refused or not rw.changed:
        return None
    return new
