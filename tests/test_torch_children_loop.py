"""A torch script's loop over ``model.named_children()``/``children()`` in Keras: the layers the
children became, picked by name (``model.get_layer``), and back (frontend_ast/torch/training,
printers/torch/model_layers). A child that is not one Keras layer of its name, and members of a
child other than its name, stay stubs."""

from __future__ import annotations

import contextlib
import io
import re
import textwrap

import pytest

from transpiler.translate import translate

MODEL = textwrap.dedent('''
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    INPUT_SHAPE = (3, 8, 8)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3)
            self.pool = nn.MaxPool2d(2)
            self.fc = nn.Linear(4 * 3 * 3, 2)

        def forward(self, x):
            x = self.pool(F.relu(self.conv(x)))
            return self.fc(torch.flatten(x, 1))


    def build_model():
        return Net()


    model = build_model()
''')

NAMED_LOOP = 'for child_name, child in model.named_children():\n    print("child", child_name)\n'
LOOP = 'for child in model.children():\n    print("child", type(child).__name__)\n'


def _keras(loop: str):
    return translate(MODEL + loop, "net_torch.py", "keras")


def _loop_text(text: str) -> str:
    return text[text.index("\nfor ") + 1:]


def test_named_children_loop_picks_the_layers_the_children_became():
    result = _keras(NAMED_LOOP)
    assert not result.stubs, [str(d) for d in result.stubs]
    assert _loop_text(result.text) == textwrap.dedent('''\
        for child_name, child in [
            (name, model.get_layer(name)) for name in ("conv", "pool", "fc")
        ]:
            print("child", child_name)
    ''')


def test_children_loop_picks_the_layers_the_children_became():
    result = _keras(LOOP)
    assert not result.stubs, [str(d) for d in result.stubs]
    assert 'for child in [model.get_layer(name) for name in ("conv", "pool", "fc")]:' in result.text


@pytest.mark.parametrize("loop", [NAMED_LOOP, LOOP])
def test_children_loop_comes_back_to_torch_unchanged(loop):
    torch_text = translate(_keras(loop).text, "net_torch_keras.py", "pytorch").text
    assert _loop_text(torch_text) == loop


def test_named_children_loop_runs_in_keras_over_torchs_children():
    """Both programs run: the Keras loop visits the layers of torch's child names, in order."""
    import torch  # noqa: F401  (before TensorFlow)

    expected = io.StringIO()
    with contextlib.redirect_stdout(expected):
        exec(compile(MODEL + NAMED_LOOP, "net_torch.py", "exec"), {"__name__": "net_torch"})
    got = io.StringIO()
    with contextlib.redirect_stdout(got):
        exec(compile(_keras(NAMED_LOOP).text, "net_keras.py", "exec"), {"__name__": "net_keras"})
    assert expected.getvalue() == "child conv\nchild pool\nchild fc\n"
    assert got.getvalue() == expected.getvalue()


def test_child_that_is_several_keras_layers_stays_a_stub():
    source = MODEL.replace("self.fc = nn.Linear(4 * 3 * 3, 2)",
                           "self.fc = nn.Sequential(nn.Linear(4 * 3 * 3, 8), nn.Linear(8, 2))")
    result = translate(source + NAMED_LOOP, "net_torch.py", "keras")
    assert [d.message for d in result.stubs] == [
        "model.named_children(): the child 'fc' is not one Keras layer of its name"]


def test_child_members_stay_a_stub():
    result = _keras('for child_name, child in model.named_children():\n    print(child.weight.shape)\n')
    assert len(result.stubs) == 1
    assert re.search(r"child\.weight: a child module's attributes are not translated", result.stubs[0].message)
