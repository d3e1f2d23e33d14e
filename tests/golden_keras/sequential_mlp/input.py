import torch.nn as nn

NUM_FEATURES = 8
INPUT_SHAPE = (NUM_FEATURES,)


def build_model(hidden=32):
    # a plain chain becomes keras.Sequential
    return nn.Sequential(
        nn.Linear(NUM_FEATURES, hidden),
        nn.GELU(),
        nn.LayerNorm(hidden),
        nn.Dropout(0.1),
        nn.Linear(hidden, 1),  # regression head
    )
