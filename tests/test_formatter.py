"""transpiler/printers/formatter.py: ``format_python`` is ``black.format_str`` byte for byte,
with black's second pass narrowed to the top-level statements its first pass changed."""

from __future__ import annotations

import textwrap

import black
import pytest

from transpiler.printers import formatter
from transpiler.printers.formatter import format_python


def _black(text: str) -> str:
    return black.format_str(text, mode=black.Mode())


def _once(text: str) -> str:
    return black._format_str_once(text, mode=black.Mode())


#: texts whose first pass changes something, one per kind of statement the narrowing meets
TEXTS = {
    "calls_and_defs": '''
        import os
        def fit(model, optimizer, loss_fns, x, y, epochs=1, batch_size=32, verbose="auto", metrics=(), shuffle=True):
            logs = {"loss": 1.0, **{name: sums[name] / counts[name] for name in sums}}
            print(f"Epoch {epoch + 1}/{epochs} - " + " - ".join(f"{k}: {v:.4f}" for k, v in logs.items()))
            return logs
        class Net(nn.Module):
            def forward(self, *inputs, **kwargs):
                return self.layer_with_a_long_name(*inputs, some_keyword_argument=1, another_keyword=2, **kwargs)
        x = some_function_with_a_long_name(argument_number_one, argument_number_two, argument_three)
        ''',
    "varargs_exploded": '''
        name = f"{1}"
        result = function_with_a_long_name(first_argument_value, second_argument_value, *more_arguments)
        def g(first_parameter_name, second_parameter_name, third_parameter_name, *args, **kwargs):
            pass
        ''',
    "with_long_header": '''
        label = f"{1}"
        with open(some_path_with_a_long_name) as first_file, open(other_path_with_a_long_name) as second_file:
            pass
        with torch.no_grad():
            value = compute_something_with_a_long_name(first_argument, second_argument, third_argument)
        ''',
    "no_fstring": '''
        result = function_with_a_long_name(first_argument_value, second_argument_value, *more_arguments)
        ''',
    "except_tuple": '''
        label = f"{1}"
        try:
            value = compute_something_with_a_long_name(first_argument, second_argument, third_argument_x)
        except (ValueError, TypeError):
            pass
        ''',
    "comments_decorators_strings": '''
        """Module docstring."""
        # a comment before a decorated function
        @decorator_with_a_long_name(argument_number_one, argument_number_two, argument_three_x)
        # between the decorator and the def
        def h():
            """Docstring."""
            return f'{1}'  # trailing comment
        'a string statement (its quotes change)'
        x = [1,2,3]
        ''',
    "optional_parens": '''
        label = f"{1}"
        if e1234123412341234.winerror not in (_winapi.ERROR_SEM_TIMEOUT,
                                _winapi.ERROR_PIPE_BUSY) or _check_timeout(t):
            pass
        zero(one,).two(three,).four(five,)
        func1(arg1).func2(arg2,).func3(arg3).func4(arg4,).func5(arg5)
        (a, b, c, d,) = func1(arg1) and func2(arg2)
        func(argument1, (one, two,), argument4, argument5, argument6)
        ''',
}


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_format_python_is_black_format_str(name):
    text = textwrap.dedent(TEXTS[name]).lstrip("\n")
    assert _once(text) != text  # (the first pass changes it: the narrowing is what runs)
    assert format_python(text) == _black(text)


def test_already_formatted_text_is_returned_as_it_is():
    text = _black(textwrap.dedent(TEXTS["calls_and_defs"]))
    assert format_python(text) == text


def test_the_narrowing_answers_for_statements_the_first_pass_changed():
    """On a typical text the check is conclusive (the second pass is not run at all)."""
    text = textwrap.dedent(TEXTS["calls_and_defs"]).lstrip("\n")
    assert formatter._second_pass_is_identity(text, _once(text), black._format_str_once)


def test_a_changed_statement_that_is_not_black_stable_makes_the_check_fail():
    """Where the first pass's output of a statement is not a fixpoint, the check says so
    (stood in for here by a statement black has not formatted: black 26 has no known
    second-pass change left to show it with)."""
    text = 'label = f"{1}"\nx = [1,2]\ny = 2\n'
    not_a_fixpoint = 'label = f"{1}"\nx = [1,2, 3]\ny = 2\n'
    assert not formatter._second_pass_is_identity(text, not_a_fixpoint, black._format_str_once)
    fixpoint = 'label = f"{1}"\nx = [1, 2, 3]\ny = 2\n'
    assert formatter._second_pass_is_identity(text, fixpoint, black._format_str_once)


@pytest.mark.parametrize("name", ["with_long_header", "no_fstring", "comments_decorators_strings"])
def test_unusual_texts_go_to_blacks_own_second_pass(name):
    text = textwrap.dedent(TEXTS[name]).lstrip("\n")
    assert not formatter._second_pass_is_identity(text, _once(text), black._format_str_once)


def test_the_check_prints_no_warning_for_the_users_strings(recwarn):
    text = 'label = f"{1}"\npattern = "\\d+"\nx = some_function_with_a_long_name(argument_number_one, argument_number_two, arg3)\n'
    assert format_python(text) == _black(text)
    assert not [w for w in recwarn if issubclass(w.category, (SyntaxWarning, DeprecationWarning))]


#: a text whose first pass changes a few logical lines inside long top-level statements, of
#: every kind the line-level narrowing (printers/format_units.py) wraps on its own
NESTED = '''
    label = f"{1}"


    class Block(nn.Module):
        def __init__(self, channels, expanded_channels, strides, name="block", other_argument_with_a_long_name=None):
            super().__init__()
            self.depthwise = nn.Conv2d(expanded_channels, expanded_channels, kernel_size=3, groups=expanded_channels, bias=False)
            self.short = nn.Linear(4, 4)
            self.projection = nn.Conv2d(expanded_channels, channels, kernel_size=1, bias=False)  # a trailing comment

        @some_decorator_with_a_long_name(first_argument_value, second_argument_value, third_argument_v)
        def forward(self, x):
            if x.shape[0] > some_threshold_with_a_long_name and x.shape[1] > another_threshold_name_x:
                x = self.depthwise(x)
            elif x.shape[0] < some_threshold_with_a_long_name or x.shape[1] < another_threshold_name_x:
                x = self.projection(self.depthwise(x))
            else:
                pass
            try:
                y = self.short(x)
            except (ValueError, TypeError, KeyError, IndexError, AttributeError, RuntimeError, OSError) as e:
                raise
            for index, (first_item, second_item) in enumerate(zip(first_sequence_name, second_sequence)):
                y = y + first_item
            return torch.cat([x, y, self.projection(x), self.depthwise(y), self.short(x), self.short(y)], dim=1)
    '''


def test_nested_lines_format_as_black_does():
    text = textwrap.dedent(NESTED).lstrip("\n")
    assert format_python(text) == _black(text)
    # a blank line the first pass adds inside the class: the line check is not conclusive there
    squeezed = text.replace("\n\n    @some", "\n    @some")
    before, after = formatter._parsed(squeezed), formatter._parsed(_once(squeezed))
    assert _units(before.body[1], after.body[1], squeezed.split("\n"), _once(squeezed).split("\n"),
                  formatter._checkable_alone) is None
    assert format_python(squeezed) == _black(squeezed)


def test_the_narrowing_formats_only_the_changed_lines_again(monkeypatch):
    """Inside a changed class only the logical lines the first pass changed are formatted again
    (each wrapped on its own), and those whose tokens it left as they were not at all."""
    from transpiler.printers import format_units

    text = textwrap.dedent(NESTED).lstrip("\n")
    first = _once(text)
    seen = []
    monkeypatch.setattr(format_units, "units", lambda *a: seen.append(_units(*a)) or seen[-1])
    assert formatter._second_pass_is_identity(text, first, black._format_str_once)
    assert len(seen) == 1 and seen[0] is not None  # (the class: the only statement the first pass changed)
    again = "".join(seen[0])
    assert "self.depthwise = nn.Conv2d(" in again  # (exploded with a trailing comma added: checked)
    assert "super().__init__()" not in again and "self.short = nn.Linear(4, 4)" not in again  # (unchanged)
    # split without a token changed (no trailing comma added): the same tokens, not checked again
    assert "enumerate(" not in again and "@some_decorator" not in again and "self.projection = " not in again
    assert "def __init__(" in again and "elif (" in again and "except (" in again


_units = __import__("transpiler.printers.format_units", fromlist=["units"]).units


def test_a_changed_line_that_is_not_black_stable_fails_the_line_check():
    """A line inside a class that black's first pass would not leave as it is: the line-level
    check says so (and format_python then checks whole statements, then runs black's pass)."""
    text = 'label = f"{1}"\nclass A:\n    def f(self):\n        x = [1,2]\n        y = 2\n'
    first = 'label = f"{1}"\n\n\nclass A:\n    def f(self):\n        x = [1,2, 3]\n        y = 2\n'
    before, after = formatter._parsed(text), formatter._parsed(first)
    pairs = [(before.body[1], after.body[1])]
    old_lines, new_lines = text.split("\n"), first.split("\n")
    changed = [formatter._segment(after.body[1], new_lines)]
    assert not formatter._changed_lines_are_stable(pairs, old_lines, new_lines, changed, black._format_str_once)
    assert not formatter._second_pass_is_identity(text, first, black._format_str_once)


@pytest.mark.parametrize("snippet", [
    "class A:\n    def f(self):\n        'a docstring that changes its quotes'\n",  # (a string statement)
    "class A:\n    def f(self): return (1)\n",  # (a one-line compound statement)
    "class A:\n    def f(self):\n        x = 1\n\n\n\n        y = [1,2]\n",  # (blank lines changed)
])
def test_the_line_check_leaves_unusual_statements_to_the_whole_statement_check(snippet):
    text = 'label = f"{1}"\n' + snippet
    first = _once(text)
    before, after = formatter._parsed(text), formatter._parsed(first)
    assert _units(before.body[1], after.body[1], text.split("\n"), first.split("\n"),
                  formatter._checkable_alone) is None
    assert format_python(text) == _black(text)
