"""The one layout pass (both directions) and the rule that passes read table facts, not op names."""

from __future__ import annotations

import ast
import glob
import os

import pytest

from transpiler.ir import ops as ops_table
from transpiler.ir.graph import Graph
from transpiler.ir.layout import CHANNELS_FIRST, CHANNELS_LAST
from transpiler.ir import shapes
from transpiler.ir.layout import KERAS_TO_TORCH, TORCH_TO_KERAS
from transpiler.ir.passes.layout_pass import convert_layout
from transpiler.ir.shapes import infer_node

PASSES = os.path.join(os.path.dirname(os.path.dirname(__file__)), "transpiler", "ir", "passes")

#: comparisons against op-name literals still in ir/passes, file -> (count, why). May only shrink.
ALLOWED: dict[str, tuple[int, str]] = {}


def _is_op(expr: ast.AST) -> bool:
    """``node.op``, ``op``, ``layer["op"]`` or ``spec.name``: an op's name."""
    if isinstance(expr, ast.Attribute):
        return expr.attr == "op" or expr.attr == "name" and isinstance(expr.value, ast.Attribute) \
            and expr.value.attr == "spec"
    if isinstance(expr, ast.Name):
        return expr.id == "op"
    if isinstance(expr, ast.Subscript):
        return isinstance(expr.slice, ast.Constant) and expr.slice.value == "op"
    return False


def _strings(expr: ast.AST, named: dict[str, set]) -> set:
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return {expr.value}
    if isinstance(expr, (ast.Tuple, ast.List, ast.Set)):
        return set().union(*(_strings(e, named) for e in expr.elts)) if expr.elts else set()
    if isinstance(expr, ast.Name):
        return named.get(expr.id, set())
    return set()


def op_name_branches(source: str) -> list[str]:
    """Comparisons of an op's name with string literals (or a module constant holding them),
    and ``.op.startswith(...)`` tests, in ``source``."""
    tree = ast.parse(source)
    named = {}
    for stmt in tree.body:  # module constants like _NON_NEGATIVE = {"relu", ...}
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for t in targets:
                if isinstance(t, ast.Name) and _strings(stmt.value, {}):
                    named[t.id] = _strings(stmt.value, {})
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(_is_op(o) for o in operands) and any(_strings(o, named) for o in operands):
                found.append(f"line {node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr in ("startswith", "endswith") and _is_op(node.func.value):
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


def test_op_name_lint_finds_what_it_looks_for():
    snippet = ('_KINDS = {"relu", "sigmoid"}\n'
               'def f(node, op, inner):\n'
               '    a = node.op == "dense"\n'
               '    b = op != "rescaling"\n'
               '    c = node.op in ("flatten", "reshape")\n'
               '    d = node.op.startswith("max")\n'
               '    e = inner["op"] == "lstm"\n'
               '    f = node.inputs[0].producer.op in _KINDS\n'
               '    g = node.spec.name == "dense"\n'
               '    h = node.name == "dense" or mode == "concat" or op in _RULES\n')
    assert len(op_name_branches(snippet)) == 7


def test_ir_passes_do_not_branch_on_op_names():
    """ops.py promises it: passes read facts of the ops table, not op names (a registry
    keyed by op name, ``@rule("conv2d")``, is per-op code and allowed)."""
    found = {}
    for path in sorted(glob.glob(os.path.join(PASSES, "*.py"))):
        with open(path, encoding="utf-8") as fh:
            hits = op_name_branches(fh.read())
        if hits:
            found[os.path.basename(path)] = hits
    over = {f: hits for f, hits in found.items() if len(hits) > ALLOWED.get(f, (0, ""))[0]}
    assert not over, f"op-name comparisons in ir/passes (add a table fact instead): {over}"
    stale = {f for f, (n, _why) in ALLOWED.items() if len(found.get(f, [])) < n}
    assert not stale, f"the allowlist may only shrink: lower {sorted(stale)}"


# ---------------------------------------------------------------------------------
# Table facts the passes read
# ---------------------------------------------------------------------------------
def test_same_shape_rule_is_the_tables_fact():
    same = {name for name, spec in ops_table.all_ops().items() if spec.shape == "same"}
    assert {name for name in same if shapes._RULES[name] is shapes._same} == same
    assert {"relu", "batch_norm", "rescaling", "rms_norm", "random_augmentation"} <= same
    assert "dense" not in same


def test_recurrent_state_and_gate_counts_come_from_the_table():
    from transpiler.ir.params import GATES

    assert {n: (s.states, s.gates) for n, s in ops_table.all_ops().items() if s.gates} == {
        "simple_rnn": (1, 1), "lstm": (2, 4), "gru": (1, 3), "conv_lstm2d": (2, 4)}
    assert GATES == {"simple_rnn": 1, "lstm": 4, "gru": 3, "conv_lstm2d": 4}
    assert shapes.rnn_state_count("lstm") == 2


@pytest.mark.parametrize("cell,given,refusal", [("LSTM", 1, "takes 2 state tensor(s), got 1"),
                                                ("GRU", 2, "takes 1 state tensor(s), got 2"),
                                                ("SimpleRNN", 2, "takes 1 state tensor(s), got 2"),
                                                ("LSTM", 2, None), ("GRU", 1, None)])
def test_keras_initial_state_count_is_the_tables_state_count(cell, given, refusal):
    from transpiler.frontend_ast.keras.frontend import read_keras

    src = ("import keras\nfrom keras import layers\n\n\ndef build_model():\n"
           "    x = keras.Input(shape=(5, 3))\n    h = keras.Input(shape=(4,))\n"
           f"    y = layers.{cell}(4)(x, initial_state=[{', '.join(['h'] * given)}])\n"
           "    return keras.Model([x, h], y)\n")
    program = read_keras(src, "m.py")
    messages = " ".join(str(d) for d in program.diagnostics)
    if refusal is None:
        assert len(program.models) == 1 and "state tensor" not in messages
    else:
        assert f"{cell}(initial_state=...) {refusal}" in messages and not program.models


def test_non_negative_fact_is_a_condition_on_the_attributes():
    relu = ops_table.get("relu")
    attrs = relu.complete_attrs({})
    assert relu.holds(relu.non_negative, attrs)
    assert not relu.holds(relu.non_negative, relu.complete_attrs({"negative_slope": 0.1}))
    # below a negative threshold, x itself comes out: negative values
    assert not relu.holds(relu.non_negative, relu.complete_attrs({"threshold": -1.0}))
    assert ops_table.get("sigmoid").non_negative is True and ops_table.get("tanh").non_negative is False


def test_a_fact_naming_an_undeclared_attribute_is_refused():
    with pytest.raises(ValueError, match="not declared"):
        ops_table.op("bogus_scale", attrs="scale: any", layout=ops_table.TRANSPARENT,
                     per_channel_attrs=("offset",))


# ---------------------------------------------------------------------------------
# One pass, both directions: the same graph read from either framework
# ---------------------------------------------------------------------------------
def _cnn(source: dict, flat_scale=None) -> Graph:
    """input (8x8, 3 channels) → conv2d → relu → flatten [→ rescaling] → dense, built in
    the ``source`` layouts (CHANNELS_LAST: as Keras builds it, CHANNELS_FIRST: as torch)."""
    g = Graph("m")
    x = g.new_value("x", layout=source[4])
    x.shape = (None, 8, 8, 3) if source is CHANNELS_LAST else (None, 3, 8, 8)
    g.inputs = [x]
    conv = g.add_node("conv2d", "conv", [x], attrs={"filters": 4, "kernel_size": 3})
    infer_node(conv)
    act = g.add_node("relu", "act", conv.outputs)
    infer_node(act)
    flat = g.add_node("flatten", "flat", act.outputs)
    infer_node(flat)
    v = flat.outputs[0]
    if flat_scale is not None:
        scale = g.add_node("rescaling", "scale", [v], attrs={"scale": flat_scale})
        infer_node(scale)
        v = scale.outputs[0]
    dense = g.add_node("dense", "fc", [v], attrs={"units": 2})
    infer_node(dense)
    g.outputs = dense.outputs
    g.lint()
    return g


@pytest.mark.parametrize("direction,source,target", [(KERAS_TO_TORCH, CHANNELS_LAST, CHANNELS_FIRST),
                                                     (TORCH_TO_KERAS, CHANNELS_FIRST, CHANNELS_LAST)],
                         ids=["keras_to_torch", "torch_to_keras"])
def test_flatten_dense_absorbed_in_both_directions(direction, source, target):
    g = _cnn(source)
    convert_layout(g, direction)
    g.lint()
    assert g.inputs[0].layout == target[4] and g.layouts.transposes == 0
    assert not [n for n in g.nodes if n.op == "transpose"]
    fc = next(n for n in g.nodes if n.name == "fc")
    src_shape = (6, 6, 4) if source is CHANNELS_LAST else (4, 6, 6)
    perm = (2, 0, 1) if source is CHANNELS_LAST else (1, 2, 0)
    assert fc.param_transforms == {"kernel": [("permute_rows", (src_shape, perm))]}


@pytest.mark.parametrize("direction,source", [(KERAS_TO_TORCH, CHANNELS_LAST),
                                              (TORCH_TO_KERAS, CHANNELS_FIRST)],
                         ids=["keras_to_torch", "torch_to_keras"])
def test_per_channel_rescaling_between_flatten_and_dense_blocks_absorption(direction, source):
    """A per-channel scale follows the flattened axis: permuting that axis would move the
    scale's values to other features, so the flatten reads the source order (one transpose)."""
    g = _cnn(source, flat_scale=tuple(float(i) for i in range(144)))
    convert_layout(g, direction)
    g.lint()
    assert [n.op for n in g.nodes].count("transpose") == 1
    assert not next(n for n in g.nodes if n.name == "fc").param_transforms


def test_reshape_to_a_one_axis_gate_needs_no_runtime_transpose_keras_to_torch():
    """(N, C) → (N, 1, 1, C) holds its numbers in the same order as (N, C, 1, 1): the
    reshape makes the channels-first gate directly (the torch → Keras direction always
    did; Keras → torch permuted the gate at run time before the pass was one)."""
    from transpiler.frontend_ast.keras.frontend import read_keras
    from transpiler.ir.passes import run_pipeline

    src = ("import keras\nfrom keras import layers\n\n\ndef build_model():\n"
           "    inputs = keras.Input(shape=(8, 8, 3))\n"
           "    x = layers.Conv2D(4, 3, padding='same')(inputs)\n"
           "    s = layers.GlobalAveragePooling2D()(x)\n"
           "    s = layers.Reshape((1, 1, 4))(s)\n"
           "    x = layers.Multiply()([x, s])\n"
           "    x = layers.Conv2D(2, 3)(x)\n"
           "    return keras.Model(inputs, x)\n")
    g = run_pipeline(read_keras(src, "m.py").models[0].graph)
    assert [n.op for n in g.nodes] == ["conv2d", "global_avg_pool2d", "reshape", "multiply", "conv2d"]
    reshape = next(n for n in g.nodes if n.op == "reshape")
    assert reshape.attrs["shape"] == (4, 1, 1) and reshape.outputs[0].layout == "NCHW"


def _conv_then_reshape(out_layout: str | None, reader: str) -> Graph:
    """torch: x (N, 3, 8, 8) → conv2d → view(N, 4, 64) tagged ``out_layout`` → ``reader``."""
    g = Graph("m")
    x = g.new_value("x", layout="NCHW")
    x.shape = (None, 3, 8, 8)
    g.inputs = [x]
    conv = g.add_node("conv2d", "conv", [x], attrs={"filters": 4, "kernel_size": 3, "padding": "same"})
    infer_node(conv)
    reshape = g.add_node("reshape", "view", conv.outputs, attrs={"shape": (4, 64)})
    if out_layout:
        reshape.out_layout = out_layout
    infer_node(reshape)
    attrs = {"filters": 2, "kernel_size": 1} if reader == "conv1d" else {}
    last = g.add_node(reader, "head", reshape.outputs, attrs=attrs)
    infer_node(last)
    g.outputs = last.outputs
    g.lint()
    return g


def test_reshape_keeping_the_channel_axis_stays_channels_last_torch_to_keras():
    """(N, C, H, W) → (N, C, H*W) read by a Conv1d is (N, H, W, C) → (N, H*W, C) in Keras:
    the relayout rule, written with layout letters, serves this direction too."""
    g = _conv_then_reshape("NCW", "conv1d")
    convert_layout(g, TORCH_TO_KERAS)
    g.lint()
    assert [n.op for n in g.nodes] == ["conv2d", "reshape", "conv1d"]
    reshape = next(n for n in g.nodes if n.op == "reshape")
    assert reshape.attrs["shape"] == (64, 4) and reshape.outputs[0].layout == "NWC"


def test_reshape_into_a_sequence_is_read_in_the_source_order_torch_to_keras():
    """The same view read as a sequence (torch holds (N, 4, 64): 4 steps of 64 features,
    normalised over the 64) is no feature map: the conv output is permuted back before it,
    though the reshape keeps the channel count in front."""
    g = _conv_then_reshape(None, "layer_norm")
    convert_layout(g, TORCH_TO_KERAS)
    g.lint()
    assert [n.op for n in g.nodes] == ["conv2d", "transpose", "reshape", "layer_norm"]
    reshape = next(n for n in g.nodes if n.op == "reshape")
    assert reshape.attrs["shape"] == (4, 64) and reshape.outputs[0].shape == (None, 4, 64)
    assert next(n for n in g.nodes if n.op == "layer_norm").attrs["axis"] == (-1,)


# ---------------------------------------------------------------------------------
# One layout pass: no second one, no op names in it
# ---------------------------------------------------------------------------------
LAYOUT_PASS = os.path.join(PASSES, "layout_pass.py")
#: modules that may name a layout Direction: the pass itself and the pipelines that hold it
DIRECTION_USERS = {"layout_pass.py", "__init__.py"}


def layout_changes(source: str) -> list[str]:
    """What only a layout pass does, in ``source``: re-tag a value's layout (``v.layout =``),
    insert a transpose node, or name a layout direction (``Direction``, ``KERAS_TO_TORCH``,
    ``TORCH_TO_KERAS``) or a layout family (``CHANNELS_FIRST``, ``CHANNELS_LAST``)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Attribute) and t.attr == "layout" for t in targets):
                found.append(f"line {node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_node" \
                and node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value == "transpose":
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, (ast.Name, ast.alias)):
            name = node.id if isinstance(node, ast.Name) else node.name
            if name in ("Direction", "KERAS_TO_TORCH", "TORCH_TO_KERAS", "CHANNELS_FIRST", "CHANNELS_LAST"):
                found.append(f"line {getattr(node, 'lineno', '?')}: {name}")
    return found


def test_layout_change_finder_finds_what_it_looks_for():
    snippet = ("from transpiler.ir.layout import TORCH_TO_KERAS\n"
               "def amend(graph, d: Direction):\n"
               "    graph.inputs[0].layout = 'NCHW'\n"
               "    graph.add_node('transpose', 't', [x], attrs={'perm': (0, 3, 1, 2)})\n"
               "    return CHANNELS_LAST[4], value.layout, graph.add_node('relu', 'r', [x])\n")
    assert len(layout_changes(snippet)) == 5


def test_no_second_layout_pass_in_ir_passes():
    """Two layout passes, one per direction, drifted apart once (issue 17): feature maps change
    layout in ``layout_pass.py`` only; the pipelines name its directions, nothing else does."""
    found = {}
    for path in sorted(glob.glob(os.path.join(PASSES, "*.py"))):
        base = os.path.basename(path)
        if base == "layout_pass.py":
            continue
        with open(path, encoding="utf-8") as fh:
            hits = layout_changes(fh.read())
        if base in DIRECTION_USERS:  # the pipelines: a direction, nothing else
            hits = [h for h in hits if h.split(": ")[1] not in ("KERAS_TO_TORCH", "TORCH_TO_KERAS")]
        if hits:
            found[base] = hits
    assert not found, f"a second layout pass? put it in ir/passes/layout_pass.py: {found}"
    with open(LAYOUT_PASS, encoding="utf-8") as fh:
        assert layout_changes(fh.read()), "the layout pass itself must be found by the scan"


def test_every_pipeline_holds_the_one_layout_pass_once():
    from transpiler.ir.passes import PIPELINES
    from transpiler.ir.passes.layout_pass import LayoutStep, fold_transposes

    directions = {}
    for target, pipeline in PIPELINES.items():
        steps = [fn for _name, fn in pipeline if isinstance(fn, LayoutStep)]
        assert len(steps) == 1, f"{target}: {len(steps)} layout steps"
        directions[target] = steps[0].direction
        fns = [fn for _name, fn in pipeline]
        assert fns[fns.index(steps[0]) + 1] is fold_transposes, f"{target}: the layout step folds its transposes"
        # no other step is a layout pass under another name
        others = [name for name, fn in pipeline if not isinstance(fn, LayoutStep)
                  and getattr(fn, "__module__", "").endswith("layout_pass") and fn.__name__ != "fold_transposes"]
        assert not others, others
    assert directions == {"pytorch": KERAS_TO_TORCH, "keras": TORCH_TO_KERAS}
    assert (KERAS_TO_TORCH.source, KERAS_TO_TORCH.target) == (TORCH_TO_KERAS.target, TORCH_TO_KERAS.source)


def test_the_layout_pass_reads_no_op_name():
    """Stricter than the lint over all passes: the layout pass reads ``node.op`` only as the
    key of its relayout registry, never compares or stores it."""
    with open(LAYOUT_PASS, encoding="utf-8") as fh:
        tree = ast.parse(fh.read())
    keyed = {id(n.args[0]) for n in ast.walk(tree) if isinstance(n, ast.Call)
             and isinstance(n.func, ast.Attribute) and n.func.attr == "get"
             and isinstance(n.func.value, ast.Name) and n.func.value.id == "_RELAYOUT" and n.args}
    reads = [f"line {n.lineno}: {ast.unparse(n)}" for n in ast.walk(tree)
             if isinstance(n, ast.Attribute) and (n.attr == "op" or n.attr == "name" and
                                                   isinstance(n.value, ast.Attribute) and n.value.attr == "spec")
             and id(n) not in keyed]
    assert not reads, f"the layout pass reads op names (put a fact in ir/ops.py): {reads}"
    assert keyed, "the relayout registry lookup moved: update this test"


def test_a_users_permute_undone_by_the_layout_costs_nothing_torch_to_keras():
    """torch's ``emb.permute(0, 2, 1)`` before a Conv1d is Keras' layout already: the user's
    permute and the layout transpose fold away in this direction too (the torch → Keras
    pipeline printed two Permute layers that cancel before the one layout pass folded)."""
    from transpiler.translate import translate

    src = ("import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n"
           "    def __init__(self):\n        super().__init__()\n"
           "        self.emb = nn.Embedding(20, 8)\n        self.conv = nn.Conv1d(8, 4, 3, padding=1)\n\n"
           "    def forward(self, tokens):\n        x = self.emb(tokens).permute(0, 2, 1)\n"
           "        return self.conv(x).amax(dim=2)\n\n\n"
           "def build_model():\n    return Net()\n\n\nmodel = build_model()\n"
           "out = model(torch.zeros(2, 6, dtype=torch.long))\n")
    tr = translate(src, "m.py", "keras")
    graph = tr.program.models[0].graph
    assert [n.op for n in graph.nodes if n.spec.perm_attr] == []
    assert "Permute" not in tr.text and "layers.Conv1D(4, 3" in tr.text
