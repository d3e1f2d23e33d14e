"""Documentation generated from code must not drift from it."""

from __future__ import annotations

import os

from transpiler.ops_doc import render_ops_table

ROOT = os.path.dirname(os.path.dirname(__file__))


def test_ops_doc_matches_the_ops_table():
    with open(os.path.join(ROOT, "docs", "ops.md"), encoding="utf-8") as fh:
        on_disk = fh.read()
    assert on_disk == render_ops_table(), "run: python -m transpiler.ops_doc > docs/ops.md"


def test_readme_quick_start_has_exactly_two_commands():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as fh:
        text = fh.read()
    block = text.split("## Quick start", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    commands = [line for line in block.strip().splitlines() if line.strip()]
    assert len(commands) == 2
    with open(os.path.join(ROOT, ".ci", "run"), encoding="utf-8") as fh:
        assert commands[1].replace(" -q", "") in fh.read().replace(" -q", "")
