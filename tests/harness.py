"""One numeric check harness for every op and corpus test (onnx2torch's idea).

``check_source`` transpiles a Keras script, builds the Keras model with random
weights (``build_model()`` after ``clear_session``, so layer names are the ones the
frontend predicts), maps the weights into the generated module with
``load_state_dict(strict=True)``, runs both on the same random inputs and returns
the per-output comparisons.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import torch  # noqa: F401  (torch before tensorflow: see DEVELOPERS.md)
import keras

from transpiler import verify
from transpiler.translate import translate

_counter = itertools.count()


def load_source_module(source: str, name: str = "keras_case"):
    """Import Keras source text as a module (its __main__ block does not run)."""
    return verify.load_generated(source, f"{name}_{next(_counter)}")


def randomize_keras_weights(model, seed: int = 0) -> None:
    """Give every weight a random value of a sensible scale (not Keras' init:
    zero biases and unit BatchNorm statistics would hide mapping mistakes)."""
    rng = np.random.RandomState(seed)
    for w in model.weights:
        shape = tuple(w.shape)
        path = w.path if hasattr(w, "path") else w.name
        if "int" in str(w.dtype):  # a Normalization's sample count
            w.assign(rng.randint(1, 100, size=shape).astype(str(w.dtype)))
            continue
        if "variance" in path:  # BatchNormalization's moving_variance, Normalization's variance
            value = rng.uniform(0.5, 1.5, size=shape)
        elif "gamma" in path:
            value = 1.0 + 0.2 * rng.standard_normal(shape)
        elif len(shape) >= 2:
            fan_in = int(np.prod(shape[:-1])) if len(shape) > 2 else shape[0]
            value = rng.standard_normal(shape) / np.sqrt(max(fan_in, 1))
        else:
            value = 0.3 * rng.standard_normal(shape)
        w.assign(value.astype("float32"))
    for layer in model._flatten_layers(include_self=False):
        if type(layer).__name__ == "Normalization" and layer.built:
            layer.finalize_state()  # it reads its adapted statistics once (as after load_weights)


@dataclass
class Checked:
    comparisons: list
    keras_params: int
    torch_params: int
    translation: object
    graph: object


def program_pair(source: str, translation, seed: int, name: str = "program"):
    """The Keras program ``source`` and its torch translation as modules, and each one's
    ``build_model()`` with the same random weights: (keras module, torch module, Keras model,
    torch model)."""
    md = next(m for m in translation.program.models if m.builder == "build_model")
    keras_mod = load_source_module(source, name)
    torch_mod = verify.load_generated(translation.text, f"{name}_torch")
    keras.backend.clear_session()  # (the automatic layer names the frontend predicts)
    kmodel = keras_mod.build_model()
    randomize_keras_weights(kmodel, seed)
    tmodel = torch_mod.build_model()
    tmodel.load_state_dict(verify.map_keras_weights(md.graph, kmodel), strict=True)
    return keras_mod, torch_mod, kmodel, tmodel


def check_source(source: str, *, builder: str = "build_model", batch: int = 3, seed: int = 0,
                 randomize: bool = True, path: str = "case.py", training: bool = False) -> Checked:
    """Transpile ``source``, run both models, return comparisons and parameter counts."""
    result = translate(source, path)
    md = next(m for m in result.program.models if m.builder == builder)
    generated = verify.load_generated(result.text)
    keras.backend.clear_session()
    kmodel = getattr(load_source_module(source), builder)()
    verify.ensure_built(kmodel, md.graph)
    if randomize:
        randomize_keras_weights(kmodel, seed)
    tmodel = getattr(generated, builder)()
    tmodel.load_state_dict(verify.map_keras_weights(md.graph, kmodel), strict=True)
    inputs = verify.random_inputs(md.graph, batch, seed)
    comparisons = verify.run_both(kmodel, tmodel, md.graph, inputs, training=training)
    return Checked(comparisons, verify.keras_param_count(kmodel),
                   verify.torch_param_count(tmodel) - verify.lstm_extra_bias(md.graph), result, md.graph)


def max_error(checked: Checked) -> float:
    return max(c.max_abs for c in checked.comparisons)
