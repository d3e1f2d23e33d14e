"""Script plumbing of PyTorch programs that Keras does itself: device choice and queries.

Keras places tensors and the computation on an accelerator itself (the backend's default
device), so a PyTorch script's device code has no counterpart to call:

* queries (``torch.cuda.is_available()``, ``torch.backends.mps.is_available()``,
  ``torch.accelerator.is_available()``, ``device_count()``) become constants saying "no
  device to choose" (``False``, ``0``): the script's own branches on them take their
  CPU path, which in the Keras program is the one that needs no device code (no
  ``pin_memory``/``num_workers`` DataLoader options, no ``set_device``);
* ``torch.accelerator.current_accelerator()`` is ``None`` (as torch's is without one);
  ``torch.device(...)`` the generated ``Device`` (its ``type``/``index``, for the program's
  own checks and prints: ``device.type == "cuda"``);
* statements that only configure a device (``torch.cuda.set_device(i)``,
  ``torch.accelerator.set_device_index(i)``, ``torch.cuda.empty_cache()``,
  ``torch.cuda.manual_seed_all(s)`` — ``keras.utils.set_random_seed`` already seeds every
  device —, ``cudnn.benchmark = True``, ``torch.backends.cudnn.deterministic = ...``)
  are dropped.

Distributed training runs as the single process it is in every worker (distributed Keras
is not translated): ``torch.distributed.init_process_group``/``destroy_process_group``/
``barrier`` and ``torch.multiprocessing.set_start_method`` are dropped, ``get_rank()`` is
``0`` and ``get_world_size()`` ``1``, a ``DistributedDataParallel``/``DataParallel``
wrapper is the model it wraps, ``mp.spawn(fn, args=(a, b), nprocs=n)`` is the call of
rank 0, ``fn(0, a, b)``, and a worker ``mp.Process(target=fn, args=...)`` is the generated
``Process``, which runs ``fn`` when started (the workers of a Hogwild program train the one
model one after the other); ``model.share_memory()`` is dropped (one process holds the model);
a ``DistributedSampler`` is the generated one of one replica (every index, shuffled per
``set_epoch`` as torch's), which the loader batches (``SampledLoader``).
``with torch.serialization.safe_globals([...]):`` only allows classes to torch.load: its body
is kept, unwrapped.

Each replacement leaves a ``# transpiler:`` comment above the statement, so the reader
sees what went. Imports no deep-learning framework.
"""

from __future__ import annotations

import libcst as cst

from transpiler.cst_fast import attribute_chain
from transpiler.ir.code_literals import bare_argument

#: a device query → the constant the Keras program uses
QUERIES = {
    "torch.cuda.is_available": "False",
    "torch.backends.mps.is_available": "False",
    "torch.backends.mps.is_built": "False",
    "torch.backends.cudnn.is_available": "False",
    "torch.accelerator.is_available": "False",
    "torch.cuda.device_count": "0",
    "torch.accelerator.device_count": "0",
    "torch.accelerator.current_accelerator": "None",
}
#: distributed queries → their value in the one process the Keras program runs as
DIST_QUERIES = {
    "torch.distributed.get_rank": "0",
    "torch.distributed.get_world_size": "1",
    "torch.distributed.get_local_rank": "0",
    "torch.distributed.is_initialized": "False",
    "torch.distributed.is_available": "False",
    "torch.distributed.get_default_backend_for_device": "None",
    "torch.distributed.get_backend": "str(None).lower()",  # ("none", without quotes: it may sit in an f-string)
}
#: calls that only set up or tear down the worker processes (dropped as statements)
DIST_STATEMENTS = frozenset({
    "torch.distributed.init_process_group", "torch.distributed.destroy_process_group",
    "torch.distributed.barrier", "torch.multiprocessing.set_start_method",
})
#: collectives over the worker processes that change a tensor in place (none in one process)
DIST_COLLECTIVES = frozenset({"torch.distributed.all_reduce", "torch.distributed.broadcast",
                              "torch.distributed.reduce"})
#: wrappers whose value is the model they wrap
DIST_WRAPPERS = frozenset({
    "torch.nn.parallel.DistributedDataParallel", "torch.nn.parallel.distributed.DistributedDataParallel",
    "torch.nn.DataParallel", "torch.nn.parallel.DataParallel",
})
DIST_SPAWN = frozenset({"torch.multiprocessing.spawn", "torch.multiprocessing.spawn.spawn"})
#: a sampler giving each worker its share of a dataset → the generated one-process sampler
DIST_SAMPLERS = frozenset({"torch.utils.data.distributed.DistributedSampler", "torch.utils.data.DistributedSampler"})
#: context managers that only configure torch (their body is kept, unwrapped)
CONTEXT_ONLY = frozenset({"torch.serialization.safe_globals"})
#: a worker process → the generated ``Process``, whose start() runs the target in this process
DIST_PROCESS = frozenset({"torch.multiprocessing.Process", "multiprocessing.Process"})

#: calls that only configure a device (dropped as statements)
STATEMENTS = frozenset({
    "torch.cuda.set_device", "torch.accelerator.set_device_index", "torch.cuda.empty_cache",
    "torch.cuda.synchronize", "torch.accelerator.synchronize", "torch.cuda.manual_seed",
    "torch.cuda.manual_seed_all", "torch.mps.manual_seed", "torch.mps.empty_cache",
})

#: module attributes whose assignment configures a backend library (dropped)
SETTINGS = frozenset({
    "torch.backends.cudnn.benchmark", "torch.backends.cudnn.deterministic", "torch.backends.cudnn.enabled",
    "torch.backends.cuda.matmul.allow_tf32", "torch.backends.cudnn.allow_tf32",
})

QUERY_NOTE = "{names} is {text} here: Keras places the computation on a device itself"
DROP_NOTE = "dropped {what}: Keras chooses and configures the device itself"
DIST_NOTE = "the program runs as one process (distributed Keras is not translated): "

#: the DataLoader options the Keras program reads, with torch's defaults
LOADER_OPTIONS = (("batch_size", "1"), ("shuffle", "False"), ("drop_last", "False"))


def query(reader, path: str, node: cst.Call) -> str | None:
    """The constant for a device query ``path(...)`` (recorded as the node's replacement),
    else None."""
    text = QUERIES.get(path)
    if text is None:
        text = DIST_QUERIES.get(path)
        if text is None:
            return None
        reader.fact(node, "device_expr", {"text": text, "note": DIST_NOTE + f"{path}() is {text}"})
        return text
    reader.fact(node, "device_expr", {"text": text, "note": QUERY_NOTE.format(names=f"{path}()", text=text)})
    return text


def distributed_call(reader, path: str, node: cst.Call, pos: list, vals: list, kw: dict):
    """A ``DistributedDataParallel(model, ...)`` wrapper → the model (its value); ``mp.spawn(fn,
    args=(...), nprocs=n)`` → ``fn(0, ...)``; else None (not a distributed call)."""
    from transpiler.frontend_ast.torch.modules import Unsupported
    from transpiler.frontend_ast.torch.reader_values import OTHER

    code = cst.Module([]).code_for_node
    if path in DIST_WRAPPERS:
        if not pos or not _plain_reference(pos[0]):
            raise Unsupported(f"{path.split('.')[-1]}(...) of something other than a model variable")
        reader.fact(node, "device_expr", {"text": code(pos[0]),
                                          "note": DIST_NOTE + f"the {path.split('.')[-1]} wrapper is the model"})
        return vals[0]
    if path in DIST_SAMPLERS:
        names = ("dataset", "num_replicas", "rank", "shuffle", "seed", "drop_last")
        if len(pos) > len(names) or set(kw) - set(names):
            raise Unsupported(f"{path.split('.')[-1]}() with arguments it does not take")
        parts = list(pos) + list(kw.values())
        texts = [f"{{{i}}}" for i in range(len(pos))] + [f"{k}={{{len(pos) + i}}}" for i, k in enumerate(kw)]
        reader.runtime_expr(node, f"DistributedSampler({', '.join(texts)})", parts, ["DistributedSampler"])
        return OTHER
    if path in CONTEXT_ONLY:
        _drop_allowed_classes(reader, pos[0] if len(pos) == 1 else None)
        return CONTEXT
    if path in DIST_PROCESS:
        if pos:
            raise Unsupported(f"{path}() with positional arguments (give target= and args=)")
        texts = [f"{k}={code(v)}" for k, v in kw.items()]
        reader.fact(node, "device_expr", {"text": f"Process({', '.join(texts)})", "helpers": ["Process"],
                                          "note": DIST_NOTE + "a worker Process runs its target when started, "
                                                              "one worker after the other"})
        return OTHER
    if path in DIST_SPAWN:
        fn = pos[0] if pos else kw.get("fn")
        args = kw.get("args", pos[1] if len(pos) > 1 else None)
        if fn is None or not _plain_reference(fn) or not (args is None or isinstance(args, cst.Tuple)):
            raise Unsupported("torch.multiprocessing.spawn of something other than a function with a literal "
                              "args tuple")
        texts = ["0"] + ([code(el.value) for el in args.elements] if args is not None else [])
        reader.fact(node, "device_expr", {"text": f"{code(fn)}({', '.join(texts)})",
                                          "note": DIST_NOTE + "mp.spawn runs the function once, as rank 0"})
        return OTHER
    return None


def _drop_allowed_classes(reader, arg) -> None:
    """``safe_globals = [Net, torch.nn.Conv2d, ...]`` assigned once (or once per branch of an
    ``if``) and read only by the dropped ``safe_globals(...)`` context: the lists go too (they
    name torch's classes)."""
    from transpiler.cst_fast import nodes_of

    if not isinstance(arg, cst.Name):
        return
    attrs = {a.attr for a in nodes_of(reader.fe.module, cst.Attribute)}  # (x.safe_globals is no use; nodes hash by identity)
    uses = [n for n in nodes_of(reader.fe.module, cst.Name) if n.value == arg.value and n not in attrs]
    lines = [line for line in nodes_of(reader.fe.module, cst.SimpleStatementLine)
             if len(line.body) == 1 and isinstance(line.body[0], cst.Assign)
             and any(isinstance(t.target, cst.Name) and t.target.value == arg.value for t in line.body[0].targets)]
    # (one assignment, or one per branch: ``if args.model == 'Transformer': ... else: ...``)
    if lines and len(uses) == len(lines) + 1 and all(
            len(line.body[0].targets) == 1 and isinstance(line.body[0].value, (cst.List, cst.Tuple))
            for line in lines):
        for line in lines:
            reader.fact(line, "device_drop", f"dropped {arg.value}: the classes torch.load may unpickle "
                                             "(Keras' loading needs no such list)")


class _Context:
    """The value of a context manager that only configures torch (``CONTEXT_ONLY``)."""


CONTEXT = _Context()


def _plain_reference(node) -> bool:
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, cst.Name)


def unpacked_loader_options(reader, args: list, scope) -> list:
    """``DataLoader(ds, **train_kwargs)``: the ``**`` argument as the options the Keras
    program reads, each looked up at run time (``train_kwargs.get("batch_size", 1)``, torch's
    default when the key is absent), so that keys the script adds later (``.update``, under
    ``if use_cuda:``) still count. Other keys the dict is known to hold (``sampler``) are
    passed on as themselves, so what is not translated still says so."""
    from transpiler.frontend_ast.torch.reader_values import OTHER

    out = []
    for arg, value in args:
        if arg.star != "**":
            out.append((arg, value))
            continue
        source = cst.Module([]).code_for_node(arg.value)
        known = getattr(value, "items", None) or {}
        # (drop_last only where the script can set it: read as code, it makes the loop a
        # tf.data pipeline, since fit keeps the last partial batch)
        keys = [(k, d) for k, d in LOADER_OPTIONS if k != "drop_last" or k in known or "drop_last" in reader.fe.source]
        keys += [(k, "None") for k in known if k not in dict(LOADER_OPTIONS)]
        for key, default in keys:
            expr = cst.parse_expression(f"({source}).get({key!r}, {default})" if not isinstance(
                arg.value, cst.Name) else f"{source}.get({key!r}, {default})")
            reader.expr(expr, scope)
            out.append((cst.Arg(expr, keyword=cst.Name(key)), known.get(key, OTHER)))
    return out


def statement(reader, small, line: cst.SimpleStatementLine, scope) -> bool:
    """True when ``small`` (a statement of ``line``) only configures a device and was
    recorded as dropped."""
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        path = _torch_path(reader, small.value.func, scope)
        if path in STATEMENTS:
            reader.fact(line, "device_drop", DROP_NOTE.format(what=f"{path}()"))
            return True
        if path in DIST_STATEMENTS:
            reader.fact(line, "device_drop", DIST_NOTE + f"dropped {path}()")
            return True
        if path in DIST_COLLECTIVES and not any(
                a.keyword is not None and a.keyword.value == "async_op" and _code_of(bare_argument(a.value)) != "False"
                for a in small.value.args):
            # (over the one process: every reduction of the tensor with itself leaves it as it is)
            reader.fact(line, "device_drop", DIST_NOTE + f"dropped {path}(): in one process it leaves "
                                                         "the tensor as it is")
            return True
    if isinstance(small, cst.Assign) and all(isinstance(t.target, cst.Attribute) for t in small.targets):
        paths = [_torch_path(reader, t.target, scope) for t in small.targets]
        if paths and all(p in SETTINGS for p in paths):
            reader.fact(line, "device_drop", DROP_NOTE.format(what=" = ".join(paths) + " = ..."))
            return True
    wrapped = _rewrapped(reader, small, scope)
    if wrapped is not None:  # ``model.features = DataParallel(model.features)``: the part stays itself
        reader.fact(line, "device_drop", DIST_NOTE + f"dropped {wrapped}: in one process the "
                                                     "wrapper is the module it wraps")
        return True
    return False


def _rewrapped(reader, small, scope) -> str | None:
    """``x = DataParallel(x)`` / ``model.features = DistributedDataParallel(model.features).cuda()``:
    an assignment of a wrapper of its own target (its text), else None. (A wrapper assigned
    to another name is the model it wraps: ``distributed_call``.)"""
    if not (isinstance(small, cst.Assign) and len(small.targets) == 1):
        return None
    value = small.value
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and \
            value.func.attr.value in ("cuda", "to", "cpu") and isinstance(value.func.value, cst.Call):
        value = value.func.value  # (``DataParallel(m).cuda()``: placing returns the wrapper)
    if not (isinstance(value, cst.Call) and value.args and value.args[0].keyword is None):
        return None
    if _torch_path(reader, value.func, scope) not in DIST_WRAPPERS:
        return None
    code = cst.Module([]).code_for_node
    target = code(bare_argument(small.targets[0].target))
    return f"{target} = {code(value.func)}({target})" if code(bare_argument(value.args[0].value)) == target \
        else None


def _torch_path(reader, node, scope) -> str | None:
    """The dotted torch path ``node`` names (``cudnn.benchmark`` after ``import
    torch.backends.cudnn as cudnn``), without evaluating calls."""
    name, parts = attribute_chain(node)
    if name is None:
        return None
    head = reader.peek(name, scope)
    base = getattr(head, "path", None)
    if type(head).__name__ != "Ref" or base is None:  # (a TorchRef)
        return None
    return ".".join([base] + parts)


#: torch tensor methods numpy arrays do not have (or have with another meaning: ``view`` takes
#: a dtype, ``size`` is an attribute): called on a value the reader cannot tell in a function
#: the file never calls (a library module's, called by another file with torch tensors), the
#: code kept as it is would fail when run, so the statement is a marked stub instead
TENSOR_ONLY_METHODS = frozenset("""
view view_as bmm mm matmul new_tensor new_zeros new_ones new_full new_empty add_ sub_ mul_ div_ clamp clamp_
clone permute unsqueeze unsqueeze_ squeeze_ contiguous detach detach_ cpu cuda size float long int double half
bool masked_fill masked_fill_ expand expand_as numel dim narrow index_select type_as norm pow exp log sqrt
softmax log_softmax t zero_ fill_ copy_ uniform_ normal_ requires_grad_ backward numpy item tolist to
chunk gather scatter scatter_ topk unfold flip roll transpose_ sum mean max min argmax argmin
""".split()) - {"sum", "mean", "max", "min", "argmax", "argmin", "tolist", "item"}  # (numpy has those)


def unknown_tensor_method(reader, name: str, receiver) -> str | None:
    """The stub message for ``receiver.name()`` on a value the reader cannot tell, when
    ``name`` is a torch tensor method numpy lacks; else None (also for an imported module's
    function: ``math.exp(x)``)."""
    if name not in TENSOR_ONLY_METHODS:
        return None
    root = receiver
    while isinstance(root, (cst.Attribute, cst.Subscript, cst.Call)):
        root = root.func if isinstance(root, cst.Call) else root.value
    if isinstance(root, cst.Name) and reader.cur_scope.lookup(root.value) is None and \
            type(reader.fe.globals.vars.get(root.value)).__name__ in ("Ref", "ClassRef", "FunctionRef"):
        return None
    receiver = cst.Module([]).code_for_node(receiver)
    return (f"{receiver}.{name}(): a torch tensor method on a value this file does not show to be "
            "array data (a parameter of a function it never calls?); not translated")


def bound_names(small) -> set[str]:
    """The names an import statement binds (``F`` of ``import torch.nn.functional as F``,
    ``fn`` of ``from torch.hub import fn``, ``torch`` of ``import torch.nn``)."""
    names = set()
    if isinstance(small, cst.Import):
        for alias in small.names:
            if alias.asname is not None:
                names.add(alias.asname.name.value)
            else:
                node = alias.name
                while isinstance(node, cst.Attribute):
                    node = node.value
                names.add(node.value)
    elif isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
        for alias in small.names:
            if alias.asname is not None:
                names.add(alias.asname.name.value)
            elif isinstance(alias.name, cst.Name):
                names.add(alias.name.value)
    return names


def array_function(short: str, path: str, pos: list, kw: dict, p) -> str | None:
    """The numpy template of a torch array function on data (``p(node)`` is a part's
    placeholder), else None: ``torch.flatten(x[, start_dim])``, ``torch.triu/tril(x[,
    diagonal])``, ``torch.eye(n[, m])`` (float32, torch's default), ``torch.diag(x)``."""
    if path.count(".") != 1:
        return None
    extra = set(kw) - {"device", "dtype", "start_dim", "end_dim", "diagonal"}
    if extra or "dtype" in kw and short != "eye":
        return None
    if short == "flatten" and len(pos) + len(kw) - ("device" in kw) in (1, 2, 3):
        start = kw.get("start_dim", pos[1] if len(pos) > 1 else None)
        end = kw.get("end_dim", pos[2] if len(pos) > 2 else None)
        if end is not None and _int_text(end) != "-1":
            return None
        if start is None or _int_text(start) == "0":
            return f"$reshape({p(pos[0])}, -1)"
        if _int_text(start) is not None:
            n = _int_text(start)
            return f"$reshape({p(pos[0])}, {p(pos[0])}.shape[:{n}] + (-1,))"
        return None
    if short in ("triu", "tril") and 1 <= len(pos) <= 2:
        diagonal = kw.get("diagonal", pos[1] if len(pos) > 1 else None)
        return f"${short}({p(pos[0])}" + (f", k={p(diagonal)}" if diagonal is not None else "") + ")"
    if short == "eye" and 1 <= len(pos) <= 2 and set(kw) <= {"device", "dtype"}:
        dtype = f"{p(kw['dtype'])}" if "dtype" in kw else '"float32"'
        return f"$eye({', '.join(p(a) for a in pos)}, dtype={dtype})"
    if short == "diag" and 1 <= len(pos) <= 2 and not kw:
        return f"$diag({', '.join(p(a) for a in pos)})"
    return None


def _int_text(node) -> str | None:
    """The text of an integer literal (``-1`` too), else None."""
    if isinstance(node, cst.Integer):
        return node.value
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) and \
            isinstance(node.expression, cst.Integer):
        return "-" + node.expression.value
    return None


def _code_of(node) -> str:
    return cst.Module([]).code_for_node(node)
