"""The Keras reader: a Keras script's model graph and training program, as IR."""
