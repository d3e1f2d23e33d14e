"""Printers whose output is PyTorch source (the Keras → PyTorch direction)."""
