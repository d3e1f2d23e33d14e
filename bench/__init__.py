"""Benchmarks: ``python -m bench`` writes docs/benchmarks.md (see bench/run.py)."""
