"""Keras' optimizer arithmetic on torch.optim, for generated PyTorch programs: Adam's
epsilon placement (copied as KerasAdamW for AdamW) and RMSprop's sqrt(v + epsilon).
"""

import math

import torch


class KerasAdam(torch.optim.Adam):
    """torch.optim.Adam with Keras' epsilon placement: epsilon is added to sqrt(v) before
    the bias correction, so in torch's terms it is epsilon / sqrt(1 - beta_2 ** step)."""

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            group.setdefault("keras_eps", group["eps"])
            group["keras_step"] = group.get("keras_step", 0) + 1
            group["eps"] = group["keras_eps"] / math.sqrt(1 - group["betas"][1] ** group["keras_step"])
        return super().step(closure)


class KerasRMSprop(torch.optim.Optimizer):
    """Keras' RMSprop: the gradient is divided by sqrt(v + epsilon) (torch: sqrt(v) + epsilon)."""

    def __init__(self, params, lr=0.001, rho=0.9, eps=1e-07, momentum=0.0, centered=False):
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, momentum=momentum, centered=centered))

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            rho = group["rho"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if not state:
                    state["velocity"] = torch.zeros_like(p)
                    state["average_grad"] = torch.zeros_like(p)
                    state["momentum"] = torch.zeros_like(p)
                grad = p.grad
                velocity = state["velocity"].mul_(rho).addcmul_(grad, grad, value=1 - rho)
                denominator = velocity + group["eps"]
                if group["centered"]:
                    average = state["average_grad"].mul_(rho).add_(grad, alpha=1 - rho)
                    denominator = denominator - average * average
                increment = group["lr"] * grad / denominator.sqrt()
                if group["momentum"] > 0:
                    increment = state["momentum"].mul_(group["momentum"]).add_(increment)
                p.sub_(increment)


class LearningRateSchedule:
    """keras.optimizers.schedules.LearningRateSchedule without Keras: a subclass's
    ``__call__(step)`` gives the learning rate at an optimizer step (``step`` a tensor, as
    Keras passes ``optimizer.iterations``); a LambdaLR scheduler stepped once per batch asks
    it for every step, on an optimizer whose base rate is 1."""

    def __call__(self, step):
        raise NotImplementedError("a LearningRateSchedule subclass defines __call__(step)")


class ScheduleFunction(LearningRateSchedule):
    """One of Keras' built-in schedules (ExponentialDecay, CosineDecay, ...): the learning
    rate at a step is ``initial_learning_rate * factor(step)``, a float32 tensor as in Keras."""

    def __init__(self, initial_learning_rate, factor):
        self.initial_learning_rate, self.factor = initial_learning_rate, factor

    def __call__(self, step):
        return torch.tensor(self.initial_learning_rate * self.factor(int(step)), dtype=torch.float32)


def scheduled(make, factor):
    """An optimizer factory whose optimizers follow a Keras learning-rate schedule: the base
    rate times ``factor(step)``, ``step`` counting the optimizer's own steps (Keras evaluates
    the schedule at each apply_gradients, wherever the model's train_step takes it)."""

    def build(params):
        optimizer = make(params)
        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, factor)
        optimizer.register_step_post_hook(lambda *_: scheduler.step())
        return optimizer

    return build
