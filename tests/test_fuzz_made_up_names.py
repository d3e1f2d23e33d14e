"""Names the translation makes up never take a name the generated code needs (issue 22,
whole-program fuzz: the ``rename`` mutator's awkward names).

- A size the program computes when it runs becomes a constructor parameter named after its
  code; the made-up identifier dropped underscores, so ``self_`` gave ``def __init__(self,
  self)`` (an output that does not compile, exit 0), ``lambda_`` / ``class_`` a keyword, and a
  user ``nn`` (renamed ``nn_``) a parameter ``nn`` that hides ``torch.nn`` inside ``__init__``.
- A model's class is named after its variable or builder; ``F_`` / ``f`` gave ``class F``,
  ``data_loader`` ``class DataLoader``: the generated script's own imports
  (``torch.nn.functional as F``, ``DataLoader``), rebound.

Each output must compile, bind no imported name again, and run.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap

from transpiler.translate import translate
import program_runner  # (generated programs run from a warm fork: tests/program_runner.py)

SIZES = '''
    import numpy as np
    import keras
    from keras import layers

    labels = np.array([0, 1, 2, 1])
    self_ = len(np.unique(labels))
    lambda_ = len(labels) + 1
    class_ = len(labels) + 2
    nn = len(labels) + 3


    def create_model():
        inputs = keras.Input(shape=(8,))
        h = layers.Dense(self_)(inputs)
        h = layers.Dense(lambda_)(h)
        h = layers.Dense(class_)(h)
        return keras.Model(inputs, layers.Dense(nn)(h))


    model = create_model()
    '''

CLASSES = '''
    import keras
    from keras import layers

    inputs = keras.Input(shape=(8,))
    F_ = keras.Model(inputs, layers.Dense(3)(inputs))
    data_loader = keras.Sequential([keras.Input(shape=(8,)), layers.Dense(4)])
    tensor_dataset = keras.Sequential([keras.Input(shape=(8,)), layers.Dense(5)])
    '''


def _imported_and_rebound(text: str) -> set[str]:
    tree = ast.parse(text)
    imported = {(a.asname or a.name).split(".")[0] for node in tree.body
                if isinstance(node, (ast.Import, ast.ImportFrom)) for a in node.names}
    bound = {node.name for node in tree.body if isinstance(node, (ast.ClassDef, ast.FunctionDef))}
    bound |= {t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets
              if isinstance(t, ast.Name)}
    return imported & bound


def _run(tmp_path, text: str, check: str) -> str:
    out = tmp_path / "out.py"
    out.write_text(text)
    code = f"import runpy, torch\nns = runpy.run_path({str(out)!r})\n{check}"
    run = program_runner.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stdout


def test_runtime_size_parameters_are_legal_and_hide_nothing(tmp_path):
    result = translate(textwrap.dedent(SIZES), "sizes.py", "pytorch")
    assert not result.stubs
    tree = ast.parse(result.text)  # (``def __init__(self, self)``: a SyntaxError)
    init = next(f for c in tree.body if isinstance(c, ast.ClassDef) for f in c.body
                if isinstance(f, ast.FunctionDef) and f.name == "__init__")
    params = [a.arg for a in init.args.args]
    assert params[0] == "self" and len(params) == 5 and len(set(params)) == 5, params
    assert not {"nn", "F", "torch", "lambda", "class"} & set(params), params
    assert not _imported_and_rebound(result.text)
    out = _run(tmp_path, result.text, "print(tuple(ns['model'](torch.zeros(2, 8)).shape))")
    assert out.strip() == "(2, 7)"  # (nn = len(labels) + 3)


def test_model_classes_do_not_take_the_outputs_imports(tmp_path):
    result = translate(textwrap.dedent(CLASSES), "classes.py", "pytorch")
    assert not result.stubs and len(result.program.models) == 3
    classes = {n.name for n in ast.parse(result.text).body if isinstance(n, ast.ClassDef)}
    assert not classes & {"F", "DataLoader", "TensorDataset"}, classes
    assert not _imported_and_rebound(result.text)
    out = _run(tmp_path, result.text, "\n".join([
        "x = torch.zeros(2, 8)",
        "print(*(tuple(ns[k](x).shape) for k in ('F_', 'data_loader', 'tensor_dataset')))"]))
    assert out.strip() == "(2, 3) (2, 4) (2, 5)"


BUILTIN = '''
    import numpy as np
    import keras
    from keras import layers


    def list():
        inputs = keras.Input(shape=(4,))
        return keras.Model(inputs, layers.Dense(1)(inputs))


    def helper(xs):
        type = 3  # (a local: hides nothing of the output's, kept)
        return [x * type for x in xs]


    model = list()
    model.compile(optimizer="sgd", loss="mse")
    model.fit(np.zeros((8, 4)), np.zeros((8, 1)), epochs=1, verbose=0)
    print(helper([1]))
    '''


def test_a_module_level_builtin_of_the_source_does_not_reach_the_outputs_helpers(tmp_path):
    # ``def list()`` beside the generated make_loader (``isinstance(x, (list, tuple))``): the
    # output failed when run (TypeError in isinstance), exit 0 and no stub
    result = translate(textwrap.dedent(BUILTIN), "builtin.py", "pytorch")
    assert not result.stubs
    assert "def list(" not in result.text and "    type = 3" in result.text
    assert any("renamed list to list_" in d.message and "builtin" in d.message for d in result.diagnostics)
    out = tmp_path / "out.py"
    out.write_text(result.text)
    run = program_runner.run([sys.executable, str(out)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.split() == ["[3]"]
