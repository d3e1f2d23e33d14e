"""Batches handed back to the program's own code in Keras' layout.

A generated loader puts its images in the model's channels-first layout (fit() reads it as it
is); where the program reads batches itself (``next(iter(ds))``, ``for x, y in ds.take(1):`` to
plot a preview) it reads them through ``keras_layout``: the images back in channels-last, as
Keras gives them (matplotlib's ``imshow`` takes (H, W, C)).
"""


def keras_layout(batches, layout, take=None):
    """``batches`` (a loader's, first part permuted by ``layout`` from channels-last) with each
    batch's first part permuted back to channels-last; a dict batch (feature columns) as it is.
    ``take``: tf.data's ``.take(n)``, the first n batches (a DataLoader has no take())."""
    back = tuple(layout.index(axis) for axis in range(len(layout)))
    for i, batch in enumerate(batches):
        if take is not None and 0 <= take <= i:
            return
        if isinstance(batch, dict):
            yield batch
            continue
        first, *rest = batch if isinstance(batch, (tuple, list)) else (batch,)
        first = first.permute(*back)
        yield (first, *rest) if rest else first



def one_channel_layout(array, perm):
    """``np.transpose(array, perm)``: a channels-last array into the model's layout, for a model
    input of one channel (``keras.Input((28, 28, 1))``). An array one axis short of it (an
    (N, 28, 28) array) gains the last axis of size 1 first, as Keras' functional model adds it."""
    import numpy as np

    array = np.asarray(array)
    return np.transpose(array[..., None] if array.ndim == len(perm) - 1 else array, perm)
