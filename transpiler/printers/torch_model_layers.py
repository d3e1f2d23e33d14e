"""``for layer in model.layers:`` → a loop over the torch module's children.

The common uses of a Keras model's layer list in a training script are inspecting it
(print each layer's name, output shape, parameter count) and freezing it
(``layer.trainable = False``). Their torch spellings: ``model.named_children()``,
``p.numel()`` over ``layer.parameters()`` and ``layer.requires_grad_(False)``; output
shapes are the IR's static shapes (a forward hook would see an RNN's whole sequence
where the Keras layer returns its last step), printed as a table before the loop. A loop that uses the layer
any other way (its weights, its config, ``isinstance`` on Keras classes) is left to the
caller, which stubs it.

The lists differ: Keras lists every layer (and a functional model's InputLayer), torch
only the submodules; layers ``forward()`` applies as functions (Flatten, Concatenate,
activations) have none. Names are the torch attribute names, shapes are channels-first.
The generated code says so in a comment.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from transpiler.ir.program import ModelDef

NOTES = ("# model.layers: the torch module's children, under torch's names (layers that forward()",
         "# applies as functions, e.g. Flatten or Concatenate, are not modules and not listed)")
SHAPES_NOTE = "# each layer's output shape (batch axis None) as Keras computes it, channels-first"


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def layers_receiver(iterable: cst.BaseExpression) -> str | None:
    """``m`` for a loop header ``m.layers``, else None."""
    if isinstance(iterable, cst.Attribute) and iterable.attr.value == "layers" and isinstance(iterable.value, cst.Name):
        return iterable.value.value
    return None


@dataclass
class LayersLoop:
    """A translated loop: comment lines, the output-shapes assignment before it (or None)
    and the loop itself."""

    comments: list[str]
    shapes: str | None
    loop: cst.For

    @property
    def needs_shapes(self) -> bool:
        return self.shapes is not None


class _Untranslatable(Exception):
    pass


class _LayerUses(cst.CSTTransformer):
    """The loop variable's Keras members → their torch spellings."""

    def __init__(self, var: str, name_var: str, shapes_var: str):
        self.var, self.name_var, self.shapes_var = var, name_var, shapes_var
        self.needs_shapes = False
        self.bare_outputs: set[int] = set()

    def _is_var(self, node) -> bool:
        return isinstance(node, cst.Name) and node.value == self.var

    def _member(self, node) -> str | None:
        return node.attr.value if isinstance(node, cst.Attribute) and self._is_var(node.value) else None

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign):
        if len(original.targets) == 1 and self._member(original.targets[0].target) == "trainable":
            return cst.Expr(cst.parse_expression(f"{self.var}.requires_grad_({_code(updated.value)})"))
        return updated

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        if self._member(original.func) == "count_params" and not original.args:
            return cst.parse_expression(f"sum(p.numel() for p in {self.var}.parameters())")
        return updated

    def _shape_lookup(self) -> cst.BaseExpression:
        self.needs_shapes = True
        return cst.parse_expression(f"{self.shapes_var}[{self.name_var}]")

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
        if updated.attr.value == "shape" and id(updated.value) in self.bare_outputs:
            self.bare_outputs.discard(id(updated.value))  # layer.output.shape
            return updated.value
        member = self._member(original)
        if member is None:
            return updated
        if member == "name":
            return cst.Name(self.name_var)
        if member == "output_shape":
            return self._shape_lookup()
        if member == "output":
            lookup = self._shape_lookup()
            self.bare_outputs.add(id(lookup))  # only `.shape` may follow: the tensor has no equivalent
            return lookup
        if member == "trainable":
            return cst.parse_expression(f"all(p.requires_grad for p in {self.var}.parameters())")
        if member == "count_params":
            return updated  # the call becomes a sum (leave_Call)
        raise _Untranslatable(member)


def output_shapes(md: ModelDef, class_text: str) -> dict[str, tuple] | None:
    """Each child module of the printed class → its layer's output shape (the IR's static
    shape, torch layout); None when a child is not one layer (a ModuleList of blocks)."""
    own = class_text.split(f"class {md.class_name}(", 1)[-1].split("\nclass ", 1)[0]
    children = [m.group(1) for m in re.finditer(r"^        self\.(\w+) = (?!nn\.Parameter\()", own, re.M)]
    shapes: dict[str, tuple] = {}
    for node in md.graph.nodes:
        if node.name in children and node.outputs and node.outputs[0].shape is not None:
            shapes.setdefault(node.name, tuple(node.outputs[0].shape))
    return shapes if set(children) <= set(shapes) else None


def translate_layers_loop(stmt: cst.For, model: str, md: ModelDef | None, class_text: str,
                          taken: set[str]) -> LayersLoop | None:
    """``for layer in model.layers: ...`` in torch terms, or None when the body uses the
    layer in a way this module does not translate."""
    if md is None or stmt.orelse is not None or not isinstance(stmt.target, cst.Name) or stmt.asynchronous:
        return None
    var = stmt.target.value
    name_var = _fresh(f"{var}_name", taken)
    shapes_var = _fresh("output_shapes", taken)
    uses = _LayerUses(var, name_var, shapes_var)
    try:
        body = stmt.body.visit(uses)
    except _Untranslatable:
        return None
    if uses.bare_outputs:
        return None  # layer.output used as a tensor
    comments, shapes = list(NOTES), None
    if uses.needs_shapes:
        table = output_shapes(md, class_text)
        if table is None:
            return None
        comments.append(SHAPES_NOTE)
        items = ", ".join(f"{k!r}: ({', '.join('None' if d is None else str(d) for d in v)}{',' if len(v) == 1 else ''})"
                          for k, v in table.items())
        shapes = f"{shapes_var} = {{{items}}}"
    header = cst.parse_statement(f"for {name_var}, {var} in {model}.named_children():\n    pass\n")
    loop = stmt.with_changes(target=header.target, iter=header.iter, body=body)
    return LayersLoop(comments, shapes, loop)


def _fresh(name: str, taken: set[str]) -> str:
    out, i = name, 1
    while out in taken:
        i += 1
        out = f"{name}_{i}"
    return out
