"""torch tensor methods numpy spells in more than one expression, for generated Keras
programs (PyTorch -> Keras): the data code outside the model holds torch's tensors as numpy
arrays (frontend_ast/torch/tensor_params.py writes their calls).
"""

import numpy as np


def masked_fill(x, mask, value):
    """torch's ``x.masked_fill(mask, value)``: ``value`` where ``mask`` holds, ``x``
    elsewhere, in ``x``'s dtype (torch casts the value to it)."""
    x = np.asarray(x)
    return np.where(mask, np.asarray(value, dtype=x.dtype), x)
