"""``layers.Dot`` / ``layers.dot``: Keras' batch_dot, read into einsum nodes (a mixin of the
Keras reader)."""

from __future__ import annotations

from transpiler.frontend_ast.interp.values import Unsupported
from transpiler.frontend_ast.keras.values import DotLayerObj, TensorVal
from transpiler.ir.graph import Span


class KerasDotLayers:
    """Mixin of the Keras reader: the Dot layer, built and called."""

    def _dot_layer(self, api: str, args, kwargs, span: Span):
        """``layers.Dot(axes, normalize=False, name=...)``; ``layers.dot([a, b], axes, ...)``
        builds it and calls it at once."""
        self._mark_keras()
        if api == "layers.dot":
            inputs = args[0] if args else kwargs.pop("inputs", None)
            args = list(args[1:])
        names = ("axes", "normalize")
        bound = dict(zip(names, args)) | {k: v for k, v in kwargs.items() if k in names}
        extra = set(kwargs) - set(names) - {"name", "dtype", "trainable"}
        if extra or len(args) > 2:
            raise Unsupported(f"layers.Dot: argument(s) {', '.join(sorted(extra)) or 'positional'} not supported")
        axes = bound.get("axes")
        ok = isinstance(axes, int) or (isinstance(axes, (tuple, list)) and len(axes) == 2 and
                                       all(isinstance(a, int) for a in axes))
        if not ok or not isinstance(bound.get("normalize", False), bool):
            raise Unsupported("layers.Dot: axes must be an int or a pair of ints known statically")
        layer = DotLayerObj(axes, bound.get("normalize", False), span)
        return self._call_dot(layer, [inputs], {}, span) if api == "layers.dot" else layer

    def _call_dot(self, layer: DotLayerObj, args, kwargs, span: Span):
        """Keras' batch_dot over one axis of each input, both of rank 2 or both of rank 3 (the
        batch axis first): ``(N, D)·(N, D) → (N, 1)``, ``(N, A, D)·(N, B, D) → (N, A, B)``."""
        inputs = args[0] if len(args) == 1 else None
        if kwargs or not isinstance(inputs, (list, tuple)) or len(inputs) != 2 or \
                not all(isinstance(t, TensorVal) for t in inputs):
            raise Unsupported("layers.Dot is called on a list of two tensors")
        a, b = inputs
        ranks = (len(a.value.shape), len(b.value.shape))
        if ranks not in ((2, 2), (3, 3)):
            raise Unsupported(f"layers.Dot of tensors of ranks {ranks} (only 2·2 and 3·3 are translated)")
        axes = [layer.axes, layer.axes] if isinstance(layer.axes, int) else list(layer.axes)
        axes = [ax % r for ax, r in zip(axes, ranks)]
        if 0 in axes:
            raise Unsupported("layers.Dot over the batch axis")
        if layer.normalize:  # Keras: x * min(rsqrt(sum(x ** 2)), 1 / 1e-7), as tf.l2_normalize(eps=1e-14)
            a = self._tensor_op("tf.l2_normalize", [a], {"axis": axes[0], "epsilon": 1e-14}, span)
            b = self._tensor_op("tf.l2_normalize", [b], {"axis": axes[1], "epsilon": 1e-14}, span)
        if ranks == (2, 2):
            dot = self._tensor_op("ops.einsum", ["nk,nk->n", a, b], {}, span)
            return self._tensor_op("ops.expand_dims", [dot, 1], {}, span)
        left = "n" + "".join("k" if i == axes[0] else "a" for i in (1, 2))
        right = "n" + "".join("k" if i == axes[1] else "b" for i in (1, 2))
        return self._tensor_op("ops.einsum", [f"{left},{right}->nab", a, b], {}, span)
