"""PyTorch patches of a real-world run (imported by this folder's sitecustomize)."""

import functools
import os

from sitecustomize import RECORD, _NEUTRALISE, _STEPS, _event, _write_record, after_import

_LOAD = os.environ.get("RW_LOAD_WEIGHTS")


@after_import("torch")
def _patch_torch(torch):
    real_backward = torch.Tensor.backward

    @functools.wraps(real_backward)
    def backward(self, *args, **kwargs):
        if self.numel() == 1 and len(RECORD["losses"]) < 50:
            RECORD["losses"].append(float(self.detach().reshape(()).item()))
            _write_record()
        return real_backward(self, *args, **kwargs)

    torch.Tensor.backward = backward

    if _LOAD:
        state = torch.load(_LOAD, map_location="cpu", weights_only=True)
        keys = set(state)

        def load_initial_weights(module, args):
            if RECORD["weights_loaded"] is not None:
                return None
            if set(module.state_dict()) == keys:
                module.load_state_dict(state, strict=True)
                RECORD["weights_loaded"] = {"module": type(module).__name__, "tensors": len(keys)}
                _write_record()
            return None

        torch.nn.modules.module.register_module_forward_pre_hook(load_initial_weights)

    if _NEUTRALISE:
        import torch.nn.functional as F

        def identity(input, *args, **kwargs):
            return input

        for name in ("dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
                     "feature_alpha_dropout"):
            if hasattr(F, name):
                setattr(F, name, identity)

    from torch.utils import data as tud

    loader = tud.DataLoader
    real_init, real_iter = loader.__init__, loader.__iter__

    @functools.wraps(real_init)
    def init(self, *args, **kwargs):
        if _NEUTRALISE and kwargs.get("shuffle"):
            kwargs["shuffle"] = False
            _event("DataLoader shuffle=True set to False")
        real_init(self, *args, **kwargs)

    def capped_iter(self):
        for i, batch in enumerate(real_iter(self)):
            if i >= _STEPS:
                break
            yield batch

    loader.__init__, loader.__iter__ = init, capped_iter
