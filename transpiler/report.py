"""The conversion report (``--report FILE``): every construct, what it became, the convert rate.

A construct is a layer call or tensor operation of a model (one per source call site),
a subclassed layer or model, or a statement of the training program; each is listed
with ``file:line``. Constructs left as marked stubs count against the rate, so
"41/43 constructs translated (95.3%)" means two need a human.
"""

from __future__ import annotations

from dataclasses import dataclass

from transpiler.printers.torch import ops as torch_ops


@dataclass
class Row:
    where: str
    construct: str
    became: str
    translated: bool


def report_rows(translation) -> list[Row]:
    program = translation.program
    rows: list[Row] = []
    for md in program.models:
        seen = set()
        for node in md.graph.nodes:
            owner = (node.from_keras.fused_into or node)
            span = owner.call_span or owner.span
            layer = owner.layer
            key = (id(layer) if layer is not None else id(owner), span.line if span else None)
            if key in seen:
                continue
            seen.add(key)
            construct = (layer.cls_name if layer is not None and layer.cls_name else owner.op)
            em = torch_ops.emit(owner)
            became = f"`self.{owner.name} = {em.module}`" if em.module else f"`{owner.op}` in forward()"
            rows.append(Row(str(span) if span else program.path, f"{construct} in {md.class_name}", became, True))
        for cls in md.graph.from_keras.user_classes:
            became = (f"`class {cls}(nn.Module)`" if cls == md.class_name
                      else f"its call() inlined into {md.class_name}.forward()")
            rows.append(Row(program.path, f"class {cls}", became, True))
    for ts in program.training:
        rows.append(Row(str(ts.span) if ts.span else program.path, ts.kind.replace("_", " "),
                        "training program code", True))
    for diag in translation.stubs:
        rows.append(Row(str(diag.span) if diag.span else program.path, diag.source_line or diag.message,
                        f"marked stub: {diag.message}", False))
    return rows


def convert_rate(rows: list[Row]) -> tuple[int, int]:
    return sum(r.translated for r in rows), len(rows)


def render(translation, source_path: str, output_path: str, stop: str = "") -> str:
    """The Markdown report. It leads with what decides whether the output is usable (models
    translated, stubs, where the program stops: ``stop`` from transpiler/stub_path.py), then the
    construct rate, then one row per construct."""
    rows = report_rows(translation)
    done, total = convert_rate(rows)
    pct = 100.0 * done / total if total else 100.0
    models, stubs = len(translation.program.models), len(translation.stubs)
    missed = translation.program.models_not_translated
    found = f" of {models + len(missed)} found (stubs: {', '.join(missed)})" if missed else ""
    usable = (f"**{models} model{'s' if models != 1 else ''}{found} translated, "
              f"{stubs} stub{'s' if stubs != 1 else ''}{'; ' + stop if stop else ''}.**")
    lines = [f"# Conversion report: {source_path}", "", usable, "",
             f"{done}/{total} constructs translated ({pct:.1f}%); output `{output_path}`.", "",
             "| where | construct | became |", "| --- | --- | --- |"]
    for r in rows:
        mark = "" if r.translated else "**manual** "
        lines.append(f"| {r.where} | {mark}{_cell(r.construct)} | {_cell(r.became)} |")
    warnings = [d for d in translation.diagnostics if d.severity == "warning"]
    if warnings:
        lines += ["", "## Assumptions made", ""] + [f"- {d}" for d in warnings]
    if translation.differences:  # (idiomatic output; none under --exact)
        lines += ["", "## Numeric differences from the source (the target's own optimizers and "
                      "initializers; --exact reproduces the source's)", ""]
        lines += [f"- {line}" for line in translation.differences]
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
