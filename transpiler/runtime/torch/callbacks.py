"""keras.callbacks.Callback and LambdaCallback without Keras, for generated PyTorch
programs: the generated fit() calls their hooks with the logs Keras passes.
"""



class Callback:
    """keras.callbacks.Callback without Keras: the generated fit() calls these hooks with the
    logs Keras passes (running means within an epoch; epoch results with val_* keys)."""

    def set_model(self, model):
        self.model = model

    def on_train_begin(self, logs=None):
        pass

    def on_train_end(self, logs=None):
        pass

    def on_epoch_begin(self, epoch, logs=None):
        pass

    def on_epoch_end(self, epoch, logs=None):
        pass

    def on_train_batch_begin(self, batch, logs=None):
        self.on_batch_begin(batch, logs=logs)

    def on_train_batch_end(self, batch, logs=None):
        self.on_batch_end(batch, logs=logs)

    def on_batch_begin(self, batch, logs=None):
        pass

    def on_batch_end(self, batch, logs=None):
        pass

    def on_test_begin(self, logs=None):
        pass

    def on_test_end(self, logs=None):
        pass

    def on_test_batch_begin(self, batch, logs=None):
        pass

    def on_test_batch_end(self, batch, logs=None):
        pass


class LambdaCallback(Callback):
    """keras.callbacks.LambdaCallback: the functions given stand in for the hooks."""

    def __init__(self, on_epoch_begin=None, on_epoch_end=None, on_train_begin=None, on_train_end=None,
                 on_train_batch_begin=None, on_train_batch_end=None, **kwargs):
        self.__dict__.update(kwargs)  # e.g. on_batch_end=...
        hooks = {"on_epoch_begin": on_epoch_begin, "on_epoch_end": on_epoch_end,
                 "on_train_begin": on_train_begin, "on_train_end": on_train_end,
                 "on_train_batch_begin": on_train_batch_begin, "on_train_batch_end": on_train_batch_end}
        for name, function in hooks.items():
            if function is not None:
                setattr(self, name, function)
