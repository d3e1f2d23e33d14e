"""torch's ``named_modules()`` / ``named_parameters()`` and parameter groups over a Keras model,
for generated Keras programs (PyTorch -> Keras) whose code groups a model's parameters by
name and module type when the program runs (minGPT's ``create_optimizer(model, config)``: the
biases, norm and embedding weights without weight decay, the others with it).

Names are torch's spelling over the Keras model's structure: a layer's own weights are
``weight`` (Keras' ``kernel``, ``embeddings``, ``gamma``) and ``bias`` (``bias``, ``beta``),
prefixed by the names of the layers holding it (``blocks_0.attn_attn.query.weight``); a
module's own tensor (the generated ``ModelWeight`` layer of an ``nn.Parameter``) is a
parameter of the layer holding it, under its layer's name (``emb_stem_pos_emb``). Names ending
in ``weight`` / ``bias`` and module types (``torch_layer_classes``) classify the variables as
torch's names and classes classify the parameters; the full names are not torch's keys (the
Keras model flattens some submodules, MultiHeadAttention holds query/key/value kernels where
torch holds one in_proj_weight).
"""

#: Keras' names of a layer's own weights → torch's
_TORCH_LEAF = {"kernel": "weight", "embeddings": "weight", "gamma": "weight", "beta": "bias", "bias": "bias",
               "depthwise_kernel": "weight", "recurrent_kernel": "weight_hh"}


def torch_layer_classes(name):
    """The Keras layer classes doing the work of torch's ``nn.<name>`` (a tuple, for
    ``isinstance``): ``Linear`` is ``Dense`` and the ``EinsumDense`` projections of an
    attention (torch's out_proj is a Linear too)."""
    from keras import layers

    table = {
        "Linear": (layers.Dense, layers.EinsumDense),
        "LayerNorm": (layers.LayerNormalization,),
        "Embedding": (layers.Embedding,),
        "Conv1d": (layers.Conv1D,), "Conv2d": (layers.Conv2D,), "Conv3d": (layers.Conv3D,),
        "ConvTranspose1d": (layers.Conv1DTranspose,), "ConvTranspose2d": (layers.Conv2DTranspose,),
        "BatchNorm1d": (layers.BatchNormalization,), "BatchNorm2d": (layers.BatchNormalization,),
        "BatchNorm3d": (layers.BatchNormalization,), "GroupNorm": (layers.GroupNormalization,),
        "MultiheadAttention": (layers.MultiHeadAttention,),
        "LSTM": (layers.LSTM,), "GRU": (layers.GRU,), "RNN": (layers.SimpleRNN,),
    }
    return table[name]


def _bare_weight(layer):
    """A layer holding one tensor of its parent module (the generated ``ModelWeight``)."""
    return type(layer).__name__ == "ModelWeight"


def _children(layer):
    return [c for c in layer._flatten_layers(include_self=False, recursive=False)]


def torch_named_modules(model, prefix=""):
    """``model.named_modules()``: ``(name, layer)`` for the model (name ``""``) and every layer
    it holds, depth first, each once."""
    seen = set()

    def walk(layer, name):
        if id(layer) in seen:
            return
        seen.add(id(layer))
        yield name, layer
        for child in _children(layer):
            if not _bare_weight(child):
                yield from walk(child, f"{name}.{child.name}" if name else child.name)

    yield from walk(model, prefix)


def torch_named_parameters(layer):
    """``layer.named_parameters()``: ``(name, variable)`` for the trainable weights of the
    layer and of every layer it holds (torch's names: ``weight``/``bias``, prefixed)."""
    seen = set()

    def walk(current, prefix):
        for variable in current._trainable_variables:
            if id(variable) not in seen:
                seen.add(id(variable))
                leaf = variable.path.split("/")[-1]
                yield prefix + _TORCH_LEAF.get(leaf, leaf), variable
        for child in _children(current):
            if _bare_weight(child):
                if child.value.trainable and id(child.value) not in seen:
                    seen.add(id(child.value))
                    yield prefix + child.name, child.value
                continue
            yield from walk(child, f"{prefix}{child.name}.")

    yield from walk(layer, "")


def param_groups_optimizer(optimizer, groups):
    """torch's optimizer over parameter groups (``[{"params": [...], "weight_decay": wd},
    {"params": [...], "weight_decay": 0.0}]``) as one Keras optimizer: the groups may differ in
    ``weight_decay`` only, one value and zero (Keras decays every variable by the optimizer's
    ``weight_decay`` except those excluded). Other per-group settings raise
    NotImplementedError: one Keras optimizer applies one setting to every variable."""
    settings = [{k: v for k, v in g.items() if k != "params"} for g in groups]
    other = sorted({k for s in settings for k in s} - {"weight_decay"})
    if other:
        raise NotImplementedError(f"transpiler: parameter groups with their own {', '.join(other)}: one Keras "
                                  "optimizer applies one setting to every variable")
    default = optimizer.weight_decay or 0.0
    decays = [s.get("weight_decay", default) for s in settings]
    nonzero = sorted({float(d) for d in decays if d})
    if len(nonzero) > 1:
        raise NotImplementedError(f"transpiler: parameter groups with weight decays {nonzero}: Keras decays every "
                                  "variable by one rate (or excludes it)")
    optimizer.weight_decay = nonzero[0] if nonzero else None
    excluded = [v for g, d in zip(groups, decays) if not d for v in g["params"]]
    if excluded and nonzero:
        optimizer.exclude_from_weight_decay(var_list=excluded)
    return optimizer
