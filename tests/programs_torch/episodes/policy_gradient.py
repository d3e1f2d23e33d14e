"""REINFORCE as pytorch/examples writes it (written for these tests): the policy keeps its
episode's log-probabilities and rewards in its own lists, actions are sampled from a
Categorical, and one update per episode differentiates the log-probabilities recorded by the
forward passes of every step. Runs as written with torch (and a gymnasium)."""
import argparse
from collections import deque

import gymnasium as gym
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions import Categorical

parser = argparse.ArgumentParser()
parser.add_argument("--gamma", type=float, default=0.9)
parser.add_argument("--seed", type=int, default=1)
args = parser.parse_args()

env = gym.make("CartPole-v1")
env.reset(seed=args.seed)
torch.manual_seed(args.seed)


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(4, 16)
        self.dropout = nn.Dropout(p=0.5)
        self.out = nn.Linear(16, 2)
        self.log_probs = []
        self.rewards = []

    def forward(self, x):
        x = F.relu(self.dropout(self.hidden(x)))
        return F.softmax(self.out(x), dim=1)


policy = Policy()
optimizer = optim.Adam(policy.parameters(), lr=1e-2)
eps = np.finfo(np.float32).eps.item()


def select_action(state):
    state = torch.from_numpy(state).float().unsqueeze(0)
    probs = policy(state)
    m = Categorical(probs)
    action = m.sample()
    policy.log_probs.append(m.log_prob(action))
    return action.item()


def finish_episode():
    R = 0
    losses = []
    returns = deque()
    for r in policy.rewards[::-1]:
        R = r + args.gamma * R
        returns.appendleft(R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + eps)
    for log_prob, R in zip(policy.log_probs, returns):
        losses.append(-log_prob * R)
    optimizer.zero_grad()
    loss = torch.cat(losses).sum()
    loss.backward()
    optimizer.step()
    del policy.rewards[:]
    del policy.log_probs[:]


def main():
    running_reward = 10
    for episode in range(1, 1000):
        state, _ = env.reset()
        ep_reward = 0
        for t in range(1, 100):
            action = select_action(state)
            state, reward, terminated, truncated, _ = env.step(action)
            policy.rewards.append(reward)
            ep_reward += reward
            if terminated or truncated:
                break
        running_reward = 0.05 * ep_reward + 0.95 * running_reward
        finish_episode()
        print(f"episode {episode} reward {ep_reward:.1f} running {running_reward:.2f}")
        if running_reward > env.spec.reward_threshold:
            print(f"Solved after {episode} episodes")
            break


if __name__ == "__main__":
    main()
