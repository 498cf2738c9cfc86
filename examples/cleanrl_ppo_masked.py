"""Masked PPO on the batched engine through Gymnasium's vector API, in the style of CleanRL's ppo.py.

One file, read top to bottom: hyper-parameters in ``Args``, the ``Agent`` network, then the
loop (rollout, GAE, clipped update). The environment is ``gymnasium.make_vec("ThirtyOne-v0",
vectorization_mode="vector_entry_point")``: ``num_envs`` tables stepped by the numba engine,
the learner in one seat of each, ``--opponents`` in the others. Illegal actions are masked
out of the policy with the env's ``info["action_mask"]``.

    python examples/cleanrl_ppo_masked.py --minutes 2            # scat, 2 players, against RandomAgent
    python examples/cleanrl_ppo_masked.py --total-timesteps 200000 --minutes 60   # the same run on any machine

It ends with a tournament (``thirtyone_env.evaluation``) of the greedy policy against the
opponent and prints the match win rate with its 95% interval.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from dataclasses import dataclass

import gymnasium as gym
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim

import thirtyone_env  # noqa: F401 (registers ThirtyOne-v0)
from thirtyone_env.evaluation import tournament


@dataclass
class Args:
    seed: int = 1
    """seed of the tables, the network and the opponents"""
    preset: str = "scat"
    """rules preset"""
    num_players: int = 2
    """players per table"""
    opponents: str = "random"
    """who plays the other seats (an agent spec or a mix such as heuristic:3,greedy:1)"""
    minutes: float = 2.0
    """wall-clock training budget"""
    total_timesteps: int = 0
    """learner-step budget (0: none); training stops at whichever budget ends first"""
    num_envs: int = 256
    """tables stepped together"""
    num_steps: int = 32
    """learner steps per table per rollout"""
    learning_rate: float = 1e-3
    """Adam step size, annealed linearly to 0 over the budget"""
    gamma: float = 0.995
    """discount per learner step"""
    gae_lambda: float = 0.95
    """GAE lambda"""
    num_minibatches: int = 4
    """minibatches per epoch"""
    update_epochs: int = 4
    """epochs over each rollout"""
    clip_coef: float = 0.2
    """PPO clip range"""
    ent_coef: float = 0.01
    """entropy bonus"""
    vf_coef: float = 0.5
    """value loss weight"""
    max_grad_norm: float = 0.5
    """gradient clipping"""
    hidden: int = 128
    """hidden units per layer"""
    eval_matches: int = 1000
    """matches in the final tournament"""
    threads: int = 2
    """torch threads"""


def layer_init(layer: nn.Linear, std: float = np.sqrt(2), bias_const: float = 0.0) -> nn.Linear:
    torch.nn.init.orthogonal_(layer.weight, std)
    torch.nn.init.constant_(layer.bias, bias_const)
    return layer


class Agent(nn.Module):
    def __init__(self, obs_dim: int, num_actions: int, hidden: int):
        super().__init__()
        self.critic = nn.Sequential(
            layer_init(nn.Linear(obs_dim, hidden)), nn.Tanh(),
            layer_init(nn.Linear(hidden, hidden)), nn.Tanh(),
            layer_init(nn.Linear(hidden, 1), std=1.0),
        )
        self.actor = nn.Sequential(
            layer_init(nn.Linear(obs_dim, hidden)), nn.Tanh(),
            layer_init(nn.Linear(hidden, hidden)), nn.Tanh(),
            layer_init(nn.Linear(hidden, num_actions), std=0.01),
        )

    def get_value(self, x: torch.Tensor) -> torch.Tensor:
        return self.critic(x)

    def get_action_and_value(self, x: torch.Tensor, mask: torch.Tensor, action: torch.Tensor | None = None):
        logits = self.actor(x)
        logits = torch.where(mask, logits, torch.finfo(logits.dtype).min)  # illegal actions get no mass
        probs = torch.distributions.Categorical(logits=logits)
        if action is None:
            action = probs.sample()
        return action, probs.log_prob(action), probs.entropy(), self.critic(x)


class TrainedAgent:
    """The greedy policy behind the ``act_batch`` protocol, for the tournament."""

    def __init__(self, agent: Agent, obs_scale: np.ndarray):
        self.agent, self.obs_scale = agent, obs_scale

    @torch.no_grad()
    def act_batch(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        x = torch.as_tensor(obs.astype(np.float32) / self.obs_scale)
        logits = self.agent.actor(x)
        logits = torch.where(torch.as_tensor(mask, dtype=torch.bool), logits, torch.finfo(logits.dtype).min)
        return logits.argmax(-1).numpy().astype(np.int64)


def parse_args(argv: list[str] | None = None) -> Args:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for f in dataclasses.fields(Args):
        parser.add_argument(f"--{f.name.replace('_', '-')}", type=type(f.default), default=f.default)
    return Args(**vars(parser.parse_args(argv)))


def main(argv: list[str] | None = None) -> dict[str, float]:
    args = parse_args(argv)
    batch_size = args.num_envs * args.num_steps
    minibatch_size = batch_size // args.num_minibatches
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)

    # env setup: the finished tables start their next match in the same step (the obs after a
    # done is the new match's first), so the classic CleanRL bootstrapping below applies as is
    envs = gym.make_vec("ThirtyOne-v0", num_envs=args.num_envs, vectorization_mode="vector_entry_point",
                        preset=args.preset, num_players=args.num_players, opponents=args.opponents,
                        autoreset_mode="same_step")
    obs_dim = envs.single_observation_space.shape[0]
    num_actions = envs.single_action_space.n
    agent = Agent(obs_dim, num_actions, args.hidden)
    optimizer = optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)

    # storage
    obs = torch.zeros((args.num_steps, args.num_envs, obs_dim))
    masks = torch.zeros((args.num_steps, args.num_envs, num_actions), dtype=torch.bool)
    actions = torch.zeros((args.num_steps, args.num_envs), dtype=torch.long)
    logprobs = torch.zeros((args.num_steps, args.num_envs))
    rewards = torch.zeros((args.num_steps, args.num_envs))
    dones = torch.zeros((args.num_steps, args.num_envs))
    values = torch.zeros((args.num_steps, args.num_envs))

    start_time = time.time()
    budget = args.minutes * 60
    global_step = 0
    next_obs, info = envs.reset(seed=args.seed)
    next_obs = torch.as_tensor(next_obs)
    next_mask = torch.as_tensor(info["action_mask"])
    next_done = torch.zeros(args.num_envs)
    episode_returns: list[float] = []
    iteration = 0
    step_budget = args.total_timesteps or float("inf")

    def spent() -> float:
        """The share of the budget used: time or steps, whichever runs out first."""
        return max((time.time() - start_time) / budget if budget > 0 else 1.0, global_step / step_budget)

    while spent() < 1.0:
        iteration += 1
        frac = 1.0 - spent()
        optimizer.param_groups[0]["lr"] = frac * args.learning_rate

        for step in range(args.num_steps):
            global_step += args.num_envs
            obs[step], masks[step], dones[step] = next_obs, next_mask, next_done
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(next_obs, next_mask)
                values[step] = value.flatten()
            actions[step], logprobs[step] = action, logprob
            next_obs, reward, terminations, truncations, info = envs.step(action.numpy())
            next_done = torch.as_tensor(np.logical_or(terminations, truncations), dtype=torch.float32)
            rewards[step] = torch.as_tensor(reward, dtype=torch.float32)
            next_obs, next_mask = torch.as_tensor(next_obs), torch.as_tensor(info["action_mask"])
            episode_returns.extend(reward[terminations].tolist())

        # bootstrap value if not done
        with torch.no_grad():
            next_value = agent.get_value(next_obs).reshape(1, -1)
            advantages = torch.zeros_like(rewards)
            lastgaelam = 0
            for t in reversed(range(args.num_steps)):
                if t == args.num_steps - 1:
                    nextnonterminal = 1.0 - next_done
                    nextvalues = next_value
                else:
                    nextnonterminal = 1.0 - dones[t + 1]
                    nextvalues = values[t + 1]
                delta = rewards[t] + args.gamma * nextvalues * nextnonterminal - values[t]
                advantages[t] = lastgaelam = delta + args.gamma * args.gae_lambda * nextnonterminal * lastgaelam
            returns = advantages + values

        # flatten the batch
        b_obs = obs.reshape((-1, obs_dim))
        b_masks = masks.reshape((-1, num_actions))
        b_logprobs = logprobs.reshape(-1)
        b_actions = actions.reshape(-1)
        b_advantages = advantages.reshape(-1)
        b_returns = returns.reshape(-1)
        b_values = values.reshape(-1)

        # optimize the policy and value network
        b_inds = np.arange(batch_size)
        for _ in range(args.update_epochs):
            np.random.shuffle(b_inds)
            for start in range(0, batch_size, minibatch_size):
                mb_inds = b_inds[start : start + minibatch_size]
                _, newlogprob, entropy, newvalue = agent.get_action_and_value(
                    b_obs[mb_inds], b_masks[mb_inds], b_actions[mb_inds])
                logratio = newlogprob - b_logprobs[mb_inds]
                ratio = logratio.exp()
                with torch.no_grad():
                    approx_kl = ((ratio - 1) - logratio).mean()
                mb_advantages = b_advantages[mb_inds]
                mb_advantages = (mb_advantages - mb_advantages.mean()) / (mb_advantages.std() + 1e-8)
                pg_loss1 = -mb_advantages * ratio
                pg_loss2 = -mb_advantages * torch.clamp(ratio, 1 - args.clip_coef, 1 + args.clip_coef)
                pg_loss = torch.max(pg_loss1, pg_loss2).mean()
                newvalue = newvalue.view(-1)
                v_clipped = b_values[mb_inds] + torch.clamp(newvalue - b_values[mb_inds], -args.clip_coef,
                                                            args.clip_coef)
                v_loss = 0.5 * torch.max((newvalue - b_returns[mb_inds]) ** 2,
                                         (v_clipped - b_returns[mb_inds]) ** 2).mean()
                entropy_loss = entropy.mean()
                loss = pg_loss - args.ent_coef * entropy_loss + v_loss * args.vf_coef
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()

        if iteration % 20 == 0:
            recent = np.mean(episode_returns[-500:]) if episode_returns else float("nan")
            print(f"step {global_step:,} ({global_step / (time.time() - start_time):,.0f} steps/s), "
                  f"mean return {recent:+.3f}, approx_kl {approx_kl.item():.4f}, entropy {entropy_loss.item():.3f}")

    elapsed = time.time() - start_time
    envs.close()

    # evaluate: greedy play in one seat against the opponent everywhere else
    from agents import make

    learner = TrainedAgent(agent, envs.unwrapped.obs_scale)
    opponent = make(args.opponents, args.preset, args.num_players, seed=args.seed)
    result = tournament([learner, opponent], args.preset, args.num_players, args.eval_matches, seed=args.seed + 1,
                        seating=[0] + [1] * (args.num_players - 1), names=["ppo", args.opponents])
    low, high = result.interval(0)
    print(f"trained {global_step:,} steps in {elapsed:.0f} s; win rate vs {args.opponents}: "
          f"{result.win_rate(0):.3f} [{low:.3f}, {high:.3f}] over {args.eval_matches} matches")
    return {"win_rate": result.win_rate(0), "low": low, "high": high, "steps": global_step, "seconds": elapsed}


if __name__ == "__main__":
    main()
