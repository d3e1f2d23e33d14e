"""Typed records of what a reader (or a pass) tells the code after it about a program or a
model graph (issue 17 item 6: typed metadata instead of free ``meta`` keys). Each record
groups the facts of one concern; its fields default to "nothing recorded".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from transpiler.ir.graph import Span
    from transpiler.ir.modules import ModuleScope
    from transpiler.ir.source_file import NodeId
    from transpiler.ir.training import OwnStep, TrainingStatement


@dataclass
class GraphLayouts:
    """What the layout pass (ir/passes/layout_pass.py) decided for a model's boundary: the
    layout each input enters in, the one the source program returns each output in, the one
    the converted graph returns it in, and how many transposes it left in the graph."""

    inputs: list[str | None] | None = None
    outputs: list[str | None] | None = None
    target_outputs: list[str | None] | None = None
    transposes: int | None = None


@dataclass
class KerasProgramFacts:
    """What the Keras reader found about the script as a whole, for the torch printers."""

    #: the user classes the translated models are built of (the torch classes replace them)
    translated_classes: set[str] = field(default_factory=set)
    #: the module-level names bound to Keras objects or layers (their statements go)
    keras_names: list[str] = field(default_factory=list)
    #: ``(span, name)`` of the Keras calls the reader could not translate
    untranslated: list[tuple[Span, str]] = field(default_factory=list)
    #: the statements of builders that only make layers the models hold (they go with them)
    builder_layer_statements: set[NodeId] = field(default_factory=set)
    #: the helper functions inlined into builders (dropped where nothing else calls them)
    inlined_helpers: list[str] = field(default_factory=list)
    #: the script's ``keras.callbacks.Callback`` subclasses
    callback_classes: list[str] = field(default_factory=list)
    #: builder or class → the span of the statement its reading failed at
    failures: dict[str, Span] = field(default_factory=dict)
    #: variable → the function that compiled the model it holds (frontend_ast/keras/training_returns.py)
    compiled_by: dict[str, str] = field(default_factory=dict)
    #: variable → the class of the wrapper model (a ``keras.Model`` holding models) it holds
    wrapper_instances: dict[str, str] = field(default_factory=dict)
    #: wrapper class → its instances, span, trackers, objects and held models (frontend_ast/keras/wrappers.py)
    wrapper_classes: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: wrapper class → True: the torch printer could not write its training (printers/torch/wrapper_training.py)
    wrapper_failed: dict[str, bool] = field(default_factory=dict)
    #: ``(span, dataset name or None)`` of each ``tfds.load`` call
    tfds_loads: list[tuple[Span, str | None]] = field(default_factory=list)
    #: ``(span, function)`` of the calls that have no effect in PyTorch (reported, printers/torch/data_sources.py)
    no_effect_calls: list[tuple[Span, str]] = field(default_factory=list)
    #: ``(span, reason)`` of the expressions that need TensorFlow although their statement names
    #: no Keras object (``ds.shuffle(100)`` on a loader: a method the output's DataLoader has
    #: not): the printer makes their statements stubs (printers/torch/data_sources.py)
    tensorflow_only: list[tuple[Span, str]] = field(default_factory=list)
    #: the Keras names of the layers ``adapt()`` ran on
    adapted_layers: list[str] = field(default_factory=list)
    #: the source lines whose comment is already attached to a node (each is printed once)
    used_comments: set[int] = field(default_factory=set)


@dataclass
class TorchProgramFacts:
    """What the torch reader found about the script as a whole, for the Keras printers."""

    #: the names bound to torch objects (module level and inside functions)
    torch_bindings: set[str] = field(default_factory=set)
    #: the torch names imports inside functions bind (the training reader finds them)
    local_torch_bindings: set[str] = field(default_factory=set)
    #: module classes another model class nests (printed as ``layers.Layer`` subclasses)
    nested_classes: list[str] = field(default_factory=list)
    #: class → the ``(args, kwargs)`` values of its first module-level construction
    class_call_args: dict[str, tuple[tuple, dict[str, Any]]] = field(default_factory=dict)
    #: the training program's statements by stable id
    training_facts: dict[NodeId, TrainingStatement] = field(default_factory=dict)
    #: class → why no model could be built of it
    unbuilt_classes: dict[str, str] = field(default_factory=dict)
    #: mixins among the classes tried as models (frontend_ast/torch/module_inherit.py: printed as nothing)
    mixin_classes: list[str] = field(default_factory=list)
    #: the models that became stubs (``{"name", "builder", "message", ...}`` each)
    stubbed_models: list[dict[str, Any]] = field(default_factory=list)
    #: class → the constructor parameters a placeholder value stood for (frontend_ast/torch/lazy_inputs.py)
    placeholder_params: dict[str, list[str]] = field(default_factory=dict)
    #: graph → ``(input shapes, why)`` assumed for a model with no known input shape (lazy_inputs.py)
    lazy_inputs: dict[str, tuple[str, str]] = field(default_factory=dict)


@dataclass
class KerasModelFacts:
    """What the Keras reader found about one model, for the torch printers."""

    #: the model's own ``train_step``/``test_step`` (frontend_ast/keras/support.py ``_custom_step``:
    #: its methods, trackers, spans); empty: it has none
    custom_step: dict = field(default_factory=dict)
    #: the torch printer could not print ``custom_step`` (printers/torch/training.py)
    custom_step_failed: bool = False
    #: a Sequential model's ``model.layers`` (their Keras names, in order); None: not recorded
    keras_layers: list[str] | None = None
    #: the keys of the dict the model returns, in order (None: it returns no dict)
    output_keys: list[str] | None = None
    #: the user classes (subclassed layers and models) the model is built of
    user_classes: list[str] = field(default_factory=list)
    #: a subclassed model's own scope (ir/modules.py); None for a functional model
    root_scope: ModuleScope | None = None
    #: the module scopes (with their calls) around where the model was built
    base_scopes: tuple[tuple[ModuleScope, Any], ...] = ()


@dataclass
class TorchModelFacts:
    """What the torch reader found about one model, for the Keras printers and the weights."""

    #: the model's own training step; None: it has none
    own_step: OwnStep | None = None
    #: why reading the model's own training step failed (None: it did not)
    own_step_failed: str | None = None
    #: a subclass building on its first call: the input shape it is described by (empty: not one)
    lazy_class: str = ""
    #: such a subclass's user-module children: attribute → ``(class, arguments as source text)``
    child_blocks: dict[str, tuple[str, str]] | None = None
    #: ``(method, parameters text, span, message)`` of the class's methods left as stubs
    unread_methods: list[tuple[str, str, Span, str]] = field(default_factory=list)
    #: ``(method, parameters text, span, message, FunctionDef)`` of the class's own methods forward
    #: does not call (``GPT.generate``), read by the program reader as functions over the model
    #: (frontend_ast/torch/method_functions.py); a method it cannot read goes to ``unread_methods``
    method_functions: list[tuple[str, str, Span, str, Any]] = field(default_factory=list)
    #: those of ``method_functions`` the reader translated (printed as ``def gpt_generate(model, ...)``)
    method_functions_read: list[tuple[str, str, Any]] = field(default_factory=list)
    #: a model built of its submodules (``{"parts": [(attr, Graph)], "call": ...}``,
    #: frontend_ast/torch/parts.py); empty: not one
    composed: dict[str, Any] = field(default_factory=dict)
    #: the source's comments on the model's own lines, printed with its layers
    comments: list[str] = field(default_factory=list)
    #: the names ``model.named_children()`` yields, in order (None: not recorded)
    torch_children: list[str] | None = None
    #: the model takes inputs of any rank (no rank the Keras class insists on: runtime call_module)
    any_input: bool = False
    #: ``return logits, None`` (a loss computed only when targets are given): the number of
    #: outputs forward returns and the positions that are None (None: every output is a tensor)
    none_outputs: tuple[int, list[int]] | None = None
    #: a block repeated a constructor argument's number of times (frontend_ast/torch/repeated_blocks.py):
    #: attribute → ``(class, the call's arguments, the count's source text)``; the Keras class holds a list
    repeated_blocks: dict[str, tuple[str, str, str]] = field(default_factory=dict)
    #: methods building the model never runs that only re-initialise layers it holds
    #: (``self.tok_emb.reset_parameters()``, frontend_ast/torch/reset_methods.py): ``(method,
    #: parameters text, span, the layers' module paths)``; printed as functions over the Keras model
    reset_methods: list[tuple[str, str, Span, list[str]]] = field(default_factory=list)


@dataclass
class TorchNodeFacts:
    """What the torch reader recorded about the module (or parameter) a node was read from,
    for the state_dict keys, the Keras printer's initial weights and the report."""

    #: the module's (or parameter's) dotted path in the model (``blocks.0.fc``): its state_dict prefix
    path: str | None = None
    #: Keras weight → the user's state_dict key, where it is not ``<path>.<weight>`` (F.linear over a
    #: module's own parameters, an RNN layer's ``_l0`` keys)
    keys: dict[str, str] | None = None
    #: the layer of a multi-layer nn.LSTM/GRU the node is (its keys' ``_l<i>``)
    layer_index: int | None = None
    #: an ``nn.Parameter``'s (a variable node's) initial value as torch draws it (None: not reproduced)
    init: Any = None
    #: the parameter is a registered buffer, not in ``named_parameters()``
    buffer: bool = False
    #: Keras weight → how the module's own initialisation draws it (printers/keras/ops.py)
    param_inits: dict[str, Any] | None = None
    #: ``nn.Embedding``'s ``padding_idx``
    padding_idx: int | None = None
    #: ``nn.PReLU``'s initial alpha
    alpha_init: float | None = None
    #: a transpose between torch's time-major (L, N, F) and batch-major (``batch_first=False``)
    time_major: bool = False
    #: a recurrent layer whose ``bias_hh`` the script freezes (one bias, as Keras')
    bias_hh_frozen: bool = False
    #: ``(block attribute, call number)``: the node is part of one call of a block the model holds
    #: (printers/keras/subclass.py prints it as one call of the block's class)
    block_call: tuple[str, int] | None = None
    #: the spans of the nodes a rewrite folded into this one (their comments go with it)
    absorbed_spans: list[Span] = field(default_factory=list)


@dataclass
class KerasNodeFacts:
    """What the Keras reader recorded about where a node was made (the statements that go with
    it, the module scopes around it, its layer's initializers), for the module tree
    (ir/modules.py), the torch printers and the report."""

    #: the reader's own layer object (frontend_ast/keras/values.py; only frontend_ast/keras reads it)
    layer: Any = None
    #: the id of the statement that made it, and of the outermost statement running then
    stmt: NodeId | None = None
    top_stmt: NodeId | None = None
    #: the ids of the statements calling the helper functions it was made in
    call_stmts: tuple = ()
    #: the ``(ModuleScope, call)`` chain it was made in, outermost first (None: not recorded,
    #: a node a pass inserted)
    scopes: tuple | None = None
    #: the scope owning its layer (where the layer's attribute lives) and the layer's creation order
    owner_scope: ModuleScope | None = None
    seq: int | None = None
    #: the layer's attribute inside its own module: ``(name, index in a list or None)``
    local: tuple[str, int | None] | None = None
    #: the builder's line that led to it (a call of a helper function)
    site: Span | None = None
    #: the comments of those lines, printed with the module that holds it
    site_comments: list[str] = field(default_factory=list)
    #: the node it was folded into (a layer's fused activation, a constant its reader took)
    fused_into: Any = None
    #: the layer's initializer and regularizer arguments (``{"kernel_initializer": ...}``)
    initializers: dict[str, Any] = field(default_factory=dict)
    regularizers: dict[str, Any] = field(default_factory=dict)
    #: tensor math from the user's code: what the call was (``"ops.concatenate"``); None: a layer
    tensor_op: str | None = None
    #: a custom layer's ``add_weight``: ``(the layer's Keras name, its attribute)``
    variable_of: tuple[str, str] | None = None
    #: an opaque layer's class definition (where the report points)
    definition: Span | None = None


@dataclass
class OnnxNodeFacts:
    """What the ONNX reader recorded about the ONNX node a node was read from."""

    #: the ONNX node's name (``#<index> <op_type>`` when it has none)
    name: str | None = None
    #: a per-channel affine map (Mul/Add by constants) the reader made a batch_norm of: folded
    #: into the layer before it where it can be (frontend_onnx/fuse.py)
    affine: bool = False
    #: fixed weights the reader computed (LRN's window sum), not trained
    frozen: bool = False
    #: the model file holds the node's weights: loaded, not drawn by initializers
    weights_given: bool = False
