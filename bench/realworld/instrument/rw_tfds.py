"""``tensorflow_datasets``' stand-in in a real-world run (imported by this folder's sitecustomize).

``tfds.load`` and ``tfds.data_source`` of a dataset named in ``bench/realworld/standins.py``'s
``TFDS_DATASETS`` serve small deterministic examples of that dataset's features (the image shape,
the label's class count, the split names) with tfds' split syntax (``train[:80%]``,
``train[40%:50%]``, ``train+test``, lists of splits), ``as_supervised``, ``with_info`` (the
features' shapes and class counts, the splits' sizes) and ``batch_size``; nothing is
downloaded. A dataset not in the table goes to the real function (which fails offline, naming
it), and the run's record says so.
"""

import functools
import types

from sitecustomize import _event, after_import


def _standins():
    from bench.realworld import standins

    return standins


class _Feature:
    def __init__(self, shape=(), dtype="int64", num_classes=None, names=None):
        self.shape, self.dtype, self.num_classes = tuple(shape), dtype, num_classes
        self.names = names if names is not None else ([str(i) for i in range(num_classes)] if num_classes else None)

    def int2str(self, i):
        return self.names[int(i)]

    def str2int(self, s):
        return self.names.index(s)

    def __repr__(self):
        return f"Feature(shape={self.shape}, dtype={self.dtype}, num_classes={self.num_classes})"


class _Features(dict):
    pass


def _info(name):
    st = _standins()
    spec = st.TFDS_DATASETS[name]
    names = st.TFDS_LABELS.get(name.split("/")[0])
    features = _Features(image=_Feature(spec.image_shape, "uint8"),
                         label=_Feature((), "int64", len(names) if names else spec.num_classes, names))
    for feat, values in spec.extra.items():
        features[feat] = _Feature((), "int64", values)
    splits = {s: types.SimpleNamespace(name=s, num_examples=n) for s, n in spec.splits.items()}
    return types.SimpleNamespace(name=name, features=features, splits=splits, supervised_keys=("image", "label"),
                                 description=f"real-world harness stand-in for {name}")


def _split_list(split, spec):
    if split is None:
        return list(spec.splits), "dict"
    if isinstance(split, (list, tuple)):
        return [str(s) for s in split], "list"
    return [str(split)], "one"


def _tf_dataset(name, split, as_supervised, batch_size):
    import tensorflow as tf

    st = _standins()
    ex = st.tfds_examples(name, split)
    spec = st.TFDS_DATASETS[name]
    if batch_size == -1:  # tfds: the whole split as tensors
        return (tf.constant(ex["image"]), tf.constant(ex["label"])) if as_supervised else \
            {k: tf.constant(v) for k, v in ex.items()}
    data = (ex["image"], ex["label"]) if as_supervised else dict(ex)
    ds = tf.data.Dataset.from_tensor_slices(data)
    if None in spec.image_shape[:2]:  # the builder declares per-example sizes: so does the stand-in
        def relax(image):
            return tf.compat.v1.placeholder_with_default(image, shape=spec.image_shape)

        fix = (lambda i, l: (relax(i), l)) if as_supervised else (lambda d: dict(d, image=relax(d["image"])))
        ds = ds.map(fix)
    if batch_size:
        ds = ds.batch(batch_size)
    return ds


def _serve(name, split, one, what):
    """The stand-in's answer per split, in the form tfds gives it (one, a list, a dict)."""
    spec = _standins().TFDS_DATASETS[name]
    splits, form = _split_list(split, spec)
    out = [one(s) for s in splits]
    _event(f"{what}({name!r}, split={split!r}) served by the harness's stand-in")
    if form == "dict":
        return dict(zip(splits, out))
    return out if form == "list" else out[0]


@after_import("tensorflow_datasets")
def _tfds_standins(tfds):
    real_load = tfds.load

    @functools.wraps(real_load)
    def load(name, *args, split=None, batch_size=None, as_supervised=False, with_info=False, **kwargs):
        if args:  # tfds.load's only positional parameter is the name
            raise TypeError("tfds.load() takes 1 positional argument")
        key = str(name).split(":")[0]
        if key not in _standins().TFDS_DATASETS:
            _event(f"tfds.load({name!r}): no stand-in in the harness's table")
            return real_load(name, split=split, batch_size=batch_size, as_supervised=as_supervised,
                             with_info=with_info, **kwargs)
        ds = _serve(key, split, lambda s: _tf_dataset(key, s, as_supervised, batch_size), "tfds.load")
        return (ds, _info(key)) if with_info else ds

    real_source = getattr(tfds, "data_source", None)

    def data_source(name, *args, split=None, **kwargs):
        key = str(name).split(":")[0]
        if key not in _standins().TFDS_DATASETS:
            _event(f"tfds.data_source({name!r}): no stand-in in the harness's table")
            return real_source(name, *args, split=split, **kwargs)
        st = _standins()

        def one(s):
            ex = st.tfds_examples(key, s)
            n = len(ex["label"])
            return [{k: v[i] for k, v in ex.items()} for i in range(n)]

        return _serve(key, split, one, "tfds.data_source")

    tfds.load = load
    if real_source is not None:
        tfds.data_source = functools.wraps(real_source)(data_source)
    import tensorflow_datasets.core as core  # noqa: F401  (tfds.core.load is the same function)

    if getattr(core, "load", None) is real_load:
        core.load = load
