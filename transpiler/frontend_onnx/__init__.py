"""The ONNX frontend: ``.onnx`` model files into the IR (a third spoke of the hub).

``read_onnx(path)`` → an ``ir.Program`` holding one model (``build_model``) whose nodes carry
their weights in the ops table's canonical layouts. ``loader`` reads the file with the ``onnx``
package (shape inference, constant folding with ``onnx.reference``), ``converters`` holds one
converter per ONNX op type, ``fuse`` recovers layers from node patterns. Only this package
imports ``onnx``, and only when a ``.onnx`` file is read.
"""

from transpiler.frontend_onnx.reader import Unsupported, read_onnx, registered_ops

__all__ = ["Unsupported", "read_onnx", "registered_ops"]
