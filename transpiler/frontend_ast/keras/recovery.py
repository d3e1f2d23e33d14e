"""What the Keras reader does when a model found earlier cannot be finished.

A ``keras.Sequential`` is read lazily: its layers are called on its input only once the
whole script has been read (``model.build(...)`` or ``add()`` may come later). When that
fails (no input shape is ever given, a layer's ``call`` does something unsupported), the
model and the training statements on it become marked stubs; the rest of the program
is still translated.
"""

from __future__ import annotations

import libcst as cst

from transpiler.frontend_ast.keras.values import FrontendError, ModelHandle
from transpiler.frontend_ast.interp.values import Unsupported


class KerasRecovery:
    """Mixin of the Keras reader: finishing the models it found, stubbing those it cannot."""

    def _finish_models(self) -> None:
        for model, builder, var, args in list(self.models):
            try:
                if self._finishable(model):  # (lazy.py: a model of the program, built)
                    self._finish_model(model, builder, var, args)
            except (FrontendError, Unsupported) as exc:
                self._unfinished_model(model, builder, exc)

    def _unfinished_model(self, model, builder, exc) -> None:
        self.models = [entry for entry in self.models if entry[0] is not model]
        name = builder or model.var or model.name or "model"
        span = getattr(exc, "span", None) or model.span
        self.program.model_stub(span, name, f"{name}: {exc}", self._line(span))
        if builder is not None:
            self.failed_builders.add(builder)
            self.program.from_keras.failures[builder] = span

        def on_model(statement) -> bool:
            obj = self.training_models.get(statement)
            return obj is model or (builder is not None and (
                statement.builder == builder or isinstance(obj, ModelHandle) and obj.builder == builder))

        dropped = [st for st in self.program.training if on_model(st)]
        for statement in dropped:
            if statement.builder is None:
                self.program.stub(statement.span, f"model.{statement.kind}(): the model ({name}) was not "
                                                  "translated", self._line(statement.span))
        self.program.training = [st for st in self.program.training if st not in dropped]

    def _missed_models(self, stmt: cst.CSTNode, lost: list) -> None:
        """A module-level statement that failed: the models it was building are models found
        but not translated (by their variable; the assigned name when none was made yet)."""
        names = [builder or var or model.name or "model" for model, builder, var, _ in lost]
        if not names and self._constructs_models(stmt):
            targets = [t.target for s in getattr(stmt, "body", ()) if isinstance(s, cst.Assign) for t in s.targets]
            names = [t.value if isinstance(t, cst.Name) else "model" for t in targets[:1]] or ["model"]
        for name in names:
            if name not in self.program.missed_models:
                self.program.missed_models.append(name)
