"""``torch.onnx.export(model, args, path)`` → ``model.export(path, format="onnx")`` with a note
(Keras exports the model for its own inputs; the example arguments only trace torch's graph);
an export of something that is not a model of the program stays a marked stub."""

from __future__ import annotations

from transpiler.translate import translate

PROGRAM = '''
import torch
import torch.nn as nn
import torch.onnx

INPUT_SHAPE = (10,)


def build_model():
    return nn.Sequential(nn.Linear(10, 4), nn.ReLU(), nn.Linear(4, 2))


def export_onnx(path, batch_size):
    dummy_input = torch.randn(batch_size, 10)
    torch.onnx.export(EXPORTED, (dummy_input,), path)


model = build_model()
export_onnx("model.onnx", 1)
'''


def _stubs(result) -> list[str]:
    return [d.message for d in result.program.diagnostics if d.severity == "stub"]


def test_an_onnx_export_of_the_model_is_keras_onnx_export():
    result = translate(PROGRAM.replace("EXPORTED", "model"), "prog.py", "keras")
    assert not _stubs(result), _stubs(result)
    assert '    model.export(path, format="onnx")' in result.text
    assert "Keras' export" in result.text and "import torch" not in result.text


def test_an_onnx_export_of_something_else_is_a_stub():
    # (a loaded object of unknown kind)
    result = translate(PROGRAM.replace("EXPORTED", "torch.jit.load('m.pt')"), "prog.py", "keras")
    assert _stubs(result) and "model.export(" not in result.text, _stubs(result)
