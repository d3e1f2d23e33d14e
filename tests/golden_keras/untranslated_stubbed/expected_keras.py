# Transpiled from input.py (PyTorch) to Keras by transpiler; review before use.
import numpy as np
import keras
from keras import layers

INPUT_SHAPE = (6,)
EPOCHS = 2


def build_model():
    # transpiler: not translated: input.py:17:9: tensor indexing 'x[:, :2]' is not supported
    raise NotImplementedError(
        "transpiler: input.py:17:9: tensor indexing 'x[:, :2]' is not supported"
    )


def scale(values):
    return np.asarray(values) * 2.0


# transpiler: not translated (PyTorch), translate by hand:
# | def train(model, x):
# |     optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
# |     for _ in range(EPOCHS):
# |         optimizer.zero_grad()
# |         loss = model(x).pow(2).mean()
# |         loss.backward()
# |         optimizer.step()
def train(model, x):
    raise NotImplementedError(
        "transpiler: input.py:28:1: train uses PyTorch (not translated to Keras yet)"
    )


# transpiler: not translated (PyTorch), translate by hand:
# | if __name__ == "__main__":
# |     train(build_model(), torch.randn(4, 6))
if __name__ == "__main__":
    raise NotImplementedError(
        "transpiler: input.py:37:1: the script's main block uses PyTorch (not translated to Keras yet)"
    )
