"""Programs whose loss is built from forward passes of earlier calls, as reinforcement-learning
programs write them (pytorch/examples' REINFORCE and actor-critic)::

    class Policy(nn.Module):
        def __init__(self):
            ...
            self.saved_log_probs = []           # the module's own Python lists
            self.rewards = []

    def select_action(state):                   # one call per environment step
        probs = policy(torch.from_numpy(state).float().unsqueeze(0))
        m = Categorical(probs)
        action = m.sample()
        policy.saved_log_probs.append(m.log_prob(action))
        return action.item()

    def finish_episode():                       # one update per episode
        ...
        loss = torch.cat([-lp * r for lp, r in zip(policy.saved_log_probs, returns)]).sum()
        optimizer.zero_grad(); loss.backward(); optimizer.step()
        del policy.saved_log_probs[:]

The function holding ``backward()`` calls no model: its loss is made of tensors recorded in
earlier calls. torch's autograd records every forward pass; a ``tf.GradientTape`` opened in
that function records none of them. The Keras program therefore records from its start
(``RecordingTape``: ``autograd_tape.gradient`` ends a recording and starts the next), its model
outputs stay Keras tensors everywhere (``reader.live`` for the whole program), and a model may
be called on one sample without a batch axis, as torch modules allow (``call_module``).
Recomputing the episode's forward passes inside a tape instead would draw other dropout masks
than the ones the sampled actions saw.

Also here: ``torch.distributions.Categorical`` (the generated ``Categorical``: sample, log_prob,
entropy, probs, logits), the module's own list attributes (set on the Keras model by the
generated ``with_attributes``), and ``collections.namedtuple`` records of tensors.
"""

from __future__ import annotations

import libcst as cst

from transpiler.cst_fast import nodes_of
from transpiler.frontend_ast.torch.modules import Unsupported
from transpiler.frontend_ast.torch.reader_values import (
    _code, Arr, DistributionV, GroupV, LiveV, ModelV, OTHER, SampleV, TupleV, V)
from transpiler.ir.code_literals import dotted_name as _dotted

CATEGORICAL = ("torch.distributions.Categorical", "torch.distributions.categorical.Categorical")
#: the methods of a distribution: what each returns
DISTRIBUTION_METHODS = ("sample", "log_prob", "entropy")
#: the name the generated program's tape goes by (transpiler/runtime/keras/autograd.py)
TAPE = "autograd_tape"


def _model_names(reader) -> set[str]:
    """Names the program binds to a model it builds (``policy = Policy()``), anywhere."""
    names: set[str] = set()

    class Finder(cst.CSTVisitor):
        def visit_Assign(self, n: cst.Assign) -> None:
            if isinstance(n.value, cst.Call) and isinstance(n.value.func, cst.Name) and \
                    n.value.func.value in reader.factories:
                names.update(t.target.value for t in n.targets if isinstance(t.target, cst.Name))

    reader.fe.module.visit(Finder())
    return names


def needs_recording(reader) -> bool:
    """Whether a function of the program steps an optimizer on a loss made of no forward pass
    of its own: it calls ``backward()`` in its body and no model, no model builder and no
    function of the program (which could call one)."""
    from transpiler.frontend_ast.torch.steps import steps_in_body

    models = _model_names(reader)
    own = set(reader.fe.functions) | set(reader.factories)
    for stmt in reader.fe.module.body:
        if not isinstance(stmt, cst.FunctionDef) or not steps_in_body(stmt):
            continue
        called = {_dotted(c.func) or "" for c in nodes_of(stmt, cst.Call)}
        if any(name in models or name in own or name.split(".")[0] in models and name.endswith(".forward")
               for name in called):
            continue
        return True
    return False


# -- the module's own Python attributes --------------------------------------------------------
def _literal(node) -> bool:
    """A value the Keras program can make again where the model is built: a number, a string,
    a bool/None, or a list, tuple or dict display of them."""
    if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString)):
        return True
    if isinstance(node, cst.Name):
        return node.value in ("True", "False", "None")
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        return _literal(node.expression)
    if isinstance(node, (cst.List, cst.Tuple)):
        return all(isinstance(e, cst.Element) and _literal(e.value) for e in node.elements)
    if isinstance(node, cst.Dict):
        return all(isinstance(e, cst.DictElement) and _literal(e.key) and _literal(e.value) for e in node.elements)
    return False


def plain_attributes(reader, class_name: str) -> dict[str, cst.BaseExpression]:
    """``self.X = <literal>`` statements of the module class's ``__init__``, by name."""
    for stmt in reader.fe.module.body:
        if not (isinstance(stmt, cst.ClassDef) and stmt.name.value == class_name):
            continue
        init = next((s for s in stmt.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"),
                    None)
        out: dict[str, cst.BaseExpression] = {}
        for line in init.body.body if init is not None else ():
            if not isinstance(line, cst.SimpleStatementLine):
                continue
            for small in line.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1 and \
                        isinstance(t := small.targets[0].target, cst.Attribute) and \
                        isinstance(t.value, cst.Name) and t.value.value == "self" and _literal(small.value):
                    out[t.attr.value] = small.value
        return out
    return {}


def model_attribute(reader, model: ModelV, name: str) -> V | None:
    """``policy.saved_log_probs``: the list the module made in ``__init__`` (what the program
    appends to it is kept, for the code that reads it back); None if not such an attribute."""
    if model.md is None or name not in plain_attributes(reader, model.md.class_name):
        return None
    if model.built_by is not None and not reader.quiet:
        _give_attributes(reader, model)
    value = plain_attributes(reader, model.md.class_name)[name]
    if isinstance(value, cst.List):
        return model.attributes.setdefault(name, TupleV([]))
    return OTHER


def construction(reader, node: cst.Call, args, model: ModelV) -> None:
    """``Policy()``: where the Keras model gets the module's own Python attributes, if the
    program reads one (``model_attribute``)."""
    model.built_by = (node, args)


def _give_attributes(reader, model: ModelV) -> None:
    """``Policy()`` → ``with_attributes(Policy(), saved_log_probs=[], rewards=[])``."""
    node, args = model.built_by
    attrs = plain_attributes(reader, model.md.class_name)
    parts: list = [node.func]
    texts = []
    for arg, _value in args:
        if arg.star:
            raise Unsupported("a model built with unpacked arguments and its own list attributes")
        parts.append(arg.value)
        texts.append((f"{arg.keyword.value}=" if arg.keyword is not None else "") + "{%d}" % (len(parts) - 1))
    given = ", ".join(f"{k}={_code(v)}".replace("{", "{{").replace("}", "}}") for k, v in attrs.items())
    reader.runtime_expr(node, "with_attributes({0}(" + ", ".join(texts) + "), " + given + ")", parts,
                        ["with_attributes"])


def namedtuple_names(reader) -> set[str]:
    """Names the module binds to ``namedtuple(...)`` / ``collections.namedtuple(...)`` classes."""
    found = getattr(reader, "_namedtuples", None)
    if found is None:
        found = set()
        for stmt in reader.fe.module.body:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.Assign) and isinstance(small.value, cst.Call) and \
                            (_dotted(small.value.func) or "").split(".")[-1] == "namedtuple":
                        found.update(t.target.value for t in small.targets if isinstance(t.target, cst.Name))
        reader._namedtuples = found
    return found


# -- torch.distributions ----------------------------------------------------------------------
def distribution(reader, path: str, node: cst.Call, args) -> V:
    """``Categorical(probs)`` / ``Categorical(logits=x)`` → the generated ``Categorical``."""
    pos = [(a, v) for a, v in args if a.keyword is None]
    kw = {a.keyword.value: (a, v) for a, v in args if a.keyword is not None}
    if set(kw) - {"probs", "logits", "validate_args"} or len(pos) > 1 or (pos and kw.keys() & {"probs"}):
        raise Unsupported(f"{path}: arguments {_code(node)} are not translated")
    if pos:
        given, value = "probs", pos[0][0].value
    elif "logits" in kw:
        given, value = "logits", kw["logits"][0].value
    elif "probs" in kw:
        given, value = "probs", kw["probs"][0].value
    else:
        raise Unsupported(f"{path} without probs or logits")
    reader.runtime_expr(node, f"Categorical({given}={{0}})", [value], ["Categorical"])
    return DistributionV()


def distribution_method(reader, name: str, node: cst.Call, args) -> V:
    recv = node.func.value
    if name == "sample":
        shape = [a.value for a, _ in args]
        if len(shape) > 1 or any(a.keyword is not None and a.keyword.value != "sample_shape" for a, _ in args):
            raise Unsupported(f"Categorical.sample({_code(node)}) arguments are not translated")
        reader.array(node, "{0}.sample(" + ("{1}" if shape else "") + ")", [recv] + shape)
        return SampleV()
    if name in ("log_prob", "entropy"):
        parts = [recv] + [a.value for a, _ in args]
        inner = ", ".join("{%d}" % i for i in range(1, len(parts)))
        reader.array(node, "{0}." + name + "(" + inner + ")", parts)
        return LiveV()
    raise Unsupported(f"Categorical.{name}() is not translated")


def distribution_attribute(reader, name: str, node: cst.Attribute) -> V:
    if name in ("probs", "logits"):
        return LiveV()
    raise Unsupported(f"Categorical.{name} is not translated")


def holds_live(value) -> bool:
    """A Keras tensor of the step, or a list/tuple holding one (``torch.cat(losses)``)."""
    if isinstance(value, LiveV):
        return True
    return isinstance(value, (TupleV, GroupV)) and any(holds_live(v) for v in value.items)


def list_method(value: TupleV | GroupV, name: str, args) -> V | None:
    """``losses.append(x)`` on a list the reader follows: it holds what ``x`` is, for the code
    that reads the list back (``torch.cat(losses)``, ``for lp, r in zip(saved, returns)``)."""
    if name in ("append", "appendleft", "insert") and args:
        value.items.append(args[-1][1])
        return OTHER
    return None


__all__ = ["CATEGORICAL", "TAPE", "needs_recording", "model_attribute", "construction", "distribution",
           "distribution_method", "distribution_attribute", "holds_live", "list_method", "namedtuple_names",
           "Arr"]
