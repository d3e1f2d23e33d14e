"""torch.optim's arithmetic on Keras optimizers, for generated Keras programs (PyTorch ->
Keras): SGD, RMSprop, Adagrad, Adadelta, Adam, Adamax and NAdam as torch computes them
(TorchAdam is copied as TorchAdamW for AdamW). docs/semantics.md gives each one's formula.
"""

import keras


class TorchOptimizer:
    """What the optimizers computing as torch's share (the first of their bases): their own
    hyperparameters (``HYPER``: name -> default, set as attributes and saved by get_config),
    torch's gradient (dense, plus the L2 weight decay torch adds to it) and one slot
    variable per parameter for each entry of ``SLOTS`` (attribute -> variable name)."""

    HYPER: dict = {}
    SLOTS: dict = {}
    LEARNING_RATE = None  # torch's default, for a class on keras.optimizers.Optimizer

    def __init__(self, **kwargs):
        own = {name: kwargs.pop(name, default) for name, default in self.HYPER.items()}
        if self.LEARNING_RATE is not None:
            kwargs.setdefault("learning_rate", self.LEARNING_RATE)
        super().__init__(**kwargs)
        for name, value in own.items():
            setattr(self, name, value)

    def get_config(self):
        return {**super().get_config(), **{name: getattr(self, name) for name in self.HYPER}}

    def build(self, variables):
        if self.built:
            return
        super().build(variables)
        for attribute, name in self.SLOTS.items():
            setattr(self, attribute, [self.add_variable_from_reference(v, name) for v in variables])

    def slots(self, variable):
        """The slot variables of parameter ``variable``, in the order of ``SLOTS``."""
        index = self._get_variable_index(variable)
        return [getattr(self, attribute)[index] for attribute in self.SLOTS]

    def torch_gradient(self, gradient, variable, dense=True):
        """The gradient torch's step reads: dense (a sparse one, an embedding's, made dense, or
        its repeated rows would be squared apart in a second moment), plus the L2 weight decay."""
        gradient = keras.ops.cast(gradient, variable.dtype)
        if dense:
            # (zeros of the variable's shape, not zeros_like(variable): jax refuses a variable there)
            gradient = keras.ops.add(keras.ops.zeros(tuple(variable.shape), variable.dtype), gradient)
        if self.l2:
            gradient = keras.ops.add(gradient, keras.ops.multiply(self.l2, variable))
        return gradient


def moving_average(optimizer, slot, decay, value):
    """slot = decay * slot + (1 - decay) * value: a moment's update, as torch's optimizers make it."""
    optimizer.assign(slot, keras.ops.add(keras.ops.multiply(decay, slot), keras.ops.multiply(1 - decay, value)))


@keras.saving.register_keras_serializable(package="transpiler")
class TorchSGD(TorchOptimizer, keras.optimizers.SGD):
    """SGD as torch.optim.SGD computes it: weight decay is an L2 term added to the gradient,
    and the momentum buffer sums gradients while the learning rate scales each step
    (b = momentum * b + g; p -= lr * b). Keras' SGD sums lr-scaled steps instead, which
    differs once the learning rate changes. With dampening d the buffer adds (1 - d) * g
    from the second step on (the first step's buffer is g itself, as torch's)."""

    HYPER = {"l2": 0.0, "dampening": 0.0}

    def update_step(self, gradient, variable, learning_rate):
        lr = keras.ops.cast(learning_rate, variable.dtype)
        gradient = self.torch_gradient(gradient, variable, dense=False)
        if self.momentum == 0:
            self.assign_sub(variable, keras.ops.multiply(lr, gradient))
            return
        buffer = self.momentums[self._get_variable_index(variable)]
        added = gradient
        if self.dampening:
            first = keras.ops.equal(self.iterations, 0)
            added = keras.ops.where(first, gradient, keras.ops.multiply(1.0 - self.dampening, gradient))
        self.assign(buffer, keras.ops.add(keras.ops.multiply(self.momentum, buffer), added))
        if self.nesterov:
            step = keras.ops.add(gradient, keras.ops.multiply(self.momentum, buffer))
        else:
            step = buffer
        self.assign_sub(variable, keras.ops.multiply(lr, step))


@keras.saving.register_keras_serializable(package="transpiler")
class TorchRMSprop(TorchOptimizer, keras.optimizers.Optimizer):
    """RMSprop as torch.optim.RMSprop computes it: the step divides by sqrt(v) + epsilon
    (Keras: sqrt(v + epsilon)), the momentum buffer sums unscaled steps and the learning
    rate scales it when applied, and an l2 weight decay is added to the gradient."""

    HYPER = {"rho": 0.99, "epsilon": 1e-8, "momentum": 0.0, "centered": False, "l2": 0.0}
    SLOTS = {"square_averages": "square_average", "averages": "average", "buffers": "momentum_buffer"}
    LEARNING_RATE = 0.01

    def update_step(self, gradient, variable, learning_rate):
        ops = keras.ops
        lr = ops.cast(learning_rate, variable.dtype)
        gradient = self.torch_gradient(gradient, variable)
        square_average, average, buffer = self.slots(variable)
        moving_average(self, square_average, self.rho, ops.square(gradient))
        variance = square_average
        if self.centered:
            moving_average(self, average, self.rho, gradient)
            variance = ops.subtract(square_average, ops.square(average))
        step = ops.divide(gradient, ops.add(ops.sqrt(variance), self.epsilon))
        if self.momentum:
            self.assign(buffer, ops.add(ops.multiply(self.momentum, buffer), step))
            step = buffer
        self.assign_sub(variable, ops.multiply(lr, step))


@keras.saving.register_keras_serializable(package="transpiler")
class TorchAdagrad(TorchOptimizer, keras.optimizers.Optimizer):
    """Adagrad as torch.optim.Adagrad computes it: the step divides by sqrt(sum) + epsilon
    (Keras: sqrt(sum + epsilon)), an l2 weight decay is added to the gradient, and lr_decay
    scales the rate of step t (1-based) by 1 / (1 + (t - 1) * lr_decay)."""

    HYPER = {"initial_accumulator_value": 0.0, "epsilon": 1e-10, "l2": 0.0, "lr_decay": 0.0}
    LEARNING_RATE = 0.01

    def build(self, variables):
        if self.built:
            return
        super().build(variables)
        initializer = keras.initializers.Constant(self.initial_accumulator_value)
        self.sums = [self.add_variable_from_reference(v, "sum", initializer=initializer) for v in variables]

    def update_step(self, gradient, variable, learning_rate):
        ops = keras.ops
        lr = ops.cast(learning_rate, variable.dtype)
        gradient = self.torch_gradient(gradient, variable)
        if self.lr_decay:
            lr = ops.divide(lr, 1 + ops.cast(self.iterations, variable.dtype) * self.lr_decay)
        total = self.sums[self._get_variable_index(variable)]
        self.assign_add(total, ops.square(gradient))
        step = ops.divide(gradient, ops.add(ops.sqrt(total), self.epsilon))
        self.assign_sub(variable, ops.multiply(lr, step))


@keras.saving.register_keras_serializable(package="transpiler")
class TorchAdam(TorchOptimizer, keras.optimizers.Adam):
    """Adam as torch.optim.Adam computes it: epsilon is added to sqrt(v) after the bias
    correction (Keras adds it before, which in torch's terms scales epsilon by
    1 / sqrt(1 - beta_2 ** step)), and an l2 weight decay is added to the gradient."""

    HYPER = {"l2": 0.0}

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.torch_epsilon = self.epsilon

    def update_step(self, gradient, variable, learning_rate):
        gradient = self.torch_gradient(gradient, variable)
        step = keras.ops.cast(self.iterations + 1, variable.dtype)
        beta_2 = keras.ops.cast(self.beta_2, variable.dtype)
        # Adam's update below reads self.epsilon: torch's epsilon in Keras' formula
        self.epsilon = self.torch_epsilon * keras.ops.sqrt(1 - keras.ops.power(beta_2, step))
        try:
            super().update_step(gradient, variable, learning_rate)
        finally:
            self.epsilon = self.torch_epsilon


@keras.saving.register_keras_serializable(package="transpiler")
class TorchAdadelta(TorchOptimizer, keras.optimizers.Adadelta):
    """Adadelta as torch.optim.Adadelta computes it: Keras' arithmetic is torch's (epsilon
    inside both square roots, the step times lr); an l2 weight decay is added to the gradient."""

    HYPER = {"l2": 0.0}

    def update_step(self, gradient, variable, learning_rate):
        super().update_step(self.torch_gradient(gradient, variable), variable, learning_rate)


@keras.saving.register_keras_serializable(package="transpiler")
class TorchAdamax(TorchOptimizer, keras.optimizers.Optimizer):
    """Adamax as torch.optim.Adamax computes it: epsilon enters the infinity norm
    (u = max(beta_2 * u, |g| + epsilon); Keras divides by u + epsilon instead), the step is
    lr / (1 - beta_1 ** t) * m / u, and an l2 weight decay is added to the gradient."""

    HYPER = {"beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-8, "l2": 0.0}
    SLOTS = {"firsts": "exp_avg", "norms": "exp_inf"}
    LEARNING_RATE = 0.002

    def update_step(self, gradient, variable, learning_rate):
        ops = keras.ops
        lr = ops.cast(learning_rate, variable.dtype)
        gradient = self.torch_gradient(gradient, variable)
        m, u = self.slots(variable)
        step = ops.cast(self.iterations + 1, variable.dtype)
        moving_average(self, m, self.beta_1, gradient)
        self.assign(u, ops.maximum(ops.multiply(self.beta_2, u), ops.add(ops.abs(gradient), self.epsilon)))
        rate = ops.divide(lr, 1 - ops.power(ops.cast(self.beta_1, variable.dtype), step))
        self.assign_sub(variable, ops.multiply(rate, ops.divide(m, u)))


@keras.saving.register_keras_serializable(package="transpiler")
class TorchNadam(TorchOptimizer, keras.optimizers.Optimizer):
    """NAdam as torch.optim.NAdam computes it: the momentum schedule
    mu_t = beta_1 * (1 - 0.5 * 0.96 ** (t * momentum_decay)) (Keras' Nadam: 0.96 ** t), the
    step lr * ((1 - mu_t) / (1 - prod mu) * g + mu_{t+1} / (1 - prod mu * mu_{t+1}) * m) divided
    by sqrt(v / (1 - beta_2 ** t)) + epsilon, and an l2 weight decay added to the gradient."""

    HYPER = {"beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-8, "momentum_decay": 0.004, "l2": 0.0}
    SLOTS = {"firsts": "exp_avg", "seconds": "exp_avg_sq"}
    LEARNING_RATE = 0.002

    def build(self, variables):
        if self.built:
            return
        super().build(variables)
        self.mu_products = [self.add_variable((), initializer="ones", name="mu_product") for _ in variables]

    def update_step(self, gradient, variable, learning_rate):
        ops = keras.ops
        dtype = variable.dtype
        lr = ops.cast(learning_rate, dtype)
        gradient = self.torch_gradient(gradient, variable)
        m, v = self.slots(variable)
        product = self.mu_products[self._get_variable_index(variable)]
        step = ops.cast(self.iterations + 1, dtype)
        mu = self.beta_1 * (1.0 - 0.5 * ops.power(ops.cast(0.96, dtype), step * self.momentum_decay))
        mu_next = self.beta_1 * (1.0 - 0.5 * ops.power(ops.cast(0.96, dtype), (step + 1) * self.momentum_decay))
        mu_product = ops.multiply(ops.cast(product, dtype), mu)
        self.assign(product, ops.cast(mu_product, product.dtype))
        moving_average(self, m, self.beta_1, gradient)
        moving_average(self, v, self.beta_2, ops.square(gradient))
        bias_correction2 = 1 - ops.power(ops.cast(self.beta_2, dtype), step)
        denom = ops.add(ops.sqrt(ops.divide(v, bias_correction2)), self.epsilon)
        update = ops.add(ops.multiply(lr * (1 - mu) / (1 - mu_product), ops.divide(gradient, denom)),
                         ops.multiply(lr * mu_next / (1 - mu_product * mu_next), ops.divide(m, denom)))
        self.assign_sub(variable, update)
