"""Model classes the program builds that this file does not translate: a class imported from
another file of the program (``from model import RNNModel``, ``from src.model import
Translator``: that file's translation defines the Keras class) or an ``nn.Module`` class of
this file whose own translation is a marked stub. Their instances are still the program's
models: what the program does with them that does not depend on their layers translates
(``torch.optim.X(model.parameters())``, ``model.to(device)``, ``model.train()``, saving and
loading their weights); what feeds them data (a training step, a model call) needs the layout
of their inputs, which only their class's translation knows, and stays a marked stub saying so.

Imports no deep-learning framework.
"""

from __future__ import annotations

import functools
import os

import libcst as cst

from transpiler.ir.code_literals import dotted_name


def program_file(script: str, module: str, level: int) -> str | None:
    """``from model import X`` / ``from src.model import X`` / ``from .model import X``: the
    file of the program (beside ``script``, or in a package folder under it) the import names."""
    if not script or script.startswith("<") or level > 1:
        return None
    folder = os.path.dirname(os.path.abspath(script))
    candidate = os.path.join(folder, *module.split(".")) + ".py"
    if os.path.abspath(candidate) == os.path.abspath(script) or not os.path.isfile(candidate):
        return None
    return candidate


def _module_classes(path: str) -> set[str]:
    """The classes of ``path`` that derive from a module (``nn.Module``, ``torch.nn.Module``,
    or another such class of the file)."""
    try:
        with open(path, encoding="utf-8") as fh:
            module = cst.parse_module(fh.read())
    except (OSError, UnicodeDecodeError, cst.ParserSyntaxError):
        return set()
    found: set[str] = set()
    classes = [s for s in module.body if isinstance(s, cst.ClassDef)]
    changed = True
    while changed:
        changed = False
        for cls in classes:
            if cls.name.value in found:
                continue
            bases = {dotted_name(b.value) or "" for b in cls.bases}
            if any(b.split(".")[-1] == "Module" or b in found for b in bases):
                found.add(cls.name.value)
                changed = True
    return found


#: layers whose input layout differs between torch (channels-first) and the Keras translation
#: (channels-last): a class using one takes its inputs in another layout in Keras
LAYOUT_LAYERS = ("Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
                 "MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
                 "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveMaxPool2d", "BatchNorm1d", "BatchNorm2d",
                 "BatchNorm3d", "InstanceNorm2d", "GroupNorm", "PixelShuffle", "Upsample", "Dropout2d")


def layout_free(path: str) -> bool:
    """Whether the model classes of ``path`` take their inputs in the same layout in Keras as in
    torch (no layer of ``LAYOUT_LAYERS`` in the file, no torchvision network: embeddings,
    linear, recurrent and attention layers)."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError):
        return False
    # (torchvision's networks are convolutional: their layers are not written out in the file)
    return not any(f"{name}(" in text for name in LAYOUT_LAYERS) and "torchvision" not in text


def imported_model_classes(script: str, module: cst.Module) -> dict[str, str]:
    """The model classes ``module`` imports at its top level from other files of the program:
    {local name: the file}."""
    out: dict[str, str] = {}
    for stmt in module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if not isinstance(small, cst.ImportFrom) or small.module is None or \
                    isinstance(small.names, cst.ImportStar):
                continue
            path = program_file(script, dotted_name(small.module) or "", len(small.relative))
            if path is None:
                continue
            classes = _module_classes(path)
            for alias in small.names:
                name = dotted_name(alias.name) or ""
                if name in classes:
                    out[alias.asname.name.value if alias.asname else name] = path
    return out


def untranslated_classes(fe) -> dict[str, str]:
    """The model classes the program may build that no translated model of this file is
    (imported ones, and this file's unbuilt ones): class name -> where its translation is (a
    file's path, or a phrase)."""
    out = {name: path for name, path in imported_model_classes(fe.path, fe.module).items()
           if name not in fe.classes}
    translated = {md.class_name for md in fe.program.models} | {md.builder for md in fe.program.models}
    for name in fe.program.from_torch.unbuilt_classes:
        if name not in translated:
            out.setdefault(name, "this file (its class is a marked stub)")
    return out


def stubbed_in_own_file(path: str, name: str) -> bool:
    """Whether the translation of ``path`` (another file of the program) makes its class
    ``name`` a marked stub: no model that file translates is of that class or holds it
    (``Vgg16`` over torchvision's pretrained network). A model of that class stops the Keras
    program where it is built, at that stub."""
    try:
        stamp = os.stat(path).st_mtime_ns
    except OSError:
        return False
    return name in _stubbed_classes(path, stamp)


@functools.lru_cache(maxsize=32)
def _stubbed_classes(path: str, stamp: int) -> frozenset:
    from transpiler.frontend_ast.torch.frontend import run_torch_frontend

    try:
        with open(path, encoding="utf-8") as fh:
            source = fh.read()
        fe = run_torch_frontend(source, path)
    except Exception:  # noqa: BLE001 - a file this reader cannot read: not known to be a stub
        return frozenset()
    defs = {s.name.value: s for s in fe.module.body if isinstance(s, (cst.ClassDef, cst.FunctionDef))}
    todo = [md.class_name for md in fe.program.models] + [md.builder for md in fe.program.models if md.builder]
    held: set[str] = set()
    while todo:  # (the classes a translated model holds, through the names its code uses)
        current = todo.pop()
        if current in held or current not in defs:
            continue
        held.add(current)
        todo += [n.value for n in _names(defs[current]) if n.value in defs and n.value != current]
    return frozenset(_module_classes(path) - held)


def _names(node: cst.CSTNode) -> list:
    found: list = []

    class _V(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            found.append(n)

    node.visit(_V())
    return found
