"""``model.predict(ds)`` on a translated tf.data pipeline of arrays (Keras -> PyTorch).

Keras' predict on ``from_tensor_slices(x).batch(n)`` or ``from_tensor_slices((x, y)).batch(n)``
runs the model on ``x`` in batches of ``n`` (the labels ignored): the generated ``predict`` is
handed those arrays and that batch size, as it would be for ``predict(x, batch_size=n)``. A
pipeline with ``.map()`` has no arrays to hand over: a marked stub (predict would call the model on
the loader's (x, y) batches).
"""

from __future__ import annotations

from transpiler.ir import code_literals
from transpiler.ir import training as T


def pipeline_inputs(printer, x: T.Code, ts: T.TrainingStatement):
    """(the arrays' code, the batch size's code) of the tf.data pipeline ``x`` names, or None
    when ``x`` is no pipeline of arrays this script made."""
    program = printer.program
    made = [t for t in program.training if t.kind == "dataset" and t.model == x.text]
    if ts in program.training:  # the binding in force at the call
        made = [t for t in made if program.training.index(t) < program.training.index(ts)] or made
    ds = made[-1].config if made else None
    if ds is None or ds.batch is None or ds.returned or getattr(ds, "csv", None) or \
            not isinstance(getattr(ds, "code", None), str):
        return None
    pipe = printer._pipeline(ds)
    if pipe.element_map or pipe.batch_map or pipe.repeat is not None:
        raise NotImplementedError("predict() on a tf.data pipeline with .map() or .repeat() (give it the arrays)")
    parts = code_literals.list_items(ds.code) if ds.code.startswith("(") else None
    if parts is not None and len(parts) not in (1, 2, 3):
        return None
    inputs = parts[0] if parts else ds.code  # (x, y[, sample_weight]): Keras predicts on x
    return T.Code(inputs), ds.batch
