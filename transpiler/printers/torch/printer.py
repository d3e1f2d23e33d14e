"""Print an ir.Program as a PyTorch script.

Each model becomes one ``nn.Module`` subclass: layers as attributes named after the
user's variables or layer names, ``reset_parameters`` reproducing Keras' default
initializers, and a ``forward`` that reads like hand-written code. The user's builder
function keeps its name and signature and returns the module. The rest of the script
is kept verbatim; statements that still use Keras become marked stubs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst
from transpiler import cst_fast

from transpiler.ir import sizes
from transpiler.ir.graph import Graph, Node, Value
from transpiler.ir.modules import build_structure
from transpiler.ir.program import ModelDef
from transpiler.printers.torch import ops as torch_ops
from transpiler.printers.code import Namespace, comment_text, docstring_lines, exclusive_cone, lit
from transpiler.printers.torch import ops_opaque, print_notes
from transpiler.printers.torch.structure import ClassText, StructurePrinter, method_sizes


@dataclass
class ModelCode:
    """The printed class of one model, and what it needed."""

    class_name: str
    text: str
    imports: set[str] = field(default_factory=set)
    uses_functional: bool = False
    #: the classes of its own modules (user Layer classes, block helpers), innermost first
    classes: list = field(default_factory=list)
    #: the builder parameters ``__init__`` takes (sizes printed as expressions of them)
    init_params: list[str] = field(default_factory=list)
    #: the models of the program ``__init__`` takes and holds (Keras shares their layers), by
    #: the name the source built this model with them
    given: list[str] = field(default_factory=list)


def _shape_text(shape: tuple) -> str:
    return "(" + ", ".join("N" if s is None else sizes.number_text(s) for s in shape) + ")"


def _comment_lines(comments: list[str], indent: str) -> list[str]:
    return [f"{indent}{comment_text(c)}" for c in comments]


class _ForwardWriter:
    """Writes ``forward``: inlines single-use intermediates, keeps the user's names."""

    def __init__(self, graph: Graph, emissions: dict[int, torch_ops.Emission], arg_names: list[str],
                 var_of: dict[int, str | None] | None = None):
        self.graph = graph
        #: names that replace values' source variables (a module's arguments and results:
        #: the caller's variable names do not hold inside the module)
        self.var_of = var_of or {}
        self.emissions = emissions
        self.lines: list[str] = []
        self.expr: dict[int, str] = {}
        self.bound: dict[str, Value] = {}
        self.names = Namespace(set(arg_names))
        self.uses: dict[int, int] = {}
        self.last_use: dict[int, int] = {}
        for i, node in enumerate(graph.nodes):
            for v in node.inputs:
                self.uses[id(v)] = self.uses.get(id(v), 0) + 1
                self.last_use[id(v)] = i
        for v in graph.outputs:
            self.uses[id(v)] = self.uses.get(id(v), 0) + 1
            self.last_use[id(v)] = len(graph.nodes)
        for v, name in zip(graph.inputs, arg_names):
            self.expr[id(v)] = name
            self.bound[name] = v
        self.depth: dict[int, int] = {}
        #: nodes computed only for one branch of a training_select: (select, 0 train / 1 infer)
        self.branch_of: dict[int, tuple[Node, int]] = {}
        self.branch_lines: dict[tuple[int, int], list[str]] = {}
        self.select_name: dict[int, str] = {}
        self.returned_by: Node | None = None
        for node in graph.nodes:
            if emissions[id(node)].mode_select:
                for slot in (0, 1):
                    for member in exclusive_cone(graph, node, slot):
                        self.branch_of.setdefault(id(member), (node, slot))
        self.graph_index = {id(n): i for i, n in enumerate(graph.nodes)}
        self.producer_here = {id(v): n for n in graph.nodes for v in n.outputs}
        self.inherited_memo: dict[int, str | None] = {}  # (_inherited_var's answers; var_of is fixed)

    def _live(self, value: Value, at: int) -> bool:
        return self.last_use.get(id(value), -1) > at

    def _name_for(self, value: Value, at: int, avoid: set[str] = frozenset()) -> str:
        hint = self._var(value) or self._inherited_var(value) or "x"
        hint = "".join(c if c.isalnum() or c == "_" else "_" for c in hint)
        current = self.bound.get(hint)
        if hint not in avoid and (current is None or current is value or not self._live(current, at)):
            self.names.taken.add(hint)
            return hint
        return self.names.fresh(hint)

    def _inherited_var(self, value: Value) -> str | None:
        """The name of the nearest named first input upstream, through this code's own
        statements (a module call's result looks at the call's input, not inside)."""
        memo = self.inherited_memo  # (every value on the walk has the same answer: once each, not O(n²))
        if id(value) in memo:
            return memo[id(value)]
        walked, found = [], None
        node = self.producer_here.get(id(value))
        while node is not None and node.inputs:
            walked.append(id(value))
            v = node.inputs[0]
            if v.producer is None:
                break  # ``x = self.conv(inputs)``: a module's argument is not rebound
            if self._var(v):
                found = self._var(v)
                break
            if id(v) in memo:
                found = memo[id(v)]
                break
            value, node = v, self.producer_here.get(id(v))
        for key in walked:
            memo[key] = found
        return found

    def _var(self, value: Value) -> str | None:
        return self.var_of[id(value)] if id(value) in self.var_of else value.var

    def _can_inline(self, i: int, value: Value) -> bool:
        node = self.graph.nodes[i]
        if not node.inputs and self.emissions[id(node)].inline_anywhere:
            return True  # a parameter of the module: its name is its value
        if self.uses.get(id(value), 0) != 1 or i + 1 >= len(self.graph.nodes):
            return False
        nxt = self.graph.nodes[i + 1]
        if not any(v is value for v in nxt.inputs):
            return False
        if self.emissions[id(self.graph.nodes[i])].inline_anywhere:
            return True
        if self.emissions[id(nxt)].infix and node.from_keras.tensor_op is not None and \
                nxt.from_keras.tensor_op is not None and not nxt.comments:
            # one expression of tensor math in the source: one expression here
            out = nxt.outputs[0]
            if self._var(value) and self._var(out) and self._var(value) != self._var(out):
                return False
            return self.depth.get(id(value), 0) < 3
        if len(nxt.inputs) != 1 or nxt.comments:
            return False
        em = self.emissions[id(nxt)]
        if not em.unary or em.call is None:
            return False
        out = nxt.outputs[0]
        if self._var(value) and self._var(out) and self._var(value) != self._var(out):
            return False
        return self.depth.get(id(value), 0) < 2

    def write(self) -> list[str]:
        logits_at = self.graph.logits_outputs
        flagged = {id(v) for i, v in enumerate(self.graph.outputs) if i in logits_at}
        logits: dict[int, str] = {}
        main = self.lines
        for i, node in enumerate(self.graph.nodes):
            branch = self.branch_of.get(id(node))
            self.lines = main if branch is None else self.branch_lines.setdefault((id(branch[0]), branch[1]), [])
            if self.emissions[id(node)].mode_select:
                self._select(node, i)
                continue
            if branch is not None and node.outputs and node.outputs[0] is branch[0].inputs[branch[1]] and \
                    self.emissions[id(node)].call is not None and node.inputs:
                text = self.emissions[id(node)].call([self.expr[id(v)] for v in node.inputs])
                if self._returns_directly(branch[0]):  # returned as it is
                    self.lines += _comment_lines(node.comments, "")
                    self.expr[id(node.outputs[0])] = text
                    continue
                # a branch's result: computed straight into the name the select gives it
                name = self._select_out(branch[0])
                self.lines += _comment_lines(node.comments, "")
                self.lines.append(f"{name} = {text}")
                self.expr[id(node.outputs[0])] = name
                continue
            em = self.emissions[id(node)]
            ins = [self.expr[id(v)] for v in node.inputs]
            if node.outputs and id(node.outputs[0]) in flagged and em.call is not None \
                    and self.uses.get(id(node.outputs[0]), 0) == 1:
                # the training loss works on the pre-activation values (numerically sound)
                name = ins[0] if ins[0].isidentifier() else self.names.fresh("logits")
                if name != ins[0]:
                    self.lines.append(f"{name} = {ins[0]}")
                self.bound[name] = node.inputs[0]
                logits[id(node.outputs[0])] = name
                self.expr[id(node.outputs[0])] = em.call([name])
                continue
            if em.module is None:
                self.lines += _comment_lines(node.comments, "")
            if em.statements is not None:
                outs = []
                for v in node.outputs:
                    # bind each name before choosing the next: one statement, distinct names
                    name = self._name_for(v, i, avoid=set(outs))
                    outs.append(name)
                self.lines += em.statements(ins, outs)
                for v, name in zip(node.outputs, outs):
                    self.expr[id(v)] = name
                    self.bound[name] = v
                continue
            text = em.call(ins)
            value = node.outputs[0]
            if self._can_inline(i, value):
                self.expr[id(value)] = text
                depth = max((self.depth.get(id(v), 0) for v in node.inputs), default=0)
                self.depth[id(value)] = depth + 1
                continue
            if len(node.inputs) == 1 and text == ins[0] and self.uses.get(id(node.inputs[0]), 0) == 1 \
                    and self.bound.get(text) is node.inputs[0]:
                self.expr[id(value)] = text  # identity: the name now holds this value
                self.bound[text] = value
                continue
            name = self._name_for(value, i)
            self.lines.append(f"{name} = {text}")
            self.expr[id(value)] = name
            self.bound[name] = value
        self.lines = main
        if self.returned_by is not None:
            return self.lines
        outs = [self.expr[id(v)] for v in self.graph.outputs]
        if logits:
            raw = [logits.get(id(v), self.expr[id(v)]) for v in self.graph.outputs]
            self.lines += ["if return_logits:", "    return " + ", ".join(raw)]
        self.lines.append("return " + ", ".join(outs))
        return self.lines

    def _returns_directly(self, select: Node) -> bool:
        return len(self.graph.outputs) == 1 and self.graph.outputs[0] is select.outputs[0] and \
            self.graph_index[id(select)] == len(self.graph.nodes) - 1 and not self.graph.logits_outputs

    def _select_out(self, select: Node) -> str:
        """The name a training_select binds (chosen once, when its first branch result is written)."""
        if id(select) not in self.select_name:
            at = self.graph_index[id(select)]
            name = self._name_for(select.outputs[0], at)
            self.bound[name] = select.outputs[0]
            self.select_name[id(select)] = name
        return self.select_name[id(select)]

    def _select(self, node: Node, at: int) -> None:
        """``if self.training:`` with each branch's own statements; a branch that leaves the
        value as it was is not written."""
        if self._returns_directly(node):
            # the branches are the method's last statements: each returns its own value
            train = self.branch_lines.get((id(node), 0), [])
            infer = self.branch_lines.get((id(node), 1), [])
            self.lines += ["if self.training:"] + [f"    {ln}" for ln in train]
            self.lines += [f"    return {self.expr[id(node.inputs[0])]}"] + infer
            self.lines.append(f"return {self.expr[id(node.inputs[1])]}")
            self.returned_by = node
            return
        if not self.branch_lines.get((id(node), 0)) and not self.branch_lines.get((id(node), 1)) and \
                id(node) not in self.select_name and self.uses.get(id(node.outputs[0]), 0) == 1:
            train, infer = (self.expr[id(v)] for v in node.inputs)
            self.expr[id(node.outputs[0])] = f"{train} if self.training else {infer}"  # used once: inline
            return
        name = self._select_out(node)
        if not self.branch_lines.get((id(node), 0)) and not self.branch_lines.get((id(node), 1)):
            train, infer = (self.expr[id(v)] for v in node.inputs)
            if name not in (train, infer):  # two expressions: one conditional expression
                self.lines.append(f"{name} = {train} if self.training else {infer}")
                self.expr[id(node.outputs[0])] = name
                return
        blocks = []
        for slot in (0, 1):
            lines = list(self.branch_lines.get((id(node), slot), []))
            expr = self.expr[id(node.inputs[slot])]
            if expr != name:
                lines.append(f"{name} = {expr}")
            blocks.append(lines)
        train, infer = blocks
        if train:
            self.lines.append("if self.training:")
            self.lines += [f"    {ln}" for ln in train]
            if infer:
                self.lines.append("else:")
                self.lines += [f"    {ln}" for ln in infer]
        elif infer:
            self.lines.append("if not self.training:")
            self.lines += [f"    {ln}" for ln in infer]
        self.expr[id(node.outputs[0])] = name


def _arg_names(graph: Graph) -> list[str]:
    names = Namespace()
    out = []
    for v in graph.inputs:
        out.append(names.fresh(v.var or "x"))
    return out


# long: one size scope spans __init__, forward and reset_parameters (split next)
def print_model_class(md: ModelDef, source_file: str, classes: dict[str, str] | None = None) -> ModelCode:
    """The ``nn.Module`` subclass for one model (the graph has had the torch passes), and
    the classes of its own modules when the source had structure. ``classes`` (name →
    text) is shared by the models of one script."""
    graph = md.graph
    st = build_structure(graph)
    children: list = []
    given: list[str] = []
    imports: set[str] = set()
    # sizes with provenance: ``__init__`` sees the builder's parameters
    params = {n: sizes.symbol_of(v) for n, v in md.builder_args.items() if sizes.symbol_of(v) is not None}
    size_scope = sizes.scope({n: n for n in params}, params.values(), consts=True)
    if st.nested:
        sp = StructurePrinter(graph, st, {} if classes is None else classes, source_file)
        children = sp.run()
        given = list(dict.fromkeys(sp.given))
        root_scope = graph.from_keras.root_scope
        params = [v.var for v in graph.inputs] if root_scope is None else root_scope.params
        with size_scope:
            init_lines, reset_lines = sp.init_lines(st.root)
            args, forward = sp.forward(st.root, (), graph.inputs, graph.outputs,
                                       params if all(params) else [],
                                       logits_outputs=graph.logits_outputs)
            init_lines += sp.forward_buffers
        imports |= sp.imports
    else:
        emissions: dict[int, torch_ops.Emission] = {}
        with size_scope:
            for node in graph.nodes:
                emissions[id(node)] = torch_ops.emit(node)
        init_lines = []
        reset_lines = []
        seen: set[str] = set()
        for node in graph.nodes:
            em = emissions[id(node)]
            imports |= em.imports
            if node.name in seen:
                continue
            seen.add(node.name)
            if em.module is not None:
                init_lines += _comment_lines(node.comments, "")
                init_lines.append(f"self.{node.name} = {em.module}")
                for suffix, _source, size, init in em.extra_params:
                    init_lines.append(f"self.{node.name}_{suffix} = nn.Parameter(torch.{init}({size}))")
                init_lines += em.setup
                reset_lines += em.init
            for suffix, source, value in em.buffers:
                init_lines.append(torch_ops.buffer_line(f"{node.name}_{suffix}", source, value))
            if em.module is None:
                init_lines += em.setup  # (of the buffers: a Normalization's adapted state)
        args = _arg_names(graph)
        with size_scope:
            forward = _ForwardWriter(graph, emissions, args).write()
    # the sizes ``__init__`` computes from the builder's parameters; the other methods hold numbers
    init_lines = [size_scope.code(ln) for ln in init_lines]
    # (forward and reset_parameters read them from attributes __init__ keeps)
    forward, kept = method_sizes(size_scope, forward, init_lines)
    reset_lines, kept_reset = method_sizes(size_scope, reset_lines, init_lines)
    kept |= kept_reset
    init_lines = [f"self.{n} = {n}" for n in md.builder_args if n in kept] + init_lines
    if graph.origin.weights_given:  # (a model file's weights are loaded, not drawn)
        reset_lines = []
    body = "\n".join(init_lines + ["self.reset_parameters()"] if reset_lines else init_lines)
    where = f"{source_file}:{graph.span.line}" if graph.span else source_file
    origin = f"built by ``{md.builder}()``" if md.builder else f"``{md.var or graph.name}``"
    doc = [f"Transpiled from the {graph.origin.label or 'Keras model'} {origin} ({where}).", ""]
    for v, name in zip(graph.inputs, args):
        note = ""
        if v.layout and v.layout.startswith("NC") and len(v.layout) > 2:
            note = ", channels-first"
        doc.append(f"Input ``{name}``: {_shape_text(v.shape)} {v.dtype}{note}.")
    outs = ", ".join(_shape_text(v.shape) for v in graph.outputs)
    doc.append(f"Returns: {outs}.")
    if graph.logits_outputs:
        doc += ["", "``return_logits=True`` skips the final softmax/sigmoid: the training loss",
                "works on logits, which is numerically sound (Keras clips probabilities instead)."]
    elif graph.logits_parameter:
        doc += ["", "``return_logits`` is there for the training loop the program's models share: this",
                "model has no final activation to skip, so it returns the same either way."]
    init_params = [n for n in md.builder_args if n in size_scope.used]
    # (a size the program computes when it runs has no default: it comes first)
    init_params.sort(key=lambda n: not _runtime(md.builder_args[n]))
    signature = "".join(f", {n}" for n in given) + "".join(
        f", {n}" if _runtime(md.builder_args[n]) else f", {n}={sizes.number_text(md.builder_args[n])}"
        for n in init_params)
    lines = [f"class {md.class_name}(nn.Module):", _docstring(doc, "    "), "",
             f"    def __init__(self{signature}):", "        super().__init__()"]
    lines += [f"        {ln}" for ln in body.splitlines()]
    if reset_lines:
        lines += ["", "    def reset_parameters(self):",
                  '        """Keras\' default initializers, so training from scratch behaves the same."""']
        lines += [f"        {ln}" for ln in reset_lines]
    takes_logits = graph.logits_outputs or graph.logits_parameter
    params = ", ".join(args) + (", return_logits=False" if takes_logits else "")
    lines += ["", f"    def forward(self, {params}):"]
    lines += [f"        {ln}" for ln in forward]
    lines += regularization_lines(graph)
    text = "\n".join(lines) + "\n"
    if sizes.has_placeholders(text):
        raise AssertionError(f"{md.class_name}: a size placeholder was not placed")
    leaks = sizes.runtime_leaks(md.builder_args.values()) or sizes.specialised_runtime(
        [[n.attrs, [v.shape for v in n.inputs], [v.shape for v in n.outputs]] for n in graph.nodes])
    if leaks:  # its stand-in number would be in the code (translate() reads the script again without)
        raise sizes.RuntimeSizeLeak(f"{md.class_name}: a size computed at run time is used where the translation "
                                  f"needs its number: {'; '.join(leaks)}")
    for node in ops_opaque.opaque_nodes(graph):  # the stub class of an untranslated custom layer
        name = node.attrs["class_name"]
        if classes is None or name not in classes:
            children.append(ClassText(name, name, ops_opaque.stub_class_text(node, source_file)))
            if classes is not None:
                classes[name] = children[-1].text
    if classes is not None:  # a module class of a later model takes another name
        classes.setdefault(md.class_name, text)
    uses_f = "F." in text or any("F." in c.text for c in children)
    return ModelCode(md.class_name, text, imports, uses_f, children, init_params, given)


def module_members(md: ModelDef) -> set[str]:
    """The names the printed module of ``md`` has of its own: the attributes and buffers its
    ``__init__`` sets and its methods (``forward``, ``reset_parameters``, ...), read from the
    class as :func:`print_model_class` prints it (before any class extension). The printing's
    side notes (initializer warnings) are not kept, so printing the class again later does
    not repeat them."""
    saved = [(n, list(print_notes.notes(n).init_warnings)) for n in md.graph.nodes]
    try:
        text = print_model_class(md, "").text
    finally:
        for n, warnings in saved:
            print_notes.notes(n).init_warnings = warnings
    cls = next(s for s in cst.parse_module(text).body if isinstance(s, cst.ClassDef))
    names: set[str] = set()
    for stmt in cls.body.body:
        if not isinstance(stmt, cst.FunctionDef):
            continue
        names.add(stmt.name.value)
        if stmt.name.value != "__init__":
            continue
        for line in cst_fast.nodes_of(stmt.body, cst.SimpleStatementLine):  # (blocks of __init__ too)
            for small in line.body:
                if isinstance(small, cst.Assign):
                    names |= {t.target.attr.value for t in small.targets if _is_self_attr(t.target)}
                elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) \
                        and _is_self_attr(small.value.func) and small.value.func.attr.value == "register_buffer" \
                        and isinstance(small.value.args[0].value, cst.SimpleString):
                    names.add(small.value.args[0].value.evaluated_value)
    return names


def _is_self_attr(node) -> bool:
    return isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self"


#: a layer's ``*_regularizer`` argument → the canonical weight it regularizes
_REGULARIZED = {"kernel_regularizer": "kernel", "bias_regularizer": "bias", "recurrent_regularizer": "recurrent_kernel",
                "embeddings_regularizer": "embeddings", "gamma_regularizer": "gamma", "beta_regularizer": "beta",
                "alpha_regularizer": "alpha"}


def regularization_lines(graph: Graph) -> list[str]:
    """The ``regularization_loss`` method for the weight regularizers of the Keras layers
    (``kernel_regularizer=l2(1e-4)``: 1e-4 * the sum of the weight's squares; l1: of its
    absolute values), over the module's ``named_parameters()`` (sums are the same in
    torch's layout). A regularizer on a weight that is not one torch tensor (an LSTM's
    bias: torch has two) is reported in ``print_notes.notes(graph).untranslated_regularizers``. The
    tensors are the state_dict plan's (``Graph.weight_plan.torch_state``, recorded by the driver)."""
    regularized = [n for n in graph.nodes if n.from_keras.regularizers]
    if not regularized:
        return []
    if graph.weight_plan.torch_state is None:
        raise AssertionError(f"{graph.name}: the driver records the state_dict plan before printing")
    entries: dict[int, list] = {}
    for e in graph.weight_plan.torch_state:
        entries.setdefault(id(e.node), []).append(e)
    terms, missing, seen = [], [], set()
    for node in regularized:
        if node.name in seen:
            continue
        seen.add(node.name)
        for key, (l1, l2) in sorted(node.from_keras.regularizers.items()):
            param = _REGULARIZED.get(key) or ("kernel" if key == "depthwise_regularizer" and
                                              node.op == "depthwise_conv2d" else None)
            found = [e for e in entries.get(id(node), ()) if not e.packed and e.constant is None and e.param == param]
            others = [e for e in entries.get(id(node), ()) if e.param == param and e not in found]
            if len(found) != 1 or others:
                missing.append(f"{node.name}: {key}")
                continue
            w = f"weights[{found[0].key!r}]"
            terms += ([f"{lit(l1)} * {w}.abs().sum()"] if l1 else []) + ([f"{lit(l2)} * {w}.square().sum()"] if l2 else [])
    print_notes.notes(graph).untranslated_regularizers = missing
    if not terms:
        return []
    return ["", "    def regularization_loss(self):",
            '        """Keras\' weight regularizers (kernel_regularizer=..., ...): the term the training',
            '        loss adds (fit() and evaluate() log the sum, as Keras does)."""',
            "        weights = dict(self.named_parameters())",
            "        return " + " + ".join(terms)]


def _docstring(lines: list[str], indent: str) -> str:
    # (the lines name the source file and model: printed through code.docstring)
    return docstring_lines(lines + [""], indent)


__all__ = ["ModelCode", "print_model_class", "lit"]


def _runtime(value) -> bool:
    return sizes.runtime_symbol(value) is not None


def construct_args(md: ModelDef, code: ModelCode) -> str:
    """The arguments of the generated module's construction where the source built the model:
    the code computing each size the program computes at run time (``len(chars)``)."""
    out = list(code.given)  # (the models it holds: the names the source built it with)
    for n in code.init_params:
        sym = sizes.symbol_of(md.builder_args[n])
        if sym is not None and sym.kind == "runtime":
            out.append(sym.arg)
    return ", ".join(out)
