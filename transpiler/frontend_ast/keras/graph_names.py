"""Naming a model graph's layers and attaching the source's comments to them (a part of
``KerasFrontend``: the last steps of reading one model)."""

from __future__ import annotations

from transpiler.frontend_ast.keras.support import span_holds, _identifier, _default_hint
from transpiler.ir.graph import Graph, Node
from transpiler.ir.reserved import NN_MODULE_ATTRIBUTES


class KerasGraphNames:
    """Layer attribute names and comment placement for a graph the frontend has read."""

    def _name_nodes(self, graph: Graph) -> None:
        """Give each layer a unique, legal, readable attribute name."""
        taken: dict[str, int] = {}
        auto_counts: dict[str, int] = {}
        by_layer: dict[int, str] = {}
        for node in graph.nodes:
            layer = node.from_keras.layer
            key = id(layer) if layer is not None else id(node)
            if key in by_layer:
                node.name = by_layer[key]
                continue
            hint = None
            if layer is not None:
                hint = layer.hint or layer.explicit_name
                if layer.explicit_name and hint == f"{layer.explicit_name}_layer":
                    # ``dense_layer = layers.Dense(..., name="dense")``, as the Keras printer
                    # spells a layer called more than once: the name is the layer's
                    hint = layer.explicit_name
            auto = hint is None
            hint = _identifier(hint or _default_hint(node))
            if layer is not None and layer.scope and (layer.explicit_name is None or layer.hint):
                # the user's name= is unique already; a helper's made-up names are not
                hint = f"{layer.scope}_{hint}"
            if hint in ("x", "self", "input", "inputs", "outputs", "model", "reset_parameters") or \
                    hint in NN_MODULE_ATTRIBUTES:  # (self.train = ... would shadow Module.train())
                hint = f"{hint}_layer"
            if auto:
                # unnamed layers are numbered like a hand-written module: conv1, conv2, ...
                auto_counts[hint] = auto_counts.get(hint, 0) + 1
                name = f"{hint}{auto_counts[hint]}"
            else:
                name = hint
            n = 0
            while name in taken:
                n += 1
                name = f"{hint}_{n}"
            taken[name] = 1
            by_layer[key] = name
            node.name = name

    def _attach_comments(self, graph: Graph) -> None:
        """Attach each comment of the model's source to the node it precedes, ends or sits in.

        A node is found at its own source lines and, when a helper function built it, at
        the line that called the helper: ``# stem`` above ``x = conv_bn(x, 8)`` belongs to
        the helper's first layer, not to whatever layer the builder makes next.
        """
        entries = []  # (first line, last line, graph order, node or module scope)
        root = graph.from_keras.root_scope
        scopes_seen: set[int] = set()
        for i, node in enumerate(graph.nodes):
            owner = (node.from_keras.fused_into or node)
            layer = node.from_keras.layer
            built = layer.span if root is not None and layer is not None and layer.cls_name else None
            for span in (node.span, node.from_keras.site, built):
                if span is not None and span.line > 0:
                    entries.append((span.line, span.end_line or span.line, i, owner))
            for scope, _ in (node.from_keras.scopes or ()):
                # a Layer subclass constructed in __init__: comments above ``self.block = ...``
                if scope is not root and scope.kind == "class" and scope.span is not None \
                        and id(scope) not in scopes_seen:
                    scopes_seen.add(id(scope))
                    entries.append((scope.span.line, scope.span.end_line or scope.span.line, i, scope))
        if not entries:
            return
        entries.sort(key=lambda e: (e[0], e[2]))
        last_line = max(e[1] for e in entries)
        used = self.program.from_keras.used_comments
        for line, (text, full) in sorted(self.comments.items()):
            if line in used or line > last_line:
                continue
            inside = [e for e in entries if e[0] <= line <= e[1]]
            if inside:
                # the innermost call holding the comment (the one that starts last)
                target = max(inside, key=lambda e: (e[0], -e[2]))[3]
            elif full:
                below = next((e for e in entries if e[0] > line), None)
                if below is None or not (below[0] - line <= 3 or self._only_comments(line, below[0])):
                    continue
                target = below[3]
            else:
                continue
            target.comments.append(text)
            if isinstance(target, Node) and not span_holds(target.span, line):
                # found at the line that called the helper, not in the helper
                target.from_keras.site_comments.append(text)
            used.add(line)

    def _only_comments(self, after: int, before: int) -> bool:
        """True when the lines strictly between ``after`` and ``before`` are blank or comments."""
        for ln in range(after + 1, before):
            text = self.lines[ln - 1].strip() if ln <= len(self.lines) else ""
            if text and not text.startswith("#"):
                return False
        return True
