"""A torch training loop of the usual shape around a custom step → a ``keras.Model`` whose
``train_step`` is the step, and ``fit`` (facts from ``frontend_ast.torch.train_step``).

The step's statements are printed as in a custom loop (under a persistent
``tf.GradientTape``; ``backward()`` gathers gradients, ``step()`` applies them), inside
``train_step``; the values the loop reports become ``keras.metrics.Mean`` trackers that
fit logs per epoch. The trainer holds what the step reads from the function around the
loop (models, optimizers, losses, constants) as attributes. A step computing with numpy
or Python numbers (noise drawn with numpy, ``float(t)``) runs eagerly: a traced
``train_step`` would fix those values at their first call.
"""

from __future__ import annotations

import re
import textwrap

from transpiler.ir import training as T
from transpiler.printers.code import docstring
from transpiler.printers.keras.subclass import MODEL_ATTRIBUTES

#: printed step code that only runs eagerly (numpy on tensors, Python numbers of tensors)
_EAGER_ONLY = re.compile(r"\bnp\.[\w.]+|\bfloat\(|\bint\(|\bbool\(|\.item\(|\.tolist\(")


def _attribute(name: str) -> str:
    """A trainer attribute named as one of ``keras.Model``'s gets a "_"."""
    return f"{name}_" if name in MODEL_ATTRIBUTES or name.startswith("_") else name


def _docstring(text: str, indent: str) -> list[str]:
    lines = textwrap.wrap(text, width=88 - len(indent) - 3, break_on_hyphens=False) or [""]
    # (the text quotes the source's names: printed through code.docstring)
    return (indent + docstring("\n".join(lines), indent)).split("\n")


def _data_unpacking(names: list[str], through_dataset: bool) -> str:
    """``train_step``'s ``data`` as the loop's batch names: fit over one array gives the
    batch itself, over (x, y) the pair, a tf.data pipeline of tuples the tuple."""
    if len(names) == 1 and not through_dataset:
        return f"{names[0]} = data"
    return f"{', '.join(names)}{',' if len(names) == 1 else ''} = data"


# long: one trainer class and the statements replacing the loop, sharing the names it picks
def train_step_fit(printer, ts: T.TrainingStatement, original, updated,
                   module_names: set[str]) -> tuple[str, list[str]]:
    """(the trainer class's source, the statements that replace the loop)."""
    from transpiler.printers.keras.training import _code, comment_lines

    p = printer
    cfg = ts.config
    taken = set(module_names)

    def fresh(hint: str) -> str:
        name, i = hint, 2
        while name in taken or name in p.names.taken:
            name, i = f"{hint}_{i}", i + 1
        taken.add(name)
        p.names.taken.add(name)
        return name

    cls = fresh("Trainer")
    trainer = fresh("trainer")
    trackers = "trackers" if "trackers" not in cfg["free"] else "trackers_"
    names, _tuple = cfg["batch"]
    drop_last = cfg["drop_last"]
    through_dataset = len(names) > 2 or drop_last not in (False, None)

    # the step: the batch loop's body as printed (under its tape), without the loop's note
    if cfg["owner"] == p.source.sid(original):  # one pass over the loader: the loop is the batch loop
        owner = p.tape_loop(T.TrainingStatement("tape_loop", "", cfg["tape"]), updated)
    else:
        owner = p.updated[cfg["owner"]]
    first, *others = owner.body.body  # (the tape's block first)
    step = "".join(_code(s) for s in [first.with_changes(leading_lines=[])] + others).strip("\n")
    eager = bool(_EAGER_ONLY.search(step))

    free = cfg["free"]
    span = ts.span
    where = f"the loop in {cfg['function']}()" if cfg["function"] else "the script's loop"
    logged = cfg["logged"]
    lines = [f"class {cls}(keras.Model):"]
    doc = (f"The training step of {where} (lines {span.line}-{span.end_line}), for fit to run. It is not "
           f"the step compile() builds: {cfg['why']}.")
    if logged:
        doc += f" fit logs {', '.join(logged)} (each averaged over the epoch's batches)"
        doc += f" in place of the loop's own reporting: {', '.join(cfg['absorbed'])}." if cfg["absorbed"] else "."
    lines += _docstring(doc, "    ")
    lines.append("")
    lines.append(f"    def __init__(self{''.join(', ' + n for n in free)}):")
    lines.append("        super().__init__()")
    for n in free:
        lines.append(f"        self.{_attribute(n)} = {n}")
    tracked = ", ".join(f'keras.metrics.Mean(name="{n}")' for n in logged)
    lines.append(f"        self.{trackers} = [{tracked}]")
    lines += ["", "    @property", "    def metrics(self):", f"        return self.{trackers}", ""]
    lines.append("    def train_step(self, data):")
    if free:
        left = ", ".join(free)
        right = ", ".join(f"self.{_attribute(n)}" for n in free)
        lines.append(f"        {left}{',' if len(free) == 1 else ''} = {right}")
    lines.append("        " + _data_unpacking(names, through_dataset))
    lines += textwrap.indent(step, "        ").splitlines()
    if len(logged) == 1:
        lines.append(f"        self.{trackers}[0].update_state({logged[0]})")
    elif logged:
        lines.append(f"        for tracker, value in zip(self.{trackers}, ({', '.join(logged)})):")
        lines.append("            tracker.update_state(value)")
    lines.append(f"        return {{tracker.name: tracker.result() for tracker in self.{trackers}}}")
    class_text = "\n".join(lines) + "\n"

    # the statements in place of the loop
    out = comment_lines(f"the training loop (lines {span.line}-{span.end_line}) is fit running "
                        f"{cls}.train_step, its custom step, on the loader's batches")
    out.append(f"{trainer} = {cls}({', '.join(free)})")
    if eager:
        uses = ", ".join(dict.fromkeys(m.group(0).rstrip(".(") + ("()" if m.group(0).endswith("(") else "")
                                       for m in _EAGER_ONLY.finditer(step)))
        out += comment_lines(f"the step computes with numpy or Python numbers ({uses}): fit runs it eagerly "
                             "(a traced step would keep their values from its first call)")
        out.append(f"{trainer}.compile(run_eagerly=True)")
    else:
        out.append(f"{trainer}.compile()")
    arrays = [p.code(a) for a in cfg["arrays"]]
    epochs = p.code(cfg["epochs"])
    batch_size, shuffle = p.code(cfg["batch_size"]), cfg["shuffle"]
    if through_dataset:
        p.imports.add("import tensorflow as tf")
        batches = fresh("batches")
        items = ", ".join(arrays) + ("," if len(arrays) == 1 else "")
        out.append(f"{batches} = tf.data.Dataset.from_tensor_slices(({items}))")
        if shuffle not in (False, None):
            shuffled = f"{batches} = {batches}.shuffle({batches}.cardinality())"
            out += [shuffled] if shuffle is True else [f"if {p.code(shuffle)}:", "    " + shuffled]
        drop = "" if drop_last in (False, None) else f", drop_remainder={p.code(drop_last)}"
        out.append(f"{trainer}.fit({batches}.batch({batch_size}{drop}), epochs={epochs}, verbose=2)")
    else:
        out.append(f"{trainer}.fit({', '.join(arrays)}, batch_size={batch_size}, epochs={epochs}, "
                   f"shuffle={p.code(shuffle)}, verbose=2)")
    return class_text, out
