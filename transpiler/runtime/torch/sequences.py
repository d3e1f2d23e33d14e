"""``keras.utils.pad_sequences`` for generated PyTorch programs (numpy, as Keras computes it)."""

import numpy as np


def pad_sequences(sequences, maxlen=None, dtype="int32", padding="pre", truncating="pre", value=0.0):
    """keras.utils.pad_sequences: a (len(sequences), maxlen, ...) array of the sequences cut
    (truncating "pre": keep the end) and padded with value (padding "pre": before them)."""
    lengths, sample_shape = [], None
    for x in sequences:
        lengths.append(len(x))
        if len(x) and sample_shape is None:  # the first non-empty sequence's
            sample_shape = np.asarray(x).shape[1:]
    sample_shape = sample_shape or ()
    if maxlen is None:
        maxlen = np.max(lengths)
    out = np.full((len(sequences), maxlen) + sample_shape, value, dtype=dtype)
    for i, seq in enumerate(sequences):
        if not len(seq):
            continue
        if truncating not in ("pre", "post"):
            raise ValueError(f'Truncating type "{truncating}" not understood')
        kept = np.asarray(seq[-maxlen:] if truncating == "pre" else seq[:maxlen], dtype=dtype)
        if kept.shape[1:] != sample_shape:
            raise ValueError(f"Shape of sample {kept.shape[1:]} of sequence at position {i} is different from "
                             f"expected shape {sample_shape}")
        if padding == "post":
            out[i, :len(kept)] = kept
        elif padding == "pre":
            out[i, -len(kept):] = kept
        else:
            raise ValueError(f'Padding type "{padding}" not understood')
    return out
