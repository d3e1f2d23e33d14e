"""``--weights`` / ``--trace-weights`` of the single-file command: the checkpoint a
translation loads, decided while the script is translated, and its conversion.

A Keras checkpoint converted for the PyTorch output makes the output load it, and which
model loads it depends on the translated program (the model whose layers the checkpoint
holds). The decision is a ``WeightsPlan``, handed to ``translate()`` as its
``load_weights``: called with the program after the passes and before printing, it picks
the model and returns the link, so the script is translated (and formatted) once, not once
plain and again with the link. What it finds wrong is raised by ``finish_weights`` after
the translation, at the point the command checked it before (the no-model check first).
"""

from __future__ import annotations

import os
import tempfile

from transpiler.cli import FileResult, UsageError, WeightOptions


class WeightsPlan:
    """``--to pytorch`` with ``--weights``/``--trace-weights``: ``translate()``'s ``load_weights``
    callback (``plan(program) -> link or None``) and what the conversion after it needs."""

    def __init__(self, source: str, src: str, out_path: str, weights: WeightOptions, exact: bool):
        self.source, self.src, self.out_path, self.weights, self.exact = source, src, out_path, weights, exact
        self.tmpdir: str | None = None
        self._traced: dict[tuple, str] = {}  # (a retried translation does not run the builder again)
        self._reset()

    def _reset(self) -> None:
        self.error: BaseException | None = None
        self.messages: list[str] = []  # stderr lines, printed in finish_weights
        self.models: list = []
        self.ckpt = self.kind = self.out = self.md = self.state = self.link = None
        self.decided = self.rebind = False

    def __call__(self, program) -> dict | None:
        """The link for ``program``'s translation (None: it loads nothing); a failure is kept
        for ``finish_weights``. Called once per reading of the script (``translate()`` reads it
        again when a run-time size leaks), each time for the program that is printed."""
        self._reset()
        self.models = list(program.models)
        from transpiler.ir import sizes

        try:
            with sizes.quiet():  # (reading shapes to choose the model specialises nothing the printer shows)
                self._decide()
        except Exception as exc:  # noqa: BLE001 - raised again by finish_weights, in order
            self.error = exc
            self.link = None
        self.decided = True
        return self.link

    def _decide(self) -> None:
        from transpiler.weights import convert
        from transpiler.weights.keras_files import sniff
        from transpiler.weights.size_binding import checkpoint_builder_args

        weights = self.weights
        if weights.trace and weights.checkpoint:
            raise UsageError("--trace-weights builds the initial weights itself; do not also give --weights")
        if not self.models:
            raise UsageError(f"{self.src}: no model was translated, so there is nothing to load weights into")
        ckpt = weights.checkpoint
        if weights.trace:
            ckpt = self._trace()
        self.ckpt = ckpt
        self.kind = sniff(ckpt)
        out = weights.output
        if self.kind in ("pickle", "safetensors") or (self.kind == "zip" and not _is_keras_zip(ckpt)):
            # the generated module's checkpoint back to the Keras model it came from
            from transpiler.weights.torch_files import read_torch_state

            if not out or not out.endswith(".weights.h5"):
                raise UsageError(f"{ckpt}: a PyTorch checkpoint; to convert it back for the Keras "
                                 "model give --weights-out NAME.weights.h5")
            self.kind, self.out = "torch", out
            self.state = read_torch_state(ckpt)
            self.md = convert.select_torch_model(self.models, set(self.state), ckpt)
            return
        if out is None:
            out = os.path.splitext(self.out_path)[0] + ".safetensors"
        if out.endswith(".weights.h5"):
            raise UsageError(f"{ckpt} is a Keras checkpoint already; --weights-out should end in "
                             ".safetensors or .pt")
        self.kind, self.out = "keras", out
        if any(checkpoint_builder_args(md, ckpt) is not None for md in self.models):
            # saved for other builder arguments: the script is read again for them, after this
            # translation (translations do not nest: they share the sizes' symbols)
            self.rebind = True
            return
        self.md = convert.select_keras_model(self.models, ckpt)
        self.link = self.link_for(self.md)

    def link_for(self, md) -> dict:
        rel = os.path.relpath(os.path.abspath(self.out), os.path.dirname(os.path.abspath(self.out_path)))
        return {"model": md.class_name, "path": rel.replace(os.sep, "/"),
                "source": "the traced Keras initial weights" if self.weights.trace else os.path.basename(self.ckpt)}

    def rebound(self, result):
        """A checkpoint saved from other builder arguments (``_checkpoint_sizes``): the model
        translated for them, and the translation the command writes (the script translated
        again with the link when the model it loads into is not one whose sizes were bound)."""
        from transpiler.translate import translate
        from transpiler.weights import convert

        models, bound = _checkpoint_sizes(self.messages, list(result.program.models), self.source, self.src,
                                          self.ckpt, self.exact)
        self.md = convert.select_keras_model(models, self.ckpt)
        if self.md.builder in bound:  # (the script builds it with its own arguments: it does not load them)
            return result
        return translate(self.source, self.src, "pytorch", load_weights=self.link_for(self.md), exact=self.exact)

    def _trace(self) -> str:
        from transpiler.weights.trace import trace_keras_weights

        md = next((m for m in self.models if m.builder), self.models[0])
        key = (md.builder, md.var, repr(sorted(md.builder_args.items())) if md.builder_args else "")
        if key not in self._traced:
            if self.tmpdir is None:
                self.tmpdir = tempfile.mkdtemp(prefix="transpile-trace-")
            path = os.path.join(self.tmpdir, f"initial{len(self._traced) or ''}.weights.h5")
            self._traced[key] = trace_keras_weights(self.src, md.builder, md.var, md.builder_args, path,
                                                    seed=self.weights.seed, timeout=self.weights.trace_timeout)
        return self._traced[key]

    def cleanup(self) -> None:
        if self.tmpdir:
            import shutil

            shutil.rmtree(self.tmpdir, ignore_errors=True)
            self.tmpdir = None


def finish_weights(res: FileResult, result, plan: WeightsPlan, write: bool):
    """After ``translate(..., load_weights=plan)``: raise what the plan found wrong, else write
    the converted checkpoint (unless ``write`` is false: ``--check``/``--diff``). Returns
    ``result`` (already printed with the link)."""
    from transpiler.weights import convert
    from transpiler.weights.errors import CheckpointError

    if not plan.decided:  # (translate() never reached the passes: nothing was decided)
        plan(result.program)
    weights = plan.weights
    try:
        if plan.error is not None:
            raise plan.error
        if plan.rebind:
            result = plan.rebound(result)
        for line in plan.messages:
            res.err(line)
        md = plan.md
        if plan.kind == "torch":
            if write:
                rep = convert.torch_to_keras(md.graph, plan.ckpt, plan.out, md.graph.name, state=plan.state)
                if not weights.quiet:
                    res.err(f"transpile: wrote {plan.out} ({rep.tensors} tensors for {md.graph.name}, "
                            "loadable with model.load_weights)")
            return result
        if write:
            rep = convert.keras_to_torch(md.graph, plan.ckpt, plan.out)
            for w in rep.warnings:
                if not weights.quiet:
                    res.err(f"transpile: warning: {w}")
            label = "initial weights of the Keras model" if weights.trace else plan.ckpt
            if not weights.quiet:
                res.err(f"transpile: wrote {plan.out} ({rep.tensors} tensors, {rep.bytes / 1e6:.1f} MB) from {label}")
        return result
    except CheckpointError:
        raise
    except OSError as exc:  # (the file it concerns: the checkpoint read, or the one being written)
        where = exc.filename if isinstance(exc.filename, str) else weights.checkpoint or plan.src
        raise CheckpointError(f"{where}: {exc.strerror or exc}") from None


def _checkpoint_sizes(messages: list[str], models: list, source: str, src: str, ckpt: str,
                      exact: bool) -> tuple[list, set[str]]:
    """Sizes with provenance: a Keras checkpoint saved from a builder called with other size
    arguments (bound from its shapes) converts for those arguments; the translated module
    takes them. Returns the models to convert for and the builders bound."""
    from transpiler.frontend_ast.size_names import with_builder_defaults
    from transpiler.translate import translate
    from transpiler.weights.size_binding import checkpoint_builder_args

    out, bound = [], set()
    for md in models:
        args = checkpoint_builder_args(md, ckpt)
        if args is None:
            out.append(md)
            continue
        variant = translate(with_builder_defaults(source, md.builder, args), src,
                            exact=exact)
        out.append(next(m for m in variant.program.models if m.builder == md.builder))
        bound.add(md.builder)
        call = f"{md.builder}({', '.join(f'{k}={v!r}' for k, v in args.items())})"
        messages.append(f"transpile: {ckpt} was saved from {call} (bound from its shapes): its weights load "
                        f"into {call}")
    return out, bound


def convert_torch_weights(res: FileResult, result, src: str, weights: WeightOptions, write: bool):
    """``--to keras --weights CKPT(.pt/.safetensors) --weights-out OUT.weights.h5``."""
    from transpiler.weights import convert
    from transpiler.weights.errors import CheckpointError
    from transpiler.weights.torch_files import read_torch_state

    if weights.trace and weights.checkpoint:
        raise UsageError("--trace-weights builds the initial weights itself; do not also give --weights")
    if not result.program.models:
        raise UsageError(f"{src}: no model was translated, so there is nothing to load weights into")
    if weights.trace:
        raise UsageError("--trace-weights is for Keras sources; give the torch checkpoint with --weights")
    out = weights.output
    if not out or not out.endswith(".weights.h5"):
        raise UsageError(f"{weights.checkpoint}: give --weights-out NAME.weights.h5 (a Keras 3 weights file "
                         "for the generated model's load_weights)")
    try:
        state = read_torch_state(weights.checkpoint)
        md = convert.select_torch_source_model(result.program.models, set(state), weights.checkpoint)
        md = _torch_checkpoint_sizes(res, md, state, src, weights)
        if write:
            rep = convert.torch_source_to_keras(md.graph, weights.checkpoint, out, md.graph.name, state=state)
            if not weights.quiet:
                how = f"{md.builder or md.class_name}().load_weights"
                if md.graph.from_torch.lazy_class and not md.builder:  # (a subclass building on its first call)
                    how = f"{md.class_name}(...).load_weights once a first call has built the model"
                res.err(f"transpile: wrote {out} ({rep.tensors} tensors for {md.graph.name}, loadable with {how})")
    except CheckpointError:
        raise
    except OSError as exc:
        raise CheckpointError(f"{weights.checkpoint}: {exc.strerror or exc}") from None
    return result


def _torch_checkpoint_sizes(res: FileResult, md, state: dict, src: str, weights: WeightOptions):
    """``md``, or (its class read for placeholder sizes, the checkpoint saved for others) the
    model read again for the sizes the checkpoint's shapes give (``Net(n_in=5, n_out=3)``):
    the Keras weights file is written for those, and the message says which."""
    from transpiler.frontend_ast.size_names import with_init_defaults
    from transpiler.translate import translate
    from transpiler.weights.size_binding import torch_checkpoint_args

    args = torch_checkpoint_args(md, state, weights.checkpoint)
    if args is None or md.builder:
        return md
    with open(src, encoding="utf-8") as fh:
        source = with_init_defaults(fh.read(), md.class_name, args)
    if source is None:
        return md
    variant = translate(source, src, "keras")
    bound = next((m for m in variant.program.models if m.class_name == md.class_name), None)
    if bound is None:
        return md
    if not weights.quiet:
        call = f"{md.class_name}({', '.join(f'{k}={v!r}' for k, v in args.items())})"
        res.err(f"transpile: {weights.checkpoint} was saved from {call} (bound from its shapes): its weights "
                f"load into {call}")
    return bound


def _is_keras_zip(path: str) -> bool:
    """A zip that is not a torch.save archive (``<name>/data.pkl``) is read as a .keras file
    (whose reader says what is missing from it)."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as zf:
            names = zf.namelist()
            return "model.weights.h5" in names or not any(n.endswith("/data.pkl") for n in names)
    except (zipfile.BadZipFile, OSError):
        return True  # let the Keras reader say what is wrong with it
