"""Keras printer: an ir.Program that came from a PyTorch script → an idiomatic Keras 3 script.

Each model becomes a builder of the source builder's name and signature (``def
build_model(...)``) that returns a ``keras.Sequential`` when the graph is a plain chain,
else a Functional ``keras.Model`` over ``keras.Input(shape=...)`` (channels-last). Layers
are named after the torch modules (``name="conv1"``, ``name="features_0"``). The rest
of the file is kept: its docstring, the imports that are not torch, constants and plain
Python helpers; the training program and data code around the models are rewritten by
``keras_training`` (compile/fit, Keras objects, numpy data), and what still uses PyTorch
becomes a marked stub that raises ``NotImplementedError`` and quotes the source line.
The result is black-formatted and deterministic.
"""

from __future__ import annotations

import dataclasses
import keyword

import libcst as cst

from transpiler.cst_fast import nodes_of
from transpiler.ir import fields, sizes
from transpiler.ir.graph import Graph, Node, Value
from transpiler.ir.params import param_names
from transpiler.ir.program import ModelDef, Program
from transpiler.ir.source_file import SourceFile
from transpiler.printers.formatter import format_python
from transpiler.printers.keras import ops as keras_ops
from transpiler.printers.keras import own_step, runtime_copies
from transpiler.printers.code import comment_text, lit
from transpiler.printers.keras.reset_methods import reset_function
from transpiler.printers.keras.subclass import (builds_on_call, is_subclass, keras_model_name, on_call_class,
                                               on_call_parts, subclass_text)
from transpiler.printers.keras.training import ProgramPrinter
from transpiler.printers.keras import method_functions

_HEADER = ["import keras", "from keras import layers"]


def _code(node) -> str:
    return cst.Module([]).code_for_node(node)


class _Names:
    """Variable names for the builder body: the user's names when free, else layer names."""

    def __init__(self, reserved: set[str]):
        self.reserved = set(reserved) | set(keyword.kwlist) | {"keras", "layers", "model"}
        self.bound: dict[str, Value] = {}
        self.used: set[str] = set()

    def fresh(self, hint: str) -> str:
        base = "".join(c if c.isalnum() or c == "_" else "_" for c in hint) or "t"
        if base[0].isdigit():
            base = f"t_{base}"
        name, n = base, 1
        while name in self.reserved or name in self.used:
            name = f"{base}_{n}"
            n += 1
        self.used.add(name)
        return name


def _mentions_outside(module: cst.Module, name: str, builder: str) -> bool:
    """``name`` is read somewhere other than in its class and in ``builder``."""
    for stmt in module.body:
        if isinstance(stmt, (cst.ClassDef, cst.FunctionDef)) and stmt.name.value in (name, builder):
            continue
        if any(n.value == name for n in nodes_of(stmt, cst.Name)):
            return True
    return False


def chain_of(graph: Graph) -> bool:
    """True when the graph is a plain chain of layers (a ``keras.Sequential``)."""
    if len(graph.inputs) != 1 or len(graph.outputs) != 1:
        return False
    prev = graph.inputs[0]
    names = set()
    readers: dict[int, int] = {}  # value → how many nodes read it (graph.consumers per node: O(n²))
    for node in graph.nodes:
        for key in {id(v) for v in node.inputs}:
            readers[key] = readers.get(key, 0) + 1
    for node in graph.nodes:
        if len(node.inputs) != 1 or node.inputs[0] is not prev or len(node.outputs) != 1:
            return False
        if node.name in names or keras_ops.emit(node).layer is None:
            return False
        names.add(node.name)
        if readers.get(id(prev), 0) != 1:
            return False
        prev = node.outputs[0]
    return prev is graph.outputs[0] and bool(graph.nodes)


def _input_expr(value: Value) -> str:
    if not value.shape or value.shape[0] is not None:  # a first axis of a known size: no batch axis
        parts = [f"batch_shape={lit(tuple(value.shape))}"]
    else:
        parts = [f"shape={lit(tuple(value.shape[1:]))}"]  # (a size with provenance: its expression)
    if value.dtype != "float32":
        parts.append(f'dtype="{value.dtype}"')
    if value.var:
        parts.append(f'name="{value.var}"')
    return f"keras.Input({', '.join(parts)})"


def _comment_lines(node: Node, indent: str) -> list[str]:
    return [f"{indent}{comment_text(c)}" for c in node.comments]


def method_function(md: ModelDef, method: str) -> str:
    """The module-level function building ``md``'s method ``method`` as a Keras model
    (``vae_encode`` for ``VAE.encode``)."""
    name = md.graph.name
    snake = "".join("_" + c.lower() if c.isupper() and i and not name[i - 1].isupper() else c.lower()
                    for i, c in enumerate(name))
    return f"{snake}_{method}"


def model_body(md: ModelDef, reserved: set[str], shared: str | None = None) -> list[str]:
    """The builder's body (indented four spaces) for ``md``'s graph; with ``shared`` (the
    name of a built model) the layers holding weights are that model's (``get_layer``)."""
    graph = md.graph
    ind = "    "
    model_name = keras_model_name(graph.name)
    head = [f"{ind}{c}" for c in graph.from_torch.comments] if shared is None else []
    if shared is None and chain_of(graph):
        lines = head + [f"{ind}model = keras.Sequential(", f"{ind}    ["]
        lines.append(f"{ind}        {_input_expr(graph.inputs[0])},")
        for node in graph.nodes:
            lines += _comment_lines(node, ind + "        ")
            lines.append(f"{ind}        {keras_ops.emit(node).layer},")
        lines += [f"{ind}    ],", f'{ind}    name="{model_name}",', f"{ind})", f"{ind}return model"]
        return lines
    names = _Names(reserved)
    expr: dict[int, str] = {}
    lines = list(head)
    for v in graph.inputs:
        n = names.fresh(v.var or "inputs")
        expr[id(v)] = n
        lines.append(f"{ind}{n} = {_input_expr(v)}")
    order = {id(n): i for i, n in enumerate(graph.nodes)}
    last_use: dict[int, int] = {}
    for node in graph.nodes:
        for v in node.inputs:
            last_use[id(v)] = max(last_use.get(id(v), -1), order[id(node)])
    for v in graph.outputs:
        last_use[id(v)] = len(graph.nodes) + 1
    holder: dict[str, int] = {}  # variable → id of the value it holds
    counts: dict[str, int] = {}
    for node in graph.nodes:
        counts[node.name] = counts.get(node.name, 0) + 1
    layer_vars: dict[str, str] = {}
    for i, node in enumerate(graph.nodes):
        em = keras_ops.emit(node)
        if shared is not None and em.layer is not None and param_names(node):
            em = dataclasses.replace(em, layer=f'{shared}.get_layer("{node.name}")')
        ins = [expr[id(v)] for v in node.inputs]
        outs = []
        for j, v in enumerate(node.outputs):
            hint = v.var if j == 0 and v.var else (node.name if j == 0 else f"{node.name}_state{j}")
            name = hint
            held = holder.get(name)
            free = held is None or last_use.get(held, -1) <= i
            if name in names.reserved or not free or (held is None and name in names.used):
                name = names.fresh(node.name if j == 0 else f"{node.name}_state{j}")
            else:
                names.used.add(name)
            holder[name] = id(v)
            expr[id(v)] = name
            outs.append(name)
        target = ", ".join(outs)
        if shared is None:
            lines += _comment_lines(node, ind)
        if em.layer is None:
            lines.append(f"{ind}{target} = {em.call(ins)}")
            continue
        if not node.inputs:  # a model's own weight: called on the model's input to join the graph
            ins = [expr[id(graph.inputs[0])]]
        arg = em.args(ins) if em.args else f"[{', '.join(ins)}]" if em.merge else ins[0]
        if counts[node.name] > 1:
            if node.name not in layer_vars:
                lv = names.fresh(f"{node.name}_layer")
                layer_vars[node.name] = lv
                lines.append(f"{ind}{lv} = {em.layer}")
            lines.append(f"{ind}{target} = {layer_vars[node.name]}({arg})")
        else:
            lines.append(f"{ind}{target} = {em.layer}({arg})")
    ins = [expr[id(v)] for v in graph.inputs]
    outs = [expr[id(v)] for v in graph.outputs]
    inputs_text = ins[0] if len(ins) == 1 else f"[{', '.join(ins)}]"
    outputs_text = outs[0] if len(outs) == 1 else f"[{', '.join(outs)}]"
    lines.append(f'{ind}return keras.Model(inputs={inputs_text}, outputs={outputs_text}, name="{model_name}")')
    return lines


class KerasScript:
    """Prints the whole script."""

    def __init__(self, program: Program, source: SourceFile):
        self.program = program
        self.source = source  # (the torch script, read-only)
        self.module: cst.Module = source.module
        self.builders = {md.builder: md for md in program.models if md.builder}
        self.stubbed = {s["builder"] or s["name"]: s for s in program.from_torch.stubbed_models}
        self.class_models = {md.class_name: md for md in program.models if not md.builder}
        for md in program.models:
            parts = [g for _, g in md.graph.from_torch.composed.get("parts", ())]
            for graph in [md.graph] + [m.graph for m in md.methods.values()] + parts:
                with sizes.quiet():  # (it inspects the emitted layers)
                    keras_ops.clear_auto_names(graph)
        #: model classes the program calls besides their builder: ``Net()`` is the builder's
        #: model when the builder is ``return Net()``, else a stub (the class is not printed)
        self.class_calls = {md.class_name: md.builder for md in program.models
                            if md.builder and _mentions_outside(source.module, md.class_name, md.builder)}
        self.class_builders = {cls: builder for cls, builder in program.class_builders.items()
                               if cls in self.class_calls}
        self.torch_names = set(program.from_torch.torch_bindings)
        self.training = ProgramPrinter(program, source)
        #: the torch class → the models printed as a ``keras.Model`` subclass of it (their
        #: forward has control flow), each with its class name
        self.subclasses: dict[str, list[tuple[ModelDef, str]]] = {}
        taken: set[str] = set()
        for md in program.models:
            if is_subclass(md.graph) and not builds_on_call(md.graph) and not md.graph.unsupported:
                self.training.imports.update(own_step.imports(md.graph.from_torch.own_step))
                name, n = md.class_name, 2
                while name in taken:
                    name, n = f"{md.class_name}_{n}", n + 1
                taken.add(name)
                self.subclasses.setdefault(md.class_name, []).append((md, name))
        self.subclass_name = {id(md): name for group in self.subclasses.values() for md, name in group}
        #: the text of each class model, printed once (``builder``); those printed as a subclass
        #: for any constructor argument (``general``) are blocks other subclasses may hold
        self.printed: dict[int, str] = {}
        self.general: dict[int, bool] = {}

    def reserved(self) -> set[str]:
        names = set(self.program.scope.names)
        return names

    def render(self) -> str:
        import os

        out: list[str] = [comment_text(f"# Transpiled from {os.path.basename(self.program.path)} (PyTorch) to "
                                       "Keras by transpiler; review before use.")]
        body = list(self.module.body)
        if body and _is_docstring(body[0]):
            out.append(_code(body[0]).rstrip("\n"))
            body = body[1:]
        kept_imports: list[str] = []
        rest: list[str] = []
        printed = []
        for stmt in body:
            if isinstance(stmt, cst.SimpleStatementLine) and all(
                    isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body):
                if not _imports_torch(stmt):
                    kept_imports.append(_code(stmt).rstrip("\n"))
                continue
            rest.append(self.statement(stmt))
            printed.append(stmt)
        # (a definition of the project's torch runtime whose calls went: runtime_copies.py)
        for i in runtime_copies.uncalled(self.module, printed, rest, self.training.helper_texts()):
            rest[i] = None
        with sizes.quiet():  # (the emissions are only inspected for the helpers they need)
            helpers = sorted({h for md in self.program.models if not md.graph.unsupported
                              for g in [md.graph] + [sub.graph for sub in md.methods.values()]
                              for n in g.nodes for h in keras_ops.emit(n).helpers
                              if not (g is md.graph and (id(md) in self.subclass_name or builds_on_call(g))
                                      and keras_ops.emit(n).mode_select)})
        # (the generated helpers count as uses: torch_uniform_init reads the script's math)
        kept_imports = self._used_imports(kept_imports, rest + [keras_ops.init_helper_source(h) for h in helpers] +
                                          self.training.helper_texts())
        wanted = set(self.training.imports)
        with sizes.quiet():  # (import lines the emitted layers need: numpy for a computed constant)
            wanted.update(i for md in self.program.models if not md.graph.unsupported
                          for n in md.graph.nodes for i in keras_ops.emit(n).imports)
        if "torch_uniform_init" in helpers:
            wanted.add("import math")
        extra = sorted(w for w in wanted if w not in kept_imports and not self._bound(w))
        imports = kept_imports + extra + _HEADER
        if len(out) > 1:
            out.append("")
        out.extend(imports)
        out.append("")
        for h in helpers:
            out += ["", keras_ops.init_helper_source(h)]
        for text in self.training.helper_texts():
            out += ["", text]
        text = "\n".join(out) + "\n" + "".join(r if r.endswith("\n") else r + "\n" for r in rest if r)
        return format_python(text)

    def _used_imports(self, imports: list[str], rest: list) -> list[str]:
        """The imports kept but one whose names the source used and the output no longer
        does (``from types import SimpleNamespace`` of a training helper that went)."""
        import re

        out_text = "".join(r for r in rest if r)
        source = self.module.code
        kept = []
        for line in imports:
            stmt = cst.parse_statement(line)
            names = [a.evaluated_alias or a.evaluated_name.split(".")[0] for s in stmt.body
                     for a in (s.names if isinstance(s.names, (list, tuple)) else [])]
            if names and not any(re.search(rf"\b{re.escape(n)}\b", out_text) for n in names) and all(
                    len(re.findall(rf"\b{re.escape(n)}\b", source)) > 1 for n in names):
                continue
            kept.append(line)
        return kept

    def statement(self, stmt) -> str | None:
        layer_model = next((md for md in self.program.models if md.construct_statement == self.source.sid(stmt) and
                            md.builder in self.program.scope.layer_models), None)
        if layer_model is not None:  # ``model = nn.Linear(...)``: a builder, and the statement calls it
            return self.builder(layer_model, None, name=layer_model.builder) + \
                f"\n\n{layer_model.var} = {layer_model.builder}()\n"
        if isinstance(stmt, cst.ClassDef):
            name = stmt.name.value
            if name in self.subclasses:
                texts = [subclass_text(md.graph, cls, self.reserved(), _input_expr) for md, cls in self.subclasses[name]]
                if name in self.class_models and name not in self.subclass_name.values():
                    texts.append(self.builder(self.class_models[name], None))
                return "\n\n".join(texts)
            if name in self.class_models:
                return self.builder(self.class_models[name], None)
            if name in self.stubbed and not self.stubbed[name]["builder"]:
                return self.stub_builder(name, None, self.stubbed[name])
            if name in self.class_builders:  # (``Net()`` in the program: what the builder builds)
                return (f"def {name}():\n    \"\"\"The {name} model: what {self.class_builders[name]}() "
                        f"builds.\"\"\"\n    return {self.class_builders[name]}()\n")
            if name in self.class_calls:
                message = (f"{name}: the model class is translated as the builder {self.class_calls[name]}() "
                           "only; build the model with it")
                diag = self.program.stub(self.source.span(stmt), message, f"class {name}")
                return self._raise_def(name, "*args, **kwargs", f"{diag.span}: {message}")
            ref = self.program.scope.classes.get(name)
            if ref is not None and ref.is_module:
                if name in self.covered_classes or name in self.program.from_torch.mixin_classes:
                    return None  # its layers live in the builder now (a mixin's forward: its subclasses')
                return self.unbuilt_class(name, stmt)
        inner: list[str] = []
        if isinstance(stmt, cst.FunctionDef):
            name = stmt.name.value
            if name in self.builders:
                return self.builder(self.builders[name], stmt)
            if name in self.stubbed:
                return self.stub_builder(name, stmt, self.stubbed[name])
            # ``model = nn.Linear(...)`` in the function: its builder goes before it (the
            # statement calls it: frontend_ast/torch/training)
            # (nested blocks too: ``if args.pretrained: ... else: model = ...``)
            body = {self.source.sid(s) for s in nodes_of(stmt.body, cst.SimpleStatementLine)}
            inner = [self.builder(md, None, name=md.builder) for md in self.program.models
                     if md.construct_statement in body and md.builder in self.program.scope.layer_models]
        text = self.training.render(stmt)
        if inner:
            text = "\n\n".join(inner + [text])
        if self.training.classes:  # a trainer class the statement uses goes right before it
            text = "\n\n".join(self.training.classes + [text])
            self.training.classes.clear()
        return text

    @property
    def covered_classes(self) -> set[str]:
        """Module classes whose layers a printed (or stubbed) model holds: the models' classes
        and builders, and the classes their code names, transitively."""
        if getattr(self, "_covered", None) is None:
            classes = self.program.scope.classes
            defs = {s.name.value: s for s in self.module.body if isinstance(s, (cst.ClassDef, cst.FunctionDef))}
            todo = [md.class_name for md in self.program.models] + [md.builder for md in self.program.models
                                                                   if md.builder]
            todo += [n for s in self.stubbed.values() for n in (s["name"], s["builder"]) if n]  # (stubs already)
            covered: set[str] = set()
            while todo:
                name = todo.pop()
                if name in covered or name not in defs:
                    continue
                covered.add(name)
                todo += [n.value for n in nodes_of(defs[name], cst.Name) if n.value in classes and n.value != name]
            self._covered = covered
        return self._covered

    def unbuilt_class(self, name: str, stmt: cst.ClassDef) -> str:
        """An ``nn.Module`` class no translated model holds (a library module's, or one this
        file builds only with arguments or data it cannot size): a marked stub of its name."""
        reason = self.program.from_torch.unbuilt_classes.get(name)
        if reason:
            message = f"{name}: an nn.Module class this file does not build: {reason}"
        else:
            message = (f"{name}: an nn.Module class this file does not build with a known input shape "
                       "(Keras layers need it to translate the forward here); translate the script that "
                       "builds it, or give its input shape as INPUT_SHAPE")
        diag = self.program.model_stub(self.source.span(stmt), name, message, f"class {name}")
        return self._raise_def(name, "*args, **kwargs", f"{diag.span}: {message}")

    def _bound(self, import_line: str) -> bool:
        """The source already binds the name ``import_line`` would (``np``, ``math``)."""
        name = import_line.split()[-1]
        path = self.program.scope.names.get(name)
        return path is not None and path.split(".")[0] == import_line.split()[1].split(".")[0]

    def builder(self, md: ModelDef, fn: cst.FunctionDef | None, name: str | None = None) -> str:
        if fn is not None or name is not None:
            return self._builder(md, fn, name)
        # (a class: printed once, also when a class holding it as a block asks first)
        if id(md) not in self.printed:
            self.printed[id(md)] = self._builder(md, fn, name)
        return self.printed[id(md)]

    def _blocks(self, md: ModelDef, params: list[str]) -> dict:
        """The blocks of ``md`` (frontend_ast/torch/lazy_inputs.child_blocks) a subclass of it
        can make of their own classes: classes printed as subclasses for any argument, whose
        constructor arguments read only ``params``: attribute → (class, arguments, graph)."""
        import re

        blocks = {}
        for attr, (cls, args) in (md.graph.from_torch.child_blocks or {}).items():
            child = self.class_models.get(cls)
            if child is None or child is md or not builds_on_call(child.graph) or child.graph.unsupported:
                continue
            names = set(re.findall(r"(?<![\w.=])([A-Za-z_]\w*)\b(?!\s*=[^=])", args))  # (not keywords)
            if names - set(params) - {"True", "False", "None"}:
                continue
            self.builder(child, None)  # (printed first: whether it takes any argument)
            if self.general.get(id(child)):
                blocks[attr] = (cls, args, child.graph)
        # a block repeated the constructor's number of times (frontend_ast/torch/repeated_blocks)
        for attr, (cls, args, count) in md.graph.from_torch.repeated_blocks.items():
            child = self.class_models.get(cls)
            if child is None or child is md or not builds_on_call(child.graph) or child.graph.unsupported:
                continue
            self.builder(child, None)
            if id(child) not in self.general:  # (printed as a class; a guard of its own refuses other arguments)
                continue
            tags = {n.from_torch.block_call[0] for n in md.graph.nodes if n.from_torch.block_call}
            for tag in sorted(t for t in tags if t.startswith(attr + ".")):
                blocks[tag] = (cls, args, child.graph, (attr, count))
        return blocks

    def _builder(self, md: ModelDef, fn: cst.FunctionDef | None, name: str | None = None) -> str:
        graph = md.graph
        unsupported = graph.unsupported
        name = name or (fn.name.value if fn is not None else md.class_name)
        params = _code(fn.params) if fn is not None else ""
        # a class built for its constructor's sizes (frontend_ast/torch/lazy_inputs): its parameters
        param_nodes = fn.params.params if fn is not None else self._class_params(md)
        if fn is None and param_nodes:
            params = ", ".join(self._param_text(p) for p in param_nodes)
        if unsupported:
            span, message = unsupported[0]
            where = f"{span}" if span else self.program.path
            return self._raise_def(name, params, f"{where}: {message}", md.comments)
        guard = _class_call_guard(self.program, name) if fn is None else None
        if guard is not None:  # (``Net(hidden=16)`` in the program: the builder takes that call)
            params = "*args, **kwargs"
        lines = [f"def {name}({params}):"]
        doc = f'    """The {graph.name} model, translated from PyTorch (channels-last inputs)."""'
        lines.append(doc)
        if guard is not None:
            lines += guard
        body: list[str] = []
        on_call = fn is None and guard is None and builds_on_call(graph) and id(md) not in self.subclass_name
        # sizes with provenance: the body's sizes are expressions of the builder's parameters
        visible = {s.name: s for v in md.builder_args.values() for s in fields.symbols_of(v)}
        if id(md) in self.subclass_name:
            body.append(f"    return {self.subclass_name[id(md)]}()")
        elif on_call:  # (no input shape: a subclass building on its first call)
            cls_params = [self._param_text(p) for p in param_nodes]
            blocks = self._blocks(md, [p.name.value for p in param_nodes])
            with sizes.scope({n: n for n in visible}, visible.values()) as size_scope:
                base = "layers.Layer" if md.class_name in self.program.from_torch.nested_classes \
                    else "keras.Model"
                parts = on_call_parts(graph, cls_params, self.reserved(), size_scope, blocks)
        else:
            with sizes.scope({n: n for n in visible}, visible.values()) as size_scope:
                body += model_body(md, self.reserved() | {p.name.value for p in param_nodes})
            body = [size_scope.code(ln) for ln in body]
        unlooped = [a for a in graph.from_torch.repeated_blocks
                    if not on_call or a not in parts.get("loops", ())]
        if unlooped:  # (its count printed as the caller's, its blocks not as a loop: refused)
            for attr in unlooped:
                for sym in _count_syms(md, graph.from_torch.repeated_blocks[attr][2]):
                    sym.specialised.add("range")
        placeholders = self.program.from_torch.placeholder_params.get(md.class_name, ())
        required = [p.name.value for p in param_nodes if (p.default is None or p.name.value in placeholders)
                    and not _free(md.builder_args.get(p.name.value))]
        if fn is None and required:  # (traced with a placeholder number the output would hold: refused)
            message = (f"{name}: built for its constructor's {', '.join(required)} as sizes, the translation "
                       f"needs their numbers ({_why_specialised(md, required)}); build it in the script with "
                       "literal arguments")
            ref = self.program.scope.classes.get(md.class_name)
            where = self.source.span(self.source.node(ref.node)) if ref is not None else None
            diag = self.program.stub(where, message, f"class {name}")
            return self._raise_def(name, params, f"{diag.span or self.program.path}: {message}", md.comments)
        guard_lines = self._guard_lines(md, fn, name, param_nodes)
        if on_call:  # (what the body specialised decides the guard)
            self.general[id(md)] = not guard_lines  # (a block of other classes only when it takes any argument)
            lines = [on_call_class(graph, name, base, parts, guard_lines)]
        else:
            lines += guard_lines + body
        for method, sub in md.methods.items():
            if method not in md.called_methods:
                continue
            lines += ["", "", f"def {method_function(md, method)}(model):",
                      f'    """``{graph.name}.{method}`` as a Keras model over the layers of ``model`` (its weights)."""']
            lines += model_body(sub, self.reserved() | {"model"}, shared="model")
        for method, _params, fn in graph.from_torch.method_functions_read:  # (frontend_ast/torch/method_functions)
            lines += ["", "", method_functions.function_text(self.training, fn, method_function(md, method)).rstrip("\n")]
        for method, params, span, message in graph.from_torch.unread_methods:
            lines += ["", "", self._raise_def(method_function(md, method), params, f"{span}: {message}").rstrip("\n")]
        for method, params, span, paths in graph.from_torch.reset_methods:  # (printers/keras/reset_methods)
            reset = reset_function(graph, method_function(md, method), method, params, paths)
            if reset is None:
                message = f"{graph.name}.{method}: a layer it re-initialises is not an attribute of the Keras model"
                self.program.stub(span, message, f"def {method}")
                reset = [self._raise_def(method_function(md, method), params, f"{span}: {message}").rstrip("\n")]
            lines += ["", ""] + reset
        return "\n".join(lines) + "\n"

    def _guard_lines(self, md: ModelDef, fn, name: str, param_nodes) -> list[str]:
        """The builder's first lines refusing other arguments than those the model was built for."""
        guard_lines = []
        if param_nodes:
            # the parameters the model was specialised for (a number printed, a loop count) keep a guard
            ps = [p for p in param_nodes if not _free(md.builder_args.get(p.name.value)) and p.default is not None]
            names = ", ".join(p.name.value for p in ps)
            defaults = ", ".join(_keras_default(_code(p.default), self.torch_names) for p in ps)
            if len(ps) == 1:
                op = "is not" if defaults == "None" else "!="
                guard_lines.append(f"    if {names} {op} {defaults}:")
            elif ps:
                guard_lines.append(f"    if ({names}) != ({defaults}):")
            if ps:
                guard_lines.append('        raise NotImplementedError("transpiler: the model was translated for the '
                                   'default arguments only")')
        guard_lines += [ln for p in param_nodes  # (a config object's attributes taken as its class's defaults)
                        for ln in fields.guard_lines(p.name.value, md.builder_args.get(p.name.value))]
        if guard_lines:  # (marked: the model is built for these arguments only, and why)
            guard_lines[:0] = [f"    # TODO(transpiler): {self._guard_stub(md, fn, name, param_nodes)}"]
        return guard_lines

    def _guard_stub(self, md: ModelDef, fn, name: str, param_nodes) -> str:
        """Report the guard of a model specialised for its arguments (marked in the output with a
        TODO and reported as a warning: the model runs for the arguments it was read with) and say why."""
        names = [p.name.value for p in param_nodes if not _free(md.builder_args.get(p.name.value))]
        whys = [_why_specialised(md, names)] if names else []
        whys += [f"{p.name.value}: its attributes as read, " + ", ".join(f"{a}={v!r}" for a, v in value.guards())
                 for p in param_nodes if isinstance(value := md.builder_args.get(p.name.value), fields.Fields)
                 and value.guards()]
        message = f"{name} is translated for the arguments it was read with only ({'; '.join(whys)})"
        if fn is not None:
            where = self.source.span(fn)
        else:
            ref = self.program.scope.classes.get(md.class_name)
            where = self.source.span(self.source.node(ref.node)) if ref is not None else None
        self.program.warn(where, message + "; other arguments raise NotImplementedError", f"def {name}(...)")
        return message

    def _param_text(self, p: cst.Param) -> str:
        """A constructor parameter as the Keras class writes it (``_keras_default``)."""
        return _keras_default(_code(p).strip().rstrip(",").strip(), self.torch_names)

    def _class_params(self, md: ModelDef) -> list:
        """The constructor parameters (after ``self``) of a class model built for them as sizes."""
        if md.builder or not md.builder_args:
            return []
        ref = self.program.scope.classes.get(md.class_name)
        init = self.source.node(ref.init) if ref is not None else None
        return list(init.params.params[1:]) if init is not None else []

    def _raise_def(self, name: str, params: str, message: str, comments=()) -> str:
        return (f"def {name}({params}):\n"
                f"    {comment_text(f'# transpiler: not translated: {message}')}\n"
                f"    raise NotImplementedError({lit(f'transpiler: {message}')})\n")

    def stub_builder(self, name: str, fn, info) -> str:
        params = _code(fn.params) if fn is not None else ""
        ref = self.program.scope.classes.get(name) if fn is None else None
        init = self.source.node(ref.init) if ref is not None else None
        if init is not None and len(init.params.params) > 1:  # (the class's callers pass arguments)
            params = "*args, **kwargs"
        span = info["span"]
        return self._raise_def(name, params, f"{span}: {info['message']}")


def _class_call_guard(program, name: str) -> list[str] | None:
    """The lines refusing arguments other than those of the program's ``name(...)`` call the
    model was built for (None: the call had none, or values no literal writes)."""
    args, kwargs = program.from_torch.class_call_args.get(name, ((), {}))
    if not args and not kwargs:
        return None
    try:
        want = f"({lit(tuple(args))}, {{{', '.join(f'{lit(k)}: {lit(v)}' for k, v in kwargs.items())}}})"
    except TypeError:
        return None
    shown = ", ".join([lit(a) for a in args] + [f"{k}={lit(v)}" for k, v in kwargs.items()])
    return [f"    if (args, kwargs) != {want}:",
            f"        raise NotImplementedError({lit(f'transpiler: the model was translated for {name}({shown}) only')})"]


def _is_docstring(stmt) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and isinstance(stmt.body[0], cst.Expr) and \
        isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))


def _imports_torch(stmt) -> bool:
    for s in stmt.body:
        if isinstance(s, cst.Import):
            if any(_dotted(a.name).split(".")[0] in ("torch", "torchvision") for a in s.names):
                return True
        elif isinstance(s, cst.ImportFrom) and s.module is not None:
            if _dotted(s.module).split(".")[0] in ("torch", "torchvision"):
                return True
    return False


def _dotted(node) -> str:
    if isinstance(node, cst.Name):
        return node.value
    return f"{_dotted(node.value)}.{node.attr.value}"


def print_keras_script(program: Program, source: SourceFile) -> tuple[str, ProgramPrinter]:
    """The Keras script for ``program`` (read from the torch script ``source``), black-formatted,
    and the printer of its training objects (verify evaluates the same expressions with it)."""
    script = KerasScript(program, source)
    return script.render(), script.training


def _why_specialised(md: ModelDef, names: list[str]) -> str:
    """How the translation used the numbers of the builder arguments ``names``."""
    whys = []
    for n in names:
        reasons = fields.specialised(md.builder_args.get(n))
        whys.append(f"{n}: {', '.join(reasons) or 'not a size'}")
    return "; ".join(whys)


#: torch dtypes a constructor's default may name (``dtype=torch.float32``) → the Keras dtype name
_TORCH_DTYPES = {"float32": "float32", "float": "float32", "float64": "float64", "double": "float64",
                 "float16": "float16", "half": "float16", "bfloat16": "bfloat16", "int64": "int64", "long": "int64",
                 "int32": "int32", "int": "int32", "int16": "int16", "int8": "int8", "uint8": "uint8", "bool": "bool"}


def _keras_default(text: str, torch_names) -> str:
    """A constructor parameter (or its default) as the Keras class writes it: a torch dtype
    (``dtype=torch.float32``) as its Keras name (``dtype="float32"``), ``torch.device("cpu")``
    as ``"cpu"`` (the translated class does not read them; its guard compares the same text)."""
    import re

    aliases = sorted(n for n in torch_names if n == "torch" or n.startswith("torch")) or ["torch"]
    for alias in aliases:
        text = re.sub(rf"\b{re.escape(alias)}\.({'|'.join(_TORCH_DTYPES)})\b(?!\s*\()",
                      lambda m: f'"{_TORCH_DTYPES[m.group(1)]}"', text)
        text = re.sub(rf"\b{re.escape(alias)}\.device\((\"[^\"]*\"|'[^']*')\)", lambda m: m.group(1), text)
    return text


def _free(value) -> bool:
    """A builder argument the translated body takes as it is: a size it never used as its number."""
    return fields.free(value)


def _count_syms(md: ModelDef, count: str) -> list:
    """The named sizes of a repeated block's count (``config.n_layer``) among the builder's arguments."""
    return [s for v in md.builder_args.values() for s in fields.symbols_of(v) if s.name == count]
