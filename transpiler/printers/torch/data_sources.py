"""What PyTorch offers for a ``tensorflow_datasets.load(name)`` a Keras program makes.

tfds gives TensorFlow tensors in tfds' own splits (``"train[:90%]"``) and element format
(dicts, or ``(image, label)`` with ``as_supervised``); torchvision's dataset of the same data
has its own splits, files and PIL images. A call the runtime takes becomes its ``load_tfds``
(``tfds.data_source`` in a torch pipeline: ``tfds_load_lines``); any other stays a marked stub
that names the dataset and, when torchvision provides it, the torchvision class to load it with.
"""

from __future__ import annotations

import libcst as cst

from transpiler.cst_fast import walk

#: tfds dataset name → the torchvision.datasets class of the same data
TORCHVISION_DATASETS = {
    "mnist": "MNIST", "fashion_mnist": "FashionMNIST", "kmnist": "KMNIST", "emnist": "EMNIST",
    "cifar10": "CIFAR10", "cifar100": "CIFAR100", "stl10": "STL10", "svhn_cropped": "SVHN",
    "omniglot": "Omniglot", "oxford_flowers102": "Flowers102", "oxford_iiit_pet": "OxfordIIITPet",
    "food101": "Food101", "caltech101": "Caltech101", "celeb_a": "CelebA", "dtd": "DTD", "eurosat": "EuroSAT",
    "lfw": "LFWPeople", "places365_small": "Places365", "sun397": "SUN397", "patch_camelyon": "PCAM",
    "imagenet2012": "ImageNet", "voc": "VOCDetection", "coco": "CocoDetection", "kitti": "Kitti",
    "cityscapes": "Cityscapes", "country211": "Country211", "gtsrb": "GTSRB", "rendered_sst2": "RenderedSST2",
    "stanford_cars": "StanfordCars", "fer2013": "FER2013", "semeion": "SEMEION", "usps": "USPS",
}


def tfds_stub_reason(name: str | None) -> str:
    """The stub message for ``tensorflow_datasets.load(name)``."""
    if name is None:
        return "tensorflow_datasets.load() of a dataset named at run time has no PyTorch translation"
    base = name.split("/")[0].split(":")[0]
    if base in TORCHVISION_DATASETS:
        return (f"tensorflow_datasets.load({name!r}): load it with torchvision.datasets."
                f"{TORCHVISION_DATASETS[base]} (its own splits and PIL images; tfds' are not translated)")
    return f"tensorflow_datasets.load({name!r}): no torchvision dataset provides {base!r}; supply its files"


def stub_reason(program, span) -> str | None:
    """The reason a statement spanning ``span`` is a stub, when it loads a tfds dataset."""
    end = span.end_line or span.line
    for where, name in program.from_keras.tfds_loads:
        if where is not None and span.line <= where.line <= end:
            return tfds_stub_reason(name)
    return needs_tensorflow(program, span)


def needs_tensorflow(program, span) -> str | None:
    """The reason a statement spanning ``span`` needs TensorFlow although it names no Keras
    object (a tf.data method on a loader: frontend_ast/keras/data_utils.needs_tensorflow)."""
    end = span.end_line or span.line
    return next((reason for where, reason in program.from_keras.tensorflow_only
                 if where is not None and span.line <= where.line <= end), None)


def no_effect_note(program, span) -> str | None:
    """A comment for a statement that is only a call with no effect without the source's data
    library (``tfds.disable_progress_bar()``), else None."""
    end = span.end_line or span.line
    for where, name in program.from_keras.no_effect_calls:
        if where is not None and span.line <= where.line <= end:
            if name == "keras.backend.clear_session":
                return f"# {name}(): nothing to do in PyTorch (Keras' global state and layer names)"
            return f"# {name}(): nothing to do without tensorflow_datasets"
    return None


#: the runtime's function in place of ``tensorflow_datasets.load`` (runtime/torch/tfds_data.py)
RUNTIME_FUNCTION = "load_tfds"


class _Splits(cst.CSTTransformer):
    """``tfds.Split.TRAIN`` (tfds' split names, strings) → ``"train"``: the program keeps no
    import of tensorflow_datasets (the runtime imports it)."""

    def __init__(self, roots: set[str]):
        self.roots = roots

    def leave_Attribute(self, original, updated):
        base = updated.value
        if isinstance(base, cst.Attribute) and base.attr.value == "Split" and \
                isinstance(base.value, cst.Name) and base.value.value in self.roots:
            return cst.SimpleString(repr(updated.attr.value.lower()))
        return updated


def tfds_load_lines(printer, ts) -> list[str]:
    """``tfds.load(args)`` → ``load_tfds(args)``: the same arguments, tfds' split constants as
    the strings they are."""
    from transpiler import cst_fast
    from transpiler.printers.torch import loss_functions

    module = cst_fast.parse(printer.program.source) if printer.program.source else cst.Module([])
    roots = {name for name, path in loss_functions.module_aliases(module).items()
             if path == "tensorflow_datasets"}
    call = cst.parse_expression(f"f({ts.config[1].text})").visit(_Splits(roots))
    if any(isinstance(n, cst.Name) and n.value in roots for n in walk(call)):
        raise NotImplementedError("tensorflow_datasets.load(): an argument reads tensorflow_datasets")
    printer.datasets.add(RUNTIME_FUNCTION)
    args = cst.Module([]).code_for_node(call)[2:-1]
    return [f"{RUNTIME_FUNCTION}({args})"]
