"""printers/torch/raw_chunks.py: generated text kept as text prints exactly what the libcst
round trip it replaces printed (issue 21: the printer parsed every generated text only to print
it back)."""

from __future__ import annotations

import libcst as cst
import pytest

from transpiler.printers.torch.raw_chunks import MARK, RawChunks, plain
from transpiler.translate import translate

USER = "import numpy as np\n\nx = np.ones(3)\n\n\nif x.any():\n    y = 1\n"

TEXTS = [
    "def f(a):\n    return a + 1\n",
    "class A:\n    '''doc\n    more'''\n\n    def g(self):  # note\n        return 2\n\n\n\ndef h():\n    pass",
    "@decorated(1)\ndef f():\n    s = '''\n# not a comment\n  '''\n    return s\n",
    "x = [\n    1,\n    2,\n]\n# between\ny = 3\n",
    # the kinds kept on the parsed path: leading/trailing comments or blank lines, imports,
    # a string statement first, a raise at the top
    "# a header comment\ndef f():\n    pass\n",
    "\ndef f():\n    pass\n",
    "def f():\n    pass\n# a trailing comment\n",
    "def f():\n    pass\n    # an indented trailing comment\n",
    "def f():\n    pass\n\n\n",
    "import math\n\ndef f():\n    return math.pi\n",
    "'''a string'''\nx = 1\n",
    "raise NotImplementedError('x')\n",
]


def _parsed_way(user: str, pieces: list[tuple[int, str, list]]) -> str:
    module = cst.parse_module(user)
    body = list(module.body)
    for at, text, leading in reversed(pieces):
        new = list(cst.parse_module(text).body)
        if leading:
            new[0] = new[0].with_changes(leading_lines=leading)
        body[at:at] = new
    return module.with_changes(body=body).code


def _raw_way(user: str, pieces: list[tuple[int, str, list]], imports: bool) -> str:
    module = cst.parse_module(user)
    raw = RawChunks(module, user)
    body = list(module.body)
    for at, text, leading in reversed(pieces):
        new = raw.statements(text, imports=imports)
        if leading:
            new[0] = new[0].with_changes(leading_lines=leading)
        body[at:at] = new
    return raw.put_back(module.with_changes(body=body).code)


@pytest.mark.parametrize("imports", [False, True])
@pytest.mark.parametrize("index", range(len(TEXTS)))
def test_a_chunk_prints_as_the_round_trip_did(index, imports):
    leading = [cst.EmptyLine(), cst.EmptyLine(comment=cst.Comment("# placed here"))]
    pieces = [(1, TEXTS[index], leading), (2, TEXTS[0], [])]
    assert _raw_way(USER, pieces, imports) == _parsed_way(USER, pieces)


def test_which_texts_are_kept_as_text():
    assert plain(TEXTS[0]) and plain(TEXTS[1]) and plain(TEXTS[2]) and plain(TEXTS[3])
    assert not any(plain(t) for t in TEXTS[4:9])
    assert not plain(TEXTS[9]) and plain(TEXTS[9], imports=True)  # (imports: where no caller reads them)
    assert not plain(TEXTS[10]) and not plain(TEXTS[11], imports=True)


def test_nested_or_unusual_modules_take_the_parsed_path():
    module = cst.parse_module(USER)
    assert isinstance(RawChunks(module, USER).statements(TEXTS[0], top_level=False)[0], cst.FunctionDef)
    two = cst.parse_module("if x:\n  y = 1\n")
    assert not RawChunks(two, two.code).enabled  # (two-space indentation: the round trip re-indented)
    named = USER + f"{MARK}0 = 1\n"
    assert not RawChunks(cst.parse_module(named), named).enabled


def test_a_placeholder_that_did_not_stay_at_column_0_is_an_error():
    module = cst.parse_module(USER)
    raw = RawChunks(module, USER)
    stmt = raw.statements(TEXTS[0])[0]
    block = module.body[-1]
    moved = block.with_changes(body=block.body.with_changes(body=[*block.body.body, stmt]))
    with pytest.raises(AssertionError):
        raw.put_back(module.with_changes(body=[*module.body[:-1], moved]).code)


KERAS_UNDER_IF = '''\
import numpy as np

if True:
    from tensorflow import keras

    def build():
        model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
        model.compile(optimizer="adam", loss="mse")
        return model

    model = build()
    model.fit(np.zeros((8, 4)), np.zeros((8, 2)), epochs=1, verbose=0)
'''


def test_generated_code_inside_a_block_is_indented_as_before():
    """Keras imported and used inside an ``if`` block: the torch imports and the model class
    go inside the block (the parsed path), the output is valid Python."""
    text = translate(KERAS_UNDER_IF, "under_if.py").text
    compile(text, "out.py", "exec")
    assert MARK not in text
    assert "\n    import torch\n" in text
