"""Edits of a module object the reader builds: ``m.add_module(name, child)``; layers it
refuses, kept until they are used.

``nn.Sequential()`` filled by ``add_module(str(i), layer)`` (fast_neural_style's ``Vgg16``
slices torchvision's ``features`` so; the DCGAN and densenet code write it too) keeps the
names given, as torch does: the children are torch's state_dict keys (``slice2.4.weight``),
so the Sequential becomes a named one (``kind`` ``module_dict`` of class ``Sequential``, which
the reader calls in order). On a user module ``add_module`` is ``setattr``.

Imports no deep-learning framework.
"""

from __future__ import annotations

from transpiler.frontend_ast.torch.modules import Unsupported
from transpiler.frontend_ast.torch.values import Mod


def add_module(obj: Mod, name, child) -> None:
    """``obj.add_module(name, child)`` (see the module doc); None, as torch returns."""
    if not isinstance(name, str):
        raise Unsupported("add_module(name, ...): a name known only when the program runs")
    if not name or "." in name:
        raise Unsupported(f"add_module({name!r}, ...): torch refuses an empty name or one with dots")
    if child is not None and not isinstance(child, Mod):
        raise Unsupported(f"add_module({name!r}, ...): the module added is not one the reader builds")
    if obj.kind == "user":
        obj.attrs[name] = child
        return None
    if obj.kind == "sequential":
        items = {str(i): m for i, m in enumerate(obj.items)}
        obj.kind, obj.items = "module_dict", items
    elif not (obj.kind == "module_dict" and obj.cls_name == "Sequential"):
        raise Unsupported(f"nn.{obj.cls_name}.add_module() is not supported")
    if child is None:
        raise Unsupported(f"add_module({name!r}, None): an empty slot of a Sequential is not translated")
    obj.items[name] = child
    return None


def refused_layer(fe, cls_name: str, span, exc: Exception) -> Mod:
    """``nn.X(...)`` the recognisers refuse: a leaf without a layer, its refusal kept on the
    reader (``fe.refused_layers``) and raised where the layer is called or read
    (``raise_refusal``). torch builds a layer nobody calls harmlessly, and the Keras model
    holds only what forward calls: torchvision's VGG builds ``AdaptiveAvgPool2d((7, 7))``,
    which fast_neural_style's ``Vgg16`` never calls (it keeps ``features`` only)."""
    mod = Mod("leaf", span, layer=None, cls_name=cls_name)
    if not hasattr(fe, "refused_layers"):
        fe.refused_layers = {}
    fe.refused_layers[mod] = (mod, str(exc))  # (Mods hash by identity)
    return mod


def raise_refusal(fe, mod: Mod) -> None:
    """Raise the refusal of a layer ``refused_layer`` made (called, or an attribute read)."""
    found = getattr(fe, "refused_layers", {}).get(mod)
    raise Unsupported(found[1] if found else f"nn.{mod.cls_name} is not translated")


def refusals_in(fe, mod: Mod) -> str:
    """``; it holds nn.X, not translated (why)`` for the refused layers ``mod`` holds (a
    model that fails for another reason first still names them), else ``""``."""
    from transpiler.frontend_ast.torch.support import _walk

    found = getattr(fe, "refused_layers", {})
    named = {}
    for _, m in _walk(mod):
        if m.kind == "leaf" and m.layer is None and m in found:
            named.setdefault(m.cls_name, found[m][1])
    return "".join(f"; it holds nn.{cls}, which is not translated: {why}" for cls, why in named.items())
