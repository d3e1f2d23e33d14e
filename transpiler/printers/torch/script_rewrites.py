"""Small libcst rewrites the whole-script printer (``printers/torch/script.py``) applies to the
user's own statements: recognised training calls replaced inside any expression,
``tf.newaxis`` as ``None``, and comment lines kept with the statement that follows them."""

from __future__ import annotations

import re

import libcst as cst

from transpiler.cst_fast import target_names, walk
from transpiler.printers import runtime_source
from transpiler.ir.source_file import NodeId, SourceFile


class _CallReplacer(cst.CSTTransformer):
    """Replaces recognised training calls inside any expression (``model.predict(x).ravel()``)."""

    def __init__(self, expressions: dict[NodeId, str], model_names: dict[str, str], source: SourceFile):
        self.expressions = expressions  # (by the call's stable id)
        self.model_names = model_names
        self.sid = source.sid

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        text = self.expressions.get(self.sid(original))
        return cst.parse_expression(text) if text is not None else updated

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        if self._model_name(original):
            return cst.SimpleString(repr(self.model_names[original.value.value]))
        return updated

    def _model_name(self, node: cst.Attribute) -> bool:
        return (isinstance(node.value, cst.Name) and node.value.value in self.model_names
                and node.attr.value == "name")

    def changes(self, node: cst.CSTNode) -> bool:
        """Whether visiting ``node`` would replace anything (the visit rebuilds every node)."""
        return any((type(n) is cst.Call and self.sid(n) in self.expressions)
                   or (type(n) is cst.Attribute and self._model_name(n)) for n in walk(node))


class _NewAxis(cst.CSTTransformer):
    """``tf.newaxis`` → ``None`` (what it is), so indexing code stays framework-free."""

    def __init__(self, keras_names):
        self.keras_names = set(keras_names)

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        if updated.attr.value == "newaxis" and isinstance(updated.value, cst.Name) \
                and updated.value.value in self.keras_names:
            return cst.Name("None")
        return updated


class _Comments:
    """Comment lines standing where a statement was (attached to the next statement)."""

    def __init__(self, lines):
        self.lines = lines


def _attach_comments(body: list) -> tuple[list, list]:
    """Move ``_Comments`` placeholders onto the statement that follows them; comments
    left at the end are returned for the block's footer."""
    out: list = []
    pending: list = []
    for stmt in body:
        if isinstance(stmt, _Comments):
            pending += stmt.lines
            continue
        if pending:
            stmt = stmt.with_changes(leading_lines=[*pending, *stmt.leading_lines])
            pending = []
        out.append(stmt)
    return out, pending


_LAYOUT = re.compile(r"\blayout\s*=\s*\((\d+(?:, \d+)+)\)")


class KerasLayoutBatches(cst.CSTTransformer):
    """``next(iter(ds))`` / ``for x, y in ds.take(1):`` on a loader whose batches the generated
    code puts in the model's channels-first layout (its printed statement says ``layout=``): the
    program's own code reads them through the runtime's ``keras_layout``, images back in
    channels-last as Keras gives them (keras.io cutmix hands one to matplotlib's imshow).

    ``bindings``: (line, names, layout or None) of each loader statement, in source order."""

    def __init__(self, bindings: list):
        self.bindings = bindings
        self.line = 0
        self.used = False

    @classmethod
    def of(cls, program, tcode) -> "KerasLayoutBatches":
        bindings, texts = [], {}
        loaders = [ts for ts in program.training if ts.kind in ("data_util", "dataset") and ts.span is not None]
        for ts in loaders if tcode is not None else ():  # (a chain's calls print as expressions)
            texts.setdefault(ts.stmt, []).extend([*tcode.statements.get(ts.stmt, ()),
                                                  tcode.expressions.get(ts.call, "")])
        for ts in loaders if tcode is not None else ():
            found = _LAYOUT.search("\n".join(texts[ts.stmt]))
            layout = tuple(int(d) for d in found.group(1).split(", ")) if found else None
            bindings.append((ts.span.line, [n for n in ts.model.split(",") if n], layout))
        return cls(sorted(bindings, key=lambda b: b[0]))

    def layout_of(self, name: str):
        bound = [layout for line, names, layout in self.bindings if name in names and line < self.line]
        return bound[-1] if bound else None

    def wrap(self, expr: cst.BaseExpression, line: int) -> cst.BaseExpression:
        """``expr`` read through keras_layout when it is such a loader, or its ``.take(n)``."""
        self.line = line
        root, take = expr, ""
        if isinstance(root, cst.Call) and isinstance(root.func, cst.Attribute) and root.func.attr.value == "take" \
                and len(root.args) == 1 and root.args[0].keyword is None:  # (tf.data's take(n))
            root, take = root.func.value, f", take={cst.Module([]).code_for_node(root.args[0].value)}"
        layout = self.layout_of(root.value) if isinstance(root, cst.Name) else None
        if layout is None:
            return expr
        self.used = True
        return cst.parse_expression(f"keras_layout({root.value}, {layout!r}{take})")

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if isinstance(updated.func, cst.Name) and updated.func.value == "iter" and len(updated.args) == 1:
            return updated.with_changes(args=[updated.args[0].with_changes(
                value=self.wrap(updated.args[0].value, self.line))])
        return updated

    def rewrite(self, stmt, line: int):
        """A simple statement with its ``iter(loader)`` calls wrapped."""
        self.line = line
        return stmt.visit(self) if any(isinstance(n, cst.Call) and isinstance(n.func, cst.Name)
                                       and n.func.value == "iter" for n in walk(stmt)) else stmt

    def needed(self, module: cst.Module, line_of) -> bool:
        """Whether some statement of ``module`` reads such a loader (the helper is then copied)."""
        if all(layout is None for _line, _names, layout in self.bindings):
            return False  # (no loader in a channels-first layout: nothing to walk the module for)
        for node in walk(module):
            expr = node.iter if isinstance(node, cst.For) else node.args[0].value if (
                isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "iter"
                and len(node.args) == 1) else None
            if expr is not None and self.wrap(expr, line_of(node)) is not expr:
                self.used = False
                return True
        return False


def untranslated_binding(stmt: cst.SimpleStatementLine, message: str, first: bool) -> list:
    """For a module-level stub: ``a = b = Untranslated(message)`` for the names ``stmt`` binds
    (after the helper class itself when ``first``); [] when it binds none."""
    names: list[str] = []
    for small in stmt.body:
        targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else \
            [small.target] if isinstance(small, (cst.AugAssign, cst.AnnAssign)) and \
            (not isinstance(small, cst.AnnAssign) or small.value is not None) else []
        names += [n for t in targets for n in target_names(t) if n not in names]
    if not names:
        return []
    helper = list(cst.parse_module("\n\n".join(runtime_source.Copier().take("torch.untranslated", "Untranslated"))
                                   + "\n").body) if first else []
    return [*helper, cst.parse_statement(f"{' = '.join(names)} = Untranslated({message!r})\n")]


def classes_sites_use(module: cst.Module, site_classes: dict[str, list[str]], befores: list[list[str]]) -> set[str]:
    """Module classes placed before their model's class (a Keras model used as a layer) that a
    class placed at a user class's definition builds (``self.kernel_gen = KernelGen()`` in a
    Layer's ``__init__``): each goes before the first such site instead, so it is defined when that
    class is built; returns the moved texts."""
    order = {s.name.value: i for i, s in enumerate(module.body) if isinstance(s, (cst.ClassDef, cst.FunctionDef))}
    sites = sorted(site_classes, key=lambda name: order.get(name, len(order)))
    moved: set[str] = set()
    placed: set[str] = set()
    for before in befores:
        for text in before:
            found = re.search(r"^class (\w+)\b", text, re.M)
            if found is None or text in moved:
                continue
            name = found.group(1)
            user = next((site for site in sites if any(re.search(rf"(?<![\w.]){name}\(", t)
                                                        for t in site_classes[site])), None)
            if user is None:
                continue
            moved.add(text)
            if name not in placed:  # (one definition: a copy in another model's code is the same class)
                placed.add(name)
                site_classes[user].insert(0, text)
    return moved


def layer_called_outside(program, stmt, span, layer_classes: set[str]) -> bool:
    """Whether ``stmt`` (not a model's) calls a new layer of one of the script's Layer classes
    (``Gate(channels=3)(np.zeros(...))``: a check of the layer on arrays, outside any model): the
    module class took its constructor arguments as numbers and takes channels-first tensors, so
    the line is a stub (reported here) rather than a call that fails when run."""
    for node in walk(stmt):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Call) and \
                isinstance(node.func.func, cst.Name) and node.func.func.value in layer_classes:
            program.stub(span, f"{node.func.func.value}(...)(...): a layer of the script called outside any model "
                               "is not translated yet (its module is specialised for the model's calls)",
                         cst.Module([]).code_for_node(stmt).strip())
            return True
    return False
