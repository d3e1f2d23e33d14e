"""A CSV read with ``tf.data.experimental.make_csv_dataset`` and mapped by the script's functions
(keras.io's tabtransformer / deep_neural_decision_forests: string labels and a categorical column
looked up in ``.map()``, the weight column popped off as sample weights), fed to a model of named
inputs by ``fit``: no stub; the generated program reads the CSV with the runtime's
``make_csv_dataset``, fit takes the mapped columns by name, their labels and sample weights (made
once, in order: ``FeatureDataset.materialized``), equal to what tf.data gives Keras, and one
weighted step from the same weights gives Keras' loss."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
import torch

from transpiler import verify
from transpiler.translate import translate
import program_runner  # (generated programs run from a warm fork: tests/program_runner.py)

PROGRAM = 'import numpy as np\nimport tensorflow as tf\nimport keras\nfrom keras import layers\n\nCSV_HEADER = ["age", "hours", "income", "weight", "workclass"]\nCOLUMN_DEFAULTS = [[0.0], [0.0], ["NA"], [0.0], ["NA"]]\nWORKCLASS = ["Private", "State-gov", "NA"]\nTARGET_LABELS = ["<=50K", ">50K"]\n\ntarget_lookup = layers.StringLookup(vocabulary=TARGET_LABELS, mask_token=None, num_oov_indices=0)\nworkclass_lookup = layers.StringLookup(vocabulary=WORKCLASS, mask_token=None, num_oov_indices=0)\n\n\ndef prepare_example(features, target):\n    weights = features.pop("weight")\n    return features, target_lookup(target), weights\n\n\ndef encode_categorical(batch_x, batch_y, weights):\n    batch_x["workclass"] = workclass_lookup(batch_x["workclass"])\n    return batch_x, batch_y, weights\n\n\ndef get_dataset_from_csv(csv_file_path, batch_size=4, shuffle=False):\n    dataset = (\n        tf.data.experimental.make_csv_dataset(\n            csv_file_path,\n            batch_size=batch_size,\n            column_names=CSV_HEADER,\n            column_defaults=COLUMN_DEFAULTS,\n            label_name="income",\n            num_epochs=1,\n            header=False,\n            na_value="?",\n            shuffle=shuffle,\n        )\n        .map(prepare_example, num_parallel_calls=tf.data.AUTOTUNE, deterministic=False)\n        .map(encode_categorical)\n    )\n    return dataset.cache()\n\n\ndef create_model():\n    inputs = {}\n    for name in ["age", "hours", "workclass"]:\n        inputs[name] = layers.Input(name=name, shape=(), dtype="int64" if name == "workclass" else "float32")\n    embedded = layers.Embedding(input_dim=len(WORKCLASS), output_dim=3)(inputs["workclass"])\n    numeric = [keras.ops.expand_dims(inputs[n], -1) for n in ["age", "hours"]]\n    x = layers.concatenate([embedded] + numeric)\n    x = layers.Dense(8, activation="relu")(x)\n    outputs = layers.Dense(1, activation="sigmoid")(x)\n    return keras.Model(inputs=inputs, outputs=outputs)\n\n\ndef main():\n    model = create_model()\n    model.compile(optimizer=keras.optimizers.Adam(0.01), loss=keras.losses.BinaryCrossentropy())\n    train_dataset = get_dataset_from_csv("train.csv", shuffle=False)\n    history = model.fit(train_dataset, epochs=2)\n    print("final loss:", round(float(history.history["loss"][-1]), 4))\n\n\nif __name__ == "__main__":\n    main()\n'

ROWS = [  # age, hours, income, weight, workclass ("?": NA, the column's default)
    "44,40,>50K,1.0,State-gov", "45,60,<=50K,1.0,State-gov", "52,?,<=50K,0.5,Private",
    "59,20,>50K,2.0,?", "23,40,<=50K,0.5,Private", "37,?,>50K,1.0,Private",
    "61,60,<=50K,2.0,State-gov", "30,20,<=50K,1.0,?", "48,40,>50K,0.5,Private", "27,60,<=50K,1.0,Private",
]


def _write_csv(folder):
    with open(os.path.join(folder, "train.csv"), "w") as handle:
        handle.write("\n".join(ROWS) + "\n")


def test_mapped_csv_dataset_translates_without_stub():
    result = translate(PROGRAM, "csv_mapped.py")
    assert not result.stubs, [str(d) for d in result.stubs]
    text = result.text
    assert "make_csv_dataset(" in text and "tensorflow" not in text and "import keras" not in text
    code = "\n".join(line for line in text.splitlines() if not line.strip().startswith(('"', "#")))
    assert "tf.data.experimental.make_csv_dataset(" not in text and "tf.data.AUTOTUNE" not in text
    assert "tf." not in code.split("def get_dataset_from_csv")[1].split("def create_model")[0]
    assert "train_dataset.materialized().labels" in text
    assert "sample_weight=train_dataset.materialized().sample_weights" in text


def _batches_of(made, size):
    """The materialized columns, labels and weights cut into the pipeline's batches."""
    names = ("age", "hours", "workclass")
    n = len(made.labels)
    return [tuple(np.asarray(made.column(c))[i:i + size].tolist() for c in names)
            + (np.asarray(made.labels)[i:i + size].tolist(), np.asarray(made.sample_weights)[i:i + size].tolist())
            for i in range(0, n, size)]


def _tf_batch(b):
    return tuple(np.asarray(b[0][c]).tolist() for c in ("age", "hours", "workclass")) + (
        np.asarray(b[1]).tolist(), np.asarray(b[2]).tolist())


def test_mapped_columns_labels_and_weights_equal_tf_data(tmp_path, monkeypatch):
    _write_csv(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    generated = verify.load_generated(translate(PROGRAM, "csv_mapped.py").text)
    original = verify.load_generated(PROGRAM, "keras_csv_mapped")
    batches = [_tf_batch(b) for b in original.get_dataset_from_csv("train.csv")]
    made = generated.get_dataset_from_csv("train.csv").materialized()
    # the program maps with deterministic=False: tf.data may hand the batches over in any
    # order (it does under load), the translation in file order; the batches are the same
    assert sorted(_batches_of(made, 4)) == sorted(batches)
    assert made.batch_size == 4 and set(np.asarray(made.labels).tolist()) == {0, 1}


def test_one_weighted_step_equals_keras(tmp_path, monkeypatch):
    import keras

    _write_csv(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    result = translate(PROGRAM, "csv_mapped.py")
    md = result.program.models[0]
    generated = verify.load_generated(result.text)
    original = verify.load_generated(PROGRAM, "keras_csv_mapped_step")
    keras.backend.clear_session()
    keras.utils.set_random_seed(3)
    kmodel = original.create_model()
    tmodel = generated.create_model()
    tmodel.load_state_dict(verify.map_keras_weights(md.graph, kmodel), strict=True)
    kx, ky, kw = next(iter(original.get_dataset_from_csv("train.csv")))
    made = generated.get_dataset_from_csv("train.csv").materialized()
    names = ["age", "hours", "workclass"]
    # (deterministic=False: tf.data's first batch may be any of them; take the same one)
    start = 4 * _batches_of(made, 4).index(_tf_batch((kx, ky, kw)))
    inputs = [torch.as_tensor(np.asarray(made.column(n))[start:start + 4]) for n in names]
    inputs = [t.float() if t.is_floating_point() else t.long() for t in inputs]
    kmodel.compile(optimizer=keras.optimizers.Adam(0.01), loss=keras.losses.BinaryCrossentropy())
    kloss = float(kmodel.train_on_batch(dict(kx), ky, sample_weight=kw))
    optimizer = torch.optim.Adam(tmodel.parameters(), lr=0.01, betas=(0.9, 0.999), eps=1e-07)
    target = torch.as_tensor(np.asarray(made.labels)[start:start + 4]).float().reshape(-1, 1)
    weights = torch.as_tensor(made.sample_weights[start:start + 4])
    tloss, _ = generated.train_step(tmodel, optimizer, [generated.binary_crossentropy], [1.0], inputs, [target],
                                    weights)
    np.testing.assert_allclose(float(tloss), kloss, rtol=1e-5)
    assert len(set(np.asarray(kw).tolist())) > 1  # (the weights differ: the weighting is tested)


def test_generated_program_runs(tmp_path):
    _write_csv(str(tmp_path))
    out = tmp_path / "csv_mapped_torch.py"
    out.write_text(translate(PROGRAM, "csv_mapped.py").text)
    run = program_runner.run([sys.executable, str(out)], capture_output=True, text=True, timeout=300,
                             cwd=tmp_path, env={**os.environ, "PYTHONPATH": ""})
    assert run.returncode == 0, run.stderr[-3000:]
    assert "final loss:" in run.stdout
