"""An actor-critic as pytorch/examples writes it (written for these tests): one module with
two heads called on a single observation (no batch axis), (log_prob, value) records in a
namedtuple list on the module, a smooth-L1 critic loss and stacked losses, one update per
episode. Runs as written with torch (and a gymnasium)."""
from collections import namedtuple

import gymnasium as gym
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions import Categorical

GAMMA = 0.95
env = gym.make("CartPole-v1")
env.reset(seed=3)
torch.manual_seed(3)

Step = namedtuple("Step", ["log_prob", "value"])


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 32)
        self.actor = nn.Linear(32, 2)
        self.critic = nn.Linear(32, 1)
        self.steps = []
        self.rewards = []

    def forward(self, x):
        x = F.relu(self.body(x))
        return F.softmax(self.actor(x), dim=-1), self.critic(x)


model = ActorCritic()
optimizer = optim.Adam(model.parameters(), lr=3e-2)
eps = np.finfo(np.float32).eps.item()


def select_action(state):
    state = torch.from_numpy(state).float()
    probs, value = model(state)
    m = Categorical(probs)
    action = m.sample()
    model.steps.append(Step(m.log_prob(action), value))
    return action.item()


def finish_episode():
    R = 0
    policy_losses = []
    value_losses = []
    returns = []
    for r in model.rewards[::-1]:
        R = r + GAMMA * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + eps)
    for (log_prob, value), R in zip(model.steps, returns):
        advantage = R - value.item()
        policy_losses.append(-log_prob * advantage)
        value_losses.append(F.smooth_l1_loss(value, torch.tensor([R])))
    optimizer.zero_grad()
    loss = torch.stack(policy_losses).sum() + torch.stack(value_losses).sum()
    loss.backward()
    optimizer.step()
    del model.rewards[:]
    del model.steps[:]


def main():
    running_reward = 10
    for episode in range(1, 1000):
        state, _ = env.reset()
        ep_reward = 0
        for t in range(1, 100):
            action = select_action(state)
            state, reward, terminated, truncated, _ = env.step(action)
            model.rewards.append(reward)
            ep_reward += reward
            if terminated or truncated:
                break
        running_reward = 0.05 * ep_reward + 0.95 * running_reward
        finish_episode()
        if running_reward > env.spec.reward_threshold:
            print(f"Solved: running reward {running_reward:.2f} after {episode} episodes")
            break


if __name__ == "__main__":
    main()
