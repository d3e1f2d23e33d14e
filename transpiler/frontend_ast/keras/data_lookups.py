"""Keras' StringLookup / IntegerLookup called inside a model (on a symbolic tensor).

keras.io's structured-data examples (structured_data_classification_from_scratch, tabtransformer,
movielens_recommendations_transformers, deep_neural_decision_forests) encode categorical columns
inside the model: ``layers.StringLookup(vocabulary=..., output_mode="one_hot")(inputs["thal"])``.
Such a call becomes an ``index_lookup`` node whose attributes are the constructor's arguments
(a vocabulary given in the source); the PyTorch module holds the runtime's class of the same
name (runtime/torch/text.py, tested against Keras) and calls it on the input's tokens. A
vocabulary the program computes when it runs (``list(users.user_id.unique())``, read through a
builder's locals: movielens' ``CATEGORICAL_FEATURES_WITH_VOCABULARY[feature_name]``) is a
run-time value like a run-time size: the generated module takes it as a constructor argument
and the builder passes that code (``output_mode="int"`` only: an encoding's width would depend
on it). A vocabulary that only ``adapt()`` gives is refused here (the model is a stub naming
it), as is ``invert=True`` (strings out of a model).
"""

from __future__ import annotations

from typing import Any

from transpiler.frontend_ast.keras.layers import LayerSpec, Unsupported

#: the constructor's parameters, in Keras' positional order
SIGNATURES = {
    "StringLookup": ("max_tokens", "num_oov_indices", "mask_token", "oov_token", "vocabulary", "idf_weights",
                     "invert", "output_mode", "pad_to_max_tokens", "sparse", "encoding", "name"),
    "IntegerLookup": ("max_tokens", "num_oov_indices", "mask_token", "oov_token", "vocabulary",
                      "vocabulary_dtype", "idf_weights", "invert", "output_mode", "sparse", "pad_to_max_tokens",
                      "name"),
}
#: the node's name hint (the torch attribute: ``self.string_lookup``)
HINTS = {"StringLookup": "string_lookup", "IntegerLookup": "integer_lookup"}
DEFAULT_OOV = {"StringLookup": "[UNK]", "IntegerLookup": -1}
MODES = {"int": "int", "one_hot": "one_hot", "multi_hot": "multi_hot", "binary": "multi_hot", "count": "count",
         "tf_idf": "tf_idf", "tf-idf": "tf_idf"}


def _static(value: Any) -> bool:
    if value is None or isinstance(value, (bool, int, float, str)):
        return True
    if isinstance(value, (list, tuple)):
        return all(_static(v) for v in value)
    return False


def config_of(cls_name: str, args: list, kwargs: dict, runtime=None) -> dict:
    """The constructor's arguments by name (those given), each a static Python value, or for
    ``vocabulary`` a run-time value (``runtime``: the reader's ``_runtime_size``) whose code
    the generated module's constructor takes (printed by its name, never its stand-in)."""
    names = SIGNATURES[cls_name]
    if len(args) > len(names):
        raise Unsupported(f"{cls_name}: {len(args)} positional arguments")
    config = dict(zip(names, args))
    for key, value in kwargs.items():
        if key not in names and key not in ("dtype", "trainable"):
            raise Unsupported(f"{cls_name}({key}=...) is not a Keras argument")
        config[key] = value
    for key, value in config.items():
        if key == "vocabulary" and not _static(value) and runtime is not None:
            value = config[key] = runtime(value)
            if _is_runtime(value):
                continue
        if not _static(value):
            what = "its vocabulary" if key == "vocabulary" else f"{key}="
            raise Unsupported(f"{cls_name} called inside a model: {what} is computed when the program runs "
                              "(a vocabulary written in the source is translated; adapt() or one the data "
                              "gives is not yet)")
    return {k: list(v) if isinstance(v, tuple) else v for k, v in config.items()}


def _is_runtime(value: Any) -> bool:
    """A run-time value the generated code computes (``sizes.Size`` of a ``runtime`` symbol)."""
    sym = getattr(value, "expr", None)
    return getattr(sym, "kind", None) == "runtime" and getattr(sym, "arg", None) is not None


def depth_of(cls_name: str, config: dict) -> int | None:
    """The number of slots of a one_hot / multi_hot / count / tf_idf encoding (Keras'
    ``vocabulary_size()`` outside int mode): the vocabulary's tokens and the OOV slots."""
    mode = MODES[config.get("output_mode", "int")]
    if mode == "int":
        return None
    if config.get("pad_to_max_tokens"):
        return config.get("max_tokens")
    oov = config.get("num_oov_indices", 1)
    special = [config.get("oov_token", DEFAULT_OOV[cls_name])] * oov
    vocabulary = list(config["vocabulary"])
    tokens = vocabulary[oov:] if vocabulary[:oov] == special else vocabulary
    return len(tokens) + oov


def lookup_spec(cls_name: str, args: list, kwargs: dict, runtime=None, adapted=None) -> LayerSpec:
    """The ``index_lookup`` node of a lookup layer made with ``args``/``kwargs`` (``runtime``:
    see :func:`config_of`; ``adapted``: (name, width) of a layer adapted at run time where a
    helper is called, data_adapt.py: its vocabulary comes from there, its width is that
    run-time size)."""
    config = config_of(cls_name, args, kwargs, runtime)
    if adapted is not None and config.get("vocabulary") is None:
        spec = lookup_spec(cls_name, args, {**kwargs, "vocabulary": ["(adapted)"]}, runtime)
        spec.attrs["config"] = config
        if spec.attrs["depth"] is not None and not config.get("pad_to_max_tokens"):
            spec.attrs["depth"] = adapted[1]
        return spec
    if config.get("vocabulary") is None:
        raise Unsupported(f"{cls_name} called inside a model without a vocabulary in the source (adapt() "
                          "builds it from the data when the program runs): not translated yet")
    if _is_runtime(config["vocabulary"]) and MODES.get(config.get("output_mode", "int")) != "int":
        raise Unsupported(f"{cls_name}(output_mode={config['output_mode']!r}) inside a model with a vocabulary "
                          "computed when the program runs (its encoding's size is not known here): not translated "
                          "yet")
    if isinstance(config["vocabulary"], str):
        raise Unsupported(f"{cls_name}(vocabulary=<a file>) inside a model is not translated yet")
    if config.get("invert"):
        raise Unsupported(f"{cls_name}(invert=True) inside a model gives tokens, which a torch module cannot "
                          "return as a tensor: invert outside the model")
    if config.get("sparse"):
        raise Unsupported(f"{cls_name}(sparse=True): a TensorFlow sparse tensor")
    if cls_name == "StringLookup" and (config.get("num_oov_indices") or 1) > 1:
        raise Unsupported("StringLookup(num_oov_indices > 1): Keras hashes the strings into the OOV slots "
                          "with FarmHash, not translated")
    mode = config.get("output_mode", "int")
    if mode not in MODES:
        raise Unsupported(f"{cls_name}(output_mode={mode!r}) is not a Keras mode")
    return LayerSpec("index_lookup", {"kind": cls_name, "config": config, "depth": depth_of(cls_name, config)})
