"""The PyTorch reader: a torch script's modules, forward graphs and training program, as IR."""
