"""The real-world harness: the keras.io and pytorch/examples programs of ../shared/realworld/,
translated, run on synthetic stand-ins for their downloads, original against translation.

    python -m bench.realworld [--only NAME ...] [--direction keras|torch] [-j N] [--out docs/realworld.md]
"""
