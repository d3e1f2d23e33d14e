"""Names a generated ``nn.Module`` cannot give a layer attribute: ``self.train = nn.Linear``
would shadow ``Module.train()`` (and ``model.train()`` then calls the layer). The public
attributes of ``torch.nn.Module`` (torch 2.x), written out: the translation path imports
no torch."""

NN_MODULE_ATTRIBUTES = frozenset({
    "T_destination", "add_module", "apply", "bfloat16", "buffers", "call_super_init", "children", "compile",
    "cpu", "cuda", "double", "dump_patches", "eval", "extra_repr", "float", "forward", "get_buffer",
    "get_extra_state", "get_parameter", "get_submodule", "half", "ipu", "load_state_dict", "modules", "mtia",
    "named_buffers", "named_children", "named_modules", "named_parameters", "parameters",
    "register_backward_hook", "register_buffer", "register_forward_hook", "register_forward_pre_hook",
    "register_full_backward_hook", "register_full_backward_pre_hook", "register_load_state_dict_post_hook",
    "register_load_state_dict_pre_hook", "register_module", "register_parameter",
    "register_state_dict_post_hook", "register_state_dict_pre_hook", "requires_grad_", "set_extra_state",
    "set_submodule", "share_memory", "state_dict", "to", "to_empty", "train", "training", "type", "xpu",
    "zero_grad",
})

#: names the printers may import at module level in a generated script (either target): a
#: name the translation makes up (a model's class, a constructor parameter) must not be one,
#: or the generated code reads it instead of the import (issue 22, whole-program fuzz)
GENERATED_IMPORTS = frozenset({
    "torch", "nn", "F", "np", "math", "keras", "layers", "ops", "tf", "functools", "os", "csv", "DataLoader",
    "TensorDataset", "load_file", "SimpleNamespace",
})
