"""PyTorch source → ir.Program, by abstract interpretation of the user's code.

libcst parses the file (comments survive). Module-level statements bind imports
(``import torch.nn as nn``, ``from torch import nn``, ``torch.nn.functional as F``...),
constants and definitions. A model is found as a builder function (one whose
parameters all have defaults and that returns a module: ``def build_model(): return
Net()``), else a module-level ``model = Net()``, else an ``nn.Module`` subclass that no
other class uses and that can be built with its defaults.

``__init__`` is run with the interpreter: ``self.name = nn.X(...)`` builds a module
through the recogniser table (``torch_modules.py``), ``nn.Sequential``/``nn.ModuleList``
(also built in loops and comprehensions) are containers, user modules nest. Then
``forward`` is evaluated over IR values: submodule calls, ``F.*``, ``torch.*`` and tensor
methods become IR nodes in torch's channels-first layout (layout tags ``NCHW`` ...).
Input shapes come from a module-level ``INPUT_SHAPE = (C, H, W)`` (and ``INPUT_DTYPE``),
else from literal-shaped data fed to the model (``torch.randn(64, 1, 28, 28)``).
The program around the models (data, optimizer, loss, the training loop, checkpoints) is
read by ``torch_training`` into the training configuration.
Anything the interpreter cannot translate is a diagnostic with file:line, never a
silent drop.

Imports no deep-learning framework.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import libcst as cst
from libcst.metadata import MetadataWrapper

from transpiler.cst_fast import nodes_of, positions as cst_positions
from transpiler.frontend_ast import torch_modules as tm
from transpiler.frontend_ast import torch_params
from transpiler.frontend_ast.torch_params import TensorData
from transpiler.frontend_ast.keras_frontend import FrontendError, collect_comments
from transpiler.frontend_ast.keras_layers import Unsupported as KerasUnsupported
from transpiler.frontend_ast.keras_tensor_ops import subscript
from transpiler.frontend_ast.torch_modules import TorchLayer, Unsupported
from transpiler.ir import ops as ops_table
from transpiler.ir import sizes
from transpiler.frontend_ast.interp import BINOPS, CMPOPS, SAFE_BUILTINS, Env, Return
from transpiler.ir.graph import Graph, IRError, Node, Span, Value
from transpiler.ir.layout import CHANNELS_FIRST, is_channels_first
from transpiler.ir.passes.shape_inference import einsum_problem, infer_node, spatial_axes
from transpiler.ir.program import ModelDef, Program


# ---------------------------------------------------------------------------------
# Abstract values
# ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Ref:
    """An imported module or a dotted path inside one (``torch.nn.Conv2d``)."""

    path: str


@dataclass(eq=False)
class Unknown:
    reason: str = ""


@dataclass(eq=False)
class ClassRef:
    node: cst.ClassDef
    base: "ClassRef | None"
    is_module: bool

    def method(self, name: str) -> cst.FunctionDef | None:
        for stmt in self.node.body.body:
            if isinstance(stmt, cst.FunctionDef) and stmt.name.value == name:
                return stmt
        return self.base.method(name) if self.base is not None else None


@dataclass(eq=False)
class FunctionRef:
    node: cst.FunctionDef


@dataclass(eq=False)
class Mod:
    """A module object: a leaf ``nn`` layer, a container, or a user ``nn.Module``."""

    kind: str  # "leaf", "sequential", "module_list", "module_dict", "user"
    span: Span
    layer: TorchLayer | None = None
    cls_name: str = ""
    items: Any = None  # list (sequential, module_list) or dict (module_dict)
    cls: ClassRef | None = None
    attrs: dict = field(default_factory=dict)
    path: str | None = None
    #: what initialisation code drew for a leaf module's weights: torch name → init
    #: (``torch_params.init_of``), read by ``nn.init.*_(m.weight)`` and ``m.bias.data.zero_()``
    inits: dict = field(default_factory=dict)

    def children(self) -> list[tuple[str, "Mod"]]:
        if self.kind in ("sequential", "module_list"):
            return [(str(i), m) for i, m in enumerate(self.items)]
        if self.kind == "module_dict":
            return list(self.items.items())
        if self.kind == "user":
            return [(k, v) for k, v in self.attrs.items() if isinstance(v, Mod)]
        return []


@dataclass(eq=False)
class LayerToken:
    """Identifies one Keras layer (``node.meta["layer"]``) across the nodes that call it."""

    span: Span
    cls_name: str | None = None


@dataclass(eq=False)
class ParamObj:
    """``nn.Parameter(torch.zeros(shape))`` or ``self.register_buffer(name, tensor)``: a
    tensor of a user module's own (a Keras weight; a buffer is a non-trainable one).
    ``init`` is torch's initial value (``torch_params``: the tensor's, or what an ``nn.init``
    call in ``reset_parameters`` drew; None when it cannot be reproduced)."""

    shape: tuple
    span: Span
    path: str | None = None
    init: tuple | None = None
    trainable: bool = True
    buffer: bool = False


@dataclass(eq=False)
class Tensor:
    value: Value


@dataclass(eq=False)
class RNNStates:
    """torch's ``h_n`` (or ``c_n``): one state per layer and direction, stacked."""

    values: list


@dataclass(frozen=True)
class BatchDim:
    """``x.size(0)`` / ``x.shape[0]``: the (dynamic) batch size."""


@dataclass(eq=False)
class Shape:
    """``x.shape`` / ``x.size()``."""

    value: Value


@dataclass(eq=False)
class Bound:
    """A method bound to an object (``x.view``, ``self.layers.append``)."""

    obj: Any
    name: str


@dataclass(eq=False)
class LayerParam:
    """``m.weight``/``m.bias`` of a leaf module, in initialisation code (``nn.init`` on it
    sets the Keras weight's initializer)."""

    mod: Mod
    name: str
    shape: tuple
    part: bool = False  # a slice of it (``bias_ih_l0[32:64]``): an initializer draws the whole weight


@dataclass(eq=False)
class _ClassOf:
    """``m.__class__`` of a module (its ``__name__`` is the class name)."""

    mod: Mod


#: the builtin ``isinstance``, on modules (``isinstance(m, nn.Conv2d)``) and plain values
_ISINSTANCE = object()
#: the builtin ``type``, on modules (``type(m).__name__``)
_TYPE = object()


@dataclass(eq=False)
class _MaxResult:
    """``torch.max(x, dim)``: (values, indices); only the values are a layer."""

    values: "Tensor"

    def __getitem__(self, i):
        if i == 0:
            return self.values
        raise Unsupported("the indices of torch.max are not supported")


@dataclass(eq=False)
class _Reversed:
    """``seq.flip(1)``: a sequence read backwards; an RNN called on it runs ``go_backwards``."""

    tensor: "Tensor"


@dataclass(eq=False)
class _ZeroState:
    """``torch.zeros(num_layers, x.size(0), hidden)`` made in forward: read only as an RNN's
    initial state, where it is what the RNN starts from anyway (Keras' RNNs start at zeros)."""


#: tensor methods that leave a zero state what it is (where it lives, whether it is tracked)
_ZERO_STATE_METHODS = ("to", "cuda", "cpu", "detach", "contiguous", "requires_grad_", "float")


@dataclass(eq=False)
class _StackedState:
    """``h.unsqueeze(0)`` / ``h.view(1, N, H)`` of a (N, H) tensor: torch's (1, N, H) stack of
    one layer's RNN state; read only as an RNN's initial state (Keras' ``initial_state``
    takes the (N, H) tensor itself)."""

    tensor: "Tensor"


#: tensor methods that leave a stacked state what it is
_STACKED_STATE_METHODS = ("to", "cuda", "cpu", "contiguous", "float")


def _tensor_values(path: str, items) -> list:
    """The graph values of ``torch.cat``'s (``torch.add``'s, ...) tensors, all tensors."""
    if not all(isinstance(t, Tensor) for t in items):
        raise Unsupported(f"{path} of something that is not a tensor")
    return [t.value for t in items]


def _zero_state(value) -> bool:
    """``h0``, ``(h0, c0)`` of zeros, or no state at all."""
    if isinstance(value, (tuple, list)):
        return bool(value) and all(isinstance(v, _ZeroState) for v in value)
    return value is None or isinstance(value, _ZeroState)


class _Super:
    """``super()`` inside a module method: only ``super().__init__()`` means something."""


_Return = Return
_SAFE_BUILTINS = {k: v for k, v in SAFE_BUILTINS.items() if k != "isinstance"}
_BINOPS, _CMPOPS = BINOPS, CMPOPS
_AUG = {cst.AddAssign: cst.Add, cst.SubtractAssign: cst.Subtract, cst.MultiplyAssign: cst.Multiply,
        cst.DivideAssign: cst.Divide}
_TENSOR_MERGES = {cst.Add: "add", cst.Subtract: "subtract", cst.Multiply: "multiply", cst.Divide: "divide",
                  cst.Power: "power", cst.MatrixMultiply: "matmul"}
#: torch functions and tensor methods of one tensor → element-wise ops
_UNARY_FUNCTIONS = {"exp": "exp", "log": "log", "sqrt": "sqrt", "rsqrt": "rsqrt", "abs": "abs", "square": "square",
                    "neg": "negative", "negative": "negative"}
_TENSOR_COMPARISONS = {cst.GreaterThan: "greater", cst.GreaterThanEqual: "greater_equal", cst.LessThan: "less",
                       cst.LessThanEqual: "less_equal", cst.Equal: "equal", cst.NotEqual: "not_equal"}
#: tensor methods reducing over ``dim`` → reduce ops
_REDUCTIONS = {"mean": "reduce_mean", "sum": "reduce_sum", "amax": "reduce_max", "amin": "reduce_min"}
#: torch.* / tensor-method spellings of functional recognisers (F.relu == torch.relu == x.relu())
_FUNCTION_ALIASES = {"torch.relu": "relu", "torch.sigmoid": "sigmoid", "torch.tanh": "tanh",
                     "torch.selu": "selu", "torch.softmax": "softmax", "torch.log_softmax": "log_softmax",
                     "torch.nn.functional.sigmoid": "sigmoid", "torch.nn.functional.tanh": "tanh"}
#: torch.X_like functions → the value they fill with (None: the fill_value argument)
_FILLED_LIKE = {"torch.zeros_like": 0.0, "torch.ones_like": 1.0, "torch.full_like": None}
_TORCH_DTYPES = {f"torch.{k}": v for k, v in {
    "float32": "float32", "float": "float32", "float64": "float64", "double": "float64", "float16": "float16",
    "half": "float16", "bfloat16": "bfloat16", "int8": "int8", "int16": "int16", "int32": "int32",
    "int": "int32", "int64": "int64", "long": "int64", "uint8": "uint8", "bool": "bool"}.items()}
_METHOD_FUNCTIONS = {"relu", "sigmoid", "tanh", "softmax", "log_softmax"}
_MERGE_FUNCTIONS = {"torch.add": "add", "torch.sub": "subtract", "torch.mul": "multiply",
                    "torch.maximum": "maximum", "torch.minimum": "minimum"}
#: functions that make a data array of a literal shape: where the shape is (``"varargs"``: the
#: positional arguments or one tuple; an int: that positional argument; ``size=`` always counts)
#: and whether the array holds integers (token ids for an Embedding)
_DATA_MAKERS = {
    **{f"torch.{n}": ("varargs", False) for n in ("randn", "rand", "zeros", "ones", "empty")},
    "torch.randint": ("last_tuple", True),
    **{f"numpy.{n}": (0, False) for n in ("zeros", "ones", "empty")},
    **{f"numpy.random.{n}": ("varargs", False) for n in ("randn", "rand")},
    **{f"numpy.random.{n}": (0, False) for n in ("standard_normal", "random", "random_sample")},
    **{f"numpy.random.{n}": (2, False) for n in ("normal", "uniform")},
    "numpy.random.randint": (2, True),
}
#: the same functions as methods of a ``np.random.RandomState``/``default_rng()`` generator
_GENERATOR_METHODS = {
    "randn": ("varargs", False), "rand": ("varargs", False), "standard_normal": (0, False),
    "random": (0, False), "normal": (2, False), "uniform": (2, False), "randint": (2, True),
    "integers": (2, True),
}
#: tensor constructors read in ``__init__`` (the value of a parameter or buffer)
_TENSOR_MAKERS = {"torch.zeros", "torch.ones", "torch.empty", "torch.randn", "torch.rand", "torch.full",
                  "torch.tensor"}


def torch_api(path: str) -> str | None:
    """``torch.nn.Conv2d`` → ``nn.Conv2d``; ``torch.nn.functional.relu`` → ``F.relu``."""
    if path.startswith("torch.nn.functional."):
        return "F." + path[len("torch.nn.functional."):]
    if path.startswith("torch.nn.modules.") and "." in path[len("torch.nn.modules."):]:
        return "nn." + path.rsplit(".", 1)[1]
    if path.startswith("torch.nn."):
        return "nn." + path[len("torch.nn."):]
    return None


class TorchFrontend:
    """Reads one PyTorch script into an ``ir.Program``."""

    def __init__(self, source: str, path: str = "<string>"):
        self.source = source
        self.path = path
        try:
            self.module = cst.parse_module(source)
        except cst.ParserSyntaxError as exc:
            raise FrontendError(f"syntax error: {exc.message}", Span(path, exc.raw_line, exc.raw_column + 1)) from None
        self.wrapper = MetadataWrapper(self.module, unsafe_skip_copy=True)
        self.positions = cst_positions(self.wrapper)
        self.program = Program(path, source, "torch")
        self.globals = Env()
        self.classes: dict[str, ClassRef] = {}
        self.functions: dict[str, FunctionRef] = {}
        self.comments = collect_comments(source)
        self.lines = source.splitlines()
        self.graph: Graph | None = None
        self.names: dict[str, int] = {}
        self.depth = 0
        self.frozen_bias_hh: set[int] = set()  # id(Mod) of recurrent layers whose bias_hh is frozen
        self.var_depth: dict[int, int] = {}  # id(Value) → the call depth its ``var`` was given at
        self.stubbed_builders: set[str] = set()
        self.cur_builder: str | None = None
        self.warned: set[str] = set()
        self.layer_tokens: dict[str, LayerToken] = {}
        self.root_span: Span | None = None
        self.cur_span: Span | None = None
        #: while an initialisation statement runs: the nn.init calls it made on something
        #: other than a module's own parameter (None: not in one)
        self.init_calls: list[str] | None = None
        #: functions of the script run by initialisation code (``model.apply(weights_init)``):
        #: those whose every run was translated into the layers' initializers, and the others
        self.init_functions: dict[str, bool] = {}
        self._init_running: set[str] = set()
        self.linear_names: dict[str, str] = {}  # F.linear's weight key → its Dense layer's name
        self.root_mod: Mod | None = None  # the model whose graph is being built
        self.part_inputs: dict[int, list] = {}  # id(submodule) → the values it was first called on
        self.method_calls: dict[str, list[Value]] = {}  # its own methods forward calls: their inputs
        self.ran_methods: set[int] = set()  # (ids of) the method definitions interpreted

    # -- entry ---------------------------------------------------------------------------
    def run(self, prepare=None) -> Program:
        """Bind the module's names, find the models, build one graph per model; ``prepare``
        (the target's passes) runs on the program before its training code is read, so that
        what the code reads of the models (the layouts of their outputs) is the final one."""
        for stmt in self.module.body:
            self._bind_toplevel(stmt)
        self.cur_span: Span | None = None
        self.program.meta["stubbed_models"] = []
        for name, mod, builder, args, var in self._find_models():
            try:
                self._build_model(name, mod, builder, args, var)
            except (Unsupported, FrontendError) as exc:
                span = getattr(exc, "span", None) or self.cur_span or mod.span
                self._stub_model(name, builder, str(exc), span)
        if prepare is not None:
            prepare(self.program)
        self._report_unsupported_statements()
        self.program.meta["torch_bindings"] = self._torch_names()
        return self.program

    # -- module level ----------------------------------------------------------------
    def _span(self, node: cst.CSTNode) -> Span:
        try:
            pos = self.positions[node]
        except KeyError:
            return Span(self.path, 1, 1)
        return Span(self.path, pos.start.line, pos.start.column + 1, pos.end.line)

    def _err(self, node: cst.CSTNode, message: str) -> FrontendError:
        return FrontendError(message, self._span(node))

    def _stub_model(self, name: str, builder: str | None, message: str, span: Span) -> None:
        line = self.lines[span.line - 1].strip() if 0 < span.line <= len(self.lines) else ""
        self.program.stub(span, f"{name}: {message}", line)
        if builder:
            self.stubbed_builders.add(builder)
        self.program.meta["stubbed_models"].append({"name": name, "builder": builder, "message": message,
                                                    "span": span, "line": line})

    def _bind_toplevel(self, stmt: cst.CSTNode) -> None:
        if isinstance(stmt, cst.ClassDef):
            base = None
            is_module = False
            for arg in stmt.bases:
                try:
                    b = self._eval(arg.value, self.globals)
                except (FrontendError, Unsupported):
                    continue
                if isinstance(b, Ref) and b.path in ("torch.nn.Module", "torch.nn.modules.module.Module"):
                    is_module = True
                elif isinstance(b, ClassRef):
                    base, is_module = b, b.is_module
            ref = ClassRef(stmt, base, is_module)
            self.classes[stmt.name.value] = ref
            self.globals.vars[stmt.name.value] = ref
        elif isinstance(stmt, cst.FunctionDef):
            ref = FunctionRef(stmt)
            self.functions[stmt.name.value] = ref
            self.globals.vars[stmt.name.value] = ref
        elif isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, (cst.Import, cst.ImportFrom)):
                    self._exec_import(small, self.globals)
                elif isinstance(small, (cst.Assign, cst.AnnAssign)) and small.value is not None:
                    try:
                        value = self._eval(small.value, self.globals)
                    except (FrontendError, Unsupported, Exception):  # noqa: BLE001 - unknown at module level
                        value = Unknown("not static")
                    if isinstance(value, (Mod, Tensor)):
                        value = Unknown("built at module level")
                    targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
                    for t in targets:
                        try:
                            self._assign(t, value, self.globals)
                        except Unsupported:  # ``mod.attr = f`` at module level: nothing a model reads
                            pass

    def _exec_import(self, node, env: Env) -> None:
        if isinstance(node, cst.Import):
            for alias in node.names:
                full = _dotted(alias.name)
                if alias.asname is not None:
                    env.vars[alias.asname.name.value] = Ref(full)
                else:
                    head = full.split(".")[0]
                    env.vars[head] = Ref(head)
        else:
            if node.module is None or isinstance(node.names, cst.ImportStar):
                return
            mod = _dotted(node.module)
            for alias in node.names:
                name = alias.name.value if isinstance(alias.name, cst.Name) else _dotted(alias.name)
                local = alias.asname.name.value if alias.asname is not None else name
                env.vars[local] = Ref(f"{mod}.{name}")

    def _torch_names(self) -> set[str]:
        """Module-level names bound to torch (imports and what is built from them)."""
        return {k for k, v in self.globals.vars.items() if isinstance(v, Ref) and v.path.split(".")[0] == "torch"}

    # -- finding models ---------------------------------------------------------------
    def _find_models(self):
        found = []
        used_classes: set[str] = set()
        words = set(self.classes) | {"nn", "Sequential"}
        # a helper that takes arguments (``make_layers(cfg)``) and builds modules: a builder
        # calling it builds a model too
        helpers = {name: fn for name, fn in self.functions.items()
                   if any(p.default is None for p in fn.node.params.params)}
        while True:
            more = {name for name, fn in helpers.items() if name not in words and _mentions(fn.node, words)}
            if not more:
                break
            words |= more
        for fn in self.functions.values():
            if not all(p.default is not None for p in fn.node.params.params) or fn.node.params.star_arg \
                    not in (None, cst.MaybeSentinel.DEFAULT) or not _mentions(fn.node, words):
                continue
            if _returns_nothing(fn.node):
                continue
            self.graph = None
            try:
                # sizes with provenance: the builder's parameters by name
                args = {p.name.value: sizes.named(self._eval(p.default, self.globals), p.name.value)
                        for p in fn.node.params.params}
                result = self._call_function(fn, [], dict(args), fn.node)
            except Unsupported as exc:
                if _mentions(fn.node, {n for n, c in self.classes.items() if c.is_module} | {"nn"}) and \
                        not _trains(fn.node):  # a program function (it trains) is not a builder
                    self._stub_model(fn.node.name.value, fn.node.name.value, str(exc),
                                     self.cur_span or self._span(fn.node))
                    self.stubbed_builders.add(fn.node.name.value)
                continue
            except (FrontendError, RecursionError, KeyError, TypeError, ValueError, IndexError):
                continue
            if isinstance(result, Mod):
                found.append((fn.node.name.value, result, fn.node.name.value, args, None))
                used_classes.update(_class_names_in(result))
        if found:
            return found
        for stmt in self.module.body:
            if isinstance(stmt, cst.SimpleStatementLine) and isinstance(stmt.body[0], cst.Assign):
                assign = stmt.body[0]
                if isinstance(assign.value, cst.Call) and isinstance(assign.value.func, cst.Name) \
                        and assign.value.func.value in self.classes and len(assign.targets) == 1 \
                        and isinstance(assign.targets[0].target, cst.Name):
                    mod = self._eval(assign.value, self.globals)
                    if isinstance(mod, Mod):
                        found.append((assign.value.func.value, mod, None, {}, assign.targets[0].target.value))
        if found:
            return found
        nested: set[str] = set()
        candidates = []
        for name, cls in self.classes.items():
            if not cls.is_module:
                continue
            try:
                mod = self._instantiate(cls, [], {}, cls.node)
            except (FrontendError, Unsupported, TypeError, KeyError):
                continue
            for _, child in _walk(mod):
                if child is not mod and child.kind == "user":
                    nested.add(child.cls.node.name.value)
            candidates.append((name, mod))
        return [(name, mod, None, {}, None) for name, mod in candidates if name not in nested]

    # -- model graphs ------------------------------------------------------------------
    def _input_specs(self, forward: cst.FunctionDef, span: Span, cls: ClassRef | None = None,
                     mod: Mod | None = None) -> list[tuple[tuple, str]]:
        names = [p.name.value for p in forward.params.params[1:] if p.default is None]
        n_inputs = len(names)
        documented = self._documented_inputs(cls, names) if cls is not None else None
        if documented:
            return documented
        shape, dtype = self._declared_input()
        if isinstance(shape, (tuple, list)) and shape and all(isinstance(s, int) for s in shape):
            shapes = [tuple(shape)]
        elif isinstance(shape, (tuple, list)) and shape and all(isinstance(s, (tuple, list)) for s in shape):
            shapes = [tuple(s) for s in shape]
        else:
            data = self._pick_data_shape(mod) if mod is not None else self._literal_data_shapes()[:1]
            shapes = [s for s, _ in data]
            if data and "INPUT_DTYPE" not in self.globals.vars:
                dtype = data[0][1]
        if not shapes or len(shapes) < n_inputs:
            raise FrontendError(
                "cannot tell the model's input shape: torch modules do not declare it; add a module-level "
                "INPUT_SHAPE = (C, H, W) (one example, without the batch axis) or feed the model "
                "literal-shaped data such as torch.randn(8, C, H, W)", span)
        dtypes = dtype if isinstance(dtype, (tuple, list)) else [dtype] * len(shapes)
        return [(s, str(d)) for s, d in zip(shapes[:n_inputs], dtypes)]

    def _documented_inputs(self, cls: ClassRef, names: list[str]):
        """Shapes the class docstring states, one line per input: ``Input ``x``: (N, 1, 28,
        28) float32`` (how transpiler documents the modules it generates)."""
        import re

        body = cls.node.body.body
        if not body or not isinstance(body[0], cst.SimpleStatementLine) or \
                not isinstance(body[0].body[0], cst.Expr) or \
                not isinstance(body[0].body[0].value, cst.SimpleString):
            return None
        doc = body[0].body[0].value.evaluated_value
        found = {}
        for m in re.finditer(r"Inputs?\s+``(\w+)``:\s*\(N((?:,\s*\d+)*)\)\s*(\w+)?", doc):
            dims = tuple(int(d) for d in re.findall(r"\d+", m.group(2)))
            found[m.group(1)] = (dims, m.group(3) or "float32")
        if names and all(n in found for n in names):
            return [found[n] for n in names]
        return None

    def _declared_input(self):
        """``INPUT_SHAPE``/``INPUT_DTYPE``, or ``<NAME>_INPUT_SHAPE`` for a builder
        ``build_<name>`` (``DISCRIMINATOR_INPUT_SHAPE`` for ``build_discriminator``)."""
        prefix = ""
        builder = self.cur_builder or ""
        if builder.startswith("build_") and builder != "build_model":
            prefix = builder[len("build_"):].upper() + "_"
        if prefix and f"{prefix}INPUT_SHAPE" in self.globals.vars:
            return (self.globals.vars[f"{prefix}INPUT_SHAPE"],
                    self.globals.vars.get(f"{prefix}INPUT_DTYPE", "float32"))
        return self.globals.vars.get("INPUT_SHAPE"), self.globals.vars.get("INPUT_DTYPE", "float32")

    def _literal_data_shapes(self) -> list[tuple[tuple, str]]:
        """Shapes (without the batch axis) and dtypes of the arrays the program makes with a
        literal shape (``torch.randn(64, 3, 32, 32)``, ``torch.randint(0, VOCAB, (n, SEQ_LEN))``,
        ``rng.standard_normal((96, 1, 28, 28))``), in source order; module constants count as
        literals."""
        found = []

        def literal_int(node):
            if next(nodes_of(node, cst.Call), None) is not None:
                return None  # (never run the program's functions to size data)
            try:
                value = self._eval(node, self.globals)
            except Exception:  # noqa: BLE001  (anything not a module constant)
                return None
            return value if isinstance(value, int) and not isinstance(value, bool) else None

        class Finder(cst.CSTVisitor):
            def visit_Call(inner, call: cst.Call) -> None:  # noqa: N805
                spec = self._data_maker(call)
                if spec is None:
                    return
                where, integer = spec
                positional = [a.value for a in call.args if a.keyword is None and a.star == ""]
                size = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "size"), None)
                if size is not None:
                    dims = [size]
                elif where == "varargs":
                    dims = positional
                elif where == "last_tuple":
                    dims = [a for a in positional if isinstance(a, (cst.Tuple, cst.List))][-1:]
                else:
                    dims = positional[where:where + 1]
                if len(dims) == 1 and isinstance(dims[0], (cst.Tuple, cst.List)):
                    dims = [e.value for e in dims[0].elements]
                values = [literal_int(d) for d in dims]
                if len(values) >= 2 and all(v is not None for v in values):
                    found.append((tuple(values[1:]), "int64" if integer else "float32"))

        self.module.visit(Finder())
        return found

    def _data_maker(self, call: cst.Call):
        """``(where the shape is, integer data)`` for a call that makes random or constant
        data (``_DATA_MAKERS``, or a generator method such as ``rng.standard_normal``)."""
        try:
            func = self._eval(call.func, self.globals)
        except Exception:  # noqa: BLE001
            func = None
        if isinstance(func, Ref):
            return _DATA_MAKERS.get(func.path)
        # a method of a generator made in a function (``rng = np.random.default_rng(0)``) or in
        # place (``np.random.RandomState(0).randn(...)``)
        if isinstance(call.func, cst.Attribute) and call.func.attr.value in _GENERATOR_METHODS:
            made = call.func.value
            try:
                if isinstance(made, cst.Call):  # only the generator's constructor is looked at
                    maker = self._eval(made.func, self.globals)
                    receiver = None if isinstance(maker, Ref) and maker.path.startswith("numpy.random.") else maker
                elif next(nodes_of(made, cst.Call), None) is not None:
                    return None
                else:
                    receiver = self._eval(made, self.globals)
            except Exception:  # noqa: BLE001  (a local name: a generator made in a function)
                receiver = None
            if receiver is None or isinstance(receiver, Unknown):
                return _GENERATOR_METHODS[call.func.attr.value]
        return None

    def _pick_data_shape(self, mod: Mod) -> list[tuple[tuple, str]]:
        """The literal-shaped data most likely fed to ``mod``: the first whose shape the first
        layer of the model accepts (its channels or features, integers for an Embedding),
        else the first of all."""
        found = self._literal_data_shapes()
        first = next((m.layer for _, m in _walk(mod) if m.kind == "leaf"), None)

        def accepts(shape, dtype):
            op = (first.op or "") if first is not None else ""
            if op == "embedding":
                return dtype.startswith("int")
            if dtype.startswith("int"):
                return False
            rank = next((int(c) for c in op if c.isdigit()), None) if "conv" in op else None
            if rank is not None:
                return len(shape) == rank + 1 and shape[0] == first.in_features
            return first is None or first.in_features is None or shape[-1] == first.in_features

        return [s for s in found if accepts(*s)][:1] or found[:1]

    def _build_model(self, name: str, mod: Mod, builder, args, var) -> None:
        graph = Graph(name=mod.cls.node.name.value if mod.kind == "user" else name)
        self.graph = graph
        self.cur_builder = builder
        self.layer_tokens = {}
        self.linear_names: dict[str, str] = {}
        # a container model is "called" at its constructor: that line's comments are its own
        self.root_span = mod.span if mod.kind != "user" else None
        self.names = {}
        _assign_paths(mod, "")
        self._reserve_names(mod)
        if mod.kind == "user":
            forward = mod.cls.method("forward")
            if forward is None:
                raise self._err(mod.cls.node, f"{mod.cls.node.name.value} has no forward method")
            params = [p.name.value for p in forward.params.params[1:] if p.default is None]
            specs = self._input_specs(forward, self._span(forward), mod.cls, mod)
        else:
            forward = None
            params = ["x"]
            specs = self._input_specs_for_container(mod)
        self.root_mod, self.method_calls, self.part_inputs = mod, {}, {}
        inputs = []
        for pname, (shape, dtype) in zip(params, specs):
            full = (None, *shape)
            layout = CHANNELS_FIRST.get(len(full), "NC"[:len(full)] if len(full) <= 2 else None)
            if dtype.startswith("int"):
                layout = "NC"[:len(full)] if len(full) <= 2 else None
            v = graph.new_value("input", shape=full, dtype=dtype, layout=layout)
            v.var = pname
            graph.inputs.append(v)
            inputs.append(Tensor(v))
        out = self._call_module(mod, inputs, {}, mod.span)
        outs = out if isinstance(out, (tuple, list)) else [out]
        if not all(isinstance(o, Tensor) for o in outs):
            raise FrontendError(f"{graph.name}: forward must return tensors", mod.span)
        graph.outputs = [o.value for o in outs]
        self._finish_graph(graph, mod, params)
        self._attach_comments(graph)
        graph.lint()
        md = ModelDef(graph, graph.name, builder=builder, builder_args=args, var=var)
        for method, values in list(self.method_calls.items()):
            try:
                md.methods[method] = self._method_model(mod, method, values)
            except (Unsupported, FrontendError):
                pass  # the program's calls of it stay untranslated (a stub where they are)
        self._report_unread_methods(mod, md)
        self.program.models.append(md)

    def _report_unread_methods(self, mod: Mod, md: ModelDef) -> None:
        """Methods of the model's classes that building it never ran (a ``train_step``, a
        ``metrics`` property) are not part of the Keras model: each is a stub (the printer
        writes a function that raises, named after the model and the method)."""
        unread, seen = [], set()
        own = self._own_step(mod, md)
        for _, m in _walk(mod):
            if m.kind != "user" or id(m.cls.node) in seen:
                continue
            seen.add(id(m.cls.node))
            init_only = _init_code_methods(m.cls.node)
            for stmt in m.cls.node.body.body:
                if not isinstance(stmt, cst.FunctionDef) or id(stmt) in self.ran_methods:
                    continue
                name = stmt.name.value
                if name in init_only:
                    continue  # the weight initialisation ``__init__`` runs (reported with it)
                if m is mod and name in own:
                    continue  # the Keras model's own method (torch_own_step)
                if (m is mod and name in md.methods) or (name.startswith("__") and name.endswith("__")) \
                        or name == "extra_repr":  # (print(model)'s text: Keras' summary() has its own)
                    continue
                span = self._span(stmt)
                message = (f"{m.cls_name}.{name} is not part of the Keras model (forward does not call it): "
                           "not translated")
                failed = md.graph.meta.get("own_step_failed")
                if m is mod and failed and name in ("train_step", "test_step", "metrics"):
                    message = f"{m.cls_name}.{name}: the model's own training step is not translated ({failed})"
                self.program.stub(span, message, f"def {name}{_code(stmt.params).join('()')}")
                params = ", ".join(["model"] + [_code(p).rstrip(", ") for p in stmt.params.params[1:]])
                unread.append((name, params, span, message))
        md.graph.meta["unread_methods"] = unread

    def _own_step(self, mod: Mod, md: ModelDef) -> set[str]:
        """The model's own ``train_step``/``test_step``/``metrics`` in Keras
        (``graph.meta["own_step"]``, torch_own_step): the names of the methods translated;
        when they cannot be, the reason is kept (``own_step_failed``) and each stays a stub."""
        from transpiler.frontend_ast import torch_helpers, torch_own_step

        if mod.kind != "user" or mod.cls.method("train_step") is None:
            return set()
        aliases = {k: v.path for k, v in self.globals.vars.items() if isinstance(v, Ref)}
        children = {key for key, _ in mod.children()}
        try:
            parts, composed = self._parts(mod)
            step = torch_own_step.read_own_step(mod.cls.node, torch_helpers.analyse(self.module), aliases,
                                                children - set(parts), parts=set(parts))
        except (Unsupported, FrontendError) as exc:
            md.graph.meta["own_step_failed"] = str(exc)
            return set()
        md.graph.meta["own_step"] = step
        if composed is not None:
            md.graph.meta["composed"] = composed
        return {name for name, _ in step["methods"]}

    def _parts(self, mod: Mod) -> tuple[list[str], dict | None]:
        """The submodules the model's own steps call, when ``forward`` is a composition of
        them (torch_parts): their names, and ``{"parts": [(attr, graph)], "call": text}``."""
        from transpiler.frontend_ast import torch_parts

        kids = dict(mod.children())
        user = {k for k, m in kids.items() if m.kind == "user"}
        called = set()
        for name in ("train_step", "test_step"):
            fn = mod.cls.method(name)
            if fn is not None:
                called |= {c.func.attr.value for c in nodes_of(fn, cst.Call) if isinstance(c.func, cst.Attribute) and
                           isinstance(c.func.value, cst.Name) and c.func.value.value == "self" and
                           c.func.attr.value in user}
        if not called:
            return [], None
        order = torch_parts.composition(mod.cls.method("forward"), user)
        if order is None or not called <= set(order):
            return [], None
        classes = [kids[a].cls_name for a in order]
        if len(set(classes)) != len(classes):
            raise Unsupported("two submodules of one class called by the model's own step")
        graphs = [(attr, self._part_model(mod, attr, kids[attr])) for attr in order]
        return order, {"parts": graphs, "call": torch_parts.call_text(mod.cls.method("forward"), set(order))}

    def _part_model(self, root: Mod, attr: str, child: Mod) -> Graph:
        """The submodule ``attr`` as a model of its own (its layers named within it), on the
        inputs the model's forward first gave it."""
        values = self.part_inputs.get(id(child))
        if not values:
            raise Unsupported(f"self.{attr}: forward never called it on tensors")
        fn = child.cls.method("forward")
        names = [p.name.value for p in fn.params.params[1:]]
        saved = (self.graph, self.names, self.layer_tokens)
        graph = Graph(name=child.cls_name)
        self.graph, self.names, self.layer_tokens = graph, {}, {}
        _assign_paths(child, "")
        try:
            self._reserve_names(child)
            out = self._call_module(child, _graph_inputs(graph, names, values), {}, child.span)
            outs = out if isinstance(out, (tuple, list)) else [out]
            if not all(isinstance(o, Tensor) for o in outs):
                raise Unsupported(f"self.{attr} does not return tensors")
            graph.outputs = [o.value for o in outs]
            self._finish_graph(graph, child, names[:len(values)])
            self._attach_comments(graph)
            graph.lint()
        finally:
            _assign_paths(root, "")
            self.graph, self.names, self.layer_tokens = saved
        return graph

    def _finish_graph(self, graph: Graph, mod: Mod, params: list[str]) -> None:
        _merge_bidirectional_halves(graph)
        _simplify_rnns(graph)
        _prune(graph)
        _relabel_sequences(graph)
        for node in graph.nodes:
            if len(node.inputs) > 1 and any(v.shape and v.shape[0] is not None for v in node.inputs) and \
                    any(is_channels_first(v.layout) and len(v.shape) >= 3 for v in node.inputs):
                raise FrontendError(f"{node.op}: a module's own parameter (no batch axis) broadcast against a "
                                    "channels-first feature map: its axes would need permuting for channels-last "
                                    "(not translated yet)", node.span)
        graph.meta["source_framework"] = "torch"
        graph.meta["torch_params"] = [(p.path, p.shape) for _, p in _walk_params(mod)]
        graph.meta["torch_children"] = [key for key, _ in mod.children()]  # model.named_children()
        graph.meta["input_names"] = params
        graph.meta["source_input_shapes"] = [tuple(v.shape) for v in graph.inputs]

    def _method_model(self, mod: Mod, method: str, values: list[Value]) -> ModelDef:
        """``self.encode(x)`` in forward: the method as a model of its own, on inputs shaped
        like the ones forward gave it; its layers are the model's (same names)."""
        fn = mod.cls.method(method)
        names = [p.name.value for p in fn.params.params[1:]]
        if len(names) < len(values):
            raise Unsupported(f"{method}: called with more arguments than it takes")
        graph = Graph(name=method)
        self.graph, self.names, self.layer_tokens = graph, {}, {}
        self._reserve_names(mod)
        out = self._run_method(mod, fn, _graph_inputs(graph, names, values), {}, fn)
        outs = out if isinstance(out, (tuple, list)) else [out]
        if not all(isinstance(o, Tensor) for o in outs):
            raise Unsupported(f"{method} does not return tensors")
        graph.outputs = [o.value for o in outs]
        self._finish_graph(graph, mod, names[:len(values)])
        graph.lint()
        return ModelDef(graph, f"{mod.cls_name}.{method}")

    def _input_specs_for_container(self, mod: Mod):
        shape, dtype = self._declared_input()
        dtype = str(dtype)
        if isinstance(shape, (tuple, list)) and all(isinstance(s, int) for s in shape):
            return [(tuple(shape), dtype)]
        data = self._pick_data_shape(mod)
        if data:
            return data
        first = next((m for _, m in _walk(mod) if m.kind == "leaf"), None)
        if first is not None and first.layer.op == "dense" and first.layer.in_features:
            return [((first.layer.in_features,), "float32")]
        raise FrontendError("cannot tell the model's input shape: add a module-level INPUT_SHAPE = (...)",
                            mod.span)

    def _reserve_names(self, mod: Mod) -> None:
        for path, m in _walk(mod):
            if m.kind == "leaf":
                self.names.setdefault(self._layer_name(m), 0)
        for key, _ in _walk_params(mod):
            self.names.setdefault(key.replace(".", "_"), 0)

    def _layer_name(self, m: Mod) -> str:
        path = m.path or ""
        name = path.replace(".", "_")
        if not name or name[0].isdigit():
            name = f"{m.cls_name.lower()}_{name}" if name else m.cls_name.lower()
        return name

    def _fresh(self, hint: str) -> str:
        n = self.names.get(hint)
        if n is None:
            self.names[hint] = 1
            return hint
        while f"{hint}_{n}" in self.names:
            n += 1
        self.names[hint] = n + 1
        self.names[f"{hint}_{n}"] = 1
        return f"{hint}_{n}"

    # -- statements -------------------------------------------------------------------
    def _exec_block(self, body, env: Env) -> None:
        body = list(body)
        for i, stmt in enumerate(body):
            if isinstance(stmt, cst.If) and _training_test(stmt.test) is not None:
                self._training_if(stmt, body[i + 1:], env)
                return
            self._exec_stmt(stmt, env)

    # -- ``if self.training:`` ----------------------------------------------------------
    def _training_if(self, stmt: cst.If, rest: list, env: Env) -> None:
        """``if self.training: A else: B`` then ``rest``: both branches are read; the values
        they leave (or return) differently become ``training_select`` nodes. A branch that
        returns while the other falls through runs ``rest`` in the other one."""
        self.cur_span = span = self._span(stmt)
        if self.graph is None:
            raise Unsupported("self.training outside forward")
        orelse = [] if stmt.orelse is None else \
            [stmt.orelse] if isinstance(stmt.orelse, cst.If) else list(stmt.orelse.body.body)
        branches = [list(stmt.body.body), orelse]
        if not _training_test(stmt.test):
            branches.reverse()  # ``if not self.training:``
        (t_env, t_ret), (i_env, i_ret) = (self._run_branch(b, env) for b in branches)
        if (t_ret is None) != (i_ret is None):
            if t_ret is None:
                t_env, t_ret = self._run_branch(rest, t_env)
            else:
                i_env, i_ret = self._run_branch(rest, i_env)
            if t_ret is None or i_ret is None:
                raise Unsupported("`if self.training:` returns in one branch only, and the other does not "
                                  "return after it in the same block")
        if t_ret is not None:
            raise _Return(self._join_training(t_ret[0], i_ret[0], span, "select"))
        for name in set(t_env.vars) | set(i_env.vars):
            if name in t_env.vars and name in i_env.vars:
                env.vars[name] = self._join_training(t_env.vars[name], i_env.vars[name], span, name)
            else:  # bound in one branch only: unbound after the if
                env.vars.pop(name, None)
        self._exec_block(rest, env)

    def _run_branch(self, body: list, env: Env) -> tuple[Env, tuple | None]:
        """Run ``body`` in a copy of ``env``: the copy and ``(value,)`` if it returned."""
        fork = Env(env.parent)
        fork.vars = dict(env.vars)
        try:
            self._exec_block(body, fork)
        except _Return as ret:
            return fork, (ret.value,)
        return fork, None

    def _join_training(self, train, infer, span: Span, hint: str):
        """One value for both modes: a ``training_select`` of two different tensors, tuples
        joined element by element; other values must agree."""
        if train is infer:
            return train
        if isinstance(train, Tensor) and isinstance(infer, Tensor):
            if train.value is infer.value:
                return train
            return self._add("training_select", [train.value, infer.value], {}, span, hint)
        if isinstance(train, (tuple, list)) and type(train) is type(infer) and len(train) == len(infer):
            return type(train)(self._join_training(a, b, span, hint) for a, b in zip(train, infer))
        if not isinstance(train, (Tensor, Mod, Unknown)) and not isinstance(infer, (Tensor, Mod, Unknown)):
            try:
                if type(train) is type(infer) and train == infer:
                    return train
            except Exception:  # noqa: BLE001  (a value without a usable ==)
                pass
        raise Unsupported(f"{hint!r} differs between training and inference and is not a tensor "
                          "(only tensors can be selected by self.training)")

    def _freezes_bias_hh(self, stmt, env: Env) -> bool:
        """``self.lstm.bias_hh_l0.requires_grad_(False)``: the recurrent layer keeps one bias, as
        Keras' does (torch's second stays at its initial zeros); recorded for the training
        reader (the two biases no longer step together)."""
        if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and
                isinstance(stmt.body[0], cst.Expr) and isinstance(stmt.body[0].value, cst.Call)):
            return False
        call = stmt.body[0].value
        f = call.func
        if not (isinstance(f, cst.Attribute) and f.attr.value == "requires_grad_" and len(call.args) == 1 and
                _code(call.args[0].value) == "False" and isinstance(f.value, cst.Attribute) and
                f.value.attr.value.startswith("bias_hh_l")):
            return False
        try:
            mod = self._eval(f.value.value, env)
        except (Unsupported, FrontendError, TypeError, KeyError, AttributeError):
            return False
        if not isinstance(mod, Mod) or mod.kind != "leaf":
            return False
        self.frozen_bias_hh.add(id(mod))
        return True

    def _exec_stmt(self, stmt, env: Env) -> None:
        self.cur_span = self._span(stmt)
        if self.init_calls is None and self._freezes_bias_hh(stmt, env):
            return
        if self.init_calls is None and _is_init_code(stmt):
            # a model's own weight initialisation: it only changes the initial weights (a
            # converted checkpoint is unaffected). What it draws for the module's own
            # nn.Parameters is read (their Keras initializers reproduce it); for anything
            # else Keras' initialisers are used instead
            if not self._read_inits(stmt, env):
                self.program.warn(self.cur_span, "custom weight initialisation or freezing is not translated "
                                                 "(Keras' default initialisers are used, every weight trains)",
                                  self.lines[self.cur_span.line - 1].strip())
            return
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                self._exec_small(small, env)
        elif isinstance(stmt, cst.If):
            cond = self._eval(stmt.test, env)
            if isinstance(cond, (Unknown, Tensor)):
                raise Unsupported(f"the condition {_code(stmt.test)!r} is not known statically "
                                  "(data-dependent control flow needs a keras.Model subclass)")
            if cond:
                self._exec_block(stmt.body.body, env)
            elif stmt.orelse is not None:
                if isinstance(stmt.orelse, cst.If):
                    self._exec_stmt(stmt.orelse, env)
                else:
                    self._exec_block(stmt.orelse.body.body, env)
        elif isinstance(stmt, cst.For):
            items = self._eval(stmt.iter, env)
            items = self._iterate(items, stmt.iter)
            for item in items:
                self._assign(stmt.target, item, env)
                self._exec_block(stmt.body.body, env)
        elif isinstance(stmt, cst.With):
            self._exec_block(stmt.body.body, env)
        elif isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            env.vars[stmt.name.value] = FunctionRef(stmt) if isinstance(stmt, cst.FunctionDef) else Unknown()
        else:
            raise Unsupported(f"{type(stmt).__name__} statements are not supported here")

    def _exec_small(self, small, env: Env) -> None:
        if isinstance(small, cst.Assign):
            value = self._eval(small.value, env)
            for t in small.targets:
                self._assign(t.target, value, env)
        elif isinstance(small, cst.AnnAssign):
            if small.value is not None:
                self._assign(small.target, self._eval(small.value, env), env)
        elif isinstance(small, cst.AugAssign):
            op = _AUG.get(type(small.operator))
            if op is None:
                raise Unsupported(f"augmented assignment {_code(small)!r}")
            left = self._eval(small.target, env)
            right = self._eval(small.value, env)
            self._assign(small.target, self._binop(op, left, right, small), env)
        elif isinstance(small, cst.Return):
            raise _Return(None if small.value is None else self._eval(small.value, env))
        elif isinstance(small, cst.Expr):
            if isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString)):
                return
            self._eval(small.value, env)
        elif isinstance(small, (cst.Pass,)):
            return
        elif isinstance(small, (cst.Import, cst.ImportFrom)):
            self._exec_import(small, env)
        elif isinstance(small, cst.Assert):
            return
        else:
            raise Unsupported(f"{type(small).__name__} is not supported here")

    def _assign(self, target, value, env: Env) -> None:
        if isinstance(target, cst.Name):
            env.vars[target.value] = value
            # the caller's name wins over one a submodule's forward gave it (``epsilon =
            # self.noise(z)`` whose forward said ``inputs = torch.randn_like(inputs)``)
            if isinstance(value, Tensor) and (value.value.var is None or
                                              self.var_depth.get(id(value.value), 0) > self.depth):
                value.value.var = target.value
                self.var_depth[id(value.value)] = self.depth
        elif isinstance(target, (cst.Tuple, cst.List)):
            if isinstance(value, RNNStates):
                value = value.values
            if isinstance(value, Shape):  # b, c, h, w = x.size()
                value = (BatchDim(), *value.value.shape[1:])
            if isinstance(value, _MaxResult):  # values, _ = torch.max(x, dim=1)
                value = (value.values, Unknown("the indices of torch.max are not translated"))
            if not isinstance(value, (tuple, list)) or len(value) != len(target.elements):
                raise Unsupported(f"cannot unpack into {_code(target)!r}")
            for el, v in zip(target.elements, value):
                self._assign(el.value, v, env)
        elif isinstance(target, cst.Attribute):
            obj = self._eval(target.value, env)
            if isinstance(obj, Mod) and obj.kind == "user":
                obj.attrs[target.attr.value] = value
            else:
                raise Unsupported(f"cannot assign to {_code(target)!r}")
        elif isinstance(target, cst.Subscript):
            raise Unsupported(f"item assignment {_code(target)!r} is not supported")
        else:
            raise Unsupported(f"cannot assign to {_code(target)!r}")

    def _iterate(self, items, node):
        if isinstance(items, Mod) and items.kind in ("sequential", "module_list"):
            return list(items.items)
        if isinstance(items, Mod) and items.kind == "module_dict":
            return list(items.items)
        if isinstance(items, (Unknown, Tensor)) or not hasattr(items, "__iter__"):
            raise Unsupported(f"cannot iterate over {_code(node)!r} statically")
        return list(items)

    # -- expressions --------------------------------------------------------------------
    def _eval(self, node, env: Env) -> Any:
        method = getattr(self, f"_eval_{type(node).__name__}", None)
        if method is None:
            raise Unsupported(f"expression {_code(node)!r} is not supported")
        return method(node, env)

    def _eval_Integer(self, node, env):
        return int(node.value.replace("_", ""), 0)

    def _eval_Float(self, node, env):
        return float(node.value.replace("_", ""))

    def _eval_SimpleString(self, node, env):
        return node.evaluated_value

    def _eval_ConcatenatedString(self, node, env):
        return node.evaluated_value

    def _eval_FormattedString(self, node, env):
        return Unknown("f-string")

    def _eval_Name(self, node, env):
        if node.value in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[node.value]
        try:
            return env.lookup(node.value)
        except KeyError:
            pass
        if node.value in _SAFE_BUILTINS:
            return _SAFE_BUILTINS[node.value]
        if node.value == "super":
            return Ref("builtins.super")
        if node.value == "isinstance":
            return _ISINSTANCE
        if node.value == "type":
            return _TYPE
        return Unknown(f"name {node.value}")

    def _eval_Attribute(self, node, env):
        obj = self._eval(node.value, env)
        name = node.attr.value
        if isinstance(obj, Ref):
            return Ref(f"{obj.path}.{name}")
        if isinstance(obj, ClassRef):
            value = self._class_attr(obj, name)
            if value is not None:
                return value
            raise Unsupported(f"class attribute {_code(node)!r}")
        if isinstance(obj, Mod):
            if obj.kind == "user" and name in obj.attrs:
                value = obj.attrs[name]
                if isinstance(value, ParamObj) and self.graph is not None:
                    return self._variable(value, node, _one_weight_module(obj, name))
                return value
            if obj.kind == "user" and self._class_attr(obj.cls, name) is not None:
                return self._class_attr(obj.cls, name)
            if obj.kind == "user" and obj.cls.method(name) is not None:
                return Bound(obj, name)
            if name == "training":
                return Unknown("self.training")
            if name == "__class__":
                return _ClassOf(obj)
            if obj.kind == "leaf" and self.init_calls is not None and name in ("weight", "bias"):
                shapes = tm.torch_param_shapes(obj.layer)
                if name in shapes:
                    return LayerParam(obj, name, shapes[name])
                if name == "bias" and "weight" in shapes:
                    return None  # bias=False
            return Bound(obj, name)
        if isinstance(obj, _ClassOf):
            if name == "__name__":
                return obj.mod.cls.node.name.value if obj.mod.kind == "user" else obj.mod.cls_name
            raise Unsupported(f"attribute {_code(node)!r}")
        if isinstance(obj, LayerParam):
            return obj if name == "data" else Bound(obj, name)
        if isinstance(obj, Bound) and self.init_calls is not None and isinstance(obj.obj, Mod):
            # initialisation code reaching into a layer's inner module (``att.out_proj.weight``):
            # what nn.init draws there is reported as not reproduced, the rest still read
            return Bound(obj, name)
        if isinstance(obj, _MaxResult):
            if name in ("values",):
                return obj.values
            raise Unsupported(f"torch.max(...).{name} is not supported")
        if isinstance(obj, Tensor):
            if name == "shape":
                return Shape(obj.value)
            if name == "device":  # (torch.zeros(..., device=x.device): Keras places tensors itself)
                return Unknown("a tensor's device")
            if name in ("T", "data", "dtype"):
                raise Unsupported(f"tensor attribute .{name}")
            return Bound(obj, name)
        if isinstance(obj, (list, dict, str, tuple, RNNStates)):
            return Bound(obj, name)
        if isinstance(obj, _ZeroState) and name in _ZERO_STATE_METHODS or \
                isinstance(obj, _StackedState) and name in _STACKED_STATE_METHODS:
            return Bound(obj, name)
        if isinstance(obj, (Unknown, _Super)):
            return Bound(obj, name) if isinstance(obj, _Super) else obj
        if isinstance(obj, torch_params.ParamSet):  # parameter groups (torch_param_groups)
            return Bound(obj, name) if name in ("named_parameters", "parameters") else obj.attribute(name)
        raise Unsupported(f"attribute {_code(node)!r}")

    def _class_attr(self, cls: ClassRef, name: str):
        for stmt in cls.node.body.body:
            if isinstance(stmt, cst.SimpleStatementLine) and isinstance(stmt.body[0], cst.Assign):
                assign = stmt.body[0]
                if any(isinstance(t.target, cst.Name) and t.target.value == name for t in assign.targets):
                    return self._eval(assign.value, self.globals)
        return self._class_attr(cls.base, name) if cls.base is not None else None

    def _eval_Tuple(self, node, env):
        return tuple(self._elements(node.elements, env))

    def _eval_List(self, node, env):
        return list(self._elements(node.elements, env))

    def _elements(self, elements, env):
        out = []
        for el in elements:
            value = self._eval(el.value, env)
            if isinstance(el, cst.StarredElement):
                out.extend(self._iterate(value, el.value))
            else:
                out.append(value)
        return out

    def _eval_Dict(self, node, env):
        out = {}
        for el in node.elements:
            if isinstance(el, cst.StarredDictElement):
                out.update(self._eval(el.value, env))
            else:
                out[self._eval(el.key, env)] = self._eval(el.value, env)
        return out

    def _eval_ListComp(self, node, env):
        return self._comprehension(node, env)

    def _eval_GeneratorExp(self, node, env):
        return self._comprehension(node, env)

    def _comprehension(self, node, env):
        out = []
        inner = Env(env)

        def walk(comp):
            if comp is None:
                out.append(self._eval(node.elt, inner))
                return
            for item in self._iterate(self._eval(comp.iter, inner), comp.iter):
                self._assign(comp.target, item, inner)
                if all(self._eval(cond.test, inner) for cond in comp.ifs):
                    walk(comp.inner_for_in)

        walk(node.for_in)
        return out

    def _eval_BinaryOperation(self, node, env):
        return self._binop(type(node.operator), self._eval(node.left, env), self._eval(node.right, env), node)

    def _binop(self, op, left, right, node):
        if isinstance(left, TensorData) or isinstance(right, TensorData):
            return torch_params.scaled_data(op, left, right)
        if isinstance(left, Tensor) or isinstance(right, Tensor):
            return self._tensor_binop(op, left, right, node)
        if isinstance(left, Unknown) or isinstance(right, Unknown):
            return Unknown("arithmetic on an unknown value")
        if isinstance(left, _ZeroState) or isinstance(right, _ZeroState):
            raise Unsupported(f"{_code(node)!r}: torch.zeros made in forward is read only as an RNN's initial state")
        fn = _BINOPS.get(op)
        if fn is None:
            raise Unsupported(f"operator in {_code(node)!r}")
        return fn(left, right)

    def _tensor_binop(self, op, left, right, node):
        span = self._span(node)
        if isinstance(left, Tensor) and isinstance(right, Tensor):
            name = _TENSOR_MERGES.get(op)
            if name is None:
                raise Unsupported(f"tensor operator in {_code(node)!r}")
            self._as_map_of(left.value, right.value)
            self._as_map_of(right.value, left.value)
            return self._add(name, [left.value, right.value], {}, span, name)
        tensor, scalar = (left, right) if isinstance(left, Tensor) else (right, left)
        if not isinstance(scalar, (int, float)) or isinstance(scalar, bool):
            raise Unsupported(f"{_code(node)!r}: an operand is neither a tensor nor a number")
        if op is cst.Power or op is cst.Divide and isinstance(right, Tensor):
            # x ** 2, 1.0 / x: a constant operand (a number, never a param)
            return self._tensor_operands(_TENSOR_MERGES[op], [left, right], span)
        if op is cst.Multiply:
            return self._add("rescaling", [tensor.value], {"scale": float(scalar), "offset": 0.0}, span, "scale")
        if op is cst.Divide and isinstance(left, Tensor):
            return self._add("rescaling", [tensor.value], {"scale": 1.0 / float(scalar), "offset": 0.0}, span,
                             "scale")
        if op is cst.Add:
            return self._add("rescaling", [tensor.value], {"scale": 1.0, "offset": float(scalar)}, span, "shift")
        if op is cst.Subtract:
            if isinstance(left, Tensor):
                return self._add("rescaling", [tensor.value], {"scale": 1.0, "offset": -float(scalar)}, span, "shift")
            return self._add("rescaling", [tensor.value], {"scale": -1.0, "offset": float(scalar)}, span, "shift")
        raise Unsupported(f"tensor operator in {_code(node)!r}")

    def _eval_UnaryOperation(self, node, env):
        value = self._eval(node.expression, env)
        if isinstance(node.operator, cst.Minus):
            if isinstance(value, Tensor):
                return self._add("rescaling", [value.value], {"scale": -1.0, "offset": 0.0}, self._span(node), "neg")
            return -value
        if isinstance(node.operator, cst.Plus):
            return value
        if isinstance(node.operator, cst.Not):
            return Unknown() if isinstance(value, Unknown) else not value
        raise Unsupported(f"operator in {_code(node)!r}")

    def _eval_BooleanOperation(self, node, env):
        left = self._eval(node.left, env)
        if isinstance(left, Unknown):
            return left
        if isinstance(node.operator, cst.And):
            return self._eval(node.right, env) if left else left
        return left if left else self._eval(node.right, env)

    def _eval_Comparison(self, node, env):
        left = self._eval(node.left, env)
        for target in node.comparisons:
            right = self._eval(target.comparator, env)
            kind = _TENSOR_COMPARISONS.get(type(target.operator))
            if (isinstance(left, Tensor) or isinstance(right, Tensor)) and kind and len(node.comparisons) == 1:
                return self._tensor_operands(kind, [left, right], self._span(node))
            if isinstance(left, (Unknown, Tensor)) or isinstance(right, (Unknown, Tensor)):
                return Unknown("comparison")
            if not _CMPOPS[type(target.operator)](left, right):
                return False
            left = right
        return True

    def _eval_IfExp(self, node, env):
        mode = _training_test(node.test)
        if mode is not None:  # ``a if self.training else b``: both, selected by the mode
            branches = [self._eval(node.body, env), self._eval(node.orelse, env)]
            train, infer = branches if mode else branches[::-1]
            return self._join_training(train, infer, self._span(node), "select")
        test = self._eval(node.test, env)
        if isinstance(test, (Unknown, Tensor)):
            raise Unsupported(f"the condition {_code(node.test)!r} is not known statically")
        return self._eval(node.body if test else node.orelse, env)

    def _eval_Subscript(self, node, env):
        obj = self._eval(node.value, env)
        if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
            index = self._eval(node.slice[0].slice.value, env)
        else:
            index = tuple(self._slice(s.slice, env) for s in node.slice)
            if len(index) == 1:
                index = index[0]
        if isinstance(obj, (LayerParam, Bound)) and self.init_calls is not None:
            # initialisation code drawing part of a weight (``bias_ih_l0[32:64]``): not
            # reproduced (reported with the rest of the init code), while what it draws for
            # whole weights still is
            return LayerParam(obj.mod, obj.name, obj.shape, part=True) if isinstance(obj, LayerParam) else obj
        if isinstance(obj, Mod) and obj.kind in ("sequential", "module_list"):
            if isinstance(index, slice):
                raise Unsupported("slicing a module container is not supported")
            return obj.items[index]
        if isinstance(obj, Mod) and obj.kind == "module_dict":
            return obj.items[index]
        if isinstance(obj, RNNStates):
            if isinstance(index, tuple) and index and all(i == slice(None) for i in index[1:]):
                index = index[0]  # h_n[-1, :, :] is h_n[-1]
            if isinstance(index, int) and not isinstance(index, bool):
                return Tensor(obj.values[index])
            raise Unsupported(f"{_code(node)!r}: index the stacked RNN states with one integer")
        if isinstance(obj, Shape):
            if index == 0:
                return BatchDim()
            return obj.value.shape[index]
        if isinstance(obj, Tensor):
            return self._tensor_index(obj, index, node)
        if isinstance(obj, Unknown):
            return obj
        return obj[index]

    def _slice(self, s, env):
        if isinstance(s, cst.Index):
            return self._eval(s.value, env)
        return slice(*(None if part is None else self._eval(part, env) for part in (s.lower, s.upper, s.step)))

    def _tensor_index(self, t: Tensor, index, node):
        """``seq[:, -1]`` of a forward RNN's sequence output is its final state; slices of a
        feature map's spatial axes (``x[:, :, 1:-1, :-2]``) are a crop."""
        v = t.value
        prod = v.producer
        crop = self._crop_of(v, index)
        if crop is not None:
            return self._add(f"crop{len(crop)}d", [v], {"cropping": crop}, self._span(node), "crop")
        last_step = index in ((slice(None), -1), (slice(None), -1, slice(None)))
        if last_step and prod is not None and prod.op in ("lstm", "gru", "simple_rnn") and v is prod.outputs[0] \
                and prod.attrs["return_state"]:
            return Tensor(prod.outputs[1])
        return self._subscript(v, index, node)

    def _subscript(self, v: Value, index, node) -> Tensor:
        """``x[..., :16]``, ``x[:, 0]``, ``x[:, 1:3, None]``: static slices, int indices and new
        axes become ``slice``/``take``/``expand_dims`` nodes (the same reading as Keras')."""
        span = self._span(node)
        what = f"tensor indexing {_code(node)!r}"

        class _Adapter:
            @staticmethod
            def add(op, inputs, attrs, hint, n_out=1):
                # (``slice`` would shadow the builtin in the printed code)
                out = self._add(op, inputs, attrs, span, _INDEX_HINTS.get(hint, hint), n_out)
                return [t.value for t in (out if isinstance(out, list) else [out])]

        try:
            return Tensor(subscript(_Adapter, v, index, what))
        except KerasUnsupported as exc:
            raise Unsupported(str(exc)) from None

    def _crop_of(self, v: Value, index):
        if not isinstance(index, tuple) or not is_channels_first(v.layout) or len(index) > len(v.shape):
            return None
        index = index + (slice(None),) * (len(v.shape) - len(index))
        if not all(isinstance(s, slice) and s.step in (None, 1) for s in index):
            return None
        if index[0] != slice(None) or index[1] != slice(None):
            return None
        pairs = []
        for s, size in zip(index[2:], v.shape[2:]):
            lo = s.start or 0
            hi = size if s.stop is None else s.stop
            if not isinstance(lo, int) or not isinstance(hi, int) or size is None:
                return None
            lo = lo + size if lo < 0 else lo
            hi = hi + size if hi < 0 else hi
            if not 0 <= lo < hi <= size:
                return None
            pairs.append((lo, size - hi))
        return tuple(pairs)

    def _eval_Ellipsis(self, node, env):
        return Ellipsis

    def _eval_Call(self, node, env):
        func = self._eval(node.func, env)
        args, kwargs = [], {}
        for arg in node.args:
            value = self._eval(arg.value, env)
            if arg.keyword is not None:
                kwargs[arg.keyword.value] = value
            elif arg.star == "*":
                args.extend(self._iterate(value, arg.value))
            elif arg.star == "**":
                kwargs.update(value)
            else:
                args.append(value)
        return self._call(func, args, kwargs, node)

    def _call(self, func, args, kwargs, node):
        span = self._span(node)
        if isinstance(func, Ref):
            return self._call_api(func.path, args, kwargs, node)
        if isinstance(func, ClassRef):
            if not func.is_module:
                return self._plain_object(func, node)
            return self._instantiate(func, args, kwargs, node)
        if isinstance(func, FunctionRef):
            return self._call_function(func, args, kwargs, node)
        if func is _ISINSTANCE:
            return self._isinstance(*args)
        if func is _TYPE:
            if len(args) != 1 or kwargs or not isinstance(args[0], Mod):
                raise Unsupported("type(...) of something that is not a module")
            return _ClassOf(args[0])
        if isinstance(func, Mod):
            return self._call_module(func, args, kwargs, span)
        if isinstance(func, Bound):
            return self._call_method(func, args, kwargs, node)
        if callable(func) and func in _SAFE_BUILTINS.values():
            if any(isinstance(a, (Unknown, Tensor)) for a in args):
                return Unknown("builtin on an unknown value")
            if func is len and args and isinstance(args[0], Mod):
                return len(args[0].items)
            # enumerate(self.blocks), zip(self.a, self.b), list(self.layers): a container's modules
            args = [self._iterate(a, node) if isinstance(a, Mod) and a.kind != "leaf" and a.kind != "user" else a
                    for a in args]
            return func(*args, **kwargs)
        if isinstance(func, Unknown):
            why = f" ({func.reason})" if func.reason.startswith("an instance of") else ""
            raise Unsupported(f"{_code(node.func)!r} is not known statically{why}")
        raise Unsupported(f"call {_code(node)!r} is not supported")

    def _call_api(self, path: str, args, kwargs, node):
        span = self._span(node)
        if path == "builtins.super":
            return _Super()
        if path == "collections.OrderedDict":  # nn.Sequential(OrderedDict([(name, module), ...]))
            if any(isinstance(a, (Unknown, Tensor)) for a in list(args) + list(kwargs.values())):
                return Unknown("OrderedDict of an unknown value")
            return dict(*args, **kwargs)
        api = torch_api(path)
        if api is not None and api.startswith("nn.") and "." not in api[3:]:
            return self._construct(api[3:], args, kwargs, span)
        if path in ("torch.nn.init", ) or path.startswith("torch.nn.init."):
            return self._nn_init(path.rsplit(".", 1)[1], args, kwargs)
        if path in _TENSOR_MAKERS and self.graph is None:
            return torch_params.tensor_data(path, args, kwargs)
        if path == "torch.zeros" and set(kwargs) <= {"device", "dtype", "requires_grad"}:
            return _ZeroState()  # (an RNN's initial state; anything else refuses it)
        if path == "torch.nn.functional.linear":
            return self._linear(args, kwargs, span)
        fname = _FUNCTION_ALIASES.get(path) or (api[2:] if api is not None and api.startswith("F.") else None)
        if fname is not None:
            return self._functional(fname, args, kwargs, span)
        if path in _MERGE_FUNCTIONS:
            return self._add(_MERGE_FUNCTIONS[path], _tensor_values(path, args[:2]), {}, span, _MERGE_FUNCTIONS[path])
        if path == "torch.cat" or path == "torch.concat":
            tensors = args[0] if args else kwargs["tensors"]
            _tensor_values(path, tensors)
            dim = args[1] if len(args) > 1 else kwargs.get("dim", 0)
            if dim == 0:
                raise Unsupported("torch.cat along the batch axis is not supported")
            return self._add("concat", [t.value for t in tensors], {"axis": dim}, span, "concat")
        if path == "torch.flatten":
            return self._tensor_method(args[0], "flatten", args[1:], kwargs, node)
        if path in ("torch.amax", "torch.max") and len(args) + len(kwargs) >= 2:
            return self._tensor_method(args[0], path.split(".")[1], args[1:], kwargs, node)
        if path in ("torch.chunk", "torch.split", "torch.norm", "torch.std", "torch.var") and args:
            return self._tensor_method(args[0], path.split(".")[1], args[1:], kwargs, node)
        if path in ("torch.mean", "torch.permute", "torch.transpose", "torch.reshape", "torch.squeeze",
                    "torch.unsqueeze", "torch.sum", "torch.amax", "torch.amin", "torch.clamp", "torch.clip") or \
                path.startswith("torch.") and path[6:] in _UNARY_FUNCTIONS:
            return self._tensor_method(args[0], path.split(".")[1], args[1:], kwargs, node)
        if path in ("torch.matmul", "torch.bmm", "torch.div", "torch.true_divide", "torch.pow"):
            x, y = (list(args) + [kwargs.get("other", kwargs.get("exponent"))])[:2]
            if not isinstance(x, Tensor):
                raise Unsupported(f"{path}: the first argument is not a tensor")
            op = {"torch.matmul": cst.MatrixMultiply, "torch.bmm": cst.MatrixMultiply, "torch.pow": cst.Power}.get(
                path, cst.Divide)
            return self._tensor_binop(op, x, y, node)
        if path == "torch.randn_like":
            x = args[0] if args else kwargs.get("input")
            if not isinstance(x, Tensor) or set(kwargs) - {"input"}:
                raise Unsupported("torch.randn_like: only of a tensor, without dtype/device arguments")
            return self._add("random_normal", [x.value], {"shape": tuple(x.value.shape[1:])}, span, "noise")
        if path == "torch.where" and len(args) == 3:
            return self._tensor_operands("where", args, span)
        if path == "torch.stack":
            tensors = args[0] if args else kwargs["tensors"]
            _tensor_values(path, tensors)
            dim = args[1] if len(args) > 1 else kwargs.get("dim", 0)
            if dim % (len(tensors[0].value.shape) + 1) == 0:
                raise Unsupported("torch.stack along the batch axis is not supported")
            return self._add("stack", [t.value for t in tensors], {"axis": dim}, span, "stack")
        if path in _FILLED_LIKE:
            return self._filled_like(path, list(args), dict(kwargs), span)
        if path == "torch.einsum":
            operands = list(args[1:2][0]) if len(args) == 2 and isinstance(args[1], (list, tuple)) else list(args[1:])
            if kwargs or not args or not isinstance(args[0], str) or not operands or \
                    not all(isinstance(t, Tensor) for t in operands):
                raise Unsupported("torch.einsum: give the equation and the operand tensors")
            problem = einsum_problem(args[0], [t.value.shape for t in operands])
            if problem:
                raise Unsupported(f"torch.einsum: {problem}")
            return self._add("einsum", [t.value for t in operands], {"equation": args[0].replace(" ", "")}, span,
                             "einsum")
        if path.split(".")[0] == "torch":
            raise Unsupported(f"{path} is not supported yet")
        if path.split(".")[0] in ("math",):
            import math as _math

            fn = getattr(_math, path.split(".", 1)[1], None)
            if fn is not None and not any(isinstance(a, (Unknown, Tensor)) for a in args):
                return fn(*args)
        return Unknown(path)

    def _construct(self, cls_name: str, args, kwargs, span: Span) -> Any:
        if cls_name == "Sequential":
            if len(args) == 1 and isinstance(args[0], dict):
                return Mod("module_dict", span, items=dict(args[0]), cls_name="Sequential")
            items = list(args)
            if not all(isinstance(m, Mod) for m in items):
                raise Unsupported("nn.Sequential of something that is not a module")
            return Mod("sequential", span, items=items, cls_name="Sequential")
        if cls_name == "ModuleList":
            items = list(args[0]) if args else list(kwargs.get("modules") or [])
            return Mod("module_list", span, items=items, cls_name="ModuleList")
        if cls_name == "ModuleDict":
            return Mod("module_dict", span, items=dict(args[0]) if args else {}, cls_name="ModuleDict")
        if cls_name == "Parameter":
            data = args[0] if args else kwargs.get("data")
            trainable = args[1] if len(args) > 1 else kwargs.get("requires_grad", True)
            if not isinstance(data, TensorData) or not isinstance(trainable, bool):
                raise Unsupported("nn.Parameter of a tensor whose shape or requires_grad is not known statically")
            return ParamObj(data.shape, span, init=data.init, trainable=trainable)
        if any(isinstance(a, (Unknown, Tensor)) for a in list(args) + list(kwargs.values())):
            bad = next(a for a in list(args) + list(kwargs.values()) if isinstance(a, (Unknown, Tensor)))
            raise Unsupported(f"nn.{cls_name}: an argument is not known statically ({getattr(bad, 'reason', '')})")
        layer = tm.recognize(cls_name, list(args), dict(kwargs))
        return Mod("leaf", span, layer=layer, cls_name=cls_name)

    def _plain_object(self, cls: ClassRef, node) -> Unknown:
        """An instance of a class that is not an ``nn.Module`` (a metric tracker kept for a
        ``train_step``): it has no weights and no place in the model's graph. It is not
        interpreted; ``forward`` reading it is refused where it does."""
        name = cls.node.name.value
        if self.graph is not None:
            raise Unsupported(f"class {name} is not an nn.Module (used in forward)")
        self.program.warn(self._span(node), f"{name}(...) is not an nn.Module: not part of the model's layers "
                                            "(the code using it is translated with the program, or stubbed)",
                          self.lines[self._span(node).line - 1].strip())
        return Unknown(f"an instance of {name}, which is not an nn.Module")

    def _instantiate(self, cls: ClassRef, args, kwargs, node) -> Mod:
        mod = Mod("user", self._span(node), cls=cls, cls_name=cls.node.name.value)
        init = cls.method("__init__")
        if init is not None:
            self._run_method(mod, init, args, kwargs, node)
        return mod

    def _run_method(self, obj: Mod, fn: cst.FunctionDef, args, kwargs, node):
        self.ran_methods.add(id(fn))
        env = Env(self.globals)
        params = fn.params.params
        env.vars[params[0].name.value] = obj
        self._bind_params(env, params[1:], args, kwargs, fn)
        self.depth += 1
        if self.depth > 40:
            raise Unsupported("recursion too deep")
        try:
            self._exec_block(fn.body.body, env)
        except _Return as ret:
            return ret.value
        finally:
            self.depth -= 1
        return None

    def _bind_params(self, env: Env, params, args, kwargs, fn) -> None:
        if len(args) > len(params):
            raise Unsupported(f"{fn.name.value}: too many arguments")
        for i, p in enumerate(params):
            name = p.name.value
            if i < len(args):
                env.vars[name] = args[i]
            elif name in kwargs:
                env.vars[name] = kwargs[name]
            elif p.default is not None:
                env.vars[name] = self._eval(p.default, self.globals)
            else:
                raise Unsupported(f"{fn.name.value}: missing argument {name}")

    def _call_function(self, fn: FunctionRef, args, kwargs, node):
        if self.init_calls is not None:
            self._init_running.add(fn.node.name.value)
        env = Env(self.globals)
        self._bind_params(env, fn.node.params.params, args, kwargs, fn.node)
        self.depth += 1
        if self.depth > 40:
            raise Unsupported("recursion too deep")
        try:
            self._exec_block(fn.node.body.body, env)
        except _Return as ret:
            return ret.value
        finally:
            self.depth -= 1
        return None

    def _call_method(self, bound: Bound, args, kwargs, node):
        obj, name = bound.obj, bound.name
        if isinstance(obj, _Super):
            if name == "__init__":
                return None
            raise Unsupported(f"super().{name}() is not supported")
        if isinstance(obj, Mod):
            if obj.kind == "user" and name == "__init__":
                return None
            if obj.kind == "user" and name in ("register_buffer", "register_parameter"):
                return self._register(obj, name, args, kwargs, node)
            if obj.kind == "user" and obj.cls.method(name) is not None:
                if obj is self.root_mod and name != "forward" and not kwargs and args and \
                        all(isinstance(a, Tensor) for a in args):
                    self.method_calls.setdefault(name, [a.value for a in args])
                return self._run_method(obj, obj.cls.method(name), args, kwargs, node)
            if obj.kind in ("module_list", "sequential") and name in ("append", "extend", "insert"):
                getattr(obj.items, name)(*args)
                return None
            if obj.kind == "module_dict" and name in ("keys", "values", "items") and not args and not kwargs:
                return list(getattr(obj.items, name)())  # in insertion order, as torch's
            if name == "forward":
                return self._call_module(obj, args, kwargs, self._span(node))
            if name in ("modules", "children", "named_modules", "named_children") and not args and not kwargs:
                walked = list(_walk(obj)) if name in ("modules", "named_modules") else obj.children()
                return [m for _, m in walked] if not name.startswith("named") else walked
            if name == "apply" and len(args) == 1 and not kwargs and self.init_calls is not None:
                # torch applies fn to every submodule, children before their parent
                for _, m in reversed(list(_walk(obj))):
                    self._call(args[0], [m], {}, node)
                return obj
            if name in ("apply", "_init_weights", "init_weights"):
                raise Unsupported(f".{name}(...): custom initialisation is not translated yet")
            raise Unsupported(f"module method .{name}() is not supported")
        if isinstance(obj, LayerParam):
            return self._param_method(obj, name, args, kwargs)
        if isinstance(obj, Tensor):
            return self._tensor_method(obj, name, args, kwargs, node)
        if isinstance(obj, (_ZeroState, _StackedState)):
            return obj
        if isinstance(obj, RNNStates):
            dim = args[0] if args else kwargs.get("dim")
            if name == "squeeze" and dim == 0 and len(obj.values) == 1:
                return Tensor(obj.values[0])
            raise Unsupported(f"stacked RNN states .{name}(): index them (h_n[-1]) instead")
        if isinstance(obj, (list, dict, str, tuple)) or isinstance(obj, torch_params.ParamSet) and not kwargs:
            return getattr(obj, name)(*args, **kwargs)
        raise Unsupported(f"method .{name}() is not supported")

    # -- a module's own parameters and buffers ---------------------------------------------
    def _register(self, obj: Mod, method: str, args, kwargs, node):
        """``self.register_buffer(name, tensor)`` (a non-trainable weight) and
        ``self.register_parameter(name, param_or_None)``."""
        name = args[0] if args else kwargs.get("name")
        key = "tensor" if method == "register_buffer" else "param"
        value = args[1] if len(args) > 1 else kwargs.get(key)
        if not isinstance(name, str):
            raise Unsupported(f"{method}: the name must be known statically")
        if method == "register_parameter" or value is None:
            if value is not None and not isinstance(value, ParamObj):
                raise Unsupported(f"{method}({name!r}, ...): not an nn.Parameter")
            obj.attrs[name] = value
            return None
        persistent = args[2] if len(args) > 2 else kwargs.get("persistent", True)
        if persistent is not True:
            raise Unsupported(f"register_buffer({name!r}, persistent=False): a buffer outside the state_dict "
                              "has no Keras counterpart (every Keras weight is saved)")
        if not isinstance(value, TensorData):
            raise Unsupported(f"register_buffer({name!r}, ...): the tensor's shape is not known statically")
        obj.attrs[name] = ParamObj(value.shape, self._span(node), init=value.init, trainable=False, buffer=True)
        return None

    def _read_inits(self, stmt, env: Env) -> bool:
        """Run an initialisation statement (``self.reset_parameters()``), recording what its
        ``nn.init`` calls draw for the module's own parameters. False when it did anything
        else (initialised a submodule's weights, froze a weight, ...), which is not translated."""
        self.init_calls, self._init_running = [], set()
        ok = False
        try:
            self._exec_stmt(stmt, env)
            ok = not self.init_calls
        except (Unsupported, FrontendError, TypeError, KeyError, ValueError, IndexError, AttributeError):
            pass  # code the interpreter cannot follow: not translated, as before
        finally:
            self.init_calls = None
            for name in self._init_running:
                self.init_functions[name] = self.init_functions.get(name, True) and ok
        return ok

    def _nn_init(self, fn: str, args, kwargs):
        target = args[0] if args else kwargs.get("tensor")
        if self.init_calls is None:
            raise Unsupported(f"nn.init.{fn}: custom initialisation is not translated yet")
        if isinstance(target, ParamObj):
            target.init = torch_params.init_of(fn, target.shape, list(args[1:]), dict(kwargs))
            if target.init is None:
                self.init_calls.append(fn)
        elif isinstance(target, LayerParam):
            self._layer_init(target, fn, list(args[1:]), {k: v for k, v in kwargs.items() if k != "tensor"})
        else:
            self.init_calls.append(fn)
        return target

    def _layer_init(self, target: LayerParam, fn: str, args: list, kwargs: dict) -> None:
        """What ``nn.init.<fn>`` draws for a leaf module's weight (its Keras initializer);
        one Keras cannot draw the same way is reported with the rest of the init code."""
        init = None if target.part else torch_params.init_of(fn, target.shape, args, kwargs)
        if init is None or target.name not in tm.KERAS_PARAM.get(target.mod.layer.op, {}):
            self.init_calls.append(fn)
        else:
            target.mod.inits[target.name] = init

    #: in-place tensor methods of initialisation code → the ``nn.init`` function drawing the same
    _INPLACE_INIT = {"normal_": "normal_", "uniform_": "uniform_", "fill_": "constant_", "zero_": "zeros_"}

    def _param_method(self, target: LayerParam, name: str, args, kwargs):
        """``m.weight.data.normal_(0.0, 0.02)``, ``m.bias.data.fill_(0)``, ``.zero_()``."""
        fn = self._INPLACE_INIT.get(name)
        if fn is None or self.init_calls is None:
            raise Unsupported(f"{target.name}.{name}(): not translated")
        kwargs = {{"value": "val", "from": "a", "to": "b"}.get(k, k): v for k, v in kwargs.items()}
        self._layer_init(target, fn, list(args), kwargs)
        return target

    def _isinstance(self, obj, classinfo=None, *rest):
        """``isinstance(m, nn.Conv2d)`` / ``isinstance(m, (nn.Conv2d, MyBlock))`` on modules;
        builtin types on plain values."""
        if rest or classinfo is None:
            raise Unsupported("isinstance takes an object and a class")
        infos = classinfo if isinstance(classinfo, tuple) else (classinfo,)
        for info in infos:
            if isinstance(info, type) and info in _SAFE_BUILTINS.values():
                if isinstance(obj, info) and not isinstance(obj, (Mod, Tensor)):
                    return True
                continue
            if not isinstance(obj, Mod):
                if isinstance(info, (Ref, ClassRef)):
                    continue  # a number or string is no module
                raise Unsupported("isinstance: the object or the class is not known statically")
            if isinstance(info, Ref):
                api = torch_api(info.path) or info.path
                short = api.split(".")[-1]
                if obj.kind != "user" and short == (obj.cls_name or ""):
                    return True
                if short == "Module" and api.startswith(("nn.", "torch.nn.")):
                    return True
            elif isinstance(info, ClassRef):
                cls = obj.cls if obj.kind == "user" else None
                while cls is not None:
                    if cls.node is info.node:
                        return True
                    cls = cls.base
            else:
                raise Unsupported("isinstance: the class is not known statically")
        return False

    def _variable(self, p: ParamObj, node, owner: "Mod | None" = None) -> Tensor:
        """A module's own parameter or buffer read in ``forward``: a ``variable`` node (one
        per read; the reads of one parameter share its Keras layer, named after its key).
        ``owner``: a module that is nothing but this weight (its forward returns it, the
        torch side of Keras' ``ModelWeight``): the layer is named after the module, as the
        Keras weight it stands for was (not ``<module>_<key>``)."""
        key = owner.path if owner is not None and owner.path else p.path
        name = (key or "weight").replace(".", "_")
        span = self._span(node)
        if p.init is None and f"init:{name}" not in self.warned:
            self.warned.add(f"init:{name}")
            self.program.warn(p.span, f"{p.path}: torch's initial value is not reproduced (Keras starts it at "
                                      "zeros; a converted checkpoint is unaffected)")
        out = self._add("variable", [], {"shape": tuple(p.shape), "trainable": p.trainable}, span, name, name=name)
        n = out.value.producer
        n.meta["layer"] = self.layer_tokens.setdefault(name, LayerToken(p.span))
        n.meta["torch_path"] = p.path
        n.meta["torch_init"] = p.init
        n.meta["torch_buffer"] = p.buffer
        n.source_name = name
        return out

    def _linear(self, args, kwargs, span: Span):
        """``F.linear(x, self.weight, self.bias)`` over a module's own parameters: a Dense
        layer holding them (named after the module; its checkpoint keys are the parameters')."""
        x = args[0] if args else kwargs.get("input")
        w = args[1] if len(args) > 1 else kwargs.get("weight")
        b = args[2] if len(args) > 2 else kwargs.get("bias")
        params = [t.value.producer for t in (w, b) if isinstance(t, Tensor)]
        if not isinstance(x, Tensor) or not isinstance(w, Tensor) or not (b is None or isinstance(b, Tensor)) or \
                any(p is None or p.op != "variable" for p in params):
            raise Unsupported("F.linear: only the module's own nn.Parameters as weight and bias are translated "
                              "(a computed weight is not)")
        wp, bp = params[0], (params[1] if b is not None else None)
        shape = tuple(wp.attrs["shape"])
        if len(shape) != 2 or x.value.shape[-1] != shape[1]:
            raise FrontendError(f"F.linear: weight {shape} on a tensor of shape {x.value.shape}", span)
        if bp is not None and tuple(bp.attrs["shape"]) != (shape[0],):
            raise FrontendError(f"F.linear: bias {tuple(bp.attrs['shape'])} for a weight {shape}", span)
        if not all(p.attrs["trainable"] for p in params):
            raise Unsupported("F.linear with a frozen weight or bias: a Keras Dense trains both")
        path = wp.meta["torch_path"]
        owner = path.rsplit(".", 1)[0] if "." in path else ""
        name = self.linear_names.get(path)
        if name is None:
            name = self.linear_names[path] = self._fresh(owner.replace(".", "_") or "linear")
        out = self._add("dense", [x.value], {"units": shape[0], "use_bias": bp is not None}, span, "dense", name=name)
        n = out.value.producer
        n.meta["layer"] = self.layer_tokens.setdefault(name, LayerToken(wp.meta["layer"].span))
        n.meta["torch_path"] = owner
        n.meta["torch_keys"] = {"weight": path, **({"bias": bp.meta["torch_path"]} if bp is not None else {})}
        n.source_name = name
        inits = {"kernel": wp.meta["torch_init"], "bias": bp.meta["torch_init"] if bp else None}
        if not torch_params.is_linear_default(inits["kernel"], inits["bias"], shape[1], bp is not None):
            # drawn as torch drew them (the kernel's bounds do not depend on its layout)
            n.meta["param_inits"] = inits
        return out

    # -- IR construction ------------------------------------------------------------------
    def _add(self, op: str, inputs: list[Value], attrs: dict, span: Span, hint: str,
             n_out: int = 1, name: str | None = None, mod: Mod | None = None) -> Any:
        graph = self.graph
        if graph is None:
            raise Unsupported("tensor operations outside forward")
        for v in inputs:
            if not isinstance(v, Value):
                raise Unsupported(f"{op}: an input is not a tensor")
        if inputs:
            self._as_feature_map(op, inputs[0])
        try:
            node = graph.add_node(op, name or self._fresh(hint), inputs, n_out, attrs=attrs, span=span)
        except TypeError as exc:
            raise Unsupported(f"{op}: {exc}") from None
        if mod is not None:
            if mod.inits and mod.layer is not None and op == mod.layer.op:
                names = tm.KERAS_PARAM.get(op, {})
                node.meta["param_inits"] = {names[k]: v for k, v in mod.inits.items() if k in names}
            # one token per Keras layer: nodes of a torch module called twice share it,
            # the layers a multi-layer nn.LSTM expands into do not
            node.meta["layer"] = self.layer_tokens.setdefault(node.name, LayerToken(mod.span))
            node.meta["torch_path"] = mod.path
            node.source_name = node.name
            if id(mod) in self.frozen_bias_hh:
                node.meta["bias_hh_frozen"] = True
        node.meta["call_span"] = span
        try:
            infer_node(node)
        except (IRError, TypeError, ValueError, IndexError, ZeroDivisionError) as exc:
            raise FrontendError(f"{op}: {exc}", span) from None
        if n_out == 1:
            return Tensor(node.outputs[0])
        return [Tensor(v) for v in node.outputs]

    def _call_module(self, mod: Mod, args, kwargs, span: Span):
        if mod.kind == "user":
            # (a submodule's first inputs: a model of its own is read on them, torch_parts)
            self.part_inputs.setdefault(id(mod), [a.value for a in args if isinstance(a, Tensor)])
            forward = mod.cls.method("forward")
            if forward is None:
                raise Unsupported(f"{mod.cls_name} has no forward")
            return self._run_method(mod, forward, args, kwargs, forward)
        if mod.kind == "sequential" or (mod.kind == "module_dict" and mod.cls_name == "Sequential"):
            x = args[0]
            for m in (mod.items.values() if isinstance(mod.items, dict) else mod.items):
                x = self._call_module(m, [x], {}, span)
            return x
        if mod.kind in ("module_list", "module_dict"):
            raise Unsupported(f"nn.{mod.cls_name} is not callable; iterate over it")
        states = []
        if mod.layer is not None and mod.layer.kind == "rnn" and \
                not all(_zero_state(a) for a in list(args[1:]) + list(kwargs.values())):
            states = self._initial_states(mod, args, kwargs)
            if not isinstance(args[0], (Tensor, _Reversed)):
                raise Unsupported(f"nn.{mod.cls_name} called on something that is not a tensor")
            x = args[0]
            return self._apply_rnn(mod.layer, mod, x.tensor.value if isinstance(x, _Reversed) else x.value, span,
                                   backwards=isinstance(x, _Reversed), states=states)
        if args and isinstance(args[0], _Reversed):
            if mod.layer is None or mod.layer.kind != "rnn" or mod.layer.extra["bidirectional"]:
                raise Unsupported(f"nn.{mod.cls_name} on a flipped sequence: only a one-way RNN reads it")
            return self._apply_rnn(mod.layer, mod, args[0].tensor.value, span, backwards=True)
        if mod.layer is not None and mod.layer.kind == "attention":
            return self._apply_attention(mod, args, kwargs, span)
        if not args or not all(isinstance(a, Tensor) for a in args[:1]):
            raise Unsupported(f"nn.{mod.cls_name} called on something that is not a tensor")
        return self._apply_layer(mod.layer, mod, [a.value for a in args if isinstance(a, Tensor)], span)

    @staticmethod
    def _initial_states(mod: Mod, args, kwargs) -> list[Value]:
        """``rnn(x, hx)`` / ``rnn(x, (h0, c0))`` with states other than zeros: the (N, H) values
        of Keras' ``initial_state`` (h, and c for an LSTM). A state is torch's (1, N, H) stack:
        ``h.unsqueeze(0)``, ``h.view(1, N, H)`` or another one-layer RNN's ``h_n``."""
        what = f"nn.{mod.cls_name}"
        if set(kwargs) - {"hx"} or len(args) + len(kwargs) != 2:
            raise Unsupported(f"{what}: called with arguments other than (input, hx)")
        if mod.layer.extra["num_layers"] != 1 or mod.layer.extra["bidirectional"]:
            raise Unsupported(f"{what} with num_layers > 1 or bidirectional=True called with an initial state "
                              "other than zeros is not translated yet")
        hx = args[1] if len(args) > 1 else kwargs["hx"]
        lstm = mod.layer.op == "lstm"
        if lstm != isinstance(hx, (tuple, list)) or lstm and len(hx) != 2:
            raise Unsupported(f"{what}: the initial state is {'a pair (h0, c0)' if lstm else 'one tensor h0'}")
        values = []
        for state in (hx if lstm else [hx]):
            if isinstance(state, RNNStates) and len(state.values) == 1:
                values.append(state.values[0])  # another one-layer RNN's h_n
            elif isinstance(state, _StackedState):
                values.append(state.tensor.value)
            else:
                raise Unsupported(f"{what}: an initial state is read as torch's (1, N, H) stack of a (N, H) "
                                  "tensor (h.unsqueeze(0), h.view(1, N, H), a one-layer RNN's h_n); zeros "
                                  "mixed with a given state, or other forms, are not translated yet")
        return values

    def _apply_attention(self, mod: Mod, args, kwargs, span: Span):
        """``attn(query, key, value)`` → Keras' (query, value, key=...) order; returns torch's
        (output, weights) pair (the weights only when need_weights=False, as None)."""
        query, key, value, need_weights = tm.bind_multihead_call(mod.layer, args, kwargs)
        if not all(isinstance(t, Tensor) for t in (query, key, value)):
            raise Unsupported(f"nn.{mod.cls_name} called on something that is not a tensor")
        why = tm.check_multihead_inputs(mod.layer, query.value.shape, key.value.shape, value.value.shape)
        if why:
            raise FrontendError(why, span)
        inputs, roles = [query.value, value.value], ()
        if key.value is not value.value:
            inputs, roles = inputs + [key.value], ("key",)
        attrs = {**mod.layer.attrs, "extra_inputs": roles}
        out = self._add("multi_head_attention", inputs, attrs, span, "attention", name=self._layer_name(mod), mod=mod)
        return (out, Unknown("attention weights (need_weights=True) are not translated") if need_weights else None)

    def _apply_layer(self, layer: TorchLayer, mod: Mod | None, inputs: list[Value], span: Span):
        x = inputs[0]
        for w in layer.warnings:
            if w not in self.warned:
                self.warned.add(w)
                self.program.warn(span, w)
        name = self._layer_name(mod) if mod is not None else None
        if layer.kind == "rnn":
            return self._apply_rnn(layer, mod, x, span)
        op, attrs = layer.op, dict(layer.attrs)
        if op.startswith("upsample") and layer.extra.get("rank_from_input"):
            rank = len(x.shape) - 2
            op = f"upsample{rank}d"
            attrs["size"] = (attrs["size"][0],) * rank
        if layer.extra.get("count_include_pad") and attrs["padding"] != "valid":
            pad_name = f"{name}_pad" if name else self._fresh("pad")
            x = self._add(f"pad{len(attrs['pool_size'])}d", [x], {"pads": attrs["padding"]}, span, "pad",
                          name=pad_name).value
            attrs["padding"] = "valid"
        self._as_feature_map(op, x)
        if layer.in_features is not None and op != "dense":
            channels = x.shape[1] if is_channels_first(x.layout) or len(x.shape) == 2 else x.shape[-1]
            if channels is not None and channels != layer.in_features:
                raise FrontendError(f"nn.{mod.cls_name if mod else op} expects {layer.in_features} input "
                                    f"channels, the tensor has {channels} (shape {x.shape})", span)
        if op == "dense" and layer.in_features is not None and x.shape[-1] != layer.in_features:
            raise FrontendError(f"nn.Linear expects {layer.in_features} input features, the tensor has "
                                f"{x.shape[-1]} (shape {x.shape})", span)
        if op in ("batch_norm",) and len(x.shape) == 2:
            attrs["axis"] = 1
        if op == "softmax" or op == "log_softmax" or op == "concat":
            pass
        if op == "layer_norm":
            shape = layer.extra["normalized_shape"]
            if tuple(x.shape[-len(shape):]) != tuple(shape):
                raise FrontendError(f"nn.LayerNorm{shape}: the tensor's trailing shape is {x.shape}", span)
        if op == "flatten" and len(x.shape) == 2:
            return Tensor(x)
        if op == "prelu":
            n, rank = layer.extra["num_parameters"], len(x.shape)
            if n == 1:  # one slope for every element: every non-batch axis shared
                attrs["shared_axes"] = tuple(range(1, rank))
            elif n == x.shape[1] and n > 1:
                attrs["shared_axes"] = tuple(range(2, rank)) or None
            else:
                raise Unsupported(f"nn.PReLU(num_parameters={n}) on a {x.shape} tensor is not supported")
        out = self._add(op, [x], attrs, span, op, name=name, mod=mod)
        if op == "embedding" and layer.extra.get("padding_idx") is not None:
            out.value.producer.meta["padding_idx"] = layer.extra["padding_idx"]
        if op == "prelu":
            out.value.producer.meta["alpha_init"] = layer.extra["init"]
        if op == "reshape":
            out.value.producer.meta["out_layout"] = self._reshape_layout(len(out.value.shape))
            infer_node(out.value.producer)
        return out

    def _apply_rnn(self, layer: TorchLayer, mod: Mod, x: Value, span: Span, backwards: bool = False,
                   states: list[Value] | None = None):
        n_layers, bidi, dropout = layer.extra["num_layers"], layer.extra["bidirectional"], layer.extra["dropout"]
        if layer.in_features is not None and x.shape[-1] != layer.in_features:
            raise FrontendError(f"nn.{mod.cls_name} expects input_size {layer.in_features}, the tensor has "
                                f"{x.shape[-1]} features (shape {x.shape})", span)
        base = self._layer_name(mod)
        states_h, states_c = [], []
        op = layer.op
        inner = ops_table.get(op).complete_attrs(layer.attrs)
        for i in range(n_layers):
            name = base if n_layers == 1 else f"{base}_l{i}"
            if bidi:
                outs = self._add("bidirectional", [x], {"merge_mode": "concat", "layer": {"op": op, "attrs": inner}},
                                 span, op, n_out=1 + (4 if op == "lstm" else 2), name=name, mod=mod)
                per = 2 if op == "lstm" else 1
                fwd, bwd = outs[1:1 + per], outs[1 + per:]
                states_h += [fwd[0].value, bwd[0].value]
                if op == "lstm":
                    states_c += [fwd[1].value, bwd[1].value]
            else:
                attrs = {**inner, "go_backwards": backwards and i == 0, "initial_state": bool(states)}
                outs = self._add(op, [x] + (states or []), attrs, span, op, n_out=3 if op == "lstm" else 2,
                                 name=name, mod=mod)
                states_h.append(outs[1].value)
                if op == "lstm":
                    states_c.append(outs[2].value)
            node = outs[0].value.producer
            node.meta["torch_layer_index"] = i
            x = outs[0].value
            if dropout and i < n_layers - 1:
                x = self._add("dropout", [x], {"rate": dropout}, span, "dropout", name=f"{base}_dropout{i}").value
        seq = Tensor(x)
        if op == "lstm":
            return (seq, (RNNStates(states_h), RNNStates(states_c)))
        return (seq, RNNStates(states_h))

    def _as_feature_map(self, op: str, x: Value) -> None:
        """torch's convolutions and pools read axis 1 as channels: a value they read is a
        channels-first map. A graph input or a reshape/permute result is tagged so (its tag
        was a guess); any other value tagged otherwise cannot be read that way."""
        if ops_table.get(op).layout != ops_table.IMPLICIT or len(x.shape) < 3 or is_channels_first(x.layout):
            return
        target = CHANNELS_FIRST[len(x.shape)]
        if x.producer is None:
            x.layout = target
        elif x.producer.op in ("transpose", "reshape"):
            x.producer.meta["out_layout"] = target
            infer_node(x.producer)
        else:
            raise Unsupported(f"{op} reads axis 1 of a {x.layout} tensor as channels; permute it first")

    def _as_map_of(self, x: Value, other: Value) -> None:
        """A reshape result (``y.view(b, c, 1, 1)``, ``y.unsqueeze(-1).unsqueeze(-1)``,
        ``y[:, :, None, None]``, its tag a guess) broadcast against a channels-first map of its rank is a channels-first
        map too (torch has no other layout): a squeeze-and-excitation gate."""
        if len(x.shape) >= 3 and len(x.shape) == len(other.shape) and is_channels_first(other.layout) and \
                x.layout != other.layout and x.producer is not None and x.producer.op in ("reshape", "expand_dims"):
            x.producer.meta["out_layout"] = other.layout
            infer_node(x.producer)

    def _reshape_layout(self, rank: int) -> str | None:
        """A reshape in torch produces a channels-first map (rank 3 to 5)."""
        return CHANNELS_FIRST.get(rank)

    def _spread(self, t: Tensor, name: str, args, kwargs, span: Span) -> Tensor:
        """``x.var(dim, keepdim=True)``, ``x.std(1, unbiased=False)``: the mean square deviation
        over static non-batch dims, divided by n - correction (torch's default correction is 1)."""
        x = t.value
        dim = args[0] if args else kwargs.get("dim")
        unbiased = args[1] if len(args) > 1 else kwargs.get("unbiased", True)
        keep = args[2] if len(args) > 2 else kwargs.get("keepdim", False)
        correction = kwargs.get("correction", 1 if unbiased else 0)
        if set(kwargs) - {"dim", "unbiased", "keepdim", "correction"} or not isinstance(unbiased, bool) or \
                isinstance(correction, bool) or not isinstance(correction, (int, float)):
            raise Unsupported(f".{name}(): dim, keepdim and unbiased/correction known statically only")
        mean = self._reduce(t, "mean", [dim, True], {}, span)
        dims = {d % len(x.shape) for d in ((dim,) if isinstance(dim, int) else dim)}
        count = math.prod(x.shape[d] for d in dims)
        if count - correction <= 0:
            raise Unsupported(f".{name}() over {count} element(s) with correction {correction}")
        deviation = self._add("subtract", [x, mean.value], {}, span, "deviation")
        squares = self._add("square", [deviation.value], {}, span, "square")
        total = self._reduce(squares, "sum", [dim, keep], {}, span)
        var = self._add("rescaling", [total.value], {"scale": 1.0 / (count - correction), "offset": 0.0}, span,
                        "var")
        return var if name == "var" else self._add("sqrt", [var.value], {}, span, "std")

    def _l2_norm(self, t, name: str, args, kwargs, span: Span) -> Tensor:
        """``x.norm(dim=1, keepdim=True)``, ``torch.norm(x, 2, -1)`` (torch's order: p, dim,
        keepdim): the 2-norm over static non-batch dims, the root of the sum of squares."""
        p = args[0] if args else kwargs.get("p", "fro")
        dim = args[1] if len(args) > 1 else kwargs.get("dim")
        keep = args[2] if len(args) > 2 else kwargs.get("keepdim", False)
        if p not in (2, 2.0, "fro") or isinstance(p, bool) or set(kwargs) - {"p", "dim", "keepdim"}:
            raise Unsupported(f".{name}(p={p!r}): only the 2-norm is supported")
        squares = self._add("square", [t.value], {}, span, "square")
        total = self._reduce(squares, "sum", [dim, keep], {}, span)
        return self._add("sqrt", [total.value], {}, span, "norm")

    @staticmethod
    def _interpolate_factor(x: Value, args: list, kwargs: dict) -> tuple[list, dict]:
        """``F.interpolate(x, size=skip.shape[2:])`` to a whole multiple of x's spatial size is
        ``scale_factor=`` that multiple (the same source positions, nearest or bilinear)."""
        kwargs.update(zip(("size", "scale_factor", "mode", "align_corners"), args[1:]))
        size, spatial = kwargs.get("size"), tuple(x.shape[2:])
        if size is None or kwargs.get("scale_factor") is not None:
            return args[:1], kwargs
        sizes = (size,) * len(spatial) if isinstance(size, int) else tuple(size) if isinstance(size, (tuple, list)) \
            else ()
        if len(sizes) == len(spatial) and all(isinstance(n, int) and isinstance(h, int) and h and n % h == 0
                                              for n, h in zip(sizes, spatial)):
            kwargs["size"], kwargs["scale_factor"] = None, tuple(n // h for n, h in zip(sizes, spatial))
        return args[:1], kwargs

    def _functional(self, fname: str, args, kwargs, span: Span):
        if fname == "normalize":  # x / max(‖x‖₂ over dim, eps)
            if not args or not isinstance(args[0], Tensor) or kwargs.get("p", args[1] if len(args) > 1 else 2) != 2:
                raise Unsupported("F.normalize: only p=2 of a tensor is supported")
            dim = args[2] if len(args) > 2 else kwargs.get("dim", 1)
            eps = args[3] if len(args) > 3 else kwargs.get("eps", 1e-12)
            norm = self._l2_norm(args[0], fname, [2, dim, True], {}, span)
            floor = self._add("clip", [norm.value], {"min": float(eps), "max": None}, span, "clip")
            return self._add("divide", [args[0].value, floor.value], {}, span, "normalized")
        if fname == "interpolate" and args and isinstance(args[0], Tensor):
            args, kwargs = self._interpolate_factor(args[0].value, list(args), dict(kwargs))
        if fname in ("flatten",):
            return self._tensor_method(args[0], "flatten", args[1:], kwargs, None, span)
        if fname == "dropout" or fname == "dropout2d":
            training = kwargs.pop("training", True)
            if training is False:
                return args[0]
        if not args or not isinstance(args[0], Tensor):
            raise Unsupported(f"F.{fname}: the first argument is not a tensor")
        layer = tm.recognize_function(fname, [None] + list(args[1:]), kwargs)
        x = args[0].value
        hint = layer.op if layer.op else fname
        if fname.startswith("max_pool") or fname.startswith("avg_pool") or fname.startswith("adaptive"):
            hint = fname
        return self._apply_layer(layer, None, [x], span) if layer.kind != "op" else \
            self._apply_functional(layer, x, span, hint)

    def _apply_functional(self, layer: TorchLayer, x: Value, span: Span, hint: str):
        op, attrs = layer.op, dict(layer.attrs)
        if op.startswith("upsample") and layer.extra.get("rank_from_input"):
            rank = len(x.shape) - 2
            op = f"upsample{rank}d"
            attrs["size"] = (attrs["size"][0],) * rank
        if layer.extra.get("count_include_pad") and attrs["padding"] != "valid":
            x = self._add(f"pad{len(attrs['pool_size'])}d", [x], {"pads": attrs["padding"]}, span, "pad").value
            attrs["padding"] = "valid"
        self._as_feature_map(op, x)
        return self._add(op, [x], attrs, span, hint)

    def _split(self, x: Value, name: str, args, kwargs, span: Span) -> tuple:
        """``x.chunk(n, dim)`` (pieces of ceil(size / n), so maybe fewer than n) and
        ``x.split(size or sizes, dim)`` (the last piece takes what is left): a tuple of pieces."""
        arg = args[0] if args else kwargs.get("chunks", kwargs.get("split_size_or_sections"))
        dim = args[1] if len(args) > 1 else kwargs.get("dim", 0)
        rank = len(x.shape)
        if not isinstance(dim, int) or not -rank <= dim < rank or dim % rank == 0:
            raise Unsupported(f".{name}() along the batch axis (or a dim not known statically) is not supported")
        total = x.shape[dim]
        if isinstance(arg, (list, tuple)) and name == "split" and all(isinstance(n, int) and n > 0 for n in arg):
            sizes = tuple(arg)
            if sum(sizes) != total:
                raise FrontendError(f".split({list(sizes)}): the sizes do not add up to {total} (shape {x.shape})",
                                    span)
        elif isinstance(arg, int) and not isinstance(arg, bool) and arg > 0:
            step = -(-total // arg) if name == "chunk" else arg
            sizes = tuple(min(step, total - start) for start in range(0, total, step))
        else:
            raise Unsupported(f".{name}({arg!r}): give a number of pieces or piece sizes")
        if len(sizes) == 1:
            return (Tensor(x),)
        return tuple(self._add("split", [x], {"sizes": sizes, "axis": dim}, span, "split", n_out=len(sizes)))

    def _tensor_method(self, t, name, args, kwargs, node, span: Span | None = None):
        span = span or self._span(node)
        if not isinstance(t, Tensor):
            raise Unsupported(f".{name}() on something that is not a tensor")
        x = t.value
        rank = len(x.shape)
        if name == "float" and x.dtype == "bool":  # a comparison's mask as numbers
            return self._add("cast", [x], {"dtype": "float32"}, span, "cast")
        if name in ("contiguous", "float", "clone", "long", "int"):
            if name in ("long", "int") and not x.dtype.startswith("int"):
                if x.producer is not None:  # (categorical columns of a float table: x[:, :3].long())
                    return self._add("cast", [x], {"dtype": "int64" if name == "long" else "int32"}, span, "cast")
                # float token ids given to the model: Keras' Embedding casts them the same way
                self.program.warn(span, f"the float input {x.var!r} is cast to integers where it is read "
                                        "(Keras' Embedding does that itself)")
            return t
        if name in ("chunk", "split"):
            return self._split(x, name, args, kwargs, span)
        if name == "masked_fill" and len(args) + len(kwargs) == 2:
            mask = args[0] if args else kwargs.get("mask")
            value = args[1] if len(args) > 1 else kwargs.get("value")
            return self._tensor_operands("where", [mask, value, t], span)  # (value where mask, else x)
        if name == "flip":
            dims = tuple(args) if args and isinstance(args[0], int) else tuple(args[0] if args else kwargs["dims"])
            if dims not in ((1,), [1]) or len(x.shape) != 3:
                raise Unsupported(f".flip{dims}: only reversing the time axis of (N, T, F) for an RNN is supported")
            return _Reversed(t)
        if name in ("amax", "max") and (args or "dim" in kwargs):
            dims = args[0] if args else kwargs["dim"]
            keep = args[1] if len(args) > 1 else kwargs.get("keepdim", False)
            dims = tuple(sorted(d % rank for d in ((dims,) if isinstance(dims, int) else tuple(dims))))
            if dims and is_channels_first(x.layout) and tuple(spatial_axes(x.layout or "")) == dims:
                out = self._add(f"global_max_pool{len(dims)}d", [x], {"keepdims": bool(keep)}, span, "max")
                return _MaxResult(out) if name == "max" else out
            out = self._reduce(t, "amax", (dims, keep), {}, span)
            return out if name == "amax" else _MaxResult(out)  # (values, indices): the values
        if name == "size":
            if args:
                return BatchDim() if args[0] == 0 else x.shape[args[0]]
            return Shape(x)
        if name == "dim":
            return rank
        if name in _METHOD_FUNCTIONS:
            return self._functional(name, [t] + list(args), kwargs, span)
        if name in _UNARY_FUNCTIONS and not args and not kwargs:
            op = _UNARY_FUNCTIONS[name]
            return self._add(op, [x], {}, span, "absolute" if op == "abs" else op)  # (not the builtin's name)
        if name == "norm":
            return self._l2_norm(t, name, args, kwargs, span)
        if name in ("std", "var"):
            return self._spread(t, name, args, kwargs, span)
        if name in ("clamp", "clip"):
            lo = args[0] if args else kwargs.get("min")
            hi = args[1] if len(args) > 1 else kwargs.get("max")
            if not all(v is None or isinstance(v, (int, float)) for v in (lo, hi)):
                raise Unsupported(f".{name}(): bounds must be numbers")
            return self._add("clip", [x], {"min": lo, "max": hi}, span, "clip")
        if name in ("sum", "amax", "amin") and (args or "dim" in kwargs):
            return self._reduce(t, name, args, kwargs, span)
        if name in ("flatten",):
            start = args[0] if args else kwargs.get("start_dim", 0 if node is None else 0)
            end = args[1] if len(args) > 1 else kwargs.get("end_dim", -1)
            if isinstance(start, int) and isinstance(end, int) and 1 < start % rank < end % rank:
                # x.flatten(2): (N, C, H, W) → (N, C, H·W), a reshape (ViT's patch tokens)
                s, e = start % rank, end % rank
                shape = [BatchDim(), *x.shape[1:s], math.prod(x.shape[s:e + 1]), *x.shape[e + 1:]]
                return self._tensor_method(t, "reshape", shape, {}, node, span)
            if start != 1 or end != -1:
                raise Unsupported(f"flatten(start_dim={start}, end_dim={end}): only start_dim=1 and flattening "
                                  "non-batch axes after it are supported")
            if rank == 2:
                return t
            return self._add("flatten", [x], {}, span, "flatten")
        if name in ("view", "reshape"):
            shape = list(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) else list(args)
            if rank == 2 and len(shape) == 3 and shape[0] == 1 and (isinstance(shape[1], BatchDim) or shape[1] == -1) \
                    and shape[2] in (x.shape[1], -1) and shape[1:].count(-1) <= 1:
                return _StackedState(t)  # h.view(1, N, H): an RNN's initial state
            if not shape or not (isinstance(shape[0], BatchDim) or shape[0] == -1):
                raise Unsupported(f".{name}{tuple(shape)}: the first size must be the batch (x.size(0) or -1)")
            rest = shape[1:]
            if shape == [-1] and math.prod(x.shape[1:]) == 1:
                rest = []  # (N, 1, ..., 1).view(-1): one number per example
                out = self._add("reshape", [x], {"shape": ()}, span, "reshape")
                return out
            if shape[0] == -1 and -1 in rest:
                raise Unsupported(f".{name}: two -1 sizes")
            if not all(isinstance(s, int) for s in rest):
                raise Unsupported(f".{name}{tuple(shape)}: sizes must be known statically")
            if -1 in rest and len(rest) > 1:
                known = math.prod(r for r in rest if r != -1)
                rest[rest.index(-1)] = math.prod(x.shape[1:]) // known
            if rest in ([-1], [math.prod(x.shape[1:])]):
                return t if rank == 2 else self._add("flatten", [x], {}, span, "flatten")
            out = self._add("reshape", [x], {"shape": tuple(rest)}, span, "reshape")
            out.value.producer.meta["out_layout"] = self._reshape_layout(len(rest) + 1)
            infer_node(out.value.producer)
            return out
        if name in ("permute", "transpose"):
            if name == "permute":
                perm = tuple(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) else tuple(args)
            else:
                a, b = (d % rank for d in args[:2])
                perm = list(range(rank))
                perm[a], perm[b] = perm[b], perm[a]
                perm = tuple(perm)
            perm = tuple(p % rank for p in perm)
            if perm[0] != 0:
                raise Unsupported(f".{name}: moving the batch axis is not supported")
            out = self._add("transpose", [x], {"perm": perm}, span, "permute")
            letters = x.layout or ""
            new = "".join(letters[p] for p in perm) if len(letters) == rank else None
            node_ = out.value.producer
            if new in CHANNELS_FIRST.values() or (new and new in ("NWC", "NHWC", "NDHWC")):
                node_.meta["out_layout"] = new
            else:
                node_.meta["out_layout"] = CHANNELS_FIRST.get(rank)
            infer_node(node_)
            return out
        if name == "mean":
            dims = args[0] if args else kwargs.get("dim")
            keep = args[1] if len(args) > 1 else kwargs.get("keepdim", False)
            if dims is None:
                return self._reduce(t, name, args, kwargs, span)  # refused: the batch axis too
            dims = tuple(sorted(d % rank for d in ((dims,) if isinstance(dims, int) else tuple(dims))))
            layout = x.layout or ""
            if dims and is_channels_first(layout) and tuple(spatial_axes(layout)) == dims and len(dims) in (1, 2, 3):
                return self._add(f"global_avg_pool{len(dims)}d", [x], {"keepdims": bool(keep)}, span, "mean")
            return self._reduce(t, name, args, kwargs, span)
        if name in ("squeeze", "unsqueeze"):
            dim = args[0] if args else kwargs.get("dim")
            if dim is None:
                raise Unsupported(f".{name}() without a dim is not supported")
            shape = list(x.shape)
            if name == "squeeze":
                d = dim % rank
                if d == 0 or shape[d] != 1:
                    return t if d != 0 and shape[d] != 1 else self._unsupported_tensor(name)
                rest = shape[1:d] + shape[d + 1:]
            else:
                d = dim % (rank + 1)
                if d == 0 and rank == 2:
                    return _StackedState(t)  # (an RNN's initial state; anything else refuses it)
                if d == 0:
                    return self._unsupported_tensor(name)
                rest = shape[1:d] + [1] + shape[d:]
            out = self._add("reshape", [x], {"shape": tuple(rest)}, span, name)
            if len(rest) + 1 > 2:
                out.value.producer.meta["out_layout"] = x.layout if len(rest) + 1 == rank else None
            infer_node(out.value.producer)
            return out
        if name == "repeat":
            return self._repeat(t, tuple(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list))
                                else tuple(args), span)
        if name in ("expand", "expand_as"):
            return self._expand(t, name, args, kwargs, span)
        raise Unsupported(f"tensor method .{name}() is not supported yet")

    def _expand(self, t: Tensor, name: str, args, kwargs, span: Span):
        """``x.unsqueeze(1).expand(-1, n, -1)`` is ``.repeat(1, n, 1)`` (RepeatVector);
        ``gate.expand_as(x)`` broadcasts the gate's size-1 axes to x's shape (``gate + 0 * x``
        as ``gate + zeros_like(x)``)."""
        x = t.value
        if name == "expand_as":
            other = args[0] if args else kwargs.get("other")
            if not isinstance(other, Tensor) or len(other.value.shape) != len(x.shape):
                raise Unsupported(".expand_as(): of a tensor of the same rank only")
            if tuple(other.value.shape) == tuple(x.shape):
                return t
            zeros = self._add("full_like", [other.value], {"value": 0.0, "dtype": ""}, span, "zeros")
            self._as_map_of(x, other.value)
            return self._add("add", [x, zeros.value], {}, span, "expanded")
        sizes = tuple(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) else tuple(args)
        if kwargs or len(sizes) != len(x.shape):
            raise Unsupported(f".expand{sizes}: one size per axis is needed")
        if x.shape[0] is not None:  # (self.cls_token.expand(b, -1, -1): a weight made a batch)
            raise Unsupported(f".expand{sizes} of a module's own parameter to the batch is not translated yet")
        counts = [1]  # (the batch axis: -1 or x.size(0))
        for size, have in zip(sizes[1:], x.shape[1:]):
            if size == -1 or size == have:
                counts.append(1)
            elif have == 1 and isinstance(size, int) and size > 1:
                counts.append(size)
            else:
                raise Unsupported(f".expand{sizes} of a {tuple(x.shape)} tensor: only size-1 axes grow")
        return self._repeat(t, tuple(counts), span)

    def _filled_like(self, path: str, args: list, kwargs: dict, span: Span):
        """``torch.zeros_like(x)``, ``torch.ones_like(x, dtype=torch.int32)``, ``torch.full_like(x, 0.5)``."""
        x = args.pop(0) if args else kwargs.pop("input", None)
        if not isinstance(x, Tensor):
            raise Unsupported(f"{path}: the first argument is not a tensor")
        fill = _FILLED_LIKE[path]
        if fill is None:
            fill = args.pop(0) if args else kwargs.pop("fill_value", None)
            if isinstance(fill, bool) or not isinstance(fill, (int, float)):
                raise Unsupported(f"{path}: fill_value must be a number known statically")
        dtype = kwargs.pop("dtype", None)
        kwargs.pop("device", None)  # Keras places tensors itself
        if args or kwargs:
            raise Unsupported(f"{path}: argument(s) {', '.join(sorted(kwargs)) or 'given by position'} not supported")
        name = ""
        if dtype is not None:
            name = _TORCH_DTYPES.get(dtype.path if isinstance(dtype, Ref) else None, "")
            if not name:
                raise Unsupported(f"{path}: dtype {dtype!r} is not supported")
        return self._add("full_like", [x.value], {"value": float(fill), "dtype": name}, span, path[6:])

    def _repeat(self, t: Tensor, sizes: tuple, span: Span):
        """``x.unsqueeze(1).repeat(1, n, 1)``: (N, F) repeated ``n`` times along a new time axis
        (Keras' RepeatVector); repeats of 1 everywhere return the tensor itself."""
        x = t.value
        if len(sizes) != len(x.shape) or not all(isinstance(s, int) and s >= 1 for s in sizes):
            raise Unsupported(f".repeat{sizes}: one static count per axis is needed")
        if all(s == 1 for s in sizes):
            return t
        if len(x.shape) != 3 or x.shape[1] != 1 or sizes[0] != 1 or sizes[2] != 1:
            raise Unsupported(f".repeat{sizes} of a {tuple(x.shape)} tensor: only (N, 1, F).repeat(1, n, 1) "
                              "(Keras' RepeatVector) is translated")
        prod = x.producer
        if prod is not None and prod.op == "reshape" and len(prod.inputs[0].shape) == 2:
            vector = prod.inputs[0]  # x.unsqueeze(1): the (N, F) vector itself
        else:
            vector = self._add("reshape", [x], {"shape": (x.shape[2],)}, span, "squeeze").value
        return self._add("repeat_vector", [vector], {"n": sizes[1]}, span, "repeat_vector")

    def _tensor_operands(self, op: str, operands: list, span: Span):
        """``op`` over tensors and numbers (a number is a ``constant`` operand, never a param)."""
        ins = []
        for a in operands:
            if isinstance(a, Tensor):
                ins.append(a.value)
            elif isinstance(a, (int, float)):
                ins.append(self._add("constant", [], {"value": a}, span, "const").value)
            else:
                raise Unsupported(f"{op}: an operand is neither a tensor nor a number")
        return self._add(op, ins, {}, span, op)

    def _reduce(self, t, name, args, kwargs, span: Span):
        """``x.mean(dim=-1)``, ``x.sum((1, 2), keepdim=True)``, ``torch.amax(x, 1)``: a reduce op."""
        x = t.value
        rank = len(x.shape)
        dims = args[0] if args else kwargs.get("dim")
        keep = args[1] if len(args) > 1 else kwargs.get("keepdim", False)
        if dims is None or not all(isinstance(d, int) for d in ((dims,) if isinstance(dims, int) else dims)):
            raise Unsupported(f".{name}(): a static dim is needed (a reduction over every axis includes the batch)")
        dims = tuple(sorted({d % rank for d in ((dims,) if isinstance(dims, int) else tuple(dims))}))
        if 0 in dims:
            raise Unsupported(f".{name}(dim={dims}) reduces the batch axis")
        return self._add(_REDUCTIONS[name], [x], {"axis": dims, "keepdims": bool(keep)}, span, _REDUCTIONS[name])

    def _unsupported_tensor(self, name):
        raise Unsupported(f".{name}() on the batch axis is not supported")

    # -- comments and leftovers ---------------------------------------------------------
    def _attach_comments(self, graph: Graph) -> None:
        """A comment on the ``nn.X(...)`` line in ``__init__`` (or just above it) goes with
        that layer; a comment on a ``forward`` line with the last node that line made (the
        value the line computes)."""
        used: set[int] = set()

        def lines_at(span: Span) -> list[int]:
            out = [span.line]
            ln = span.line - 1
            while ln in self.comments and self.comments[ln][1]:
                out.append(ln)
                ln -= 1
            return sorted(out)

        def attach(node: Node, span: Span) -> None:
            for ln in lines_at(span):
                if ln in self.comments and ln not in used:
                    used.add(ln)
                    node.comments.append(self.comments[ln][0])

        if self.root_span is not None:
            for ln in lines_at(self.root_span):
                if ln in self.comments and ln not in used:
                    used.add(ln)
                    graph.meta.setdefault("comments", []).append(self.comments[ln][0])
        for node in graph.nodes:
            token = node.meta.get("layer")
            if token is not None:
                attach(node, token.span)
        last: dict[int, Node] = {}
        for node in graph.nodes:
            if node.span is not None and node.span != self.root_span:
                last[node.span.line] = node
        for line in sorted(last):
            attach(last[line], last[line].span)
        for node in graph.nodes:  # lines whose nodes a rewrite folded into this one
            for span in node.meta.get("absorbed_spans", ()):
                attach(node, span)

    def _report_unsupported_statements(self) -> None:
        """The program around the models (data, optimizer, loss, the training loop, saving)
        is read into the training configuration (``torch_training``); what it cannot
        translate is a stub with its line."""
        from transpiler.frontend_ast.torch_training import read_training

        consumed = {md.builder for md in self.program.models if md.builder} | self.stubbed_builders
        skip = set()
        for stmt in self.module.body:
            if isinstance(stmt, cst.ClassDef) and self.classes.get(stmt.name.value) and \
                    self.classes[stmt.name.value].is_module:
                skip.add(id(stmt))
            elif isinstance(stmt, cst.FunctionDef) and stmt.name.value in consumed:
                skip.add(id(stmt))
            elif isinstance(stmt, cst.SimpleStatementLine) and all(
                    isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body):
                skip.add(id(stmt))
        self.program.meta["training_facts"] = read_training(self, skip)


# ---------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------
def class_builders(frontend: "TorchFrontend") -> dict[str, str]:
    """Model classes whose builder is ``def build_model(): return Net()``: ``Net()`` in the
    program builds the same model (class name → builder name)."""
    out: dict[str, str] = {}
    for md in frontend.program.models:
        ref = frontend.functions.get(md.builder) if md.builder else None
        if ref is None or ref.node.params.params or ref.node.params.star_arg not in (None, cst.MaybeSentinel.DEFAULT):
            continue
        body = [s for s in ref.node.body.body if not (isinstance(s, cst.SimpleStatementLine) and
                                                       isinstance(s.body[0], cst.Expr))]  # (a docstring)
        if len(body) == 1 and isinstance(body[0], cst.SimpleStatementLine) and \
                isinstance(body[0].body[0], cst.Return) and isinstance(body[0].body[0].value, cst.Call):
            call = body[0].body[0].value
            if isinstance(call.func, cst.Name) and call.func.value == md.class_name and not call.args:
                out.setdefault(md.class_name, md.builder)
    return out


def _training_test(test) -> bool | None:
    """``self.training`` → True, ``not self.training`` → False, anything else → None."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = _training_test(test.expression)
        return None if inner is None else not inner
    if isinstance(test, cst.Attribute) and test.attr.value == "training" and isinstance(test.value, cst.Name) \
            and test.value.value == "self":
        return True
    return None


def _dotted(node) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    raise ValueError(node)


def _code(node) -> str:
    try:
        return cst.Module([]).code_for_node(node)
    except Exception:  # noqa: BLE001
        return type(node).__name__


def _mentions(node, names: set[str]) -> bool:
    found = False

    class V(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            nonlocal found
            if n.value in names:
                found = True

    node.visit(V())
    return found


def _is_init_code(stmt) -> bool:
    """``for m in self.modules(): nn.init...``, ``self.apply(fn)``, ``nn.init.x_(...)``,
    ``self.fc.weight.data.normal_(0, 0.01)``."""
    found = False

    class V(cst.CSTVisitor):
        def visit_Attribute(self, n: cst.Attribute) -> None:
            nonlocal found
            if n.attr.value in ("modules", "reset_parameters", "named_modules") and \
                    isinstance(n.value, cst.Name) and n.value.value == "self":
                found = True
            if n.attr.value in ("apply", "requires_grad_", "normal_", "uniform_", "fill_", "zero_"):
                found = True
            if n.attr.value == "init" and isinstance(n.value, cst.Name) and n.value.value == "nn":
                found = True

    if isinstance(stmt, (cst.For, cst.SimpleStatementLine)):
        stmt.visit(V())
    return found


def _init_code_methods(cls: cst.ClassDef) -> set[str]:
    """Methods the class's weight-initialisation code in ``__init__`` uses
    (``self.apply(self._init_weights)``, ``self._reset()`` next to ``nn.init`` calls)."""
    names: set[str] = set()

    class V(cst.CSTVisitor):
        def visit_Attribute(self, n: cst.Attribute) -> None:
            if isinstance(n.value, cst.Name) and n.value.value == "self":
                names.add(n.attr.value)

    for stmt in cls.body.body:
        if isinstance(stmt, cst.FunctionDef) and stmt.name.value == "__init__":
            for inner in stmt.body.body:
                if _is_init_code(inner):
                    inner.visit(V())
    return names


def _trains(fn: cst.FunctionDef) -> bool:
    """``fn`` runs a training step (``.backward()``/``.zero_grad()``): program code."""
    found = False

    class V(cst.CSTVisitor):
        def visit_Call(self, n: cst.Call) -> None:
            nonlocal found
            if isinstance(n.func, cst.Attribute) and n.func.attr.value in ("backward", "zero_grad"):
                found = True

    fn.visit(V())
    return found


def _returns_nothing(fn: cst.FunctionDef) -> bool:
    found = False

    class V(cst.CSTVisitor):
        def visit_Return(self, n: cst.Return) -> None:
            nonlocal found
            if n.value is not None:
                found = True

        def visit_FunctionDef(self, n) -> bool:
            return n is fn

    fn.visit(V())
    return not found


def _snake(name: str) -> str:
    import re

    s = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s).lower()


def _one_weight_module(mod: Mod, key: str) -> "Mod | None":
    """``mod`` when it is a user module holding nothing but the weight ``key`` whose
    ``forward`` takes no input and only returns ``self.<key>``; else None."""
    if mod.kind != "user" or mod.cls is None or not mod.path or \
            any(k != key and isinstance(v, (Mod, ParamObj)) for k, v in mod.attrs.items()):
        return None
    fwd = mod.cls.method("forward")
    if fwd is None or len(fwd.params.params) != 1 or isinstance(fwd.params.star_arg, cst.Param) or \
            fwd.params.kwonly_params or fwd.params.star_kwarg is not None:
        return None
    body = [s for s in fwd.body.body if not (isinstance(s, cst.SimpleStatementLine) and isinstance(
        s.body[0], cst.Expr) and isinstance(s.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))]
    if len(body) != 1 or not isinstance(body[0], cst.SimpleStatementLine) or \
            not isinstance(body[0].body[0], cst.Return):
        return None
    value = body[0].body[0].value
    self_name = fwd.params.params[0].name.value
    ok = isinstance(value, cst.Attribute) and isinstance(value.value, cst.Name) and \
        value.value.value == self_name and value.attr.value == key
    return mod if ok else None


def _walk(mod: Mod, path: str = ""):
    yield path, mod
    for key, child in mod.children():
        yield from _walk(child, f"{path}.{key}" if path else key)


def _walk_params(mod: Mod):
    for path, m in _walk(mod):
        if m.kind == "user":
            for k, v in m.attrs.items():
                if isinstance(v, ParamObj):
                    yield f"{path}.{k}" if path else k, v


def _graph_inputs(graph: Graph, names: list[str], values: list[Value]) -> list[Tensor]:
    """Inputs of ``graph`` shaped like ``values`` (a submodule's or method's first inputs),
    named after the parameters ``names``."""
    inputs = []
    for pname, v in zip(names, values):
        x = graph.new_value("input", shape=v.shape, dtype=v.dtype, layout=v.layout)
        x.var = pname
        graph.inputs.append(x)
        inputs.append(Tensor(x))
    return inputs


def _assign_paths(mod: Mod, path: str) -> None:
    """Every module's state_dict prefix (``features.0``, ``blocks.1.conv``), and every own
    parameter's or buffer's key (``scale.center``)."""
    for p, m in _walk(mod):
        m.path = p
    for key, param in _walk_params(mod):
        param.path = key


def _class_names_in(mod: Mod) -> set[str]:
    return {m.cls.node.name.value for _, m in _walk(mod) if m.kind == "user"}


def _simplify_rnns(graph: Graph) -> None:
    """RNN nodes were built returning everything torch returns; keep what is read.

    A forward layer whose sequence and cell state go unused becomes ``return_sequences=
    False`` with the final hidden state as its only output (Keras' idiomatic ``LSTM(u)``);
    unread states are dropped (``return_state=False``).
    """
    used = {id(v) for n in graph.nodes for v in n.inputs} | {id(v) for v in graph.outputs}
    for node in graph.nodes:
        if node.op in ("lstm", "gru", "simple_rnn"):
            seq, h, *rest = node.outputs
            if id(seq) not in used and not any(id(c) in used for c in rest) and id(h) in used:
                node.attrs["return_sequences"] = False
                node.attrs["return_state"] = False
                node.outputs = [h]
            elif not any(id(s) in used for s in node.outputs[1:]):
                node.attrs["return_state"] = False
                node.outputs = [seq]
        elif node.op == "bidirectional":
            inner = node.attrs["layer"]["attrs"]
            if not any(id(s) in used for s in node.outputs[1:]):
                node.attrs["layer"] = {"op": node.attrs["layer"]["op"], "attrs": {**inner, "return_state": False}}
                node.outputs = node.outputs[:1]
    for node in graph.nodes:
        infer_node(node)


#: variable names for the values an index makes
_INDEX_HINTS = {"slice": "part", "take": "picked"}

#: the element-wise op joining the two directions → Keras' ``merge_mode``
_MERGE_MODES = {"add": "sum", "multiply": "mul"}


def _merge_bidirectional_halves(graph: Graph) -> None:
    """``y[..., :u] + y[..., u:]`` of a bidirectional RNN's concatenated sequence (torch's
    spelling of Keras' ``merge_mode="sum"``; ``*`` for "mul") becomes that merge mode, when
    nothing else reads the sequence or its halves."""
    for node in list(graph.nodes):
        if node.op != "bidirectional" or node.attrs["merge_mode"] != "concat":
            continue
        seq = node.outputs[0]
        units = seq.shape[-1] // 2 if seq.shape[-1] else None
        halves = graph.consumers(seq)
        if units is None or len(halves) != 2 or any(v is seq for v in graph.outputs):
            continue
        bounds = sorted((h.attrs["starts"], h.attrs["stops"], h.attrs["steps"]) for h in halves
                        if h.op == "slice" and tuple(a % len(seq.shape) for a in h.attrs["axes"])
                        == (len(seq.shape) - 1,))
        if bounds != [((0,), (units,), (1,)), ((units,), (2 * units,), (1,))]:
            continue
        readers = [graph.consumers(h.outputs[0]) for h in halves]
        join = readers[0][0] if readers[0] and len(readers[0]) == 1 and readers[0] == readers[1] else None
        if join is None or join.op not in _MERGE_MODES or len(join.inputs) != 2 \
                or any(v is h.outputs[0] for h in halves for v in graph.outputs):
            continue
        node.attrs["merge_mode"] = _MERGE_MODES[join.op]
        node.meta.setdefault("absorbed_spans", []).extend(n.span for n in (join, *halves) if n.span is not None)
        infer_node(node)
        graph.replace_uses(join.outputs[0], seq)
        graph.nodes = [n for n in graph.nodes if n is not join and n not in halves]


def _relabel_sequences(graph: Graph) -> None:
    """A rank-3+ value that no convolution reads is not a feature map: ``(N, T, F)`` fed to
    an RNN or a Linear has its features last. Only the tag changes (the data is as torch
    has it), so param shapes and the layout passes read the axes right."""
    from transpiler.ir.layout import CHANNELS_LAST
    from transpiler.ir.passes.keras_selection import _feeds_implicit

    candidates = list(graph.inputs) + [n.outputs[0] for n in graph.nodes if n.op in ("reshape", "transpose")]
    for v in candidates:
        if is_channels_first(v.layout) and not _feeds_implicit(graph, v) and not _gates_a_map(graph, v):
            v.layout = CHANNELS_LAST[len(v.shape)]
            if v.producer is not None:
                v.producer.meta["out_layout"] = v.layout
    for node in graph.nodes:
        infer_node(node)


def _gates_a_map(graph: Graph, v: Value) -> bool:
    """``v`` meets a channels-first map of its rank in an element-wise op (``x * gate``)."""
    return any(len(node.inputs) > 1 and any(u is not v and len(u.shape) == len(v.shape) and
                                            is_channels_first(u.layout) for u in node.inputs)
               for node in graph.consumers(v))


def _prune(graph: Graph) -> None:
    """Drop nodes nothing reads (a layer built but unused in forward)."""
    live = {id(v) for v in graph.outputs}
    keep = []
    for node in reversed(graph.nodes):
        if any(id(v) in live for v in node.outputs):
            keep.append(node)
            live.update(id(v) for v in node.inputs)
    graph.nodes = list(reversed(keep))


def read_torch(source: str, path: str = "<string>") -> Program:
    """Parse a PyTorch script into a Program."""
    return TorchFrontend(source, path).run()
