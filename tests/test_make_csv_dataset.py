"""``tf.data.experimental.make_csv_dataset`` (keras.io's tabtransformer, deep_neural_decision_forests,
movielens_recommendations_transformers) → the runtime's ``make_csv_dataset`` (runtime/torch/tabular.py):
a ``FeatureDataset`` of batches (a dict of columns, the label column apart). Its batches equal
tf.data's (unshuffled) on CSV files with defaults, NA values, a header or none, inferred types."""

from __future__ import annotations

import numpy as np
import pytest
import torch  # noqa: F401  (torch before TensorFlow in one process)

from transpiler.runtime.torch import tabular

ROWS = [  # age, workclass, hours, income_bracket, weight
    ("39", "State-gov", "40", "<=50K", "1.5"),
    ("50", "?", "13", ">50K", "0.5"),
    ("38", "Private", "?", "<=50K", "2.0"),
    ("53", "Private", "40", ">50K", "1.0"),
    ("28", "", "40", "<=50K", "0.25"),
]
NAMES = ["age", "workclass", "hours", "income_bracket", "fnlwgt"]


def _write(path, header):
    lines = ([",".join(NAMES)] if header else []) + [",".join(r) for r in ROWS]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _tf_batches(**kwargs):
    tf = pytest.importorskip("tensorflow")
    out = []
    for item in tf.data.experimental.make_csv_dataset(**kwargs):
        features, labels = item if isinstance(item, tuple) else (item, None)
        out.append(({k: v.numpy() for k, v in features.items()}, None if labels is None else labels.numpy()))
    return out


def _ours(**kwargs):
    out = []
    for item in tabular.make_csv_dataset(**kwargs):
        features, labels = item if isinstance(item, tuple) else (item, None)
        out.append((features, labels))
    return out


def _same(ours, theirs):
    assert len(ours) == len(theirs)
    for (f1, l1), (f2, l2) in zip(ours, theirs):
        assert list(f1) == list(f2)
        for name in f2:
            a, b = f1[name], f2[name]
            if b.dtype.kind in "SO":
                assert list(a) == [v.decode() for v in b], name
            else:
                a = a.numpy()
                assert a.dtype == (np.int64 if b.dtype.kind == "i" else np.float32), name  # (ids as int64)
                np.testing.assert_array_equal(a, b, err_msg=name)
        if l2 is None:
            assert l1 is None
        elif l2.dtype.kind in "SO":
            assert list(l1) == [v.decode() for v in l2]
        else:
            np.testing.assert_array_equal(l1.numpy(), l2)


def test_defaults_na_values_and_label_equal_tf_data(tmp_path):
    path = _write(tmp_path / "train.csv", header=False)
    kwargs = dict(file_pattern=path, batch_size=2, column_names=NAMES,
                  column_defaults=[[0.0], ["NA"], [0.0], ["NA"], [0.0]], label_name="income_bracket",
                  num_epochs=1, header=False, na_value="?", shuffle=False)
    _same(_ours(**kwargs), _tf_batches(**kwargs))


def test_header_and_inferred_types_equal_tf_data(tmp_path):
    path = _write(tmp_path / "train.csv", header=True)
    kwargs = dict(file_pattern=path, batch_size=3, label_name="age", num_epochs=1, shuffle=False,
                  select_columns=["age", "hours", "fnlwgt", "income_bracket"], na_value="?")
    _same(_ours(**kwargs), _tf_batches(**kwargs))


def test_shuffled_batches_hold_every_row_once(tmp_path):
    path = _write(tmp_path / "train.csv", header=True)
    seen = []
    for features, labels in tabular.make_csv_dataset(path, batch_size=2, label_name="income_bracket",
                                                      num_epochs=1, na_value="?"):
        seen += features["age"].tolist()
    assert sorted(seen) == sorted(int(r[0]) for r in ROWS)


def test_endless_dataset_is_refused(tmp_path):
    path = _write(tmp_path / "train.csv", header=True)
    with pytest.raises(NotImplementedError):
        tabular.make_csv_dataset(path, batch_size=2)


@pytest.mark.parametrize("value", [[60], [2.3], ["fixed"], [[1, 2], [3, 4]], np.array([1.5, 2.5]), 7, [True]],
                         ids=lambda v: repr(v))
def test_convert_to_tensor_gives_tensorflows_dtype(value):
    """``tf.convert_to_tensor`` on data → a torch tensor of TensorFlow's dtype (Python ints
    int32, floats float32, numpy arrays their own), strings a numpy array of str."""
    tf = pytest.importorskip("tensorflow")
    theirs = tf.convert_to_tensor(value).numpy()
    ours = tabular.convert_to_tensor(value)
    if theirs.dtype.kind in "SO":
        assert isinstance(ours, np.ndarray) and ours.tolist() == [v.decode() for v in theirs.reshape(-1)]
        return
    assert ours.numpy().dtype == theirs.dtype
    np.testing.assert_array_equal(ours.numpy(), theirs)


def test_dict_comprehension_of_convert_to_tensor_translates():
    """keras.io's ``input_dict = {name: tf.convert_to_tensor([value]) for name, value in
    sample.items()}`` (before ``predict``) was a stub: the comprehension is read, its calls are
    the runtime's."""
    from transpiler.translate import translate

    source = ("import tensorflow as tf\nsample = {'age': 60, 'thal': 'fixed', 'oldpeak': 2.3}\n"
              "input_dict = {name: tf.convert_to_tensor([value]) for name, value in sample.items()}\n")
    result = translate(source, "inputs.py")
    assert not result.stubs, [str(d) for d in result.stubs]
    assert "{name: convert_to_tensor([value]) for name, value in sample.items()}" in result.text
    namespace = {}
    exec(compile(result.text, "inputs_torch.py", "exec"), namespace)
    made = namespace["input_dict"]
    assert made["age"].dtype == torch.int32 and made["oldpeak"].dtype == torch.float32
    assert made["thal"].tolist() == ["fixed"]
