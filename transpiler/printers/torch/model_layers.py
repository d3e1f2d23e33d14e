"""``model.layers`` → the torch module's children.

The common uses of a Keras model's layer list in a training script are inspecting it
(print each layer's name, output shape, parameter count) and freezing it
(``layer.trainable = False``). Their torch spellings: ``model.named_children()``,
``t.numel()`` over the floating tensors of ``layer.state_dict()`` (Keras counts
non-trainable weights such as BatchNorm statistics too) and ``layer.requires_grad_(False)``.
Output shapes are the IR's static shapes, printed as a table before the loop (a forward
hook would see an RNN's whole sequence where the Keras layer returns its last step).
For a Sequential model, whose layer list the frontend records, ``model.layers[i]`` and
``model.layers[a:b]`` become the modules those layers became. A loop over layers picked by
name, ``[(n, model.get_layer(n)) for n in ("conv1", ...)]`` (or ``[model.get_layer(n) ...]``,
the Keras form of torch's ``model.named_children()``/``children()``), becomes
``model.named_children()``/``children()`` when the names are the module's children in
order, else the listed children. Any other use of a layer
(its weights, its config, ``isinstance`` on Keras classes) is left to the caller, which
stubs it.

The lists differ: Keras lists every layer (and a functional model's InputLayer), torch
only the submodules; layers ``forward()`` applies as functions (Flatten, Concatenate,
activations) have none. Names are the torch attribute names, shapes are channels-first.
The generated code says so in a comment.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

import libcst as cst

from transpiler.ir import sizes
from transpiler.ir.program import ModelDef

ALIGNED_NOTE = "# model.layers: the torch module's children, one per Keras layer, under torch's names"
NOTES = ("# model.layers: the torch module's children, under torch's names (layers that forward()",
         "# applies as functions, e.g. Flatten or Concatenate, are not modules and not listed)")
SHAPES_NOTE = "# each layer's output shape (batch axis None) as Keras computes it, channels-first"


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _shape_text(shape: tuple, bound: dict[int, Any]) -> str:
    """A static shape as a tuple literal: each size as its number for the builder call that
    made the model (``bound``, see :func:`call_bindings`); a size that call does not
    determine prints as the number it was built with (its names are then specialised)."""
    def dim(d) -> str:
        if d is None:
            return "None"
        n = sizes.number_for(d, bound)
        return str(d) if n is None else str(n)
    dims = ", ".join(dim(d) for d in shape)
    return f"({dims},)" if len(shape) == 1 else f"({dims})"


def call_bindings(md: ModelDef, call: cst.Call | None, fn: cst.FunctionDef | None) -> dict[int, Any]:
    """The values one call of the builder passes its size parameters, by ``id`` of each
    parameter's symbol (as :func:`sizes.number_for` takes them): a literal number or tuple of
    numbers where the call passes one, the value the model was built for where it passes
    none (the default); a parameter passed anything else is left out."""
    if call is None or fn is None:
        return {}
    params = [p.name.value for p in (*fn.params.posonly_params, *fn.params.params)]
    passed: dict[str, cst.BaseExpression] = {}
    for i, arg in enumerate(call.args):
        if arg.star:
            return {}
        if arg.keyword is not None:
            passed[arg.keyword.value] = arg.value
        elif i < len(params):
            passed[params[i]] = arg.value
    bound: dict[int, Any] = {}
    for name, value in md.builder_args.items():
        sym = sizes.symbol_of(value)
        if sym is None:
            continue
        if name not in passed:
            bound[id(sym)] = tuple(int.__int__(v) for v in value) if isinstance(value, tuple) else int.__int__(value)
            continue
        try:
            got = ast.literal_eval(_code(passed[name]))
        except (ValueError, SyntaxError):
            continue
        if isinstance(got, int) and not isinstance(got, bool) or \
                isinstance(got, tuple) and all(isinstance(v, int) and not isinstance(v, bool) for v in got):
            bound[id(sym)] = got
    return bound


@dataclass
class ModelLayers:
    """What the printed torch module offers for a Keras model's ``model.layers``."""

    md: ModelDef
    children: list[str]  # the module's child attributes, in order
    shapes: dict[str, tuple]  # child → its layer's output shape (IR, torch layout)
    #: a Sequential's model.layers (Keras order) → the child each became (None: a function in
    #: forward(), e.g. Flatten); None for other models, whose Keras order is not known here
    keras: list[str | None] | None
    #: a Keras layer's name → the child it became
    by_source: dict[str, str]
    #: the builder call that made the model: its size parameters' values (call_bindings)
    bound: dict[int, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, md: ModelDef, class_text: str, bound: dict[int, Any] | None = None) -> "ModelLayers":
        own = class_text.split(f"class {md.class_name}(", 1)[-1].split("\nclass ", 1)[0]
        children = [m.group(1) for m in re.finditer(r"^        self\.(\w+) = (?!nn\.Parameter\()", own, re.M)]
        shapes: dict[str, tuple] = {}
        by_source: dict[str, str] = {}
        for node in md.graph.nodes:
            if node.name in children and node.outputs and node.outputs[0].shape is not None:
                shapes.setdefault(node.name, tuple(node.outputs[0].shape))
                if node.source_name:
                    by_source.setdefault(node.source_name, node.name)
        names = md.graph.from_keras.keras_layers
        keras = [by_source.get(name) for name in names] if names else None
        return cls(md, children, shapes, keras, by_source, dict(bound or {}))

    @property
    def aligned(self) -> bool:
        """One child per Keras layer, in the same order: model.layers[i] is child i."""
        return self.keras is not None and self.keras == self.children

    def child(self, index: int) -> str | None:
        """The child for ``model.layers[index]`` (None: not known, or no module)."""
        if self.keras is None or not -len(self.keras) <= index < len(self.keras):
            return None
        return self.keras[index]


def _int(node) -> int | None:
    """A literal int (negative included), else None."""
    if isinstance(node, cst.Integer):
        return int(node.value)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) \
            and isinstance(node.expression, cst.Integer):
        return -int(node.expression.value)
    return None


@dataclass
class _PickedLayers:
    """``[(n, m.get_layer(n)) for n in ("a", ...)]`` (``named``) or ``[m.get_layer(n) for n in ...]``."""

    model: str
    names: list[str]
    named: bool


def _picked_layers(iterable: cst.BaseExpression) -> _PickedLayers | None:
    """The layers a list comprehension picks by ``get_layer`` over literal names, else None."""
    if not isinstance(iterable, cst.ListComp) or iterable.for_in.inner_for_in is not None \
            or iterable.for_in.ifs or not isinstance(iterable.for_in.target, cst.Name) \
            or not isinstance(iterable.for_in.iter, (cst.Tuple, cst.List)):
        return None
    var = iterable.for_in.target.value
    names = [e.value.evaluated_value for e in iterable.for_in.iter.elements
             if isinstance(e.value, cst.SimpleString)]
    if len(names) != len(iterable.for_in.iter.elements) or not all(isinstance(n, str) for n in names):
        return None
    elt, named = iterable.elt, False
    if isinstance(elt, cst.Tuple) and len(elt.elements) == 2 and isinstance(elt.elements[0].value, cst.Name) \
            and elt.elements[0].value.value == var:
        elt, named = elt.elements[1].value, True
    if not (isinstance(elt, cst.Call) and isinstance(elt.func, cst.Attribute) and elt.func.attr.value == "get_layer"
            and isinstance(elt.func.value, cst.Name) and len(elt.args) == 1 and elt.args[0].keyword is None
            and isinstance(elt.args[0].value, cst.Name) and elt.args[0].value.value == var):
        return None
    return _PickedLayers(elt.func.value.value, names, named)


def loop_receiver(iterable: cst.BaseExpression) -> str | None:
    """``m`` for a loop over ``m.layers``, ``m.layers[...]`` or layers of ``m`` picked by name."""
    picked = _picked_layers(iterable)
    return picked.model if picked is not None else layers_receiver(iterable)


def layers_receiver(iterable: cst.BaseExpression) -> str | None:
    """``m`` for ``m.layers`` or ``m.layers[...]``, else None."""
    if isinstance(iterable, cst.Subscript):
        iterable = iterable.value
    if isinstance(iterable, cst.Attribute) and iterable.attr.value == "layers" and isinstance(iterable.value, cst.Name):
        return iterable.value.value
    return None


def _index_of(node) -> int | None:
    """``i`` for ``m.layers[i]`` with a literal int ``i``."""
    if isinstance(node, cst.Subscript) and layers_receiver(node) and len(node.slice) == 1 \
            and isinstance(node.slice[0].slice, cst.Index):
        return _int(node.slice[0].slice.value)
    return None


def _slice_of(node) -> tuple[int | None, int | None] | None:
    """``(a, b)`` for ``m.layers[a:b]`` with literal (or omitted) bounds and no step."""
    if not (isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Slice)):
        return None
    sl = node.slice[0].slice
    if sl.step is not None:
        return None
    bounds = []
    for bound in (sl.lower, sl.upper):
        value = None if bound is None else _int(bound)
        if bound is not None and value is None:
            return None
        bounds.append(value)
    return bounds[0], bounds[1]


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


@dataclass
class _Ref:
    """How one layer reference reads in torch: the module, its name, its output shape."""

    module: str
    name: str | None  # None: the layer's name is not at hand
    shape: str | None


class _LayerUses(cst.CSTTransformer):
    """A layer's Keras members (``name``, ``output.shape``, ``output_shape``,
    ``count_params()``, ``trainable``) → their torch spellings. ``refer(node)`` says whether
    ``node`` is a layer (the loop variable, ``model.layers[i]``) and how it reads."""

    def __init__(self, refer):
        self.refer = refer
        self.needs_shapes = False
        self.bare_outputs: set[int] = set()

    def _member(self, node) -> tuple[str, _Ref] | None:
        if isinstance(node, cst.Attribute):
            ref = self.refer(node.value)
            if ref is not None:
                return node.attr.value, ref
        return None

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign):
        found = self._member(original.targets[0].target) if len(original.targets) == 1 else None
        if found is not None and found[0] == "trainable":
            return cst.Expr(cst.parse_expression(f"{found[1].module}.requires_grad_({_code(updated.value)})"))
        return updated

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        found = self._member(original.func)
        if found is not None and found[0] == "count_params" and not original.args:
            # Keras counts every weight, the BatchNorm statistics too: the floating state
            return cst.parse_expression(f"sum(t.numel() for t in {found[1].module}.state_dict().values() "
                                        "if t.is_floating_point())")
        return updated

    def _shape(self, ref: _Ref) -> cst.BaseExpression:
        if ref.shape is None:
            raise _Untranslatable("output shape")
        self.needs_shapes = True
        return cst.parse_expression(ref.shape)

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
        if updated.attr.value == "shape" and id(updated.value) in self.bare_outputs:
            self.bare_outputs.discard(id(updated.value))  # layer.output.shape
            return updated.value
        found = self._member(original)
        if found is None:
            return updated
        member, ref = found
        if member == "name":
            if ref.name is None:
                raise _Untranslatable(member)
            return cst.parse_expression(ref.name)
        if member == "output_shape":
            return self._shape(ref)
        if member == "output":
            lookup = self._shape(ref)
            self.bare_outputs.add(id(lookup))  # only `.shape` may follow: the tensor has no equivalent
            return lookup
        if member == "trainable":
            return cst.parse_expression(f"all(p.requires_grad for p in {ref.module}.parameters())")
        if member == "count_params":
            return updated  # the call becomes a sum (leave_Call)
        raise _Untranslatable(member)

    def leave_Subscript(self, original: cst.Subscript, updated: cst.Subscript):
        ref = self.refer(original)
        if ref is not None and _index_of(original) is not None:
            return cst.parse_expression(ref.module)  # a bare model.layers[i]: the module
        return updated


def _table(shapes: dict[str, tuple], bound: dict[int, Any]) -> str:
    return "{" + ", ".join(f"{k!r}: {_shape_text(v, bound)}" for k, v in shapes.items()) + "}"


def translate_layers_loop(stmt: cst.For, model: str, layers: ModelLayers, taken: set[str]) -> LayersLoop | None:
    """``for layer in model.layers[...]: ...`` in torch terms, or None when the body uses
    the layer in a way this module does not translate."""
    if stmt.orelse is not None or stmt.asynchronous:
        return None
    picked = _picked_layers(stmt.iter)
    if picked is not None:
        return _translate_picked_loop(stmt, picked, layers, taken)
    if not isinstance(stmt.target, cst.Name):
        return None
    var = stmt.target.value
    if isinstance(stmt.iter, cst.Subscript):
        bounds = _slice_of(stmt.iter)
        if bounds is None or layers.keras is None:
            return None
        picked = layers.keras[slice(*bounds)]
        if None in picked:
            return None  # a layer forward() applies as a function: it has no module to hand out
        iterable = (f"list({model}.named_children())[{_code(stmt.iter.slice[0].slice)}]" if layers.aligned
                    else "[" + ", ".join(f"({c!r}, {model}.{c})" for c in picked) + "]")
    else:
        iterable = f"{model}.named_children()"
    name_var = _fresh(f"{var}_name", taken)
    shapes_var = _fresh("output_shapes", taken)
    ref = _Ref(var, name_var, f"{shapes_var}[{name_var}]")
    translated = _translate_body(stmt, var, ref, layers, shapes_var,
                                 [ALIGNED_NOTE] if layers.aligned else list(NOTES))
    if translated is None:
        return None
    body, comments, shapes = translated
    header = cst.parse_statement(f"for {name_var}, {var} in {iterable}:\n    pass\n")
    loop = stmt.with_changes(target=header.target, iter=header.iter, body=body)
    return LayersLoop(comments, shapes, loop)


def _translate_body(stmt: cst.For, var: str, ref: _Ref, layers: ModelLayers, shapes_var: str,
                    comments: list[str]) -> tuple[cst.BaseSuite, list[str], str | None] | None:
    """The loop's body with the uses of the layer ``var`` in torch terms, the comments before
    the loop and the output-shapes table it needs (or None); None when a use has no translation."""
    uses = _LayerUses(lambda node: ref if isinstance(node, cst.Name) and node.value == var else None)
    try:
        body = stmt.body.visit(uses)
    except _Untranslatable:
        return None
    if uses.bare_outputs:
        return None  # layer.output used as a tensor
    shapes = None
    if uses.needs_shapes:
        if set(layers.children) - set(layers.shapes):
            return None  # a child that is not one layer (a ModuleList of blocks)
        comments = comments + [SHAPES_NOTE]
        shapes = f"{shapes_var} = {_table(layers.shapes, layers.bound)}"
    return body, comments, shapes


def _translate_picked_loop(stmt: cst.For, picked: _PickedLayers, layers: ModelLayers,
                           taken: set[str]) -> LayersLoop | None:
    """``for n, layer in [(n, m.get_layer(n)) for n in names]`` → ``m.named_children()`` (the
    children in order) or the listed children; ``[m.get_layer(n) ...]`` → ``m.children()``."""
    target = stmt.target
    if picked.named:
        if not (isinstance(target, cst.Tuple) and len(target.elements) == 2
                and all(isinstance(e.value, cst.Name) for e in target.elements)):
            return None
        name_var, var = (e.value.value for e in target.elements)
    elif isinstance(target, cst.Name):
        name_var, var = None, target.value
    else:
        return None
    children = [layers.by_source.get(n, n if n in layers.children else None) for n in picked.names]
    if None in children or len(set(children)) != len(children) or (picked.named and children != picked.names):
        return None  # a layer that is no child (or under another name: the loop's names would change)
    model = picked.model
    if children == layers.children:
        iterable = f"{model}.named_children()" if picked.named else f"{model}.children()"
    elif picked.named:
        iterable = "[" + ", ".join(f"({c!r}, {model}.{c})" for c in children) + "]"
    else:
        iterable = "[" + ", ".join(f"{model}.{c}" for c in children) + "]"
    shapes_var = _fresh("output_shapes", taken)
    ref = _Ref(var, name_var, f"{shapes_var}[{name_var}]" if name_var else None)
    translated = _translate_body(stmt, var, ref, layers, shapes_var, [])
    if translated is None:
        return None
    body, comments, shapes = translated
    loop = stmt.with_changes(iter=cst.parse_expression(iterable), body=body)
    return LayersLoop(comments, shapes, loop)


def translate_layer_indexing(stmt: cst.SimpleStatementLine, layers_of) -> cst.SimpleStatementLine | None:
    """A statement using ``model.layers[i]`` (a literal index) of a Sequential model: the
    child module it became (``model.fc1``), its name, output shape, parameter count and
    ``trainable``. ``layers_of(var)`` gives a model variable's ``ModelLayers`` (or None).
    None when some use has no translation."""

    def refer(node):
        index = _index_of(node)
        if index is None:
            return None
        layers = layers_of(layers_receiver(node))
        child = layers.child(index) if layers is not None else None
        if child is None:
            raise _Untranslatable("model.layers[i]")
        return _Ref(f"{layers_receiver(node)}.{child}", repr(child), _shape_text(layers.shapes[child], layers.bound))

    try:
        return stmt.visit(_LayerUses(refer))
    except _Untranslatable:
        return None


def _fresh(name: str, taken: set[str]) -> str:
    out, i = name, 1
    while out in taken:
        i += 1
        out = f"{name}_{i}"
    return out
