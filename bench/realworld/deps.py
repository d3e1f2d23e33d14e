"""What the real-world programs import besides the frameworks, kept out of the project's venv.

* ``.rw-deps/``: the programs' own third-party imports (matplotlib, pandas, scikit-learn, scipy,
  Pillow, tqdm, imageio, tensorflow_datasets and what it imports), installed with ``pip install --target --no-deps`` so that nothing the
  venv already has (numpy, TensorFlow, torch) is shadowed; put on the runs' PYTHONPATH.
* ``.venv-tv/``: torch 2.14.1 + torchvision 0.29.1 (the CPU torch 2.13 of the project's venv has no
  torchvision that imports beside it), for the pytorch/examples originals and any translation
  importing torchvision.

Both are gitignored and made on demand (``--setup``), from the package registry only.
"""

from __future__ import annotations

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROGRAM_DEPS = ["matplotlib", "contourpy", "cycler", "fonttools", "kiwisolver", "pyparsing", "python-dateutil",
                "six", "pillow", "pandas", "pytz", "tzdata", "scikit-learn", "scipy", "joblib", "threadpoolctl",
                "tqdm", "imageio",
                # tensorflow_datasets: its tfds.testing.mock_data is the stand-in for tfds.load
                "tensorflow-datasets", "promise", "tensorflow-metadata", "etils", "dm-tree", "simple_parsing",
                "array_record", "immutabledict", "toml", "psutil", "pyarrow", "docstring-parser",
                "importlib_resources", "zipp",
                # IPython (a few scripts display images with it)
                "ipython", "traitlets", "pygments", "decorator", "jedi", "parso", "matplotlib-inline",
                "prompt_toolkit", "wcwidth", "stack_data", "executing", "asttokens", "pure_eval", "pexpect",
                "ptyprocess", "ipywidgets", "comm", "widgetsnbextension", "jupyterlab_widgets", "cloudpickle", "narwhals",
                # gymnasium (pytorch/examples' reinforcement_learning programs: CartPole)
                "gymnasium", "farama-notifications",
                # keras.utils.plot_model (pydot; it also needs graphviz's `dot`, a system package:
                # `apt-get install graphviz`) and tf.summary (tensorboard)
                "pydot", "tensorboard", "tensorboard-data-server", "markdown", "werkzeug"]
TORCHVISION_PINS = ["torch==2.14.1", "torchvision==0.29.1", "numpy", "pillow", "pandas", "packaging", "requests",
                    "gymnasium"]


def deps_dir() -> str:
    return os.environ.get("RW_DEPS_DIR") or os.path.join(ROOT, ".rw-deps")


def tv_venv() -> str:
    return os.environ.get("RW_TORCHVISION_VENV") or os.path.join(ROOT, ".venv-tv")


def ensure_program_deps(log=print) -> str | None:
    target = deps_dir()
    marker = os.path.join(target, ".complete")
    if os.path.exists(marker):
        return target
    log(f"installing the programs' imports into {target} (pip --target --no-deps) ...")
    p = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--target", target, "--no-deps",
                        *PROGRAM_DEPS], capture_output=True, text=True)
    if p.returncode != 0:
        log(p.stderr[-2000:])
        return None
    open(marker, "w").close()
    return target


def system_tools_missing() -> list[str]:
    """The system tools some originals need that pip cannot install (said by --setup)."""
    import shutil

    return [f"{tool} ({why})" for tool, why in (("dot", "graphviz, for keras.utils.plot_model"),)
            if shutil.which(tool) is None]


def ensure_torchvision_venv(log=print) -> str | None:
    venv = tv_venv()
    py = os.path.join(venv, "bin", "python")
    if os.path.exists(os.path.join(venv, ".complete")):
        return py
    log(f"creating {venv} with {' '.join(TORCHVISION_PINS)} (about 5.5 GB, a few minutes) ...")
    steps = [[sys.executable, "-m", "venv", venv], [py, "-m", "pip", "install", "-q", *TORCHVISION_PINS]]
    for cmd in steps:
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            log(p.stderr[-2000:])
            return None
    open(os.path.join(venv, ".complete"), "w").close()
    return py


def import_program_dep(name: str):
    """Import a module of the program-deps folder in the harness's own process (Pillow for the
    image stand-ins), adding the folder to sys.path at the end (nothing of the venv is shadowed)."""
    import importlib

    folder = deps_dir()
    if folder not in sys.path and os.path.isdir(folder):
        sys.path.append(folder)
    return importlib.import_module(name)
