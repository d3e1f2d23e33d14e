"""The only changes the harness makes in its own copies of a program, each one recorded.

Allowed (issue 18, item 6): data lines (a download URL -> the local stand-in), epoch and step
counts (capped: 1 epoch, a few steps) and expected file hashes (a stand-in cannot match the
real file's hash). Anything else in the program stays as written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_STEPS = 4

# `epochs=30`, `EPOCHS = 30`, `num_epochs: int = 30`, `NUM_EPOCHS=30` (a name holding "epoch",
# not a step count per epoch, nor a learning-rate schedule's warm-up/decay length: capping
# `warmup_epochs = 15` to 1 divides by zero in `(... ) / (warmup_epochs - 1)`); only counts above 1
# change (never a counter's `epoch = 0`).
_EPOCHS = re.compile(r"\b(?P<name>(?![A-Za-z_]*steps?_?per)(?![A-Za-z_]*(?:warmup|warm_up|decay))[A-Za-z_]*epochs?[A-Za-z_0-9]*)(?P<ann>\s*:\s*int)?"
                     r"(?P<eq>\s*=\s*)(?P<n>\d+)\b(?!\s*[\.\*/eE])", re.I)
_RANGE_EPOCHS = re.compile(r"\bfor\s+(?P<var>\w*epoch\w*)\s+in\s+(?:tqdm\()?range\(\s*(?P<n>\d+)\s*\)", re.I)
_STEPS = re.compile(r"\b(?P<name>steps_per_epoch|validation_steps|steps|num_steps|train_steps|max_steps|"
                    r"num_iterations|iterations|num_train_steps|training_steps|[A-Za-z_]*_iters)(?P<eq>\s*=\s*)(?P<n>\d+)\b"
                    r"(?!\s*[\.\*/eE])", re.I)
_HASH = re.compile(r"\b(?P<name>file_hash|md5_hash|hash)(?P<eq>\s*=\s*)(?P<q>[\"'])(?P<h>[0-9a-fA-F]{32,64})(?P=q)")
_HASH_LITERAL = re.compile(r"(?P<q>[\"'])(?P<h>[0-9a-fA-F]{32}|[0-9a-fA-F]{64})(?P=q)")


@dataclass
class Change:
    line: int
    kind: str  # "data" | "epochs" | "steps" | "hash"
    before: str
    after: str


def _sub_line(pattern, line, repl):
    return pattern.sub(repl, line)


def edit(text: str, url_map: dict[str, str], known_hashes: set[str] = frozenset()) -> tuple[str, list[Change]]:
    """The harness's copy of ``text`` and the list of changes it made."""
    out, changes = [], []
    for no, line in enumerate(text.splitlines(keepends=True), 1):
        stripped = line.lstrip()
        if stripped.startswith("#"):
            out.append(line)
            continue
        new = line
        kinds = []
        for url, local in url_map.items():
            for q in ('"', "'"):
                if q + url + q in new:
                    new = new.replace(q + url + q, q + local + q)
                    kinds.append("data")
        after = _EPOCHS.sub(lambda m: m.group(0) if int(m.group("n")) <= 1 else
                            f"{m.group('name')}{m.group('ann') or ''}{m.group('eq')}1", new)
        after = _RANGE_EPOCHS.sub(lambda m: m.group(0) if int(m.group("n")) <= 1 else
                                  m.group(0).replace(f"({m.group('n')}", "(1", 1).replace(f"( {m.group('n')}", "(1", 1), after)
        if after != new:
            kinds.append("epochs")
            new = after
        after = _STEPS.sub(lambda m: m.group(0) if int(m.group("n")) <= MAX_STEPS else
                           f"{m.group('name')}{m.group('eq')}{MAX_STEPS}", new)
        if after != new:
            kinds.append("steps")
            new = after
        after = _HASH.sub(lambda m: f"{m.group('name')}{m.group('eq')}None", new)
        if known_hashes:
            after = _HASH_LITERAL.sub(lambda m: "None" if m.group("h") in known_hashes else m.group(0), after)
        if after != new:
            kinds.append("hash")
            new = after
        if new != line:
            changes.append(Change(no, "+".join(dict.fromkeys(kinds)), line.rstrip("\n"), new.rstrip("\n")))
        out.append(new)
    return "".join(out), changes
