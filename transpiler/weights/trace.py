"""``--trace-weights``: build the source model in the source framework to capture its
initial weights, so the generated model starts from identical numbers.

This runs the user's code (the script is imported under a name other than
``__main__``, so a ``if __name__ == "__main__":`` block does not run, but module-level
statements do). It is opt-in, never implicit, and happens in a separate process so the
translator itself never imports a framework.
"""

from __future__ import annotations

import os
import subprocess
import sys

from transpiler.weights.errors import CheckpointError

RUNNER = r"""
import ast, importlib.util, os, sys
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
src, kind, name, args, out, seed = sys.argv[1:]
try:
    import torch  # noqa: F401  (a process holding both frameworks must load torch first)
except ImportError:
    pass
import keras
keras.utils.set_random_seed(int(seed))
sys.path.insert(0, os.path.dirname(os.path.abspath(src)))
spec = importlib.util.spec_from_file_location("transpile_traced_source", src)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
model = getattr(module, name)(**ast.literal_eval(args)) if kind == "builder" else getattr(module, name)
model.save_weights(out)
"""


#: how long the user's code may run (seconds), unless --trace-timeout says otherwise
DEFAULT_TIMEOUT = 900.0


def trace_keras_weights(src: str, builder: str | None, var: str | None, builder_args: dict,
                        out: str, seed: int = 0, timeout: float | None = None) -> str:
    """Run ``builder(**builder_args)`` (or read module variable ``var``) of ``src`` in a
    fresh Python process with Keras; save its weights to ``out`` (a ``.weights.h5``).

    The process runs in a session of its own: at the timeout, or when this process is
    interrupted, it and every process it started are killed."""
    if timeout is None:
        timeout = float(os.environ.get("TRANSPILE_TRACE_TIMEOUT") or DEFAULT_TIMEOUT)
    if builder:
        kind, name = "builder", builder
    elif var:
        kind, name = "variable", var
    else:
        raise CheckpointError(f"{src}: the model is neither returned by a function nor bound to a "
                              "module variable; --trace-weights cannot build it")
    try:
        args = repr({k: v for k, v in builder_args.items()})
        proc = _run_group([sys.executable, "-c", RUNNER, src, kind, name, args, out, str(seed)],
                          timeout, cwd=os.path.dirname(os.path.abspath(src)) or None)
    except subprocess.TimeoutExpired:
        raise CheckpointError(f"{src}: --trace-weights: building the Keras model took longer than "
                              f"{timeout:g} s (--trace-timeout); it was stopped") from None
    if proc.returncode != 0 or not os.path.exists(out):
        tail = "\n    ".join((proc.stderr or "").strip().splitlines()[-6:])
        raise CheckpointError(f"{src}: --trace-weights: running {name} with Keras failed "
                              f"(exit {proc.returncode}); the last lines it printed:\n    {tail}")
    return out


def _run_group(cmd: list[str], timeout: float, cwd: str | None) -> subprocess.CompletedProcess:
    """``subprocess.run`` in a new session whose whole process group is killed on a timeout
    or any exception (Ctrl-C, SIGTERM turned into SystemExit): no child outlives the run."""
    import signal

    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except BaseException:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        proc.communicate()
        raise
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)
