"""The ONNX printer: an IR graph (channels-first, after the PyTorch pipeline) → an ONNX model.

``export.py`` drives it (program, weights, batch size → ``onnx.ModelProto``); ``builder.py``
holds the model under construction; one emitter per IR op in ``layers.py``, ``elementwise.py``
and ``recurrent.py`` (a registry, as the other printers have); ``initial.py`` draws the source
framework's default initial weights with numpy when no checkpoint is given.
"""
