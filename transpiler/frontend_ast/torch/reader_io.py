"""The training reader's data and files: ``DataLoader``/``Dataset`` objects, map-style datasets,
``torch.save``/``torch.load`` of weights, models and checkpoints, and unused data dropped.
"""

from __future__ import annotations

import libcst as cst

from transpiler.frontend_ast.torch import model_files as torch_model_files
from transpiler.frontend_ast.torch.modules import Unsupported
from transpiler.ir import training as T
from transpiler.frontend_ast.torch.reader_values import (
    _assigns_only, _code, _find_literal, _literal_quotes, _literal_text, _root_names, STRING_LITERALS,
    _weights_name, Arr, CheckpointV, DatasetV, DictV, LoadedV, LoaderV, MapDatasetV, MapLoaderV, ModelV,
    OptimizerV, OTHER, Other, Scope, StateV, TupleV, V)
from transpiler.ir.code_literals import bare_argument


def _state_call(node) -> bool:
    """``x.state_dict()``."""
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and \
        node.func.attr.value == "state_dict" and not node.args


class ReaderData:
    """Mixin of ``TrainingReader`` (reader_io)."""

    def data_object(self, what: str, node: cst.Call, pos, vals, kw, kwv, scope: Scope) -> V:
        if what == "dataset":
            if kw:
                raise Unsupported("TensorDataset with keyword arguments")
            if not all(isinstance(v, (Arr, Other)) for v in vals):
                raise Unsupported("TensorDataset of something that is not array data")
            ds = DatasetV(list(pos), node, bindings={n.value: scope.lookup(n.value)
                                                     for p in pos for n in _root_names(p)})
            self.datasets.append(ds)
            self.fact(node, "dataset_object", T.ArrayExpr("", tuple(self.sid(a) for a in pos)))
            return ds
        dataset = vals[0] if vals else kwv.get("dataset")
        if "collate_fn" in kw or len(pos) > 6:  # (a loader of what its collate_fn makes: frontend_ast/torch/tensor_params)
            from transpiler.frontend_ast.torch.tensor_params import collate_loader

            return collate_loader(self, node, pos, vals, kw, kwv)
        if type(dataset) is Other:
            # a dataset this file does not make (a parameter, another file's Dataset class or
            # function): torch's DataLoader takes any map-style dataset, so does DatasetLoader
            dataset = MapDatasetV(0)
        if not isinstance(dataset, (DatasetV, MapDatasetV)):
            raise Unsupported("a DataLoader over something other than a TensorDataset or a map-style Dataset")
        order = ("dataset", "batch_size", "shuffle", "sampler", "batch_sampler", "num_workers", "collate_fn",
                 "pin_memory", "drop_last")
        given = dict(zip(order, pos))
        given.update(kw)
        given.pop("dataset", None)
        for key in ("sampler", "batch_sampler", "collate_fn", "worker_init_fn", "generator"):
            if key == "sampler" and isinstance(dataset, (MapDatasetV, DatasetV)):
                continue  # (a SampledLoader: the sampler's indices, batched)
            if key in given and _code(bare_argument(given[key])) != "None":
                raise Unsupported(f"DataLoader({key}=...) is not translated")
        if isinstance(dataset, DatasetV) and "sampler" in given and _code(bare_argument(given["sampler"])) != "None":
            self.used_datasets[dataset] += 1  # (read item by item: fit cannot take its arrays)
            dataset = MapDatasetV(len(dataset.arrays))
        if isinstance(dataset, MapDatasetV):
            self.fact(node, "map_loader_object", {
                "dataset": self.sid(pos[0] if pos else kw["dataset"]),
                **{key: self.sid(given[key]) if key in given else None for key in ("batch_size", "shuffle", "drop_last")},
                **({"sampler": self.sid(given["sampler"])} if "sampler" in given else {})})
            return MapLoaderV(dataset)
        loader = LoaderV(dataset, node, batch_size=given.get("batch_size"), shuffle=given.get("shuffle"),
                         drop_last=given.get("drop_last"))
        given_ds = pos[0] if pos else kw.get("dataset")
        if isinstance(given_ds, cst.Name) or (isinstance(given_ds, cst.Subscript) and isinstance(
                given_ds.value, cst.Name) and isinstance(scope.lookup(given_ds.value.value), DictV)):
            self.used_datasets[dataset] -= 1  # read through the loader: used if the loader is
        self.loaders.append(loader)
        self.fact(node, "loader_object", {"dataset": self.sid(pos[0] if pos else kw["dataset"]),
                                          "batch_size": self.sid(loader.batch_size) if loader.batch_size is not None
                                          else None,
                                          "shuffle": self.sid(loader.shuffle) if loader.shuffle is not None else None,
                                          "drop_last": self.sid(loader.drop_last) if loader.drop_last is not None
                                          else None})
        return loader

    def map_dataset(self, short: str, node: cst.Call, pos, vals, kw, kwv) -> V:
        """``random_split(dataset, lengths)`` and ``Subset(dataset, indices)`` of a map-style
        dataset or a TensorDataset: the generated helpers of the same names."""
        names = ("dataset", "lengths") if short == "random_split" else ("dataset", "indices")
        args = dict(zip(names, pos))
        args.update(kw)
        values = dict(zip(names, vals))
        values.update(kwv)
        extra = set(args) - set(names)
        if extra:
            raise Unsupported(f"{short}({', '.join(sorted(extra))}=...) is not translated")
        dataset = values.get("dataset")
        if isinstance(dataset, DatasetV):
            self.used_datasets[dataset] += 1  # read item by item
            arity = len(dataset.arrays)
        elif isinstance(dataset, MapDatasetV):
            arity = dataset.arity
        elif type(dataset) is Other:  # a dataset the file is given (another file's Dataset class): map-style
            arity = 0
        else:
            raise Unsupported(f"{short} of something that is not a dataset")
        self.fact(node, "split_object", {"helper": short, "args": [self.sid(args[n]) for n in names]})
        if short == "Subset":
            return MapDatasetV(arity)
        lengths = args.get("lengths")
        if not isinstance(lengths, (cst.List, cst.Tuple)):
            raise Unsupported("random_split: give the lengths as a list")
        return TupleV([MapDatasetV(arity) for _ in lengths.elements])

    def torch_save(self, node: cst.Call, pos, vals) -> V:
        if len(pos) < 2:
            raise Unsupported("torch.save without (object, path)")
        obj, path = vals[0], pos[1]
        literal = self.path_literal(path)
        if isinstance(pos[0], cst.Dict) and all(_state_call(el.value) for el in pos[0].elements
                                                if isinstance(el, cst.DictElement)):
            return self.save_checkpoint(node, pos[0], path)
        if isinstance(pos[0], (cst.Dict, cst.List, cst.Tuple)) or not isinstance(obj, (StateV, ModelV)) or \
                (isinstance(obj, ModelV) and obj.md is None and obj.elsewhere):
            # (data, a checkpoint dict; a value of another file pickles as itself: a Keras model too)
            return self.save_object(node, pos[0], path)
        if isinstance(obj, StateV) and literal is not None:
            self.saved[literal.evaluated_value] = ("state", obj.model)
        if isinstance(obj, StateV) and not obj.snapshot:
            model_node = pos[0].func.value if isinstance(pos[0], cst.Call) and \
                isinstance(pos[0].func, cst.Attribute) else None
            if model_node is None:  # (``ckp = model.state_dict()``: its weights, get_weights())
                return self.save_object(node, pos[0], path)
            self.fact(node, "save_weights", T.ArrayExpr("", (self.sid(model_node), self.sid(path))), model=obj.model.name)
            self.checkpoint_path(path)
            return OTHER
        if isinstance(obj, StateV):
            if obj.model.var is None:
                raise Unsupported("torch.save of a copied state_dict of a model not held in a variable")
            self.fact(node, "save_snapshot", T.ArrayExpr("", (self.sid(pos[0]), self.sid(path))), model=obj.model.var)
            self.facts[self.sid(node)].model_def = obj.model.md
            self.checkpoint_path(path)
            return OTHER
        if isinstance(obj, ModelV) and obj.md is not None:
            return torch_model_files.save_model(self, node, obj, pos[0], path) or OTHER
        raise Unsupported("torch.save of something other than a model's state_dict (or a dict of them)")

    def onnx_export(self, node: cst.Call, pos, vals, kw, private: bool = False) -> V:
        """``torch.onnx.export(model, args, path)`` → ``model.export(path, format="onnx")``: Keras
        exports the model for its own inputs (the example arguments only trace torch's graph)."""
        from transpiler.frontend_ast.torch.reader_values import _mentions

        path = pos[2] if len(pos) > 2 else kw.get("f")
        extra = set(kw) - {"f", "args", "export_params", "verbose", "opset_version", "input_names",
                           "output_names", "dynamic_axes"}
        if not pos or not isinstance(vals[0], ModelV) or path is None or extra or \
                _mentions(path, self.torch_names()):
            raise Unsupported("torch.onnx.export() of other than a model of this script to a path is not translated")
        if private:
            return self._onnx_export_outputs(node, vals[0], path, vals[1] if len(vals) > 1 else None)
        self.fact(node, "device_expr", {
            "text": f'{_code(pos[0])}.export({_code(path)}, format="onnx")',
            "note": "torch.onnx.export traces the model on example arguments; Keras' export writes the "
                    "model for its own inputs (the TensorFlow backend needs the tf2onnx package)"})
        return OTHER

    def _onnx_export_outputs(self, node: cst.Call, model: ModelV, path, value) -> V:
        """``torch.onnx._export(model, x, path)`` (torch's private form, which returns the
        model's outputs on the example input): the model exported, and its call on ``x``, as
        the program's ``model(x)`` there is (its layout permuted in and out)."""
        arg = node.args[1] if len(node.args) > 1 and node.args[1].keyword is None and not node.args[1].star else None
        if model.md is None or arg is None or isinstance(arg.value, (cst.Tuple, cst.List)):
            raise Unsupported("torch.onnx._export() of other than a model of this script on one input is not "
                              "translated")
        out = self.model_call(model, node, [(arg, value)])
        ts = self.facts.get(self.sid(node))
        if ts is not None:
            ts.config.update({"model": self.sid(node.args[0].value), "export_onnx": self.sid(path)})
            ts.source = _code(node)
        return out

    def save_object(self, node: cst.Call, obj, path) -> V:
        """``torch.save(obj, path)`` of what is not a model or its state_dict (a checkpoint dict
        with the epoch and the optimizer's state, arrays): the generated ``save_object``
        (pickle); the ``.state_dict()`` of a model or an optimizer in it is its Keras state."""
        self.state_values(obj)
        literal = self.path_literal(path)
        if literal is not None:
            self.saved[literal.evaluated_value] = ("object", None)
        self.runtime_expr(node, "save_object({0}, {1})", [obj, path], ["_plain", "save_object"])
        return OTHER

    def state_values(self, node) -> None:
        """``model.state_dict()`` → ``model.get_weights()`` and ``optimizer.state_dict()`` →
        ``optimizer_state(optimizer)`` where they are values in ``node`` (a dict, list or tuple
        display); a state_dict of something else is not translated."""
        if isinstance(node, cst.Dict):
            values = [el.value for el in node.elements if isinstance(el, cst.DictElement)]
            if len(values) < len(node.elements):
                raise Unsupported("torch.save of a dict with ** entries")
        elif isinstance(node, (cst.List, cst.Tuple)):
            values = [el.value for el in node.elements]
        else:
            values = [node]
        for value in values:
            if isinstance(value, (cst.Dict, cst.List, cst.Tuple)):
                self.state_values(value)
            elif isinstance(self.peek(value, self.cur_scope), ModelV) and not (
                    isinstance(node, cst.Name) and self.peek(value, self.cur_scope).elsewhere):
                # (a model whose class another file translates, saved alone: pickled as itself)
                raise Unsupported(f"torch.save of {_code(value)}, a whole model, inside a checkpoint (Keras saves a "
                                  "model to its own .keras file)")
            elif _state_call(value):
                owner = self.peek(value.func.value, self.cur_scope)
                if isinstance(owner, ModelV):
                    self.array(value, "{0}.get_weights()", [value.func.value])
                elif isinstance(owner, OptimizerV):
                    self.runtime_expr(value, "optimizer_state({0})", [value.func.value], ["optimizer_state"])
                else:
                    raise Unsupported(f"torch.save of {_code(value)}: the state of something that is not a model "
                                      "or an optimizer of this script")

    def runtime_expr(self, node, template: str, parts: list, helpers: list) -> None:
        """``node`` is the generated runtime call ``template`` of the code of ``parts``."""
        self.fact(node, "runtime_expr", {"template": template, "parts": [self.sid(p) for p in parts],
                                         "helpers": helpers})

    def load_object(self, value: LoadedV) -> V:
        """``x = torch.load(path)`` of what is not a state_dict this script saved: the
        generated ``load_object`` (what ``save_object`` wrote)."""
        self.runtime_expr(value.node, "load_object({0})", [value.path], ["load_object"])
        return OTHER

    def torch_load(self, node: cst.Call, path) -> V:
        literal = self.path_literal(path)
        saved = self.saved.get(literal.evaluated_value) if literal is not None else None
        if saved is None:
            return LoadedV(path, node)  # load_state_dict(torch.load(path)), or load_object
        if saved[0] == "object":
            return self.load_object(LoadedV(path, node))
        if saved[0] == "state":
            self.rename_literal(literal)
            return LoadedV(path, node, saved[1])
        if saved[0] == "model":
            return torch_model_files.load_model(self, node, path, literal, saved[1])
        entries = saved[1]
        self.fact(node, "load_checkpoint", {"path": self.sid(path), "literal": self.sid(literal),
                                            "quotes": _literal_quotes(literal),
                                            "entries": [(key, model.name, new) for key, (model, new)
                                                        in entries.items()]})
        return CheckpointV({key: model for key, (model, _new) in entries.items()})

    def path_literal(self, path):
        if isinstance(path, STRING_LITERALS):
            return path
        if isinstance(path, cst.Name):
            return self._path_literal(path.value)
        if isinstance(path, cst.Call):
            return _find_literal(path)
        return None

    def rename_literal(self, literal) -> None:
        if self.sid(literal) in self.facts:
            return
        new = _weights_name(literal.evaluated_value)
        if new != literal.evaluated_value:
            self.fact(literal, "array_expr", T.ArrayExpr(_literal_text(literal, new)))

    def save_checkpoint(self, node: cst.Call, mapping: cst.Dict, path) -> V:
        """``torch.save({"netG": netG.state_dict(), ...}, path)``: one weights file per model."""
        line = self.stmt_stack[-1] if self.stmt_stack else None
        if not (isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 and
                isinstance(line.body[0], cst.Expr) and line.body[0].value is node):
            raise Unsupported("torch.save of a checkpoint dict inside an expression")
        literal = self.path_literal(path)
        if literal is None:
            raise Unsupported("torch.save of a checkpoint dict to a path without a file name literal")
        base = _weights_name(literal.evaluated_value)[: -len(".weights.h5")]
        entries, out = {}, []
        for el in mapping.elements:
            value = el.value if isinstance(el, cst.DictElement) else None
            key = self.peek(el.key, self.cur_scope) if isinstance(el, cst.DictElement) else None
            if not (isinstance(key, str) and
                    isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and
                    value.func.attr.value == "state_dict"):
                raise Unsupported("torch.save of a dict holding other than model.state_dict() values")
            model = self.peek(value.func.value, self.cur_scope)
            if not isinstance(model, ModelV):
                raise Unsupported("torch.save of a dict holding the state of something that is not a model")
            new = f"{base}_{key}.weights.h5"
            entries[key] = (model, new)
            out.append((key, self.sid(value.func.value), new))
        self.saved[literal.evaluated_value] = ("dict", entries)
        self.fact(line, "save_checkpoint", {"path": self.sid(path), "literal": self.sid(literal),
                                            "quotes": _literal_quotes(literal), "entries": out})
        return OTHER

    def checkpoint_path(self, path) -> None:
        """Keras' save_weights wants a ``.weights.h5`` name: rename the literal that made the
        path (``os.path.join(tmp, "m.pt")``), where the path variable was assigned."""
        literal = None
        if isinstance(path, STRING_LITERALS):
            literal = path
        elif isinstance(path, cst.Name):
            literal = self._path_literal(path.value)
        elif isinstance(path, cst.Call):
            literal = _find_literal(path)
        if literal is None:
            self.program.warn(self.fe._span(path), f"Keras saves weights to a file ending in .weights.h5: "
                                                   f"make sure {_code(path)} does")
            return
        self.rename_literal(literal)

    def _path_literal(self, name: str):
        """The string literal that made ``name`` in the function being read (its last assignment)."""
        holder = self.cur_function if self.cur_function is not None else self.fe.module
        found = []

        class Finder(cst.CSTVisitor):
            def visit_Assign(self, n: cst.Assign) -> None:
                if any(isinstance(t.target, cst.Name) and t.target.value == name for t in n.targets):
                    lit = _find_literal(n.value)
                    if lit is not None:
                        found.append(lit)

        holder.visit(Finder())
        return found[-1] if found else None

    # -- what the training loop left unused -------------------------------------------
    def _drop_unused_data(self) -> None:
        """A DataLoader (and its TensorDataset) only the recognised loop read: fit() takes
        the arrays, so the statement that made it goes."""
        for loader in self.loaders:
            if self.used_loaders[loader] <= 0 and loader.stmt is not None and _assigns_only(loader.stmt,
                                                                                                   loader.var):
                self.fact(loader.stmt, "drop", f"{loader.var}: fit() batches the arrays itself")
        for ds in self.datasets:
            if self.used_datasets[ds] <= 0 and ds.stmt is not None and _assigns_only(ds.stmt, ds.var) and \
                    not any(ds is lo.dataset and self.used_loaders[lo] > 0 for lo in self.loaders):
                self.fact(ds.stmt, "drop", f"{ds.var}: fit() batches the arrays itself")
        for d in self.dicts:
            if _assigns_only(d.stmt, d.var) and all(
                    (self.used_loaders if isinstance(v, LoaderV) else self.used_datasets)[v] <= 0 and
                    not any(lo.dataset is v and self.used_loaders[lo] > 0 for lo in self.loaders)
                    for v in d.items.values()):
                self.fact(d.stmt, "drop", f"{d.var}: fit() batches the arrays itself")
