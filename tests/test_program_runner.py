"""The warm-fork program runner gives what a new interpreter gives (tests/program_runner.py)."""

import os
import subprocess
import sys
import textwrap

import pytest

import program_runner

PROGRAM = textwrap.dedent("""
    import atexit, os, sys
    import helper_mod
    atexit.register(lambda: print("atexit ran"))
    print("argv", sys.argv[1:], "cwd", os.path.basename(os.getcwd()), "env", os.environ.get("MY_VAR"))
    print("path0", os.path.basename(sys.path[0]), "helper", helper_mod.VALUE)
    print("main", __name__, "torch loaded", "torch" in sys.modules)
    print("to stderr", file=sys.stderr)
    data = sys.stdin.read()
    print("stdin", repr(data))
    sys.exit(int(os.environ.get("EXIT_CODE", "0")))
""")


@pytest.fixture
def program(tmp_path):
    folder = tmp_path / "prog"
    folder.mkdir()
    (folder / "main.py").write_text(PROGRAM)
    (folder / "helper_mod.py").write_text("VALUE = 42\n")
    (tmp_path / "work").mkdir()
    return folder / "main.py"


@pytest.mark.parametrize("exit_code", ["0", "3"])
def test_a_warm_fork_gives_what_a_new_interpreter_gives(program, exit_code):
    env = dict(os.environ, MY_VAR="hello", EXIT_CODE=exit_code)
    argv = [sys.executable, str(program), "a", "b"]
    cwd = program.parent.parent / "work"
    fresh = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, input="in", timeout=120)
    warm = program_runner.run(
        argv, cwd=cwd, env=env, input="in", timeout=120, preload=(), capture_output=True, text=True
    )
    assert fresh.returncode == int(exit_code)
    assert (warm.returncode, warm.stdout, warm.stderr) == (fresh.returncode, fresh.stdout, fresh.stderr)


def test_code_given_with_dash_c_runs_as_main_with_the_cwd_first_on_the_path(tmp_path):
    (tmp_path / "near.py").write_text("X = 'near'\n")
    code = "import sys, near; print(__name__, sys.argv, near.X)"
    warm = program_runner.run(
        [sys.executable, "-c", code, "arg"], cwd=tmp_path, timeout=120, capture_output=True, text=True
    )
    fresh = subprocess.run(
        [sys.executable, "-c", code, "arg"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert warm.returncode == 0 and warm.stdout == fresh.stdout == "__main__ ['-c', 'arg'] near\n"


def test_an_uncaught_exception_prints_its_traceback_and_exits_1(tmp_path):
    warm = program_runner.run(
        [sys.executable, "-c", "def f():\n    raise ValueError('boom')\nf()"],
        cwd=tmp_path,
        timeout=120,
        capture_output=True,
        text=True,
    )
    assert warm.returncode == 1
    assert "Traceback (most recent call last)" in warm.stderr and "ValueError: boom" in warm.stderr


def test_a_program_that_runs_too_long_is_killed_with_its_children(tmp_path):
    code = (
        "import subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
        "open('child.pid', 'w').write(str(child.pid))\n"
        "time.sleep(600)\n"
    )
    with pytest.raises(subprocess.TimeoutExpired):
        program_runner.run([sys.executable, "-c", code], cwd=tmp_path, timeout=5, capture_output=True, text=True)
    pid = int((tmp_path / "child.pid").read_text())
    for _ in range(50):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        import time

        time.sleep(0.1)
    else:
        pytest.fail("the program's child outlived the timeout")
    # the server still runs programs afterwards
    assert (
        program_runner.run(
            [sys.executable, "-c", "print(1)"], cwd=tmp_path, timeout=120, capture_output=True, text=True
        ).stdout
        == "1\n"
    )


def test_each_program_draws_fresh_numpy_random_numbers(tmp_path):
    code = "import numpy as np; print(np.random.rand())"
    first = program_runner.run(
        [sys.executable, "-c", code], cwd=tmp_path, timeout=120, capture_output=True, text=True, preload=("numpy",)
    )
    second = program_runner.run(
        [sys.executable, "-c", code], cwd=tmp_path, timeout=120, capture_output=True, text=True, preload=("numpy",)
    )
    assert first.returncode == second.returncode == 0 and first.stdout != second.stdout


def test_a_different_hash_seed_gets_its_own_interpreter(tmp_path):
    code = "print(hash('transpiler'))"
    seeds = {
        program_runner.run(
            [sys.executable, "-c", code],
            cwd=tmp_path,
            timeout=120,
            capture_output=True,
            text=True,
            preload=(),
            env=dict(os.environ, PYTHONHASHSEED=seed),
        ).stdout
        for seed in ("1", "2", "1")
    }
    assert len(seeds) == 2


def test_what_the_server_preloaded_is_visible_and_nothing_else(tmp_path):
    code = "import sys; print('torch' in sys.modules, 'tensorflow' in sys.modules, 'keras' in sys.modules)"
    warm = program_runner.run([sys.executable, "-c", code], cwd=tmp_path, timeout=120, capture_output=True, text=True)
    assert warm.stdout == "True False False\n"


def test_pythonpath_entries_follow_the_programs_folder_as_in_a_new_interpreter(program, tmp_path):
    """PYTHONPATH does not key a server (it is read by the child): its entries, relative and
    empty ones made absolute against the working folder, come after the script's folder."""
    (tmp_path / "work" / "rel").mkdir()
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "helper_mod.py").write_text("VALUE = 'other'\n")
    program.write_text("import sys, helper_mod\nprint(sys.path[:5], helper_mod.VALUE)\n")
    for extra in (f"rel:{tmp_path / 'other'}::/nowhere", str(tmp_path / "other")):
        env = dict(os.environ, PYTHONPATH=extra)
        argv = [sys.executable, str(program)]
        fresh = subprocess.run(argv, cwd=tmp_path / "work", env=env, capture_output=True, text=True, timeout=120)
        warm = program_runner.run(argv, cwd=tmp_path / "work", env=env, timeout=120, capture_output=True, text=True)
        assert fresh.returncode == 0, fresh.stderr
        assert (warm.returncode, warm.stdout) == (0, fresh.stdout), warm.stderr
