"""Odd but equivalent spellings of the values a torch -> Keras translation reads (issue 22,
whole-program fuzz findings of the ``odd_syntax`` mutator on realworld/torch/imagenet and
super_resolution): a string split in parts (``'resnet''18'``), redundant parentheses
(``(model.features)``, ``async_op=(False)``, ``type=(int)``), digits grouped (``9_0``) and
trailing commas mean what the plain spelling means, so the program translates the same
(same models, same stubs) instead of losing its model or gaining a stub:

- ``argparse`` defaults, flags, ``dest=``, ``action=``, ``required=`` and ``type=`` are
  evaluated as Python evaluates them (frontend_ast/torch/cli_args.py), so a network built by
  name (``models.__dict__[args.arch]()``) is built whatever the spelling of its default;
- a module re-wrapped in ``DataParallel`` and a collective's ``async_op=`` are compared
  without their parentheses (frontend_ast/torch/plumbing.py);
- ``torch.save(model, path)`` takes a path made from a split string literal
  (frontend_ast/torch/model_files.py), and the program saving and loading it runs.

The programs are small ones of our own (none copied from the real-world scripts).
"""

from __future__ import annotations

import os
import re
import sys
import textwrap

import libcst as cst
import pytest

import program_runner  # (generated programs run from a warm fork: tests/program_runner.py)
from transpiler.frontend_ast.torch import cli_args
from transpiler.translate import translate

PARSER_PLAIN = '''
    import argparse
    parser = argparse.ArgumentParser(description="defaults")
    parser.add_argument("data", nargs="?", default="imagenet")
    parser.add_argument("-a", "--arch", default="resnet18")
    parser.add_argument("--epochs", default=90, type=int)
    parser.add_argument("--workers", default="4", type=int)
    parser.add_argument("--lr", "--learning-rate", default=0.1, type=float, dest="lr")
    parser.add_argument("--wd", "--weight-decay", default=1e-4, type=float, dest="weight_decay")
    parser.add_argument("--rank", default=-1, type=int)
    parser.add_argument("--sizes", default=(1, 2))
    parser.add_argument("--evaluate", action="store_true")
    parser.add_argument("--no-aug", action="store_false")
    parser.add_argument("--upscale", type=int, required=True)
    args = parser.parse_args()
    '''

PARSER_ODD = '''
    import argparse
    parser = argparse.ArgumentParser(description=("def" "aults"),)
    parser.add_argument(("da""ta"), nargs=("?"), default=("i""magenet"),); parser.add_argument(("-""a"), ("--ar""ch"), default=("resnet""18"))
    parser.add_argument(("--epochs"), default=(9_0), type=(int),)
    parser.add_argument("--workers", default=("4"), type=(int))
    parser.add_argument(("--lr"), "--learning-rate", default=(0.1), type=(float), dest=("l""r"),)
    parser.add_argument(("--w""d"), "--weight-decay", default=(1e-4), type=float, dest=("weight_de""cay"))
    parser.add_argument("--rank", default=(-1), type=(int))
    parser.add_argument("--sizes", default=((1), (2),))
    parser.add_argument(("-""-evaluate"), action=("store_t""rue"),)
    parser.add_argument("--no-aug", action=(("store_false")))
    parser.add_argument("--upscale", type=int, required=(True),)
    args = parser.parse_args()
    '''


def _defaults(source: str) -> dict:
    found = cli_args.namespaces(cst.parse_module(textwrap.dedent(source)))
    assert set(found) == {"args"}
    # (an unknown default, argparse's None or a required option, as its kind)
    return {k: (type(v).__name__ if type(v).__name__ == "Unknown" else v)
            for k, v in found["args"].defaults.items()}


def test_command_line_defaults_are_read_however_they_are_spelled():
    plain = _defaults(PARSER_PLAIN)
    assert plain == {"data": "imagenet", "arch": "resnet18", "epochs": 90, "workers": 4, "lr": 0.1,
                     "weight_decay": 1e-4, "rank": -1, "sizes": (1, 2), "evaluate": False, "no_aug": True,
                     "upscale": "Unknown"}
    assert _defaults(PARSER_ODD) == plain


def test_a_default_that_is_not_a_literal_is_unknown():
    found = _defaults('''
        import argparse, os
        parser = argparse.ArgumentParser()
        parser.add_argument("--root", default=os.getcwd())
        parser.add_argument("--name", default=f"{os.sep}x")
        args = parser.parse_args()
        ''')
    assert found == {"root": "Unknown", "name": "Unknown"}


#: a network picked by name from an option (models.__dict__[args.arch]()), one part of it
#: re-wrapped in DataParallel
BY_NAME = '''
    import argparse
    import torch
    import torchvision.models as models

    model_names = sorted(name for name in models.__dict__
                         if name.islower() and not name.startswith("__")
                         and callable(models.__dict__[name]))
    parser = argparse.ArgumentParser(description="by name")
    parser.add_argument("-a", "--arch", default="resnet18", choices=model_names)
    parser.add_argument("--lr", "--learning-rate", default="0.1", type=float, dest="lr")
    args = parser.parse_args()
    model = models.__dict__[args.arch]()
    if args.arch.startswith("vgg"):
        model.features = torch.nn.DataParallel(model.features)
    optimizer = torch.optim.SGD(model.parameters(), args.lr)
    '''

BY_NAME_ODD = {
    "options": [('not name.startswith("__")', 'not name.startswith(("_""_"),)'),
                ('description="by name"', 'description=("by" " name")'),
                ('"-a", "--arch", default="resnet18", choices=model_names)',
                 '("-""a"), ("--ar""ch"), default=("resnet""18"), choices=model_names,)'),
                ('default="0.1", type=float, dest="lr")', 'default=("0.""1"), type=(float), dest=("l""r"),)')],
    "wrapper": [("DataParallel(model.features)", "DataParallel((model.features))")],
}

#: a collective over the worker processes in a plain class (one process: dropped)
COLLECTIVE = '''
    import torch
    import torch.nn as nn
    import torch.distributed as dist


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 2)

        def forward(self, x):
            return self.fc(x)


    class Meter:
        def __init__(self):
            self.sum = 0.0
            self.count = 0

        def update(self, val, n=1):
            self.sum += val * n
            self.count += n

        def all_reduce(self):
            total = torch.tensor([self.sum, self.count], dtype=torch.float32)
            dist.all_reduce(total, dist.ReduceOp.SUM, async_op=False)
            self.sum, self.count = total.tolist()


    model = Net()
    meter = Meter()
    meter.update(1.0)
    print(model(torch.zeros(3, 4)).shape, meter.sum)
    '''

#: a whole model saved to a path made from a string literal, then loaded
SAVE = '''
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 2)

        def forward(self, x):
            return self.fc(x)


    model = Net()
    for epoch in range(1, 3):
        model_out_path = "model_epoch_{}.pth".format(epoch)
        torch.save(model, model_out_path)
        print("saved", model_out_path)
    torch.save(model, "final.pt")
    again = torch.load("final.pt", weights_only=False)
    print("loaded", tuple(again(torch.zeros(1, 4)).shape))
    '''

SAVE_ODD = [('"model_epoch_{}.pth".format(epoch)', '("model_""epoch_{}.pth").format((epoch),)'),
            ("torch.save(model, model_out_path)", "torch.save(model, (model_out_path))"),
            ('torch.save(model, "final.pt")', 'torch.save(model, ("fin" "al.pt"),)')]



def _spelled(source: str, edits) -> str:
    source = textwrap.dedent(source)
    for old, new in edits:
        assert source.count(old) == 1, old
        source = source.replace(old, new)
    return source


def _read(source: str):
    result = translate(source, "main.py", "keras")
    compile(result.text, "<output>", "exec")
    return len(result.program.models), sorted(re.sub(r"\s+", " ", s.message) for s in result.stubs), result


CASES = {
    "network_by_name_options": (BY_NAME, BY_NAME_ODD["options"]),
    "network_by_name_wrapper": (BY_NAME, BY_NAME_ODD["wrapper"]),
    "collective_async_op": (COLLECTIVE, [("async_op=False", "async_op=(False),")]),
    "save_whole_model": (SAVE, SAVE_ODD),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_an_odd_spelling_translates_as_the_plain_one(name):
    source, edits = CASES[name]
    plain = _read(textwrap.dedent(source))
    odd = _read(_spelled(source, edits))
    assert plain[:2] == (1, []), plain[:2]  # (the plain program translates whole)
    assert odd[:2] == plain[:2]


def test_a_network_by_name_keeps_its_default_guard_however_spelled():
    *_, result = _read(_spelled(BY_NAME, BY_NAME_ODD["options"]))
    assert re.search(r"^if args\.arch != [\"']resnet18[\"']:$", result.text, re.M), result.text


def test_a_model_saved_to_a_split_path_literal_runs(tmp_path):
    *_, result = _read(_spelled(SAVE, SAVE_ODD))
    assert "model_epoch_{}.keras" in result.text and "final.keras" in result.text, result.text
    (tmp_path / "out.py").write_text(result.text)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    done = program_runner.run([sys.executable, "out.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=300, preload=("torch", "tensorflow"))
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split("\n")[:3] == ["saved model_epoch_1.keras", "saved model_epoch_2.keras", "loaded (1, 2)"]
    assert sorted(p.name for p in tmp_path.glob("*.keras")) == ["final.keras", "model_epoch_1.keras",
                                                                 "model_epoch_2.keras"]


MINGPT = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                      "shared", "realworld", "torch", "distributed", "minGPT-ddp", "mingpt", "model.py")


def test_parameter_groups_built_for_any_model_are_read_however_their_keys_are_spelled():
    """minGPT's ``create_optimizer(model, cfg)`` builds ``[{"params": ...}, ...]`` for a model the
    file does not know (frontend_ast/torch/runtime_params.py); a group key spelled
    ``("para""ms")`` (the whole-program fuzz's odd_syntax mutant) is the same key."""
    if not os.path.isfile(MINGPT):
        pytest.skip(f"{MINGPT} is absent (the real-world set is not checked out here)")
    with open(MINGPT, encoding="utf-8") as fh:
        source = fh.read()
    odd = source.replace('{"params": [param_dict[pn] for pn in sorted(list(decay))]',
                         '{("para""ms"): [param_dict[pn] for pn in sorted(list(decay))]')
    odd = odd.replace('{"params": [param_dict[pn] for pn in sorted(list(no_decay))]',
                      '{("pa" "rams"): [param_dict[pn] for pn in sorted(list(no_decay))]')
    assert odd.count('"para""ms"') == 1 and odd.count('"pa" "rams"') == 1
    plain, spelled = translate(source, MINGPT, "keras"), translate(odd, MINGPT, "keras")
    assert not plain.stubs, [str(d) for d in plain.stubs]
    assert "param_groups_optimizer(" in plain.text
    assert not spelled.stubs, [str(d) for d in spelled.stubs]
    assert len(spelled.program.models) == len(plain.program.models)
