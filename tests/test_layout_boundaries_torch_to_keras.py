"""torch → Keras: a feature map the Keras model returns channels-last, handed to code written
for torch's layout (frontend_ast/torch/layout_boundary.py).

A convolutional model's output in a custom training step is channels-last in Keras; a
function of the program (this file's, or another file's: ``utils.gram(y)``) indexes torch's
channels-first layout. The call hands it the map permuted back, and the losses are torch's
for the same weights. A model whose class is a marked stub in its own file (torchvision's
pretrained network) is called as written, with a note, its construction being the stub.
"""

from __future__ import annotations

import contextlib
import io
import sys

import torch  # noqa: F401  (torch before Keras in one process)
import numpy as np
import pytest

from transpiler.cli import run
from transpiler.translate import translate

RTOL = 1e-4

GRAM = '''\
def gram(y):
    (b, ch, h, w) = y.size()
    features = y.view(b, ch, w * h)
    return features.bmm(features.transpose(1, 2)) / (ch * h * w)
'''

UTILS = "import torch\n\n\n" + GRAM

MAIN = '''\
import numpy as np
import torch
import torch.nn as nn
{import_line}


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        return torch.relu(self.conv(x))

{own}
def main():
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.standard_normal((2, 3, 6, 5)).astype("float32"))
    target = torch.from_numpy(rng.standard_normal((2, 4, 4)).astype("float32"))
    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(3):
        model.train()
        optimizer.zero_grad()
        out = model(x)
        g = {gram}(out)
        loss = ((g - target) ** 2).mean() + out.mean()
        loss.backward()
        optimizer.step()
        print("loss", epoch, loss.item())


if __name__ == "__main__":
    main()
'''


def _main(where: str) -> str:
    if where == "own":
        return MAIN.format(import_line="", own="\n" + GRAM + "\n", gram="gram")
    return MAIN.format(import_line="import utils", own="", gram="utils.gram")


def _losses(text: str, name: str, weights=None, path=None) -> list[float]:
    """The losses ``text`` prints, run with ``Net``'s weights set from ``weights`` (torch's)."""
    out = io.StringIO()
    if path is not None:
        sys.path.insert(0, path)
    try:
        ns = {"__name__": name}
        exec(compile(text, f"<{name}>", "exec"), ns)
        if weights is not None:
            net = ns["Net"]  # (a builder function or a keras.Model subclass)

            def same_weights(*args, **kwargs):
                model = net(*args, **kwargs)
                model(np.zeros((1, 6, 5, 3), "float32"))  # (built, if its layers build on the first call)
                model.get_layer("conv").set_weights([weights["conv.weight"].transpose(2, 3, 1, 0),
                                                     weights["conv.bias"]])
                return model

            ns["Net"] = same_weights
        else:
            net = ns["Net"]
            init = net.__init__
            recorded = {}

            def recording_init(self, *args, **kwargs):
                init(self, *args, **kwargs)
                recorded.update({k: v.detach().numpy().copy() for k, v in self.state_dict().items()})

            net.__init__ = recording_init
            ns["recorded"] = recorded
        with contextlib.redirect_stdout(out):
            ns["main"]()
    finally:
        if path is not None:
            sys.path.remove(path)
            sys.modules.pop("utils", None)
    losses = [float(line.split()[-1]) for line in out.getvalue().splitlines() if line.startswith("loss")]
    return losses, ns.get("recorded")


@pytest.mark.parametrize("where", ["own", "other_file"])
def test_a_channels_last_map_is_permuted_back_for_torch_layout_code(tmp_path, where):
    src = tmp_path / "prog"
    src.mkdir()
    (src / "main.py").write_text(_main(where))
    if where == "other_file":
        (src / "utils.py").write_text(UTILS)
    out = tmp_path / "out"
    assert run([str(src), "--to", "keras", "-o", str(out), "-q", "--exact"]) == 0
    text = (out / "main.py").read_text()
    assert "NotImplementedError" not in text
    call = "gram" if where == "own" else "utils.gram"
    assert f"{call}(keras.ops.transpose(out, (0, 3, 1, 2)))" in text, text

    t, weights = _losses(_main(where), "torch_main", path=str(src) if where == "other_file" else None)
    k, _ = _losses(text, "keras_main", weights, path=str(out) if where == "other_file" else None)
    assert len(t) == 3 and len(k) == 3
    np.testing.assert_allclose(k, t, rtol=RTOL)


def test_a_map_given_by_keyword_is_permuted_back(tmp_path):
    main = _main("own").replace("g = gram(out)", "g = gram(y=out)")
    result = translate(main, str(tmp_path / "main.py"), "keras")
    assert not [d for d in result.program.diagnostics if d.severity == "stub"]
    assert "g = gram(y=keras.ops.transpose(out, (0, 3, 1, 2)))" in result.text


PRETRAINED = '''\
import torch
from torchvision import models


class Features(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.body = models.vgg16(weights=models.VGG16_Weights.IMAGENET1K_V1).features[:4]

    def forward(self, x):
        return self.body(x)
'''


def test_a_model_whose_class_is_a_stub_in_its_file_is_called_as_written(tmp_path):
    src = tmp_path / "prog"
    src.mkdir()
    (src / "features.py").write_text(PRETRAINED)
    main = _main("own").replace("import torch.nn as nn\n", "import torch.nn as nn\nfrom features import Features\n")
    main = main.replace("        loss = ((g - target) ** 2).mean() + out.mean()",
                        "        f = features(x)\n        loss = ((g - target) ** 2).mean() + f.mean()")
    main = main.replace("    model = Net()\n", "    model = Net()\n    features = Features()\n")
    (src / "main.py").write_text(main)
    result = translate(main, str(src / "main.py"), "keras")
    stubs = [d.message for d in result.program.diagnostics if d.severity == "stub"]
    assert not stubs, stubs
    assert "its class Features is a marked stub in features.py" in result.text
    # (the class's own file keeps the stub: the program stops where it builds the model)
    own = translate(PRETRAINED, str(src / "features.py"), "keras")
    assert [d for d in own.program.diagnostics if d.severity == "stub"]


ONNX_PRIVATE = '''\
import numpy as np
import torch
import torch.nn as nn
import torch.onnx


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        return torch.relu(self.conv(x))


def main():
    x = torch.from_numpy(np.random.default_rng(0).standard_normal((1, 3, 6, 5)).astype("float32"))
    model = Net()
    model.eval()
    with torch.no_grad():
        output = torch.onnx._export(model, x, "net.onnx", opset_version=11).cpu()
    print("shape", tuple(output.shape))


if __name__ == "__main__":
    main()
'''


def test_onnx_private_export_writes_the_file_and_returns_the_outputs(tmp_path):
    """``torch.onnx._export`` returns the model's outputs on the example input (torch's layout)."""
    import sys as _sys

    from program_runner import run as run_program

    result = translate(ONNX_PRIVATE, str(tmp_path / "net.py"), "keras")
    assert not [d for d in result.program.diagnostics if d.severity == "stub"]
    assert 'model.export("net.onnx", format="onnx"),' in result.text, result.text
    # (Keras' ONNX export needs tf2onnx under TensorFlow: the run records the call instead)
    (tmp_path / "sitecustomize.py").write_text(
        "import keras\n"
        "def _export(self, path, format=None):\n"
        "    assert self.built and format == 'onnx'\n"
        "    print('exported', path)\n"
        "keras.Model.export = _export\n")
    (tmp_path / "prog.py").write_text("import sitecustomize\n" + result.text)
    done = run_program([_sys.executable, str(tmp_path / "prog.py")], cwd=tmp_path, capture_output=True, text=True,
                       timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "exported net.onnx" in done.stdout and "shape (1, 4, 6, 5)" in done.stdout, done.stdout


def test_a_map_in_unpacked_arguments_is_a_stub(tmp_path):
    """``gram(*[out])``: which argument is the map is not known here; a marked stub, not the
    channels-last map handed to code that indexes torch's layout."""
    main = _main("own").replace("g = gram(out)", "g = gram(*[out])")
    result = translate(main, str(tmp_path / "main.py"), "keras")
    stubs = [d.message for d in result.program.diagnostics if d.severity == "stub"]
    assert len(stubs) == 1 and "unpacked arguments" in stubs[0], stubs
