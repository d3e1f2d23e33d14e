"""Shared test set-up: import torch before TensorFlow, once per process."""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")
sys.path.insert(0, os.path.dirname(__file__))

import torch  # noqa: E402,F401  (first: a process holding both frameworks must load torch first)

torch.set_num_threads(1)
