"""Runtime helpers of generated programs, as real, importable and unit-tested code.

``runtime/torch/`` holds what generated PyTorch programs (Keras -> PyTorch) call: Keras'
losses, metrics, callbacks, loop helpers, optimizer arithmetic and dataset loaders;
``runtime/keras/`` what generated Keras programs (PyTorch -> Keras) call: torch's data
utilities, optimizer arithmetic, losses, initialisation and training idioms.

Printers never import these modules: ``printers/runtime_source.py`` reads them as source
text and copies the definitions a program needs (with their dependencies) into the single
self-contained output script. So a runtime module imports nothing of the transpiler
(tests/test_layering.py), only its framework, and each definition must read well on its own.
"""
