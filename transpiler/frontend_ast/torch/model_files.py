"""Whole-model files: ``torch.save(model, path)`` / ``torch.load(path)`` → Keras' ``.keras`` files.

torch pickles the module object; Keras saves the whole model (architecture, weights and the
compiled optimizer) to a ``.keras`` file, which ``keras.models.load_model`` reads back (the
generated helper classes are registered as serializable). The path literal is renamed to
the suffix Keras requires (``model.pt`` → ``model.keras``), where the script wrote it, so
that the save and the load of the same file stay paired. A path the script does not write
as a literal (the reader cannot rename it) is a marked stub.

Imports no deep-learning framework.
"""

from __future__ import annotations

import libcst as cst

from transpiler.frontend_ast.torch.modules import Unsupported

SUFFIXES = (".pt", ".pth", ".pkl", ".bin", ".ckpt", ".tar")


def keras_file_name(value: str) -> str:
    """``m.pt`` → ``m.keras``."""
    for suffix in SUFFIXES:
        if value.endswith(suffix):
            return value[: -len(suffix)] + ".keras"
    return value if value.endswith(".keras") else value + ".keras"


def _rename(reader, literal) -> None:
    from transpiler.frontend_ast.torch.reader_values import _literal_text
    from transpiler.ir import training as T

    if reader.sid(literal) in reader.facts:
        return
    new = keras_file_name(literal.evaluated_value)
    if new != literal.evaluated_value:
        text = _literal_text(literal, new)  # (``"m" ".pt"`` too: one literal in its first part's quotes)
        # (a template: the braces of a format string are the literal's own)
        reader.fact(literal, "array_expr", T.ArrayExpr(text.replace("{", "{{").replace("}", "}}")))


def save_model(reader, node: cst.Call, model, model_node, path) -> None:
    """``torch.save(model, path)`` → ``model.save(path)`` (renamed to ``.keras``)."""
    from transpiler.ir import training as T

    literal = reader.path_literal(path)
    if literal is None or not isinstance(literal.evaluated_value, str):  # (an f-string: not a literal)
        raise Unsupported("torch.save(model, path) with a path that is not a string literal of the script "
                          "(Keras saves a whole model to a *.keras file; name it so)")
    _rename(reader, literal)
    reader.saved[literal.evaluated_value] = ("model", model)
    reader.fact(node, "array_expr", T.ArrayExpr("{0}.save({1})", (reader.sid(model_node), reader.sid(path))))


def load_model(reader, node: cst.Call, path, literal, model):
    """``torch.load(path)`` of a file ``torch.save(model, path)`` wrote → ``keras.models.load_model``
    (what it holds: the same model)."""
    from transpiler.frontend_ast.torch.reader_values import ModelV
    from transpiler.ir import training as T

    _rename(reader, literal)
    reader.fact(node, "load_model", T.ArrayExpr("", (reader.sid(path),)))  # (the printer spells it)
    return ModelV(model.name, model.md, training=False)
