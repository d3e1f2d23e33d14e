"""Random valid Keras programs for differential fuzzing (``tests/test_fuzz.py``).

``keras_programs()`` is a hypothesis strategy whose examples are Keras scripts (source
text) with a ``build_model()`` builder: one or two ``keras.Input``s, then a random
Functional-API graph over the ops of ``docs/ops.md`` -- chains, branches joined again by
merges (Add/Subtract/Multiply/Average/Maximum/Minimum, Concatenate, ``layers.add``,
tensor ``+ - *``, broadcasting merges), layers shared by two calls, RNNs returning their
states, tensor math (``keras.ops`` reductions, einsum, expand_dims, transpose, reshape, take,
split, squeeze, softmax with an axis, zeros_like/ones_like/full_like, element-wise functions
and operators with numbers)
-- with random attributes and small input sizes. Every value's shape is tracked
while the program is drawn, so each program is valid Keras, and sizes are capped so
one example builds and runs in a fraction of a second. Choices are ordered simplest
first, so a failing program shrinks towards a short chain of plain layers.

A few programs (about one in ten) also contain a construct the transpiler documents as
refused (``GRU(reset_after=False)``, ``UpSampling3D``, ...): those must come back as a stub,
never as a silently translated model. ``Embedding(mask_zero=True)`` is drawn too: its mask
is honoured by the layers that read it or refused there, never ignored.

Some valid programs are never drawn because Keras itself gets them wrong, so a mismatch
would say nothing about the translation: values past a rough magnitude bound
(``MAX_SCALE``: float32 rounding of large products exceeds 1e-4), LayerNormalization
over a single element (Keras' cancellation error), and three defects of Keras 3.15 /
TensorFlow 2.21 found by this fuzzer (see ``ProgramBuilder.merge``, ``_spatial_out`` and
``conv_transpose_op``).

``assert_faithful(source)`` is the oracle shared by the fuzz test and the regression
tests: the transpiler either refuses explicitly (a ``FrontendError`` or a 'stub'
diagnostic) or its module equals Keras numerically (max abs error <= 1e-4 on every
output, equal parameter counts).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from hypothesis import strategies as st

TOL = 1e-4
BUILDER = "build_model"
HEADER = "import keras\nfrom keras import layers\n\n\ndef build_model():\n"

#: caps that keep every example tiny (elements per sample, size of an axis of rank >= 2)
MAX_ELEMS = 512
MAX_DIM = 20
MAX_RNN_STEPS = 10
#: a rough bound on |values| (inputs are standard normal, weights have unit gain): float32
#: rounding grows with it, so products of large values would fail 1e-4 for no fault of
#: the translation; no layer or merge may push the bound past MAX_SCALE
INPUT_SCALE = 4.0
MAX_SCALE = 30.0

ACTIVATIONS = ["relu", "tanh", "sigmoid", "linear", "relu6", "hard_sigmoid", "softmax", "log_softmax",
               "gelu", "elu", "selu", "swish", "silu", "softplus", "softsign", "leaky_relu"]
ELEMENTWISE_MERGES = ["Add", "Multiply", "Subtract", "Average", "Maximum", "Minimum"]
BOUNDED_ACTIVATIONS = {"tanh": 1.0, "sigmoid": 1.0, "hard_sigmoid": 1.0, "softmax": 1.0, "softsign": 1.0}


def activation_scale(name: str | None, scale: float) -> float:
    if name in BOUNDED_ACTIVATIONS:
        return BOUNDED_ACTIVATIONS[name]
    if name == "relu6":
        return min(scale, 6.0)
    if name == "log_softmax":
        return 2 * scale + 3.0
    return 1.1 * scale if name == "selu" else scale


def weighted_scale(scale: float) -> float:
    """After a layer with weights of unit gain and a bias."""
    return 1.5 * scale + 1.0


# ---------------------------------------------------------------------------------
# The oracle
# ---------------------------------------------------------------------------------
def assert_faithful(source: str, *, outputs: int | None = None, refused: tuple = ()) -> str:
    """Translate ``source``; assert an explicit refusal or numeric equality with Keras.

    ``outputs``: how many outputs the Keras model has (every one must be compared);
    ``refused``: constructs in ``source`` that have no faithful torch form, so the
    translation must refuse. Returns "refused" or "equal".
    """
    from harness import check_source, max_error  # imports the frameworks (torch first)
    from transpiler.frontend_ast.keras.frontend import FrontendError
    from transpiler.translate import translate

    try:
        result = translate(source, "fuzz_case.py")
    except FrontendError:
        return "refused"
    stubs = result.stubs
    if stubs:
        assert not any(m.builder == BUILDER for m in result.program.models), (
            "a stub was reported but the builder was still translated:\n"
            + "\n".join(d.message for d in stubs))
        return "refused"
    assert not refused, (f"translated {', '.join(refused)} (no faithful torch form) without a stub:\n"
                         f"{result.text}")
    checked = check_source(source, builder=BUILDER)
    assert checked.comparisons, "the model has no output to compare"
    if outputs is not None:
        assert len(checked.comparisons) == outputs, (
            f"Keras has {outputs} outputs, {len(checked.comparisons)} compared\n{checked.translation.text}")
    err = max_error(checked)
    assert err <= TOL, f"max abs error {err:.3g} > {TOL}\n{checked.translation.text}"
    assert checked.keras_params == checked.torch_params, (
        f"keras has {checked.keras_params} weights, torch {checked.torch_params}\n{checked.translation.text}")
    return "equal"


# ---------------------------------------------------------------------------------
# Programs
# ---------------------------------------------------------------------------------
@dataclass
class Tensor:
    """A symbolic value of the program being drawn (shape without the batch axis)."""

    name: str
    shape: tuple
    is_int: bool = False
    scale: float = INPUT_SCALE

    @property
    def rank(self) -> int:
        return len(self.shape)


@dataclass(frozen=True)
class FuzzProgram:
    source: str
    outputs: int
    refused: tuple = ()

    def __repr__(self) -> str:  # what hypothesis prints for a falsifying example
        extra = f", refused={self.refused!r}" if self.refused else ""
        return f'FuzzProgram(outputs={self.outputs}{extra}, source="""\n{self.source}""")'

    def _repr_pretty_(self, printer, cycle) -> None:  # hypothesis' pretty printer
        printer.text(repr(self))


def numel(shape: tuple) -> int:
    return math.prod(shape)


def fits(shape: tuple) -> bool:
    if not shape or any(d < 1 for d in shape) or numel(shape) > MAX_ELEMS:
        return False
    return len(shape) == 1 or all(d <= MAX_DIM for d in shape)


def conv_len(n: int, k: int, s: int, d: int, padding: str) -> int:
    if padding in ("same", "causal"):  # (causal: (k - 1) * d zeros before, then valid)
        return -(-n // s)
    keff = d * (k - 1) + 1
    return (n - keff) // s + 1 if n >= keff else 0


def pool_len(n: int, p: int, s: int, padding: str) -> int:
    if padding == "same":
        return -(-n // s)
    return (n - p) // s + 1 if n >= p else 0


def conv_transpose_len(n: int, k: int, s: int, d: int, padding: str, output_padding: int | None) -> int:
    keff = k + (k - 1) * (d - 1)
    if output_padding is None:
        return n * s + max(keff - s, 0) if padding == "valid" else n * s
    pad = keff // 2 if padding == "same" else 0
    return (n - 1) * s + keff - 2 * pad + output_padding


def per_dim(value, rank: int) -> tuple:
    return tuple(value) if isinstance(value, tuple) else (value,) * rank


class Unfit(Exception):
    """The drawn attributes give an invalid or oversized shape: draw another op."""


class ProgramBuilder:
    """Draws one program statement by statement, tracking every value's shape."""

    def __init__(self, draw: Callable):
        self.draw = draw
        self.lines: list[str] = []
        self.inputs: list[Tensor] = []
        self.values: list[Tensor] = []  # every value that may feed a layer, in creation order
        self.consumed: set[str] = set()
        self.refused: list[str] = []
        self.n = 0
        self.n_shared = 0
        self.n_named = 0
        self.out_scale = INPUT_SCALE  # set by the layer being drawn

    # -- drawing helpers (each shrinks towards its first/simplest choice) -------------------
    def int(self, lo: int, hi: int) -> int:
        return self.draw(st.integers(lo, max(lo, hi)))

    def pick(self, seq):
        return self.draw(st.sampled_from(list(seq)))

    def flag(self) -> bool:
        return self.draw(st.booleans())

    def rare(self, one_in: int = 8) -> bool:
        return self.draw(st.integers(0, one_in - 1)) == one_in - 1

    def sizes(self, rank: int, lo: int, hi: int):
        """An int, or (rarely) a tuple of ``rank`` ints."""
        if rank > 1 and self.rare(3):
            return tuple(self.int(lo, hi) for _ in range(rank))
        return self.int(lo, hi)

    def axes(self, rank: int, at_least: int) -> list[int]:
        """A sorted subset of the axes 1..rank with ``at_least`` members (a flag per axis;
        the last ones are forced in when too few were drawn)."""
        chosen = [ax for ax in range(1, rank + 1) if self.flag()]
        for ax in range(rank, 0, -1):
            if len(chosen) >= at_least:
                break
            if ax not in chosen:
                chosen.append(ax)
        return sorted(chosen)

    def layer(self, cls: str, *args: str, **kwargs) -> str:
        """``layers.Cls(args, k=v)``, keyword values given as source text (None = omitted)."""
        prefix = "keras.layers." if self.rare(12) else "layers."
        parts = list(args) + [f"{k}={v}" for k, v in kwargs.items() if v is not None]
        if self.rare(12):
            self.n_named += 1
            parts.append(f'name="fuzz_{cls.lower()}_{self.n_named}"')
        return f"{prefix}{cls}({', '.join(parts)})"

    def fresh(self) -> str:
        self.n += 1
        return f"x{self.n}"

    # -- emitting ---------------------------------------------------------------------------
    def emit(self, call: str, args: list[Tensor], shapes: list[tuple], scale: float) -> list[Tensor]:
        outs = [Tensor(self.fresh(), s, scale=scale) for s in shapes]
        self.lines.append(f"{', '.join(t.name for t in outs)} = {call}")
        self.consumed.update(t.name for t in args)
        self.values.extend(outs)
        return outs

    def add_input(self) -> None:
        kind = self.pick(["vector", "sequence", "image", "sequence", "image", "tokens", "image", "volume",
                          "sequence", "token_grid"])
        is_int = kind.startswith("token")
        if kind == "vector":
            shape = (self.int(1, 12),)
        elif kind == "sequence":
            shape = (self.int(1, 10), self.int(1, 6))
        elif kind == "image":
            shape = (self.int(1, 10), self.int(1, 10), self.int(1, 4))
        elif kind == "tokens":
            shape = (self.int(1, 8),)
        elif kind == "volume":
            shape = (self.int(1, 6), self.int(1, 6), self.int(1, 6), self.int(1, 3))
        else:
            shape = (self.int(1, 5), self.int(1, 5))
        self.add_input_of(shape, is_int)

    def add_input_of(self, shape: tuple, is_int: bool) -> None:
        t = Tensor(self.fresh(), shape, is_int)
        dtype = ', dtype="int32"' if is_int else ""
        spelled = "layers.Input" if self.rare(8) else "keras.Input"
        self.lines.append(f"{t.name} = {spelled}(shape={shape!r}{dtype})")
        self.inputs.append(t)
        self.values.append(t)

    def floats(self) -> list[Tensor]:
        return [t for t in self.values if not t.is_int]

    # -- steps ------------------------------------------------------------------------------
    def unary(self, t: Tensor) -> list[Tensor]:
        """Apply one random applicable layer to ``t`` (a fallback if draws do not fit)."""
        for _ in range(3):
            mark = len(self.refused)
            try:
                call, shapes = self.draw_layer(t)
            except Unfit:
                del self.refused[mark:]  # only what the program holds
                continue
            return self.emit(f"{call}({t.name})" if not call.startswith("@") else call[1:], [t], shapes,
                             self.out_scale)
        if t.is_int:
            return self.emit(f"{self.layer('Embedding', '4', '3')}({t.name})", [t], [t.shape + (3,)], 1.0)
        return self.emit(f"{self.layer('Activation', repr('tanh'))}({t.name})", [t], [t.shape], 1.0)

    def draw_layer(self, t: Tensor) -> tuple[str, list[tuple]]:
        self.out_scale = 1.0 if t.is_int else t.scale  # ops that change the bound set it
        if t.is_int:
            return (op_embedding_masked if self.rare(6) else op_embedding)(self, t)
        if self.rare(24):
            refusals = REFUSED.get(t.rank, [])
            if refusals:
                return self.pick(refusals)(self, t)
        ops = GENERAL_OPS + RANK_OPS.get(t.rank, [])
        out = self.pick(ops)(self, t)
        if not all(fits(s) for s in out[1]) or self.out_scale > MAX_SCALE:
            raise Unfit
        return out

    def merge_candidates(self) -> list[tuple[str, list[Tensor], tuple]]:
        """(kind, [a, b], out shape) for every pair of float values that a merge can join."""
        vals = self.floats()
        same, concat, broadcast = [], [], []
        for i, a in enumerate(vals):
            for b in vals[i + 1:]:
                if a.rank != b.rank:
                    continue
                if a.shape == b.shape:
                    same.append(("same", [a, b], a.shape))
                    continue
                diff = [k for k in range(a.rank) if a.shape[k] != b.shape[k]]
                if len(diff) == 1:
                    k = diff[0]
                    out = a.shape[:k] + (a.shape[k] + b.shape[k],) + a.shape[k + 1:]
                    if fits(out):
                        concat.append(("concat", [a, b], out))
                if all(x == y or 1 in (x, y) for x, y in zip(a.shape, b.shape)):
                    broadcast.append(("broadcast", [a, b], tuple(max(x, y) for x, y in zip(a.shape, b.shape))))
        return same[::-1] + concat[::-1] + broadcast[::-1]  # newest pairs first

    def merge(self, kind: str, args: list[Tensor], out_shape: tuple) -> list[Tensor]:
        rank = args[0].rank
        if kind == "same" and self.rare(5):  # Concatenate two values of one shape
            k = self.int(0, rank - 1)
            doubled = args[0].shape[:k] + (2 * args[0].shape[k],) + args[0].shape[k + 1:]
            if fits(doubled):
                kind, out_shape = "concat", doubled
        if kind == "concat":
            diff = [k for k in range(rank) if args[0].shape[k] != args[1].shape[k]]
            k = diff[0] if diff else next(k for k in range(rank) if out_shape[k] != args[0].shape[k])
            axis = k + 1
            spelled = self.pick([-1 if axis == rank else axis, axis - rank - 1, axis])
            axis_kw = None if spelled == -1 else str(spelled)
            names = f"[{', '.join(t.name for t in args)}]"
            if self.rare(4):
                call = f"layers.concatenate({names}{'' if axis_kw is None else f', axis={axis_kw}'})"
            else:
                call = f"{self.layer('Concatenate', axis=axis_kw)}({names})"
            return self.emit(call, args, [out_shape], max(t.scale for t in args))
        cls = self.pick(ELEMENTWISE_MERGES)
        if cls != "Subtract" and kind == "same" and self.rare(4):
            third = [t for t in self.floats() if t.shape == out_shape and t not in args]
            if third:
                args = args + [third[-1]]
        scales = [t.scale for t in args]
        if cls == "Multiply" and math.prod(scales) > MAX_SCALE:
            cls = "Maximum"
        if cls in ("Add", "Subtract") and sum(scales) > MAX_SCALE:
            cls = "Average"
        if kind == "broadcast" and cls in ("Add", "Average"):
            # Keras' ops.add turns `x + y` into a bias_add when y squeezes to one axis of
            # the batch size (3 here) -- a y of shape (N, 1, ..., 1) -- and x has the batch
            # size as its first or last axis: a Keras bug that adds along the wrong axis.
            # With the (N, 1, ..., 1) operand first the broadcast is computed right.
            args = sorted(args, key=lambda t: numel(t.shape))
        names = f"[{', '.join(t.name for t in args)}]"
        scale = {"Multiply": math.prod(scales), "Add": sum(scales), "Subtract": sum(scales)}.get(cls, max(scales))
        style = self.pick(["layer", "function", "operator"]) if self.rare(3) else "layer"
        if style == "operator" and cls in ("Add", "Subtract", "Multiply") and len(args) == 2:
            sym = {"Add": "+", "Subtract": "-", "Multiply": "*"}[cls]
            return self.emit(f"{args[0].name} {sym} {args[1].name}", args, [out_shape], scale)
        if style == "function":
            return self.emit(f"layers.{cls.lower()}({names})", args, [out_shape], scale)
        return self.emit(f"{self.layer(cls)}({names})", args, [out_shape], scale)

    def shared(self, a: Tensor, b: Tensor) -> bool:
        """One layer object called on two values of the same shape (shared weights)."""
        mark = len(self.refused)
        try:
            call, shapes = self.draw_layer(a)
        except Unfit:
            call, shapes = "@", []
        scale_a = self.out_scale  # drawn for `a`; `b` may hold larger values
        scale_b = scale_a * max(1.0, b.scale / max(a.scale, 1e-6))
        if len(shapes) != 1 or call.startswith("@") or scale_b > MAX_SCALE:
            del self.refused[mark:]  # only what the program holds
            return False
        self.n_shared += 1
        name = f"shared{self.n_shared}"
        self.lines.append(f"{name} = {call}")
        self.emit(f"{name}({a.name})", [a], shapes, scale_a)
        self.emit(f"{name}({b.name})", [b], shapes, scale_b)
        return True

    def step(self) -> None:
        action = self.pick(["unary", "unary", "merge", "unary", "branch", "shared"])
        candidates = self.merge_candidates() if action in ("merge", "shared") else []
        if action == "merge" and candidates:
            self.merge(*self.pick(candidates))
            return
        if action == "shared":
            pairs = [c[1] for c in candidates if c[0] == "same"]
            if pairs and self.shared(*self.pick(pairs)):
                return
        floats = self.floats()
        pool = self.values if not floats or self.rare(8) else floats
        t = self.pick(pool[::-1])  # the newest value first: chains shrink best
        outs = self.unary(t)
        if action in ("branch", "merge") and not t.is_int:
            # a residual/inception-like branch: join the new value with where it started
            new = outs[0]
            if new.shape == t.shape:
                self.merge("same", [t, new], t.shape)
            elif new.rank == t.rank and sum(x != y for x, y in zip(new.shape, t.shape)) == 1:
                k = next(k for k in range(t.rank) if new.shape[k] != t.shape[k])
                out = t.shape[:k] + (t.shape[k] + new.shape[k],) + t.shape[k + 1:]
                if fits(out):
                    self.merge("concat", [t, new], out)

    def source(self) -> tuple[str, int]:
        sinks = [t for t in self.values if t.name not in self.consumed and t not in self.inputs]
        ins = self.inputs[0].name if len(self.inputs) == 1 else f"[{', '.join(t.name for t in self.inputs)}]"
        outs = sinks[0].name if len(sinks) == 1 else f"[{', '.join(t.name for t in sinks)}]"
        model = f"keras.Model(inputs={ins}, outputs={outs})" if self.rare(6) else f"keras.Model({ins}, {outs})"
        body = self.lines + [f"return {model}"]
        return HEADER + "".join(f"    {line}\n" for line in body), len(sinks)


@st.composite
def keras_programs(draw, max_steps: int = 10) -> FuzzProgram:
    """A random valid Keras functional program (see the module docstring)."""
    b = ProgramBuilder(draw)
    b.add_input()
    if b.rare(4):
        if b.flag():
            b.add_input_of(b.inputs[0].shape, b.inputs[0].is_int)  # mergeable with the first
        else:
            b.add_input()
    for t in list(b.inputs):  # every input feeds the model
        b.unary(t)
    for _ in range(b.int(1, max_steps)):
        b.step()
    source, outputs = b.source()
    return FuzzProgram(source, outputs, tuple(b.refused))


# ---------------------------------------------------------------------------------
# Layers: each draws its attributes for an input value and returns
# (the layer expression, [output shapes]) -- or raises Unfit.
# ---------------------------------------------------------------------------------
def _activation_kw(b: ProgramBuilder) -> str | None:
    """An ``activation=`` argument (or None); applies it to ``b.out_scale``."""
    if not b.flag():
        return None
    name = b.pick(ACTIVATIONS)
    b.out_scale = activation_scale(name, b.out_scale)
    return f"keras.activations.{name}" if b.rare(6) else repr(name)


def op_identity(b, t):
    return b.layer("Identity"), [t.shape]


def op_activation(b, t):
    name = b.pick(ACTIVATIONS)
    b.out_scale = activation_scale(name, t.scale)
    return b.layer("Activation", repr(name)), [t.shape]


def op_dense(b, t):
    units = b.int(1, 8)
    use_bias = "False" if b.rare(4) else None
    b.out_scale = weighted_scale(t.scale)
    return b.layer("Dense", str(units), activation=_activation_kw(b), use_bias=use_bias), [t.shape[:-1] + (units,)]


def op_dropout(b, t):
    return b.layer("Dropout", repr(b.pick([0.5, 0.1, 0.9]))), [t.shape]


def op_batch_norm(b, t):
    axes = [-1] + list(range(1, t.rank + 1)) + list(range(-t.rank, -1))
    axis = b.pick(axes)
    kwargs = {"axis": None if axis == -1 else str(axis)}
    if b.flag():
        kwargs["momentum"] = repr(b.pick([0.9, 0.5]))
        kwargs["epsilon"] = repr(b.pick([1e-5, 0.1]))
    if b.rare(4):
        kwargs["center"] = "False"
    if b.rare(4):
        kwargs["scale"] = "False"
    b.out_scale = 2.5 * t.scale + 1.0  # moving variance >= 0.5, gamma ~ 1 +- 0.2
    return b.layer("BatchNormalization", **kwargs), [t.shape]


def op_layer_norm(b, t):
    choice = b.pick(["last", "one", "several"])
    if choice == "last" or t.rank == 1:
        axes, axis = [t.rank], None
    elif choice == "one":
        spelled = b.pick(list(range(1, t.rank + 1)) + [-2])
        axes, axis = [spelled % (t.rank + 1)], str(spelled)
    else:
        axes = b.axes(t.rank, at_least=2)
        axis = repr(axes)
    normalised = math.prod(t.shape[a - 1] for a in axes)
    if normalised < 2:
        # Over one element x - mean is 0, but Keras computes x * inv - mean * inv with
        # inv = gamma / sqrt(epsilon): a cancellation error of up to |x| * 1e-7 * 300 that
        # is not the translation's.
        raise Unfit
    b.out_scale = 1.5 * math.sqrt(normalised) + 1.0
    kwargs = {"axis": axis}
    if b.flag():
        kwargs["epsilon"] = repr(b.pick([1e-5, 0.1]))
    if b.rare(4):
        kwargs["center"] = "False"
    if b.rare(4):
        kwargs["scale"] = "False"
    return b.layer("LayerNormalization", **kwargs), [t.shape]


def op_rms_norm(b, t):
    n = t.shape[-1]
    b.out_scale = 1.5 * math.sqrt(n) + 1.0
    return b.layer("RMSNormalization", epsilon=repr(b.pick([1e-6, 1e-3])) if b.flag() else None), [t.shape]


def op_group_norm(b, t):
    c = t.shape[-1]
    groups = b.pick([g for g in range(1, c + 1) if c % g == 0])
    normalised = math.prod(t.shape[:-1]) * (c // groups)
    if normalised < 2:
        raise Unfit  # (the cancellation error of a one-element mean, as for LayerNormalization)
    b.out_scale = 1.5 * math.sqrt(normalised) + 1.0
    return b.layer("GroupNormalization", str(groups), center="False" if b.rare(4) else None), [t.shape]


def op_normalization(b, t):
    c = t.shape[-1]
    mean = [round(0.5 * i - 1.0, 2) for i in range(c)]
    variance = [1.0 + 0.5 * i for i in range(c)]
    b.out_scale = t.scale + max(abs(m) for m in mean)
    return b.layer("Normalization", mean=repr(mean), variance=repr(variance)), [t.shape]


def op_relu_layer(b, t):
    kwargs = {}
    if b.flag():
        kwargs["max_value"] = repr(b.pick([6.0, 1.0]))
        b.out_scale = min(t.scale, float(kwargs["max_value"]))
    if b.flag():
        kwargs["negative_slope"] = repr(b.pick([0.1, 0.3]))
    if b.flag():
        kwargs["threshold"] = repr(b.pick([0.5, 1.0]))
    return b.layer("ReLU", **kwargs), [t.shape]


def op_leaky_relu(b, t):
    if not b.flag():
        return b.layer("LeakyReLU"), [t.shape]
    return b.layer("LeakyReLU", negative_slope=repr(b.pick([0.1, 0.01, 0.5]))), [t.shape]


def op_elu(b, t):
    return b.layer("ELU", alpha=repr(b.pick([0.5, 2.0])) if b.flag() else None), [t.shape]


def op_prelu(b, t):
    shared = None
    if t.rank > 1 and b.flag():
        axes = b.axes(t.rank, at_least=1)
        shared = repr(axes)
    return b.layer("PReLU", shared_axes=shared), [t.shape]


def op_softmax(b, t):
    axis = b.pick([-1] + list(range(1, t.rank + 1)) + list(range(-t.rank, -1)))
    b.out_scale = 1.0
    return b.layer("Softmax", axis=None if axis == -1 else str(axis)), [t.shape]


def op_rescaling(b, t):
    if b.rare(4):
        c = t.shape[-1]
        scale = repr([b.pick([0.5, 2.0, -1.0]) for _ in range(c)])
        b.out_scale = 2.0 * t.scale + 0.1 * c
        return b.layer("Rescaling", scale, offset=repr([0.1 * i for i in range(c)])), [t.shape]
    factor = b.pick([2.0, 0.5, -1.0, 1 / 255])
    offset = repr(b.pick([0.5, -1.0])) if b.flag() else None
    b.out_scale = abs(factor) * t.scale + (1.0 if offset else 0.0)
    scale = repr(factor)
    return b.layer("Rescaling", scale, offset=offset), [t.shape]


def op_constant_arithmetic(b, t):
    expr = b.pick(["{} * 2.0", "2.0 * {}", "{} / 4.0", "{} + 1.5", "{} - 0.5"])
    b.out_scale = 2 * t.scale if "*" in expr else t.scale / 4 if "/" in expr else t.scale + 1.5
    return "@" + expr.format(t.name), [t.shape]


def op_tensor_math(b, t):
    """A keras.ops function or a Python operator on the tensor (axes drawn over its non-batch
    axes: on a conv's output the translation rewrites them for channels-first, or permutes)."""
    rank, n = t.rank, t.name
    kind = b.pick(["reduce", "elementwise", "expand_dims", "transpose", "reshape", "take", "split", "squeeze",
                   "softmax", "einsum"])
    if kind == "reduce":
        fn = b.pick(["mean", "max", "min", "sum"])
        axes = b.axes(rank, 1)
        keep = b.flag()
        shape = tuple(1 if i + 1 in axes else d for i, d in enumerate(t.shape)) if keep else \
            tuple(d for i, d in enumerate(t.shape) if i + 1 not in axes)
        if fn == "sum":
            b.out_scale = t.scale * numel([t.shape[a - 1] for a in axes])
        axis = axes[0] if len(axes) == 1 and b.flag() else tuple(axes)
        if axis == rank and b.flag():
            axis = -1
        return f"@keras.ops.{fn}({n}, axis={axis!r}, keepdims={keep})", [shape]
    if kind == "elementwise":
        expr, scale = b.pick([("keras.ops.clip({}, -1.0, 0.5)", 1.0), ("keras.ops.abs({})", t.scale),
                              ("-{}", t.scale), ("2.0 - {}", t.scale + 2.0), ("{} ** 2", t.scale ** 2),
                              ("keras.ops.square({})", t.scale ** 2), ("keras.ops.where({0} > 0, {0}, 0.1 * {0})",
                                                                        t.scale),
                              ("keras.ops.maximum({}, 0.25)", t.scale), ("keras.ops.exp(keras.ops.tanh({}))", 3.0),
                              ("{} / (keras.ops.abs({}) + 1.0)", 1.0), ("{} + keras.ops.zeros_like({})", t.scale),
                              ("keras.ops.ones_like({}) - {}", t.scale + 1.0),
                              ("keras.ops.full_like({}, 0.5) * {}", t.scale)])
        b.out_scale = scale
        return "@" + expr.format(n, n), [t.shape]
    if kind == "expand_dims":
        if rank >= 4:
            raise Unfit
        axis = b.int(1, rank + 1)
        spelled = -1 if axis == rank + 1 and b.flag() else axis
        return f"@keras.ops.expand_dims({n}, {spelled})", [t.shape[:axis - 1] + (1,) + t.shape[axis - 1:]]
    if kind == "transpose":
        perm = b.draw(st.permutations(list(range(1, rank + 1))))
        return f"@keras.ops.transpose({n}, {(0, *perm)!r})", [tuple(t.shape[p - 1] for p in perm)]
    if kind == "reshape":
        shape = _factor(b, numel(t.shape), b.pick([2, 1, 3]))
        return f"@keras.ops.reshape({n}, {(-1, *shape)!r})", [shape]
    if kind == "take":
        k = b.int(1, rank)
        size = t.shape[k - 1]
        if b.flag():
            return f"@keras.ops.take({n}, {b.int(0, size - 1)}, axis={k})", [t.shape[:k - 1] + t.shape[k:]]
        idx = sorted({b.int(0, size - 1) for _ in range(b.int(1, 3))})
        return f"@keras.ops.take({n}, {idx!r}, axis={k})", [t.shape[:k - 1] + (len(idx),) + t.shape[k:]]
    if kind == "split":
        k = b.int(1, rank)
        size = t.shape[k - 1]
        if size < 2 or size % 2:
            raise Unfit
        half = t.shape[:k - 1] + (size // 2,) + t.shape[k:]
        return f"@keras.ops.split({n}, 2, axis={-1 if k == rank else k})", [half, half]
    if kind == "squeeze":
        ones = [i + 1 for i, d in enumerate(t.shape) if d == 1]
        if not ones or rank == 1:
            raise Unfit
        k = b.pick(ones)
        return f"@keras.ops.squeeze({n}, axis={k})", [t.shape[:k - 1] + t.shape[k:]]
    if kind == "einsum":  # the axes permuted, one of them summed over, or a product with itself
        letters = "ijkl"[:rank]
        perm = b.draw(st.permutations(list(range(rank))))
        kept = [p for p in perm if not (rank > 1 and p == perm[-1] and b.flag())]
        out = "".join(letters[p] for p in kept)
        summed = numel([t.shape[p] for p in range(rank) if p not in kept])
        if b.flag():
            b.out_scale = t.scale ** 2 * summed
            return f"@keras.ops.einsum('b{letters},b{letters}->b{out}', {n}, {n})", [tuple(t.shape[p] for p in kept)]
        b.out_scale = t.scale * summed
        return f"@keras.ops.einsum('b{letters}->b{out}', {n})", [tuple(t.shape[p] for p in kept)]
    b.out_scale = 1.0
    return f"@keras.ops.softmax({n}, axis={b.int(1, rank)})", [t.shape]


def op_flatten(b, t):
    return b.layer("Flatten"), [(numel(t.shape),)]


def _factor(b, n: int, rank: int) -> tuple:
    dims = []
    for _ in range(rank - 1):
        divisors = [d for d in range(1, n + 1) if n % d == 0]
        d = b.pick(divisors[::-1] if b.flag() else divisors)
        dims.append(d)
        n //= d
    return tuple(dims) + (n,)


def op_reshape(b, t):
    rank = b.pick([2, 1, 3, 4])
    shape = _factor(b, numel(t.shape), rank)
    if not fits(shape):
        raise Unfit
    spelled = list(shape)
    if b.flag():
        spelled[b.int(0, rank - 1)] = -1
    return b.layer("Reshape", repr(tuple(spelled))), [shape]


def op_permute(b, t):
    perm = b.draw(st.permutations(list(range(1, t.rank + 1))))
    return b.layer("Permute", repr(tuple(perm))), [tuple(t.shape[p - 1] for p in perm)]


def op_repeat_vector(b, t):
    n = b.int(1, 4)
    return b.layer("RepeatVector", str(n)), [(n,) + t.shape]


def op_embedding(b, t):
    vocab, dim = b.int(2, 12), b.int(1, 5)
    b.out_scale = 1.0
    return b.layer("Embedding", str(vocab), str(dim)), [t.shape + (dim,)]


# -- convolutions and pooling (rank = number of spatial axes) -----------------------------
def _strides_or_dilation(b, rank: int):
    mode = b.pick(["plain", "strided", "dilated"])
    strides = b.sizes(rank, 1, 3) if mode == "strided" else 1
    dilation = b.sizes(rank, 1, 2) if mode == "dilated" else 1
    return strides, dilation


def _spatial_out(b, t, rank, kernel, strides, dilation, padding) -> tuple:
    if any(s > n for n, s in zip(t.shape[:rank], per_dim(strides, rank))):
        # TensorFlow's own CPU convolution returns garbage for a stride wider than the
        # input axis (seen for Conv2D 'same', one input channel, strides (1, s > W)):
        # Keras itself is wrong there, so no such layer is drawn
        raise Unfit
    out = tuple(conv_len(n, k, s, d, padding) for n, k, s, d in zip(
        t.shape[:rank], per_dim(kernel, rank), per_dim(strides, rank), per_dim(dilation, rank)))
    if any(n < 1 for n in out):
        raise Unfit
    return out


def _conv_kwargs(strides, dilation, padding) -> dict:
    return {"strides": None if strides == 1 else repr(strides),
            "padding": None if padding == "valid" else repr(padding),
            "dilation_rate": None if dilation == 1 else repr(dilation)}


def conv_op(rank: int):
    def op(b, t):
        c = t.shape[-1]
        padding = b.pick(["valid", "same"] + (["causal"] if rank == 1 else []))
        kernel = b.sizes(rank, 1, 4)
        strides, dilation = _strides_or_dilation(b, rank)
        spatial = _spatial_out(b, t, rank, kernel, strides, dilation, padding)
        b.out_scale = weighted_scale(t.scale)
        groups = None
        filters = b.int(1, 6)
        if c > 1 and b.rare(4):
            g = b.pick([d for d in range(2, c + 1) if c % d == 0])
            groups, filters = str(g), g * b.int(1, 2)
        cls = b.pick([f"Conv{rank}D", f"Convolution{rank}D"]) if b.rare(8) else f"Conv{rank}D"
        kwargs = _conv_kwargs(strides, dilation, padding)
        return b.layer(cls, str(filters), repr(kernel), **kwargs, groups=groups,
                       activation=_activation_kw(b), use_bias="False" if b.rare(4) else None), \
            [spatial + (filters,)]
    return op


def conv_transpose_op(rank: int):
    def op(b, t):
        padding = b.pick(["valid", "same"])
        kernel = b.sizes(rank, 1, 4)
        strides, dilation = _strides_or_dilation(b, rank)
        output_padding = None
        if any(s > 1 for s in per_dim(strides, rank)) and b.rare(3):
            output_padding = tuple(b.int(0, s - 1) for s in per_dim(strides, rank))
            if rank == 1 or len(set(output_padding)) == 1:
                output_padding = output_padding[0]
        ops_ = per_dim(output_padding, rank) if output_padding is not None else (None,) * rank
        if padding == "same" and any(o == 0 and (k + (k - 1) * (d - 1)) % 2 == 0 for k, d, o in zip(
                per_dim(kernel, rank), per_dim(dilation, rank), ops_)):
            raise Unfit  # TensorFlow aborts (oneDNN: no primitive) on an even kernel, 'same', output_padding 0
        spatial = tuple(conv_transpose_len(n, k, s, d, padding, o) for n, k, s, d, o in zip(
            t.shape[:rank], per_dim(kernel, rank), per_dim(strides, rank), per_dim(dilation, rank), ops_))
        if any(n < 1 for n in spatial):
            raise Unfit
        filters = b.int(1, 5)
        b.out_scale = weighted_scale(t.scale)
        kwargs = _conv_kwargs(strides, dilation, padding)
        return b.layer(f"Conv{rank}DTranspose", str(filters), repr(kernel), **kwargs,
                       output_padding=None if output_padding is None else repr(output_padding),
                       activation=_activation_kw(b), use_bias="False" if b.rare(4) else None), \
            [spatial + (filters,)]
    return op


def op_depthwise_conv2d(b, t):
    padding = b.pick(["valid", "same"])
    kernel = b.sizes(2, 1, 4)
    strides, dilation = _strides_or_dilation(b, 2)
    spatial = _spatial_out(b, t, 2, kernel, strides, dilation, padding)
    mult = b.int(1, 2)
    b.out_scale = weighted_scale(t.scale)
    return b.layer("DepthwiseConv2D", repr(kernel), **_conv_kwargs(strides, dilation, padding),
                   depth_multiplier=None if mult == 1 else str(mult), activation=_activation_kw(b),
                   use_bias="False" if b.rare(4) else None), [spatial + (t.shape[-1] * mult,)]


def op_separable_conv2d(b, t):
    padding = b.pick(["valid", "same"])
    kernel = b.sizes(2, 1, 4)
    strides, dilation = _strides_or_dilation(b, 2)
    spatial = _spatial_out(b, t, 2, kernel, strides, dilation, padding)
    mult, filters = b.int(1, 2), b.int(1, 6)
    b.out_scale = weighted_scale(weighted_scale(t.scale))
    return b.layer("SeparableConv2D", str(filters), repr(kernel), **_conv_kwargs(strides, dilation, padding),
                   depth_multiplier=None if mult == 1 else str(mult), activation=_activation_kw(b),
                   use_bias="False" if b.rare(4) else None), [spatial + (filters,)]


def pool_op(rank: int):
    def op(b, t):
        kind = b.pick(["Max", "Average"])
        padding = b.pick(["valid", "same"])
        pool = b.sizes(rank, 1, 3)
        strides = None if b.flag() else b.sizes(rank, 1, 3)
        eff_strides = pool if strides is None else strides
        spatial = tuple(pool_len(n, p, s, padding) for n, p, s in zip(
            t.shape[:rank], per_dim(pool, rank), per_dim(eff_strides, rank)))
        if any(n < 1 for n in spatial):
            raise Unfit
        cls = f"{kind}Pooling{rank}D" if not b.rare(6) else f"{'Max' if kind == 'Max' else 'Avg'}Pool{rank}D"
        return b.layer(cls, repr(pool), strides=None if strides is None else repr(strides),
                       padding=None if padding == "valid" else repr(padding)), [spatial + t.shape[rank:]]
    return op


def global_pool_op(rank: int):
    def op(b, t):
        kind = b.pick(["Average", "Max"])
        keep = b.flag()
        shape = (1,) * rank + (t.shape[-1],) if keep else (t.shape[-1],)
        return b.layer(f"Global{kind}Pooling{rank}D", keepdims="True" if keep else None), [shape]
    return op


def pad_op(rank: int):
    def op(b, t):
        style = b.pick(["int", "per_axis", "pairs"])
        if style == "int":
            p = b.int(0, 2)
            pads, spelled = ((p, p),) * rank, str(p)
        elif style == "per_axis" and rank > 1:
            ps = tuple(b.int(0, 2) for _ in range(rank))
            pads, spelled = tuple((p, p) for p in ps), repr(ps)
        else:
            pairs = tuple((b.int(0, 2), b.int(0, 2)) for _ in range(rank))
            pads, spelled = pairs, repr(pairs[0] if rank == 1 else pairs)
        spatial = tuple(n + lo + hi for n, (lo, hi) in zip(t.shape[:rank], pads))
        return b.layer(f"ZeroPadding{rank}D", spelled), [spatial + t.shape[rank:]]
    return op


def crop_op(rank: int):
    def op(b, t):
        pairs = []
        for n in t.shape[:rank]:
            lo = b.int(0, min(2, n - 1))
            pairs.append((lo, b.int(0, min(2, n - 1 - lo))))
        pairs = tuple(pairs)
        spatial = tuple(n - lo - hi for n, (lo, hi) in zip(t.shape[:rank], pairs))
        return b.layer(f"Cropping{rank}D", repr(pairs[0] if rank == 1 else pairs)), [spatial + t.shape[rank:]]
    return op


def op_upsample1d(b, t):
    size = b.int(1, 3)
    return b.layer("UpSampling1D", str(size)), [(t.shape[0] * size,) + t.shape[1:]]


def op_upsample2d(b, t):
    size = b.sizes(2, 1, 3)
    interp = repr("bilinear") if b.flag() else None
    h, w = per_dim(size, 2)
    return b.layer("UpSampling2D", repr(size), interpolation=interp), [(t.shape[0] * h, t.shape[1] * w, t.shape[2])]


def spatial_dropout_op(rank: int):
    def op(b, t):
        return b.layer(f"SpatialDropout{rank}D", repr(b.pick([0.5, 0.2]))), [t.shape]
    return op


N_STATES = {"SimpleRNN": 1, "LSTM": 2, "GRU": 1}


def _rnn_layer(b, t, wrapped: bool = False) -> tuple[str, str, int, bool, bool]:
    if t.shape[0] > MAX_RNN_STEPS:
        raise Unfit
    cell = b.pick(["LSTM", "GRU", "SimpleRNN"])
    units = b.int(1, 5)
    seq, state = b.flag(), b.rare(3)
    backwards = b.rare(12 if wrapped else 3)
    if backwards and wrapped:
        b.refused.append("Bidirectional over a go_backwards=True layer")
    kwargs = {"return_sequences": "True" if seq else None, "return_state": "True" if state else None,
              "go_backwards": "True" if backwards else None, "use_bias": "False" if b.rare(4) else None}
    if cell == "LSTM" and b.rare(4):
        kwargs["unit_forget_bias"] = "False"
    b.out_scale = float(t.shape[0]) if cell == "LSTM" and state else 1.0  # |c| <= steps
    return b.layer(cell, str(units), **kwargs), cell, units, seq, state


def op_rnn(b, t):
    layer, cell, units, seq, state = _rnn_layer(b, t)
    main = (t.shape[0], units) if seq else (units,)
    return layer, [main] + [(units,)] * (N_STATES[cell] * state)


def op_bidirectional(b, t):
    layer, cell, units, seq, state = _rnn_layer(b, t, wrapped=True)
    mode = b.pick(["concat", "sum", "mul", "ave", None])
    width = 2 * units if mode == "concat" else units
    main = (t.shape[0], width) if seq else (width,)
    mains = [main, main] if mode is None else [main]
    merge = None if mode == "concat" else repr(mode)
    b.out_scale *= 2.0 if mode == "sum" else 1.0
    return b.layer("Bidirectional", layer, merge_mode=merge), mains + [(units,)] * (2 * N_STATES[cell] * state)


GENERAL_OPS = [op_dense, op_activation, op_identity, op_dropout, op_batch_norm, op_layer_norm, op_relu_layer,
               op_leaky_relu, op_elu, op_prelu, op_softmax, op_rescaling, op_constant_arithmetic, op_flatten,
               op_reshape, op_rms_norm, op_group_norm, op_normalization, op_tensor_math]
RANK_OPS = {
    1: [op_repeat_vector],
    2: [conv_op(1), pool_op(1), op_rnn, op_bidirectional, global_pool_op(1), conv_transpose_op(1),
        pad_op(1), crop_op(1), op_upsample1d, spatial_dropout_op(1), op_permute],
    3: [conv_op(2), pool_op(2), op_depthwise_conv2d, op_separable_conv2d, global_pool_op(2),
        conv_transpose_op(2), pad_op(2), crop_op(2), op_upsample2d, spatial_dropout_op(2), op_permute],
    4: [conv_op(3), pool_op(3), global_pool_op(3), pad_op(3), crop_op(3), spatial_dropout_op(3), op_permute],
}


# -- constructs the transpiler documents as refused ------------------------------------------
def _refused(description: str, cls: str, *args: str, shape: Callable = lambda t: [t.shape], **kwargs):
    def op(b, t):
        b.refused.append(description)
        return b.layer(cls, *args, **kwargs), shape(t)
    return op


REFUSED = {
    2: [_refused("GRU(reset_after=False)", "GRU", "3", reset_after="False", shape=lambda t: [(3,)]),
        _refused("LSTM(activation='relu')", "LSTM", "3", activation=repr("relu"), shape=lambda t: [(3,)]),
        _refused("SimpleRNN(activation='relu')", "SimpleRNN", "2", activation=repr("relu"),
                 shape=lambda t: [(2,)]),
        _refused("LayerNormalization(rms_scaling=True)", "LayerNormalization", rms_scaling="True")],
    3: [_refused("UpSampling2D(interpolation='bicubic')", "UpSampling2D", interpolation=repr("bicubic"),
                 shape=lambda t: [(2 * t.shape[0], 2 * t.shape[1], t.shape[2])])],
    4: [_refused("UpSampling3D", "UpSampling3D", shape=lambda t: [(2 * t.shape[0], 2 * t.shape[1],
                                                                   2 * t.shape[2], t.shape[3])])],
}


def op_embedding_masked(b, t):
    # the mask reaches what reads it (RNNs, GlobalAveragePooling1D) or is refused there
    # (Bidirectional, Softmax, merged masks): either way never ignored
    return b.layer("Embedding", "6", "3", mask_zero="True"), [t.shape + (3,)]
