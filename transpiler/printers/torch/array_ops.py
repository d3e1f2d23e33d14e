"""``keras.ops`` (and TensorFlow's tensor functions) on arrays outside any model (inspecting a batch, plotting patches) → torch.

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

from transpiler.ir.code_literals import bare_argument, dotted_name

#: function (``ops.X`` for keras.ops, ``tf.X`` for TensorFlow, ``activations.X``) → (torch form
#: with {x} for the tensor, keyword renames, positional names)
_FORMS: dict[str, tuple[str, dict[str, str], tuple[str, ...]]] = {
    "ops.reshape": ("torch.reshape({x}, {newshape})", {}, ("x", "newshape")),
    "ops.expand_dims": ("torch.unsqueeze({x}, {axis})", {}, ("x", "axis")),
    "ops.squeeze": ("torch.squeeze({x}, {axis})", {}, ("x", "axis")),
    "ops.argmax": ("torch.argmax({x}, dim={axis})", {}, ("x", "axis")),
    "ops.argmin": ("torch.argmin({x}, dim={axis})", {}, ("x", "axis")),
    "ops.convert_to_numpy": ("{x}.detach().cpu().numpy()", {}, ("x",)),
    "ops.convert_to_tensor": ("{x}", {}, ("x",)),
    "ops.transpose": ("{x}.permute({axes})", {}, ("x", "axes")),
    "ops.sqrt": ("torch.sqrt({x})", {}, ("x",)),
    "ops.exp": ("torch.exp({x})", {}, ("x",)),
    "ops.abs": ("torch.abs({x})", {}, ("x",)),
    "ops.square": ("torch.square({x})", {}, ("x",)),
    # float32 rows as Keras gives (an index outside [0, num_classes) raises here, Keras gives zeros)
    "ops.one_hot": ("torch.nn.functional.one_hot({x}.long(), {num_classes}).float()", {}, ("x", "num_classes")),
    # (values and indices along the last axis, largest first, as torch.topk's defaults)
    "ops.top_k": ("torch.topk({x}, {k}, sorted={sorted})", {}, ("x", "k", "sorted")),
    "ops.softmax": ("torch.softmax({x}, dim={axis})", {}, ("x", "axis")),
    "activations.softmax": ("torch.softmax({x}, dim={axis})", {}, ("x", "axis")),
    "tf.reduce_sum": ("torch.sum({x}, dim={axis}, keepdim={keepdims})", {"input_tensor": "x"}, ("x", "axis", "keepdims")),
    "tf.reduce_mean": ("torch.mean({x}, dim={axis}, keepdim={keepdims})", {"input_tensor": "x"},
                       ("x", "axis", "keepdims")),
    "tf.reduce_max": ("torch.amax({x}, dim={axis}, keepdim={keepdims})", {"input_tensor": "x"},
                      ("x", "axis", "keepdims")),
    "tf.reduce_min": ("torch.amin({x}, dim={axis}, keepdim={keepdims})", {"input_tensor": "x"},
                      ("x", "axis", "keepdims")),
    # (tf.argmax's axis defaults to 0, ops.argmax's to the flattened tensor: an explicit axis only,
    # as in a script's own loss code, loss_functions.py)
    "tf.argmax": ("torch.argmax({x}, dim={axis})", {"input": "x"}, ("x", "axis")),
    "tf.argmin": ("torch.argmin({x}, dim={axis})", {"input": "x"}, ("x", "axis")),
    "tf.squeeze": ("torch.squeeze({x}, {axis})", {"input": "x"}, ("x", "axis")),
    "tf.expand_dims": ("torch.unsqueeze({x}, {axis})", {"input": "x"}, ("x", "axis")),
    "tf.reshape": ("torch.reshape({x}, {newshape})", {"tensor": "x", "shape": "newshape"}, ("x", "newshape")),
    "tf.transpose": ("{x}.permute({axes})", {"a": "x", "perm": "axes"}, ("x", "axes")),
    "tf.cast": ("{x}.to({dtype})", {}, ("x", "dtype")),
    "tf.sqrt": ("torch.sqrt({x})", {}, ("x",)),
    "tf.exp": ("torch.exp({x})", {}, ("x",)),
    "tf.abs": ("torch.abs({x})", {}, ("x",)),
    "tf.square": ("torch.square({x})", {}, ("x",)),
    # (TF converts integer images to [0, 1] floats, max_val too: the ratio, so the value, is the same)
    "tf.image.psnr": ("(20 * torch.log10(torch.as_tensor({max_val}, dtype=torch.float32)) - 10 * torch.log10("
                      "torch.mean(torch.square({x}.float() - torch.as_tensor({b}).float()), dim=(-3, -2, -1))))",
                      {"a": "x"}, ("x", "b", "max_val")),
}
#: defaults filled in when the call leaves them out (Keras' / TensorFlow's)
_DEFAULTS: dict[str, dict[str, str]] = {
    "ops.top_k": {"sorted": "True"}, "ops.softmax": {"axis": "-1"}, "activations.softmax": {"axis": "-1"},
    **{f"tf.reduce_{r}": {"keepdims": "False"} for r in ("sum", "mean", "max", "min")},
}
#: dtype spellings a cast may name → torch's
_DTYPES = {f"{root}{name}": f"torch.{name}" for root in ("tf.", "np.", "numpy.", "tensorflow.", "")
           for name in ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool",
                        "bfloat16")}
_SUBMODULES = ("numpy.", "core.", "math.", "nn.")


def _keras_op(func: cst.BaseExpression, aliases: dict[str, str]) -> str | None:
    """``ops.reshape`` / ``keras.ops.reshape`` / ``keras.ops.numpy.reshape`` → ``ops.reshape``;
    ``tf.math.reduce_sum`` → ``tf.reduce_sum``; ``keras.activations.softmax`` → ``activations.softmax``."""
    name = dotted_name(func)
    if not name:
        return None
    head, _, rest = name.partition(".")
    path = aliases.get(head, head) + ("." + rest if rest else "")
    key = None
    for root, prefix in (("keras.ops.", "ops."), ("tensorflow.keras.ops.", "ops."), ("keras.activations.", "activations."),
                         ("tensorflow.keras.activations.", "activations."), ("tensorflow.", "tf.")):
        if path.startswith(root):
            last = path[len(root):]
            for sub in _SUBMODULES:
                last = last[len(sub):] if last.startswith(sub) else last
            key = prefix + last
            break
    return key if key in _FORMS else None


class _Rewrite(cst.CSTTransformer):
    def __init__(self, aliases: dict[str, str]):
        self.aliases = aliases
        self.changed = False
        self.refused = False

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        fn = _keras_op(updated.func, self.aliases)
        if fn is None:
            return updated
        form, renames, names = _FORMS[fn]
        values: dict[str, str] = {}
        for i, arg in enumerate(updated.args):
            if arg.star:
                self.refused = True
                return updated
            key = arg.keyword.value if arg.keyword is not None else (names[i] if i < len(names) else None)
            key = {"shape": "newshape"}.get(key, key) if fn == "ops.reshape" else renames.get(key, key)
            if key not in names or key in values:
                self.refused = True
                return updated
            # (an argument's code, without parentheses that change nothing: dtype=(tf.float32))
            values[key] = cst.Module([]).code_for_node(bare_argument(arg.value))
        if "x" not in values:
            self.refused = True
            return updated
        if fn in ("tf.argmax", "tf.argmin") and values.get("axis", "None") == "None":
            self.refused = True
            return updated
        values = {**_DEFAULTS.get(fn, {}), **values}
        if fn in ("ops.squeeze", "tf.squeeze") and values.get("axis", "None") == "None":
            form = "torch.squeeze({x})"
        if fn in ("ops.argmax", "ops.argmin", "tf.argmax", "tf.argmin") and values.get("axis", "None") == "None":
            form = form.replace(", dim={axis}", "")
        if fn.startswith("tf.reduce_") and values.get("axis", "None") == "None":  # (every axis)
            form = form.replace(", dim={axis}", "").replace(", keepdim={keepdims}", "") \
                if values["keepdims"] == "False" else form.replace("dim={axis}", "dim=tuple(range({x}.dim()))")
        if fn in ("ops.transpose", "tf.transpose") and "axes" not in values:  # numpy's default: every axis reversed
            form = "{x}.permute(*reversed(range({x}.dim())))"
        if fn == "tf.cast":
            dtype = _DTYPES.get(values.get("dtype", "").strip("\"'"))
            if dtype is None:
                self.refused = True
                return updated
            values["dtype"] = dtype
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
