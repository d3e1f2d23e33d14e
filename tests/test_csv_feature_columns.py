"""Tabular data from a CSV through pandas and tf.data's dict datasets (keras.io's structured
data classification from scratch, reduced to corpus/keras/csv_feature_classifier.py).

- runtime/torch/tabular.py's FeatureDataset gives tf.data's elements and batches of
  ``from_tensor_slices((dict(df), labels))`` (the same columns, values and order unshuffled);
- the corpus script translates with no stub, its pandas code kept as written;
- the generated program's model, from Keras' initial weights, predicts like Keras on the
  pipeline's first batch, and its first Adam step (loss and updated predictions) equals Keras';
- the generated program runs end to end on a stand-in CSV.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from transpiler import verify
from transpiler.runtime.torch.tabular import FeatureDataset, as_model_input
from transpiler.translate import translate
import program_runner  # (generated programs run from a warm fork: tests/program_runner.py)

pd = pytest.importorskip("pandas")  # (a test requirement: pyproject's [test] extra installs it)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS_SCRIPT = os.path.join(ROOT, "corpus", "keras", "csv_feature_classifier.py")
NAMES = ("age", "chol", "cp", "thal")


def write_csv(folder, rows=64, seed=0) -> str:
    """A stand-in for the program's CSV: the columns it reads, an out-of-vocabulary cp (4)
    and thal ("1") among them."""
    rng = np.random.RandomState(seed)
    frame = pd.DataFrame({"age": np.round(rng.uniform(3, 8, rows), 2), "chol": rng.randint(150, 350, rows),
                          "cp": rng.randint(0, 5, rows), "thal": rng.choice(["fixed", "normal", "reversible", "1"], rows),
                          "target": rng.randint(0, 2, rows)})
    path = os.path.join(folder, "patients.csv")
    frame.to_csv(path, index=False)
    return path


def _frame():
    rng = np.random.RandomState(1)
    return pd.DataFrame({"a": rng.uniform(size=7), "n": rng.randint(0, 9, 7), "s": list("abcdefg"),
                         "target": rng.randint(0, 2, 7)})


def test_feature_dataset_batches_equal_tf_data():
    import tensorflow as tf

    frame = _frame()
    labels = frame.pop("target")
    theirs = list(tf.data.Dataset.from_tensor_slices((dict(frame), labels)).batch(3))
    ours = list(FeatureDataset((dict(frame), labels)).batch(3))
    assert len(ours) == len(theirs) == 3
    for (xo, yo), (xt, yt) in zip(ours, theirs):
        assert sorted(xo) == sorted(xt)
        for name in xt:
            expected = xt[name].numpy()
            got = xo[name] if isinstance(xo[name], np.ndarray) else xo[name].numpy()
            if expected.dtype == object:  # tf.string: bytes
                expected = np.array([v.decode() for v in expected], dtype=object)
                assert list(got) == list(expected)
            else:
                np.testing.assert_allclose(got, expected, rtol=1e-6)
        np.testing.assert_array_equal(yo.numpy(), yt.numpy())
    # unbatched: one row per element, as tf.data gives them
    first = next(iter(FeatureDataset((dict(frame), labels))))
    assert first[0]["s"] == "a" and int(first[1]) == int(labels.iloc[0])
    assert len(FeatureDataset(dict(frame)).batch(3, drop_remainder=True)) == 2
    shuffled = [int(y) for _x, ys in FeatureDataset((dict(frame), labels)).shuffle(100).batch(7) for y in ys]
    assert sorted(shuffled) == sorted(labels.tolist())


def test_a_column_gains_the_axis_keras_input_expects():
    column = np.arange(4)
    assert as_model_input(column, (1,)).shape == (4, 1)
    assert as_model_input(column, ()).shape == (4,)
    assert as_model_input(column[:, None], (1,)).shape == (4, 1)


def test_csv_script_translates_without_stub_keeping_pandas_code():
    source = open(CORPUS_SCRIPT, encoding="utf-8").read()
    result = translate(source, CORPUS_SCRIPT)
    stubs = [str(d) for d in result.program.diagnostics if d.severity == "stub"]
    assert not stubs, stubs
    text = result.text
    for kept in ("dataframe = pd.read_csv(CSV_PATH)", 'labels = dataframe.pop("target")',
                 "val_dataframe = dataframe.sample(frac=0.2, random_state=1337)",
                 "train_dataframe = dataframe.drop(val_dataframe.index)",
                 "ds = FeatureDataset((dict(dataframe), labels))", "class FeatureDataset"):
        assert kept in text, kept
    assert "tensorflow" not in text and "import keras" not in text


def _first_batch_both(tmp_path, monkeypatch):
    import keras

    write_csv(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    source = open(CORPUS_SCRIPT, encoding="utf-8").read()
    result = translate(source, CORPUS_SCRIPT)
    md = result.program.models[0]
    generated = verify.load_generated(result.text)
    original = verify.load_generated(source, "keras_csv_feature_classifier")
    keras.backend.clear_session()
    keras.utils.set_random_seed(1)
    kmodel = original.build_model()
    tmodel = generated.build_model()
    tmodel.load_state_dict(verify.map_keras_weights(md.graph, kmodel), strict=True)
    frame = pd.read_csv("patients.csv")
    frame["chol"] = frame["chol"] / 100.0  # (as main() does)
    kx, ky = next(iter(original.dataframe_to_dataset(frame)))
    tds = generated.dataframe_to_dataset(frame)
    tx, ty = next(iter(tds))
    return kmodel, tmodel, generated, kx, ky, tx, ty, tds


def test_generated_model_predicts_and_steps_like_keras(tmp_path, monkeypatch):
    import keras

    kmodel, tmodel, generated, kx, ky, tx, ty, tds = _first_batch_both(tmp_path, monkeypatch)
    np.testing.assert_array_equal(ty.numpy(), ky.numpy())
    # the model's inputs in forward()'s order, each a (batch, 1) column
    inputs = [torch.as_tensor(tx[n]).reshape(-1, 1) if not isinstance(tx[n], np.ndarray) else tx[n][:, None]
              for n in NAMES]
    tmodel.eval()
    with torch.no_grad():
        before = tmodel(*inputs).numpy()
    kx2 = {n: keras.ops.expand_dims(kx[n], -1) for n in NAMES}
    np.testing.assert_allclose(before, np.asarray(kmodel(kx2)), rtol=1e-5, atol=1e-6)
    assert len({round(float(v), 4) for v in before.ravel()}) > 1  # (not a constant output)
    # one Adam step from the same weights on the same batch: the same loss, the same model after
    kmodel.compile(optimizer="adam", loss="binary_crossentropy")
    kloss = float(kmodel.train_on_batch(kx2, ky))
    optimizer = torch.optim.Adam(tmodel.parameters(), lr=0.001, betas=(0.9, 0.999), eps=1e-07)
    tloss, _ = generated.train_step(tmodel, optimizer, [generated.binary_crossentropy], [1.0], inputs,
                                    [ty.float().reshape(-1, 1)])
    np.testing.assert_allclose(tloss, kloss, rtol=1e-5)
    tmodel.eval()
    with torch.no_grad():
        after = tmodel(*inputs).numpy()
    np.testing.assert_allclose(after, np.asarray(kmodel(kx2)), rtol=1e-4, atol=1e-6)
    assert np.abs(after - before).max() > 1e-4  # (the step moved the model)


def test_generated_program_runs_on_a_stand_in_csv(tmp_path):
    write_csv(str(tmp_path))
    source = open(CORPUS_SCRIPT, encoding="utf-8").read()
    out = tmp_path / "csv_feature_classifier_torch.py"
    out.write_text(translate(source, CORPUS_SCRIPT).text)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if "site-packages" not in p
                                                         and os.path.isdir(os.path.join(p, "pandas")))}
    run = program_runner.run([sys.executable, str(out)], capture_output=True, text=True, timeout=300, cwd=tmp_path,
                         env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "51 training rows, 13 validation rows" in run.stdout and "val_loss" in run.stdout
    probabilities = eval(run.stdout.split("probabilities:")[1].strip())
    assert len(probabilities) == 4 and all(0.0 < p < 1.0 for p in probabilities)
