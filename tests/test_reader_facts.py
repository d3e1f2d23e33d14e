"""The typed records that replaced free ``meta`` keys (issue 17 item 6, ir/reader_facts.py):
each program, graph and node has its own, empty until a reader fills it, and the nodes a pass
inserts keep the facts that place them."""

from __future__ import annotations

import dataclasses
import pathlib

from transpiler.ir import reader_facts
from transpiler.ir.graph import Graph, Node, Value
from transpiler.ir.program import Program
from transpiler.translate import translate

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _dense_graph() -> tuple[Graph, Node]:
    g = Graph("m")
    x = Value("x", shape=(None, 4), layout="NC")
    g.inputs = [x]
    node = g.add_node("dense", "fc", [x], attrs={"units": 2})
    g.outputs = list(node.outputs)
    return g, node


def test_records_start_empty_and_are_not_shared():
    a, b = Program("a", "", "keras"), Program("b", "", "keras")
    a.from_keras.callback_classes.append("Logger")
    a.from_torch.unbuilt_classes["Net"] = "why"
    assert b.from_keras.callback_classes == [] and b.from_torch.unbuilt_classes == {}
    g1, n1 = _dense_graph()
    g2, n2 = _dense_graph()
    g1.from_torch.comments.append("# c")
    n1.from_torch.absorbed_spans.append(None)
    g1.unsupported.append((None, "x"))
    assert g2.from_torch.comments == [] and n2.from_torch.absorbed_spans == [] and g2.unsupported == []
    assert g2.layouts == reader_facts.GraphLayouts() and g2.weight_plan.keras_blocks is None


def test_a_node_inserted_before_another_stays_in_its_block_call():
    g, node = _dense_graph()
    node.from_torch.block_call = ("res1", 1)
    pad = g.add_node("identity", "pad", list(node.inputs), before=node)
    assert pad.from_torch.block_call == ("res1", 1)
    assert pad.from_torch is not node.from_torch  # (its own record: only the placing fact is copied)
    assert pad.from_torch.path is None


def test_every_record_field_has_a_default():
    for cls in (reader_facts.GraphLayouts, reader_facts.KerasProgramFacts, reader_facts.TorchProgramFacts,
                reader_facts.KerasModelFacts, reader_facts.TorchModelFacts, reader_facts.TorchNodeFacts):
        cls()  # (no argument needed)
        assert all(f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
                   for f in dataclasses.fields(cls)), cls


def test_the_readers_fill_the_records():
    keras = translate((ROOT / "tests/programs/custom_callbacks_program.py").read_text(), "custom_callbacks_program.py")
    assert keras.program.from_keras.callback_classes
    md = keras.program.models[0]
    assert md.graph.layouts.inputs and md.graph.layouts.target_outputs
    torch = translate((ROOT / "corpus/torch/vae.py").read_text(), "vae.py", "keras")
    assert torch.program.from_torch.torch_bindings and torch.program.from_torch.training_facts
    paths = [n.from_torch.path for md in torch.program.models for n in md.graph.nodes if n.op == "dense"]
    assert paths and all(paths)
