"""The module structure of a model: which user-level blocks become their own modules.

A source program is not one anonymous graph: it defines Layer/Model subclasses, keeps
layers in lists, and builds blocks in helper functions. The frontend records, for every
node, the chain of *scopes* it was created in (``node.from_keras.scopes``: ``(ModuleScope,
call number)`` pairs, outermost first) and the scope that *owns* its layer
(``node.from_keras.owner_scope``, with the layer's attribute name in it,
``node.from_keras.local``). This module decides which scopes can be printed as modules of
their own (a call of the scope must be a self-contained piece of the graph, its layers
owned by it) and gives every layer node its module path (``blocks.0.expand``), the one
the printed module and the checkpoint mapping both use. Scopes that cannot be modules are
inlined into their parent, as every layer was before, under their flat names.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from transpiler.ir.graph import Graph, Node, Value


@dataclass(eq=False)
class ModuleScope:
    """One user-level module instance: a Layer/Model subclass instance, or one call of a
    helper function that builds layers from tensors (``conv_block(x, 32)``).

    ``attr``/``index`` say where its parent holds it (``self.blocks[2]``); ``args`` are the
    static constructor (or helper) arguments, by parameter name; ``params`` the names of
    the call's tensor parameters (``call(self, x)`` → ``["x"]``); ``seq`` orders
    construction."""

    kind: str  # "class" or "function"
    class_name: str
    source_name: str = ""  # the user's class or function
    explicit_name: str | None = None  # the ``name=`` the user gave the instance
    attr: str = ""
    index: int | None = None
    parent: "ModuleScope | None" = None
    args: dict[str, Any] = field(default_factory=dict)
    params: list[str] = field(default_factory=list)
    seq: int = 0
    calls: int = 0
    #: per call: the tensor values passed in (in order) and returned
    call_inputs: dict[int, list[Value]] = field(default_factory=dict)
    call_outputs: dict[int, list[Value]] = field(default_factory=dict)
    #: the source's own docstring of the class/function, if any
    doc: str | None = None
    #: where it was constructed, and the source comments that belong there
    span: Any = None
    comments: list[str] = field(default_factory=list)
    #: a model of the program used as a layer here (Keras shares its layers and weights): the
    #: name that holds it where the parent model is built (a builder's parameter or a module
    #: name), and the model's own ModelDef; the parent takes that instance as an argument
    given_as: str | None = None
    given_model: Any = None
    #: a Keras model called as a layer (Keras keeps its layers in a checkpoint group of their
    #: own, which the Keras weights writer does not reproduce yet: weights/convert.py)
    model_as_layer: bool = False

    def __repr__(self) -> str:
        return f"<{self.kind} {self.class_name} {self.attr}{'' if self.index is None else [self.index]}>"


@dataclass(eq=False)
class Member:
    """One attribute of a printed module: a layer node, a child scope, or a list of them."""

    attr: str
    node: Node | None = None  # a layer's first node
    scope: "ModuleInfo | None" = None
    items: list["Member"] | None = None  # a list attribute (nn.ModuleList)
    seq: int = 0


@dataclass(eq=False)
class ModuleInfo:
    """A scope that is printed as a module: its members and its calls' nodes."""

    scope: ModuleScope | None  # None for the model itself
    path: str  # "" for the model, "blocks.0" ...
    ref: str  # how the parent's code refers to it: "blocks[0]"
    members: list[Member] = field(default_factory=list)
    #: per call number: the nodes the call runs directly (children's nodes excluded)
    calls: dict[int, list[Node]] = field(default_factory=dict)
    children: list["ModuleInfo"] = field(default_factory=list)


@dataclass
class Structure:
    """The model's module tree and every layer node's module path."""

    root: ModuleInfo
    #: id(node) → the dotted path of its module in the state_dict ("blocks.0.expand")
    paths: dict[int, str]
    #: id(scope) → ModuleInfo for every scope kept as a module
    infos: dict[int, ModuleInfo]
    #: id(node) → the ``(ModuleInfo, call number)`` chain it runs in, outermost first
    chains: dict[int, tuple] = field(default_factory=dict)

    @property
    def nested(self) -> bool:
        return bool(self.infos)

    def path(self, node: Node) -> str:
        return self.paths.get(id(node), node.name)


def inherit(new: Node, old: Node, suffix: str) -> None:
    """A pass replaced ``old`` by nodes such as ``new``: it sits in the same module, its
    attribute named ``<old's>_<suffix>``."""
    for key in ("scopes", "owner_scope", "seq"):
        if getattr(old.from_keras, key) is not None:
            setattr(new.from_keras, key, getattr(old.from_keras, key))
    if old.from_keras.local is not None:
        local, index = old.from_keras.local
        new.from_keras.local = (f"{local}_{suffix}" if index is None else local, index)


def chain(node: Node, root: ModuleScope | None) -> tuple:
    return tuple((s, c) for s, c in (node.from_keras.scopes or ()) if s is not root)


def _complete_chains(graph: Graph, root: ModuleScope | None) -> dict[int, tuple]:
    """Each node's scope chain; a node a pass inserted (no record) takes the longest chain
    its producers and consumers share."""
    chains: dict[int, tuple] = {}
    unknown = []
    for node in graph.nodes:
        if node.from_keras.scopes is not None or node.layer is not None:
            chains[id(node)] = chain(node, root)
        else:
            unknown.append(node)
    consumers: dict[int, list[Node]] = {}
    for node in graph.nodes:
        for v in node.inputs:
            consumers.setdefault(id(v), []).append(node)
    for _ in range(3):  # inserted nodes next to inserted nodes
        for node in unknown:
            if id(node) in chains:
                continue
            producers = [v.producer for v in node.inputs if v.producer is not None]
            users = [c for v in node.outputs for c in consumers.get(id(v), [])]
            if any(id(n) not in chains for n in producers + users):
                continue
            # an inserted pad/permute belongs with what reads it, if they agree
            near = users if users and len({chains[id(n)] for n in users}) == 1 else producers + users
            common = None
            for n in near:
                c = chains[id(n)]
                if common is None:
                    common = c
                else:
                    k = 0
                    while k < min(len(common), len(c)) and common[k] == c[k]:
                        k += 1
                    common = common[:k]
            if any(v in graph.outputs for v in node.outputs) or any(v in graph.inputs for v in node.inputs):
                common = ()
            chains[id(node)] = common or ()
    for node in unknown:
        chains.setdefault(id(node), ())
    return chains


def _has_module(node: Node) -> bool:
    """Whether the node's layer is an attribute (a layer with a class, not an operator)."""
    return node.from_keras.local is not None


def _settle_scopes(graph: Graph, chains: dict, root: ModuleScope | None) -> tuple[list[ModuleScope], set[int]]:
    """Every scope some node runs in, and the ids of those that cannot be a module of their
    own (dropped with their descendants until nothing changes)."""
    scopes: list[ModuleScope] = []
    seen: set[int] = set()
    for node in graph.nodes:
        for s, _c in chains[id(node)]:
            if id(s) not in seen:
                seen.add(id(s))
                scopes.append(s)
    invalid: set[int] = set()

    def descendants_of(s: ModuleScope) -> list[ModuleScope]:
        return [t for t in scopes if _is_below(t, s)]

    def drop(s: ModuleScope) -> None:
        for t in [s, *descendants_of(s)]:
            invalid.add(id(t))

    logits = {id(graph.outputs[i]) for i in graph.logits_outputs if i < len(graph.outputs)}

    def innermost(node: Node) -> ModuleScope | None:
        valid = [s for s, _ in chains[id(node)] if id(s) not in invalid]
        return valid[-1] if valid else None

    changed = True
    while changed:
        changed = False
        for s in scopes:
            if id(s) not in invalid and _invalid_reason(s, graph, chains, invalid, root, logits, scopes):
                drop(s)
                changed = True
        # a list attribute is a ModuleList only when all its items are modules
        for s in scopes:
            if id(s) in invalid or s.index is None:
                continue
            if any(id(t) in invalid for t in scopes if t.parent is s.parent and t.attr == s.attr
                   and t.index is not None):
                drop(s)
                changed = True
        # a layer is called by the module that holds it
        for node in graph.nodes:
            if not _has_module(node):
                continue
            held, runs = _nearest_valid(_owner(node, root), invalid, root), innermost(node)
            if held is runs:
                continue
            if held is not None and (runs is None or _is_below(held, runs)):
                drop(held)
            else:
                drop(runs)
            changed = True
    return scopes, invalid


def build_structure(graph: Graph) -> Structure:
    """Decide the module tree of ``graph`` (cached in ``graph.structure_cache``)."""
    cached = graph.structure_cache
    # (the logits outputs decide which scopes stay modules: a mark set after the cache was made counts)
    key = (len(graph.nodes), [id(n) for n in graph.nodes], dict(graph.logits_outputs))
    if cached is not None and cached[0] == key:
        return cached[1]
    root: ModuleScope | None = graph.from_keras.root_scope
    chains = _complete_chains(graph, root)
    scopes, invalid = _settle_scopes(graph, chains, root)

    def valid_chain(node: Node) -> tuple:
        return tuple((s, c) for s, c in chains[id(node)] if id(s) not in invalid)

    infos: dict[int, ModuleInfo] = {}
    root_info = ModuleInfo(None, "", "")

    def info_of(s: ModuleScope | None) -> ModuleInfo:
        if s is None:
            return root_info
        if id(s) not in infos:
            parent = info_of(s.parent if s.parent is not root else None)
            ref = s.attr if s.index is None else f"{s.attr}[{s.index}]"
            seg = s.attr if s.index is None else f"{s.attr}.{s.index}"
            info = ModuleInfo(s, f"{parent.path}.{seg}" if parent.path else seg, ref)
            infos[id(s)] = info
            parent.children.append(info)
        return infos[id(s)]

    paths: dict[int, str] = {}
    for s in scopes:
        if id(s) not in invalid:
            info_of(s)
    for node in graph.nodes:
        vc = valid_chain(node)
        if vc:
            s, c = vc[-1]
            info = infos[id(s)]
            info.calls.setdefault(c, []).append(node)
        if not _has_module(node):
            continue
        owner = _owner(node, root)
        held = _nearest_valid(owner, invalid, root)
        if held is None:
            continue  # the model's own attribute: its flat name
        base = infos[id(held)].path
        if held is owner:
            local, index = node.from_keras.local
            paths[id(node)] = f"{base}.{local}" + (f".{index}" if index is not None else "")
        else:  # the layer of an inlined scope: the flat name, inside the nearest module
            paths[id(node)] = f"{base}.{node.name}"
    _members(root_info, graph, infos, invalid, root)
    for info in infos.values():
        _members(info, graph, infos, invalid, root)
    out = Structure(root_info, paths, infos,
                    {id(n): tuple((infos[id(s)], c) for s, c in valid_chain(n)) for n in graph.nodes})
    if out.nested:
        try:  # every level must order: a call of a module is one step of its caller
            for prefix in {ch[:k] for ch in out.chains.values() for k in range(len(ch))}:
                level_items(out, graph, prefix)
        except ValueError:
            out = Structure(ModuleInfo(None, "", ""), {}, {}, {})
            _members(out.root, graph, {}, {id(s) for s in scopes}, root)
    graph.structure_cache = (key, out)
    return out


@dataclass(eq=False)
class CallGroup:
    """One call of a child module, seen from its caller: the nodes it runs (its
    children's too), the values it takes and the values it gives back."""

    info: ModuleInfo
    call: int
    nodes: list[Node]
    inputs: list[Value]
    outputs: list[Value]


def level_items(st: Structure, graph: Graph, prefix: tuple) -> list:
    """What the module call ``prefix`` (a chain; ``()`` for the model) runs, in order:
    its own nodes and one CallGroup per child call. Raises ValueError when a child call
    is not a self-contained step (a value leaves it and comes back)."""
    n = len(prefix)
    groups: dict[tuple, list[Node]] = {}
    items: list = []
    for node in graph.nodes:
        ch = st.chains.get(id(node), ())
        if ch[:n] != prefix:
            continue
        if len(ch) == n:
            items.append(node)
        else:
            key = (id(ch[n][0]), ch[n][1])
            if key not in groups:
                groups[key] = []
                items.append(CallGroup(ch[n][0], ch[n][1], groups[key], [], []))
            groups[key].append(node)
    inside = {id(node) for node in graph.nodes if st.chains.get(id(node), ())[:n] == prefix}
    consumers: dict[int, list[Node]] = {}
    for node in graph.nodes:
        for v in node.inputs:
            consumers.setdefault(id(v), []).append(node)
    outputs = {id(v) for v in graph.outputs}
    for item in items:
        if not isinstance(item, CallGroup):
            continue
        members = {id(x) for x in item.nodes}
        ins, outs = [], []
        for node in item.nodes:
            for v in node.inputs:
                if (v.producer is None or id(v.producer) not in members) and v not in ins:
                    ins.append(v)
            for v in node.outputs:
                if id(v) in outputs or any(id(c) not in members for c in consumers.get(id(v), [])):
                    outs.append(v)
        scope = item.info.scope
        # everything the call returned is the module's result, used here or not (the
        # caller unpacks it as the source did; a custom train_step may read the rest)
        outs += [v for v in scope.call_outputs.get(item.call, [])
                 if v.producer is not None and id(v.producer) in members and v not in outs]
        item.inputs = _in_call_order(ins, scope.call_inputs.get(item.call, []))
        item.outputs = _in_call_order(outs, scope.call_outputs.get(item.call, []))
        if not item.outputs:
            raise ValueError("a module call whose result is not used")
    del inside
    return _topological(items)


def _in_call_order(values: list[Value], recorded: list[Value]) -> list[Value]:
    """``values`` in the order the call passed/returned them, when they are those."""
    if len(values) == len(recorded) and {id(v) for v in values} == {id(v) for v in recorded}:
        return list(recorded)
    return values


def _topological(items: list) -> list:
    produced: dict[int, int] = {}
    for i, item in enumerate(items):
        for v in (item.outputs if isinstance(item, CallGroup) else item.outputs):
            produced[id(v)] = i
    deps = []
    for i, item in enumerate(items):
        ins = item.inputs if isinstance(item, CallGroup) else item.inputs
        deps.append({produced[id(v)] for v in ins if id(v) in produced and produced[id(v)] != i})
    done: set[int] = set()
    order: list = []
    while len(order) < len(items):
        ready = [i for i in range(len(items)) if i not in done and deps[i] <= done]
        if not ready:
            raise ValueError("module calls are not self-contained")
        i = ready[0]
        done.add(i)
        order.append(items[i])
    return order


def _is_below(t: ModuleScope, s: ModuleScope) -> bool:
    p = t.parent
    while p is not None:
        if p is s:
            return True
        p = p.parent
    return False


def _owner(node: Node, root: ModuleScope | None) -> ModuleScope | None:
    owner = node.from_keras.owner_scope
    return None if owner is root else owner


def _invalid_reason(s: ModuleScope, graph: Graph, chains, invalid, root, logits, scopes) -> str | None:
    """Why scope ``s`` cannot be printed as a module of its own, or None."""
    parent = s.parent if s.parent is not root else None
    if parent is not None and id(parent) in invalid:
        return "parent inlined"
    direct: dict[int, list[Node]] = {}
    for node in graph.nodes:
        ch = tuple((t, c) for t, c in chains[id(node)] if id(t) not in invalid)
        for k, (t, c) in enumerate(ch):
            if t is not s:
                continue
            # module nesting must follow call nesting: s runs inside its owner's call
            outer = ch[k - 1][0] if k else None
            if outer is not parent:
                return "called outside its owner"
            if k == len(ch) - 1:
                direct.setdefault(c, []).append(node)
    for nodes in direct.values():
        for node in nodes:
            if any(id(v) in logits for v in node.outputs):
                return "produces the logits output"
    if s.kind == "function" and not any(_has_module(n) for ns in direct.values() for n in ns) and \
            not any(t.parent is s and id(t) not in invalid for t in scopes):
        return "builds no layer"
    calls = sorted(direct)
    if len(calls) > 1:
        def signature(nodes):  # the same layers, and operators with the same attributes
            return [(n.op, n.name if _has_module(n) else repr(sorted(n.attrs.items()))) for n in nodes]

        first = signature(direct[calls[0]])
        if any(signature(direct[c]) != first for c in calls[1:]):
            return "calls differ"
    return None


def _members(info: ModuleInfo, graph: Graph, infos, invalid, root) -> None:
    """The attributes ``info``'s module holds, in the order its ``__init__`` creates them:
    a class's in the order the user's code constructs them, otherwise in call order."""
    target = info.scope
    by_creation = target is not None and target.kind == "class" or \
        target is None and root is not None and root.kind == "class"
    members: list[Member] = []
    lists: dict[str, Member] = {}
    seen: set = set()
    for order, node in enumerate(graph.nodes):
        if not _has_module(node) or node.name in seen:
            continue
        owner = _owner(node, root)
        if _nearest_valid(owner, invalid, root) is not target:
            continue
        seen.add(node.name)
        seq = (order if node.from_keras.seq is None else node.from_keras.seq) if by_creation else order
        if owner is not target or target is None and owner is not None:
            members.append(Member(node.name, node=node, seq=seq))
            continue
        local, index = node.from_keras.local
        if target is None:
            local, index = node.name, None  # the model's own layers keep their flat names
        if index is None:
            members.append(Member(local, node=node, seq=seq))
            continue
        if local not in lists:
            lists[local] = Member(local, items=[], seq=seq)
            members.append(lists[local])
        lists[local].items.append(Member(str(index), node=node, seq=index))
        lists[local].seq = min(lists[local].seq, seq)
    for child in info.children:
        s = child.scope
        first = min((graph.nodes.index(n) for ns in child.calls.values() for n in ns), default=len(graph.nodes))
        seq = s.seq if by_creation else first
        if s.index is None:
            members.append(Member(s.attr, scope=child, seq=seq))
            continue
        if s.attr not in lists:
            lists[s.attr] = Member(s.attr, items=[], seq=seq)
            members.append(lists[s.attr])
        lists[s.attr].items.append(Member(str(s.index), scope=child, seq=s.index))
        lists[s.attr].seq = min(lists[s.attr].seq, seq)
    for m in lists.values():
        m.items.sort(key=lambda it: it.seq)
    members.sort(key=lambda m: m.seq)
    info.members = members


def _nearest_valid(s: ModuleScope | None, invalid, root) -> ModuleScope | None:
    while s is not None and s is not root and id(s) in invalid:
        s = s.parent
    return None if s is root else s


def module_attrs(graph: Graph) -> list[tuple[str, Node]]:
    """``(state_dict path prefix, node)`` for every layer node, in registration order."""
    st = build_structure(graph)
    out: list[tuple[str, Node]] = []

    def walk(info: ModuleInfo) -> None:
        for m in info.members:
            for item in (m.items if m.items is not None else [m]):
                if item.node is not None:
                    out.append((st.path(item.node), item.node))
                else:
                    walk(item.scope)

    walk(st.root)
    return out


__all__ = ["ModuleScope", "ModuleInfo", "Member", "Structure", "build_structure", "module_attrs"]
