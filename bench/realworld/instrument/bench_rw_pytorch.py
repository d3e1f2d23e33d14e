"""PyTorch patches of a real-world run (imported by this folder's sitecustomize).

Records each scalar ``Tensor.backward`` (the step losses), the optimizers built and the
``torch.distributions`` used (a program that samples is not step-comparable); saves the
initial weights of the trained module at the first backward (``RW_SAVE_WEIGHTS``, the
PyTorch -> Keras direction's originals) and loads converted ones (``RW_LOAD_WEIGHTS``, the
Keras -> PyTorch direction's translations) before the first forward of the module they fit.
"""

import functools
import os
import weakref

from sitecustomize import RECORD, _NEUTRALISE, _PREDICT_STEPS, _STEPS, _event, _write_record, after_import

_LOAD = os.environ.get("RW_LOAD_WEIGHTS")
_SAVE = os.environ.get("RW_SAVE_WEIGHTS")
_state = {"depth": 0, "top": [], "flags": [], "inference": []}  # modules whose forward ran outermost (weak references, latest last)
# torchvision's random transforms: identity in inference behaviour (as Keras' Random* layers are)
_RANDOM_TRANSFORMS = ("RandomHorizontalFlip", "RandomVerticalFlip", "RandomRotation", "RandomAffine",
                      "ColorJitter", "RandomErasing", "RandomPerspective", "RandomGrayscale",
                      "RandomAutocontrast", "RandomEqualize", "RandomInvert", "RandomPosterize",
                      "RandomSolarize", "RandomAdjustSharpness", "GaussianBlur", "RandomApply",
                      "RandomChoice", "RandomOrder", "AutoAugment", "RandAugment", "TrivialAugmentWide",
                      "AugMix", "ElasticTransform", "RandomPhotometricDistort", "RandomZoomOut",
                      "RandomChannelPermutation", "GaussianNoise")
# random crops: their deterministic counterpart (a centre crop of the same size)
_RANDOM_CROPS = ("RandomCrop", "RandomResizedCrop")


def _inference_branches(module):
    """Random augmentation in inference behaviour, as the Keras side's: a module of the program
    (not torch's own: their flags stay, so BatchNorm keeps batch statistics) runs its forward with
    its own ``training`` flag off, so its ``if self.training:`` branches (the translations of
    Keras' Random* layers, GaussianNoise, GaussianDropout: draws a Keras run cannot share) take
    the inference path; the flag is restored when the forward returns. True if it was set."""
    if not _NEUTRALISE or not module.training or type(module).__module__.split(".")[0] == "torch":
        return False
    module.training = False
    name = type(module).__name__
    if name not in _state["inference"]:
        _state["inference"].append(name)
        _event(f"training-only branches of {name} in inference behaviour (random augmentation neutralised)")
    return True


def _trained_module(torch):
    """The module trained by the first backward: the latest outermost module with trainable
    parameters (a loss module has none)."""
    for ref in reversed(_state["top"]):
        m = ref()
        if m is not None and any(p.requires_grad for p in m.parameters()):
            return m
    return None


def _save_initial(torch):
    if not _SAVE or RECORD["weights_saved"] is not None:
        return
    if str(os.getpid()) != os.environ.get("RW_ROOT_PID") and os.path.exists(_SAVE):
        return  # a worker process (Hogwild) saves only if no process did before it
    module = _trained_module(torch)
    if module is None:
        RECORD["weights_saved"] = {"error": "no module with trainable parameters ran forward"}
        return
    try:
        state = {k: v.detach().cpu().clone() for k, v in module.state_dict().items()}
        tmp = f"{_SAVE}.{os.getpid()}.tmp"
        torch.save(state, tmp)
        os.replace(tmp, _SAVE)
        RECORD["weights_saved"] = {"path": _SAVE, "model": type(module).__name__, "tensors": len(state)}
    except Exception as exc:
        RECORD["weights_saved"] = {"error": f"{type(exc).__name__}: {exc}"[:300]}


@after_import("torch")
def _patch_torch(torch):
    real_backward = torch.Tensor.backward

    @functools.wraps(real_backward)
    def backward(self, *args, **kwargs):
        if self.numel() == 1 and len(RECORD["losses"]) < 50:
            _save_initial(torch)
            RECORD["losses"].append(float(self.detach().reshape(()).item()))
            _write_record()
        return real_backward(self, *args, **kwargs)

    torch.Tensor.backward = backward

    real_seed = torch.manual_seed

    @functools.wraps(real_seed)
    def manual_seed(seed):
        """Seeds Python's and numpy's generators too, as the translation's
        ``keras.utils.set_random_seed`` does: a program drawing with ``random`` (a Dataset's
        random pairs) draws the same numbers in both runs."""
        if _NEUTRALISE:
            import random

            import numpy as np

            random.seed(int(seed))
            np.random.seed(int(seed) % 2 ** 32)
            _event("torch.manual_seed also seeds random and numpy (as keras.utils.set_random_seed does)")
        return real_seed(seed)

    torch.manual_seed = manual_seed

    def pre(module, args):
        if _state["depth"] == 0:
            top = _state["top"]
            if not top or top[-1]() is not module:
                top.append(weakref.ref(module))
                del top[:-8]
        _state["depth"] += 1
        _state["flags"].append(_inference_branches(module))
        return None

    def post(module, args, output):
        _state["depth"] = max(0, _state["depth"] - 1)
        if _state["flags"] and _state["flags"].pop():
            module.training = True
        return None

    torch.nn.modules.module.register_module_forward_pre_hook(pre)
    torch.nn.modules.module.register_module_forward_hook(post, always_call=True)

    if _LOAD:
        state = torch.load(_LOAD, map_location="cpu", weights_only=True)
        keys = set(state)

        def load_initial_weights(module, args):
            if RECORD["weights_loaded"] is not None:
                return None
            if set(module.state_dict()) == keys:
                module.load_state_dict(state, strict=True)
                RECORD["weights_loaded"] = {"module": type(module).__name__, "tensors": len(keys),
                                            "after_losses": len(RECORD["losses"])}
                _write_record()
            return None

        torch.nn.modules.module.register_module_forward_pre_hook(load_initial_weights)

    real_opt_init = torch.optim.Optimizer.__init__

    @functools.wraps(real_opt_init)
    def opt_init(self, *args, **kwargs):
        name = type(self).__name__
        if name not in RECORD["optimizers"]:
            RECORD["optimizers"].append(name)
            _write_record()
        return real_opt_init(self, *args, **kwargs)

    torch.optim.Optimizer.__init__ = opt_init

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
        """A training pass (gradients on) stops after RW_STEPS batches, like fit; an inference
        pass (under no_grad) over in-memory tensors is whole, like Keras' predict on arrays,
        over anything else it stops after RW_PREDICT_STEPS batches, like predict on a dataset."""
        if torch.is_grad_enabled():
            cap = _STEPS
        elif isinstance(self.dataset, tud.TensorDataset):
            cap = None
        else:
            cap = _PREDICT_STEPS
        for i, batch in enumerate(real_iter(self)):
            if cap is not None and i >= cap:
                break
            yield batch

    loader.__init__, loader.__iter__ = init, capped_iter


@after_import("torch.distributions.distribution")
def _record_distributions(mod):
    real = mod.Distribution.__init__

    @functools.wraps(real)
    def init(self, *args, **kwargs):
        name = type(self).__name__
        if name not in RECORD["distributions"]:
            RECORD["distributions"].append(name)
            _write_record()
        return real(self, *args, **kwargs)

    mod.Distribution.__init__ = init


def _neutralise_transforms(mod):
    if not _NEUTRALISE:
        return
    for name in _RANDOM_TRANSFORMS:
        cls = getattr(mod, name, None)
        if isinstance(cls, type) and hasattr(cls, "forward"):
            cls.forward = lambda self, *inputs: inputs[0] if len(inputs) == 1 else inputs
    center = getattr(mod, "CenterCrop", None)
    for name in _RANDOM_CROPS:
        cls = getattr(mod, name, None)
        if isinstance(cls, type) and center is not None:
            def forward(self, *inputs, __center=center):
                size = self.size
                return __center(size)(*inputs)

            cls.forward = forward
    _event(f"{mod.__name__}: random transforms in inference behaviour")


after_import("torchvision.transforms.transforms")(_neutralise_transforms)
after_import("torchvision.transforms.v2._augment")(_neutralise_transforms)
after_import("torchvision.transforms.v2._geometry")(_neutralise_transforms)
after_import("torchvision.transforms.v2._color")(_neutralise_transforms)
after_import("torchvision.transforms.v2._container")(_neutralise_transforms)
after_import("torchvision.transforms.v2._auto_augment")(_neutralise_transforms)
