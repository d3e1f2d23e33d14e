"""Printers whose output is Keras source (the PyTorch → Keras direction)."""
