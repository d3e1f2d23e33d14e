"""``--exact``: which generated classes update the weights exactly as Keras'
TensorFlow backend does (embedding gradients per token occurrence, float32-rounded
hyperparameters). What is reproduced and what is not is documented once, in the module
holding the classes as real code: ``transpiler/runtime/torch/keras_exact.py``;
``TrainingPrinter.optimizer_expr`` and the script printer copy the ones a program uses
(printers/runtime_source.py).
"""

from __future__ import annotations

#: Keras optimizers whose update the exact mode writes out, by IR kind → class name stem
EXACT_OPTIMIZERS = {"adam": "Adam", "adamw": "AdamW", "rmsprop": "RMSprop", "adagrad": "Adagrad",
                    "adadelta": "Adadelta", "adamax": "Adamax", "nadam": "Nadam"}

#: the runtime module holding KerasEmbedding, KerasOptimizer and the Keras<Optimizer> classes
#: (KerasAdam is copied as KerasAdamW for AdamW)
RUNTIME = "torch.keras_exact"
