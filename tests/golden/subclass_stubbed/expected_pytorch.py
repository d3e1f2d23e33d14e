# Transpiled from input.py (Keras) to PyTorch by transpiler; review before use.
import torch
from torch import nn


# TODO(transpiler): not translated yet (input.py:4): a Keras subclass
# class MyModel(keras.Model):
#     def __init__(self):
#         super().__init__()
#         self.d1 = layers.Dense(8, activation="relu")
#         self.d2 = layers.Dense(2)
#
#     def call(self, x):
#         return self.d2(self.d1(x))
class MyModel:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError(
            "transpiler: 'class MyModel(keras.Model):' (input.py:4) is not translated yet"
        )


model = MyModel()
model.compile(optimizer="adam", loss="mse")
