"""``--keras-exact-updates``: generated code that updates the weights exactly as Keras'
TensorFlow backend does, where that differs from the mathematically true update.

Two differences are reproduced (measured: tests/test_training_equivalence.py):

- **Embedding gradients per token occurrence.** TensorFlow hands an Embedding table's
  gradient to the optimizer as ``tf.IndexedSlices``: one slice per occurrence of a token
  in the batch, repeats not summed. Keras' optimizers apply elementwise functions to the
  slices before they are summed per row, so a token seen k times adds ``sum(g_i ** 2)``
  to a second moment where the true gradient gives ``(sum g_i) ** 2``. Affected, and
  reproduced: Adam/AdamW/Nadam (second moment), RMSprop (velocity), Adagrad
  (accumulator), Adadelta (accumulated gradient and accumulated update, whose slices are
  squared too) and Adamax (its infinity norm takes ``max(beta_2 * u, sum |g_i|)``).
  SGD (with or without momentum) is linear in the gradient: summing the slices first or
  last is the same update, so it needs nothing. The generated ``KerasEmbedding`` records
  the slices (a hook on the lookup's output), the generated ``Keras<Optimizer>`` class
  reads them; every other weight uses its ``.grad``.
- **float32 hyperparameters.** Keras ``tf.cast``s some Python-float hyperparameters to
  the variable's dtype, which rounds them through float32 first: Adam's, AdamW's and
  Adamax's betas in the bias corrections (the moments use the exact betas), Nadam's betas
  and its 0.96 in the per-step factors (its running product uses the exact ones), the
  weight decay rate, and Adagrad's initial accumulator value (a Constant initializer).
  Invisible in float32 training; reproduced so that float64 runs agree to rounding.

Not reproduced: gradient clipping of an embedding gradient (Keras clips the slices:
clipvalue per occurrence, clipnorm from their squares; the generated train_step clips
the summed gradient), and a table that also gets a dense gradient from elsewhere (a tied
output projection: TensorFlow then sums everything into one dense gradient, while the
recorded slices would still be used).

The classes are real code in ``transpiler/runtime/torch/keras_exact.py``; ``TrainingPrinter.optimizer_expr``
and the script printer copy the ones a program uses (printers/runtime_source.py).
"""

from __future__ import annotations

#: Keras optimizers whose update the exact mode writes out, by IR kind → class name stem
EXACT_OPTIMIZERS = {"adam": "Adam", "adamw": "AdamW", "rmsprop": "RMSprop", "adagrad": "Adagrad",
                    "adadelta": "Adadelta", "adamax": "Adamax", "nadam": "Nadam"}

#: the runtime module holding KerasEmbedding, KerasOptimizer and the Keras<Optimizer> classes
#: (KerasAdam is copied as KerasAdamW for AdamW)
RUNTIME = "torch.keras_exact"
