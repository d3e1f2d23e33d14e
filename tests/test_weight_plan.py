"""The weight plan is IR data (ir/state_plan.py) the drivers compute once (transpiler/weight_plan.py).

The checkpoint converters and the training reader read ``Graph.weight_plan`` and never the
printers (tests/test_layering.py). These tests guard what that relies on: the torch plan the
driver records *before* printing (the printer's ``regularization_loss`` reads it) is the one
the printed module has; the Keras layers are recorded for both directions; a converter given
a graph with no plan says so; a plan that cannot map a checkpoint says why at conversion,
without failing the translation.
"""

from __future__ import annotations

import dataclasses
import pathlib

import pytest

from transpiler.ir.graph import Graph
from transpiler.ir.state_plan import PlanEntry, StatePlan, WeightPlan
from transpiler.printers.torch.state_plan import source_state_plan, torch_state_plan
from transpiler.translate import translate
from transpiler.weights import torch_source
from transpiler.weights.errors import CheckpointError
from transpiler.weights.mapping import torch_plan

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _signature(plan: StatePlan) -> list[tuple]:
    return [(e.key, e.layer, e.param, e.node.name, [repr(s) for s in e.param_steps], e.transform, e.constant)
            for e in plan]


@pytest.mark.parametrize("rel", ["corpus/keras/resnet_small.py", "corpus/keras/subclassed_cnn.py",
                                 "tests/programs/callbacks_program.py"])
def test_torch_plan_recorded_before_printing_is_the_printed_modules(rel):
    path = ROOT / rel
    result = translate(path.read_text(encoding="utf-8"), str(path))
    assert result.program.models
    for md in result.program.models:
        recorded = md.graph.weight_plan.torch_state
        assert recorded is not None and len(recorded) > 0
        assert _signature(recorded) == _signature(torch_state_plan(md.graph))  # (recomputed after printing)
        assert md.graph.weight_plan.keras_layers  # the source Keras layers' classes, for the files
        # every key the printed module's state_dict has appears in the text as an attribute of it
        for entry in recorded:
            assert entry.key.split(".")[0] in result.text


def test_plan_holds_only_ir_data():
    """The plan's classes are the IR's; a plan entry names its node, not a printer object."""
    for cls in (PlanEntry, StatePlan, WeightPlan):
        assert cls.__module__ == "transpiler.ir.state_plan"
    src = (ROOT / "corpus/torch/mnist_cnn.py").read_text(encoding="utf-8")
    result = translate(src, "mnist_cnn.py", "keras")
    plan = result.program.models[0].graph.weight_plan
    assert plan.source_state is not None and plan.source_state.error is None
    assert plan.layer_attributes is not None and plan.keras_layers
    for entry in plan.source_state:
        for f in dataclasses.fields(entry):
            value = getattr(entry, f.name)
            assert not type(value).__module__.startswith(("transpiler.printers", "transpiler.frontend_ast",
                                                          "transpiler.weights")), (f.name, value)


def test_converters_refuse_a_graph_without_a_recorded_plan():
    graph = Graph("bare")
    with pytest.raises(CheckpointError, match="no state_dict plan"):
        torch_plan(graph)
    with pytest.raises(CheckpointError, match="did not come from a PyTorch script"):
        torch_source.check_state(graph, {}, "x.pt")
    with pytest.raises(CheckpointError, match="no Keras layer plan"):
        torch_source.printed_attributes(graph)


def test_a_plan_that_cannot_map_a_checkpoint_fails_the_conversion_not_the_translation():
    """A BatchNormalization with a shift but no scale is an nn.BatchNorm without affine terms plus
    a parameter of the module's own: no torch source module has that form, so the source plan
    records why and the conversion (not the translation) reports it."""
    src = ("import keras\nfrom keras import layers\n\n\ndef build_model():\n"
           "    inp = keras.Input(shape=(4,))\n"
           "    out = layers.BatchNormalization(scale=False)(layers.Dense(3)(inp))\n"
           "    return keras.Model(inp, out)\n")
    graph = translate(src, "bn.py").program.models[0].graph
    plan = source_state_plan(graph)
    assert plan.error and "without both affine terms" in plan.error
    graph.weight_plan.source_state = plan
    with pytest.raises(CheckpointError, match="without both affine terms"):
        torch_source.canonical_from_source(graph, {})
