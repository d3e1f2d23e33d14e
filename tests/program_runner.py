"""Run a Python program the way ``subprocess.run([sys.executable, ...])`` does, from a warm fork.

Most of the suite's end-to-end tests run a generated program in a new interpreter, and a new
interpreter spends 3-4 s importing torch (and TensorFlow) before the program's first line: on
the 2-core CI machine that import was most of those tests' time. Here a small server process
per pytest worker imports the heavy frameworks once and forks a child per program; the child
becomes the program: its own process group, working folder, environment, argv, ``sys.path``
(the script's folder first, as ``python script.py`` has it), stdin, stdout and stderr files, a
fresh NumPy seed, ``__main__`` and exit status; the program's ``PYTHONPATH`` entries come after
its folder on ``sys.path``, as a new interpreter puts them (the server itself starts without one,
and imports nothing from it). What a fork cannot give is a different hash seed or thread count,
since those are read when the interpreter or torch starts: they key the server, so a program
asking for other values gets a server started with them.

With torch the server also imports ``torch._dynamo``, which torch imports itself on an
optimizer's first step (it takes about as long as ``import torch``). Only what the server
imported is shared, and a test that checks which frameworks a program imports must not
preload them: ``run(..., preload=("torch",))`` is the default; TensorFlow is
preloaded only when asked. Keras is never preloaded (it reads KERAS_BACKEND when imported).
``TRANSPILER_TESTS_FRESH_INTERPRETER=1`` runs every program in a new interpreter instead.
"""

from __future__ import annotations

import atexit
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading

#: environment variables read when the interpreter or a preloaded framework starts
_STARTUP_ENV = (
    "PYTHONHASHSEED",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "TF_CPP_MIN_LOG_LEVEL",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONWARNINGS",
    "CUDA_VISIBLE_DEVICES",
)

_SERVER = r"""
import os, sys, json, signal
reply = os.fdopen(int(sys.argv[1]), "w", buffering=1)
base_path = sys.path[1:]  # (sys.path[0] is '' for -c; the server runs without PYTHONPATH)
for name in json.loads(sys.argv[2]):
    __import__(name)
    if name == "torch":
        # (torch imports its compiler front end, about as costly as torch itself, the first
        # time an optimizer steps or a module is saved: nearly every program would pay it)
        __import__("torch._dynamo")
import atexit, gc, runpy, threading, tempfile, traceback
# (the preloaded modules are no program's garbage: a program's gc.collect(), Keras'
# clear_session() for one, need not walk them, nor touch their pages after the fork)
gc.collect()
gc.freeze()
reply.write("ready\n")

def child(req):
    os.setpgid(0, 0)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    fd_in = os.open(req["stdin"] or os.devnull, os.O_RDONLY)
    os.dup2(fd_in, 0)
    for fd, path in ((1, req["stdout"]), (2, req["stderr"])):
        f = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(f, fd)
        os.close(f)
    reply.close()
    os.chdir(req["cwd"])
    os.environ.clear()
    os.environ.update(req["env"])
    tempfile.tempdir = None
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed()
    argv = req["argv"]
    # (a new interpreter puts PYTHONPATH's entries after the script's folder, before the rest)
    extra = req["env"].get("PYTHONPATH", "")
    program_path = [os.path.abspath(entry or os.curdir) for entry in extra.split(os.pathsep)] if extra else []
    code = 0
    try:
        if argv[0] == "-c":
            sys.argv = ["-c"] + argv[2:]
            sys.path[:] = [""] + program_path + base_path
            import types
            main = types.ModuleType("__main__")
            main.__dict__["__builtins__"] = __builtins__
            sys.modules["__main__"] = main
            exec(compile(argv[1], "<string>", "exec"), main.__dict__)
        else:
            script = os.path.abspath(argv[0])
            sys.argv = list(argv)
            sys.path[:] = [os.path.dirname(script)] + program_path + base_path
            runpy.run_path(script, run_name="__main__")
    except SystemExit as exc:
        if exc.code is None:
            code = 0
        elif isinstance(exc.code, int):
            code = exc.code
        else:
            print(exc.code, file=sys.stderr)
            code = 1
    except BaseException:
        traceback.print_exc()
        code = 1
    try:
        threading._shutdown()
        atexit._run_exitfuncs()
    except BaseException:
        traceback.print_exc()
        code = code or 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            pass
    os._exit(code)

for line in sys.stdin:
    req = json.loads(line)
    pid = os.fork()
    if pid == 0:
        try:
            child(req)
        finally:
            os._exit(70)
    reply.write(f"pid {pid}\n")
    _, status = os.waitpid(pid, 0)
    reply.write(f"rc {os.waitstatus_to_exitcode(status)}\n")
"""


class _Server:
    def __init__(self, preload: tuple[str, ...], env: dict[str, str]):
        read_fd, write_fd = os.pipe()
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _SERVER, str(write_fd), json.dumps(list(preload))],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
            pass_fds=(write_fd,),
            text=True,
            start_new_session=True,
        )
        os.close(write_fd)
        self.replies = _Lines(read_fd)
        if self.replies.readline(timeout=600) != "ready":
            raise RuntimeError(f"the program server (preloading {preload}) did not start")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
        except Exception:
            self.proc.kill()
        self.replies.close()


_servers: dict[tuple, _Server] = {}  # (most recently used last)
#: servers kept per pytest worker (each holds the preloaded frameworks' memory)
_MAX_SERVERS = 3
_lock = threading.Lock()


@atexit.register
def _close_servers() -> None:
    for server in _servers.values():
        server.close()
    _servers.clear()


def _server(preload: tuple[str, ...], env: dict[str, str]) -> _Server:
    key = (preload,) + tuple(env.get(name) for name in _STARTUP_ENV)
    server = _servers.pop(key, None)
    if server is None or not server.alive():
        while len(_servers) >= _MAX_SERVERS:
            _servers.pop(next(iter(_servers))).close()
        server = _Server(preload, {k: v for k, v in env.items() if k != "PYTHONPATH"})
    _servers[key] = server
    return server


def bare_env() -> dict[str, str]:
    """The bare environment some tests run generated programs in (a PATH, a headless matplotlib,
    nothing of the test run's own), with TensorFlow's log level of the other runs: the programs
    share the warm server the other tests start (the log level keys the server)."""
    return {"MPLBACKEND": "Agg", "PATH": "/usr/bin:/bin", "TF_CPP_MIN_LOG_LEVEL": os.environ.get("TF_CPP_MIN_LOG_LEVEL", "3")}


def _program_argv(argv: list[str]) -> list[str] | None:
    """``argv`` without the interpreter when it is ``python script.py ...`` or ``python -c code ...``."""
    if not argv or str(argv[0]) != sys.executable or len(argv) < 2:
        return None
    rest = [str(a) for a in argv[1:]]
    if rest[0] == "-c" and len(rest) >= 2:
        return rest
    if rest[0].startswith("-"):
        return None
    return rest


def run(
    argv,
    *,
    cwd=None,
    env=None,
    timeout=None,
    capture_output=False,
    text=False,
    input=None,
    preload: tuple[str, ...] = ("torch",),
    check=False,
) -> subprocess.CompletedProcess:
    """``subprocess.run(argv, ...)`` with the same arguments and result, from a warm fork when ``argv``
    runs a Python script or ``-c`` code with this interpreter and the output is captured."""
    env = dict(os.environ if env is None else env)
    program = _program_argv(list(argv))
    if program is None or not capture_output or os.environ.get("TRANSPILER_TESTS_FRESH_INTERPRETER"):
        return subprocess.run(
            argv, cwd=cwd, env=env, timeout=timeout, capture_output=capture_output, text=text, input=input, check=check
        )
    with _lock, tempfile.TemporaryDirectory(prefix="program_runner") as folder:
        paths = {name: os.path.join(folder, name) for name in ("stdin", "stdout", "stderr")}
        if input is not None:
            with open(paths["stdin"], "w" if text else "wb") as fh:
                fh.write(input)
        server = _server(tuple(preload), env)
        request = {
            "argv": program,
            "cwd": os.path.abspath(cwd or os.getcwd()),
            "env": env,
            "stdin": paths["stdin"] if input is not None else None,
            "stdout": paths["stdout"],
            "stderr": paths["stderr"],
        }
        server.proc.stdin.write(json.dumps(request) + "\n")
        server.proc.stdin.flush()
        pid = int(server.replies.readline(timeout=600).split()[1])
        returncode = _wait_for_exit(server, pid, timeout)

        def read(name):
            with open(paths[name], "r" if text else "rb", **({"errors": "replace"} if text else {})) as fh:
                return fh.read()

        if returncode is None:
            raise subprocess.TimeoutExpired(argv, timeout, output=read("stdout"), stderr=read("stderr"))
        result = subprocess.CompletedProcess(argv, returncode, read("stdout"), read("stderr"))
    if check:
        result.check_returncode()
    return result


class _Lines:
    """Lines from a pipe, read unbuffered so that waiting with a timeout sees every line."""

    def __init__(self, fd: int):
        self.fd, self.pending = fd, b""

    def readline(self, timeout=None) -> str | None:
        import select
        import time

        end = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self.pending:
            left = None if end is None else max(0.0, end - time.monotonic())
            if not select.select([self.fd], [], [], left)[0]:
                return None
            chunk = os.read(self.fd, 4096)
            if not chunk:
                return ""
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        return line.decode()

    def close(self) -> None:
        os.close(self.fd)


def _wait_for_exit(server: _Server, pid: int, timeout) -> int | None:
    """The program's exit code, or None after killing its process group when ``timeout`` ran out."""
    line = server.replies.readline(timeout)
    if line is None:
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        server.replies.readline(timeout=60)
        return None
    if not line or not line.startswith("rc "):
        raise RuntimeError(f"the program server stopped while running a program ({line!r})")
    return int(line.split()[1])
