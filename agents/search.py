"""``SearchAgent``: Monte-Carlo search at play time on top of a trained policy.

At each decision it

1. **deals the cards it cannot see** ``samples`` ways, from its own observation only
   (``belief``): the unseen cards are the deck minus its hand, the discard pile and the
   cards opponents are known to hold; each opponent's hidden cards are drawn with the
   chances a learned belief (``agents.belief.BeliefNet``, which reads the opponents' moves)
   gives each card, or uniformly (``belief="uniform"``, or no belief shipped for these
   rules); an opponent who knocked keeps only hands worth at least what the rollout policy
   ever knocks with (rejection sampling on the knock);
2. **plays every legal move out** in each dealt world to the end of the deal, with the
   rollout policy (by default the shipped policy of these rules and players, else
   ``HeuristicAgent``) in every seat, its own later moves included; every move is played
   in the same worlds with the same random streams (common random numbers);
3. **scores** a play-out by the chance to win the match from the lives (or chips) and
   on-honor status of every seat when the deal ends (``WinTable``, measured by self-play),
   or by the match result if it ended;
4. **chooses** the move with the best mean score, unless the policy's own move is within
   ``z`` paired standard errors of it (then it keeps the policy's move; the default 3 was
   chosen by ``scripts/search_gain.py``: lower bars depart often and gain nothing
   resolvable, see docs/strength.md). It knocks only where
   the policy knocks (``knocks=True`` lifts that). With ``max_samples`` above ``samples``, a
   close call (the best move ahead by more than ``close`` standard errors, but not ``z``)
   gets more worlds, up to ``max_samples``, before it is decided.

Every table of a batch and every world and move is one batch of ``Tables`` rows, so a
batch of decisions costs little more per decision than one. ``budget_ms`` caps the CPU time
per decision (worlds are played in chunks; the last chunk is skipped when it would not fit).
"""

from __future__ import annotations

import time
from functools import lru_cache
from typing import Any

import numpy as np
from numba import njit

from agents.base import BaseAgent
from agents.belief import BeliefNet
from thirtyone_env import encoding as E
from thirtyone_env.actions import KNOCK
from thirtyone_env.engine import OUT, Tables
from thirtyone_env.engine.hands import hand_value2
from thirtyone_env.evaluation import win_shares
from thirtyone_env.jit import JIT
from thirtyone_env.rules import Rules

MAX_DECK = 52
BELIEFS = ("learned", "uniform")  # learned: the shipped BeliefNet where there is one, else uniform


# -- the chance to win the match from every seat's lives --------------------------------------
def _seat_codes(chips: np.ndarray, status: np.ndarray) -> np.ndarray:
    """One small integer per seat: its lives/chips (clipped) and status."""
    return np.clip(chips, 0, 255).astype(np.int64) * 3 + status.astype(np.int64)


def _relative_keys(codes: np.ndarray, seat: int) -> np.ndarray:
    """Rows of seat codes seen from ``seat``: its own first, then the opponents (sorted from 3 players up:
    which of them sits where matters little and the table gets denser)."""
    n = codes.shape[1]
    order = [(seat + r) % n for r in range(n)]
    rel = codes[:, order]
    if n > 2:
        rel = np.concatenate([rel[:, :1], np.sort(rel[:, 1:], axis=1)], axis=1)
    return rel


def _fallback(codes: np.ndarray) -> np.ndarray:
    """A share by lives for states self-play never reached: lives (+1 in play) over everyone's."""
    chips, alive = codes // 3, (codes % 3) != OUT
    strength = np.where(alive, chips + 1.0, 0.0)
    total = strength.sum(axis=1)
    return np.where(total > 0, strength[:, 0] / np.maximum(total, 1e-9), 1.0 / codes.shape[1])


class WinTable:
    """Chance that a seat wins the match from the lives/chips and status of every seat at a deal's start,
    measured by ``HeuristicAgent`` self-play (``matches`` matches), smoothed towards ``_fallback``.

    Also records the lowest hand values seats knock with (``knock_floor2``, doubled values), which
    the belief uses to read an opponent's knock.
    """

    PRIOR = 4.0  # pseudo-matches of the fallback in each entry

    def __init__(self, rules: Rules, num_players: int, matches: int = 2000, seed: int = 12345,
                 num_tables: int = 128):
        from agents.heuristic import HeuristicAgent

        self.rules, self.num_players = rules, num_players
        n = num_players
        agent = HeuristicAgent(rules, n)
        t = Tables(min(num_tables, matches), n, rules, seed=seed, parallel=False)
        obs, mask, _ = t.reset()
        off = E.offsets(rules.deck_size, n)
        match_no = np.zeros(t.num_tables, np.int64)
        started = np.zeros(t.num_tables, np.int64)
        rec_table, rec_match, rec_codes = [], [], []
        finals: dict[tuple[int, int], np.ndarray] = {}
        knock_values: list[np.ndarray] = []
        last_deal = np.zeros(t.num_tables, np.int64)
        started[:] = 1
        done_matches = 0
        while done_matches < matches:
            changed = np.flatnonzero(t.deal != last_deal)
            if changed.size:
                rec_table.append(changed)
                rec_match.append(match_no[changed].copy())
                rec_codes.append(_seat_codes(t.chips[changed], t.status[changed]))
                last_deal[changed] = t.deal[changed]
            actions = agent.act_batch(obs, mask)
            knocks = actions == KNOCK
            if knocks.any():
                knock_values.append(obs[knocks, off[E.HAND_VALUE]].astype(np.int64))
            obs, mask, _, rewards, done = t.step(actions)
            for i in np.flatnonzero(done):
                finals[(int(i), int(match_no[i]))] = rewards[i].copy()
                match_no[i] += 1
                done_matches += 1
            last_deal[done] = 0  # the next match's first deal is recorded too
        tables, nos, codes = np.concatenate(rec_table), np.concatenate(rec_match), np.concatenate(rec_codes)
        have = np.array([(int(i), int(m)) in finals for i, m in zip(tables, nos, strict=True)], bool)
        tables, nos, codes = tables[have], nos[have], codes[have]
        shares = win_shares(np.stack([finals[(int(i), int(m))] for i, m in zip(tables, nos, strict=True)]))
        sums: dict[tuple[int, ...], list[float]] = {}
        for seat in range(n):
            keys = _relative_keys(codes, seat)
            for key, share in zip(map(tuple, keys.tolist()), shares[:, seat].tolist(), strict=True):
                entry = sums.setdefault(key, [0.0, 0.0])
                entry[0] += share
                entry[1] += 1.0
        self.table = {}
        for key, (total, count) in sums.items():
            prior = float(_fallback(np.array([key]))[0])
            self.table[key] = (total + self.PRIOR * prior) / (count + self.PRIOR)
        values = np.concatenate(knock_values) if knock_values else np.zeros(1, np.int64)
        self.knock_floor2 = int(values.min())
        self.states, self.matches = len(self.table), matches

    def __call__(self, chips: np.ndarray, status: np.ndarray, seat: int = 0) -> np.ndarray:
        """Chance that ``seat`` wins, per row of ``chips``/``status`` (rows: tables, columns: seats)."""
        keys = _relative_keys(_seat_codes(np.asarray(chips), np.asarray(status)), seat)
        unique, inverse = np.unique(keys, axis=0, return_inverse=True)
        fallback = _fallback(unique)
        values = np.array([self.table.get(tuple(k), f) for k, f in zip(unique.tolist(), fallback, strict=True)])
        return values[inverse.reshape(-1)]


@lru_cache(maxsize=32)
def win_table(rules: Rules, num_players: int, matches: int = 2000) -> WinTable:
    """One ``WinTable`` per rules, players and size, built on first use (seconds) and kept."""
    return WinTable(rules, num_players, matches)


# -- the belief: deal the unseen cards ------------------------------------------------------------
@njit(**JIT)
def _deal_worlds(obs, off, params, n, d, samples, seeds, floor2, weights, hands, stocks):
    """``samples`` guesses per observation of what the seat cannot see; rows ``b * samples + k``.

    Reads the observation only. Each opponent's unseen cards are drawn one by one with chances
    proportional to ``weights[b, r]`` over the cards still unplaced (all ones: uniform); the
    stock is the rest, shuffled. An opponent who knocked is dealt hands until one is worth at
    least ``floor2`` (up to 64 tries; then the best tried).
    """
    for b in range(obs.shape[0]):
        np.random.seed(seeds[b])
        o = obs[b]
        seen = np.zeros(d, np.bool_)
        for c in range(d):
            if o[off[E.HAND] + c] or o[off[E.DISCARD_PILE] + c]:
                seen[c] = True
        known = np.full((n - 1, 4), -1, np.int64)
        kept = np.zeros(n - 1, np.int64)
        need = np.zeros(n - 1, np.int64)
        knocker = -1
        for r in range(n - 1):
            for c in range(d):
                if o[off[E.OPP_KNOWN] + r * d + c]:
                    seen[c] = True
                    known[r, kept[r]] = c
                    kept[r] += 1
            need[r] = 3 - kept[r] if o[off[E.OPP_IN_PLAY] + r] else 0
            if o[off[E.OPP_KNOCKED] + r]:
                knocker = r
        free = np.zeros(d, np.bool_)
        dealt = np.full((n - 1, 4), -1, np.int64)
        best = np.full((n - 1, 4), -1, np.int64)
        for k in range(samples):
            row = b * samples + k
            best_value = -1
            for _attempt in range(64):
                for c in range(d):
                    free[c] = not seen[c]
                for r in range(n - 1):
                    dealt[r, :] = known[r, :]
                    for j in range(need[r]):
                        total = 0.0
                        for c in range(d):
                            if free[c]:
                                total += weights[b, r, c]
                        u = np.random.random() * total
                        pick = -1
                        for c in range(d):
                            if free[c]:
                                pick = c
                                u -= weights[b, r, c]
                                if u < 0:
                                    break
                        free[pick] = False
                        dealt[r, kept[r] + j] = pick
                if knocker < 0 or need[knocker] == 0:
                    best[:, :] = dealt
                    break
                h = dealt[knocker]
                value = hand_value2(h[0], h[1], h[2], params)
                if value > best_value:
                    best_value = value
                    best[:, :] = dealt
                if value >= floor2:
                    break
            hands[row, :, :] = -1
            for c in range(d):
                free[c] = not seen[c]
            for r in range(n - 1):
                for i in range(kept[r] + need[r]):
                    hands[row, r, i] = best[r, i]
                    free[best[r, i]] = False
            rest = np.flatnonzero(free)
            np.random.shuffle(rest)
            stocks[row, :] = -1
            stocks[row, : rest.shape[0]] = rest


# -- the agent ------------------------------------------------------------------------------------------
class SearchAgent(BaseAgent):
    """Monte-Carlo search over dealt worlds with a rollout policy (see the module docstring).

    - ``policy``: the rollout policy and the move to keep when nothing is clearly better
      (an agent; default: the shipped policy for these rules and players, else ``HeuristicAgent``).
    - ``samples``: worlds per decision (all moves share them); ``chunk``: worlds per round.
    - ``max_samples``: more worlds, up to this many, for the close calls: decisions where after ``samples``
      worlds the best move gains more than ``close`` (default 1, or ``z`` if less) paired standard errors over
      the policy's but not ``z`` (default: ``samples``, none). Most decisions are not close, so the batch's
      budget pays for them.
    - ``budget_ms``: CPU time per decision (a batch of B decisions gets B times it; CPU time, so that
      a busy machine does not weaken it); None: no limit.
    - ``z``: how many paired standard errors a move must gain over the policy's move.
    - ``knocks``: let the search knock where the policy does not (default: no; it may still decline
      the policy's knock. A belief read from one observation undervalues opponents' hands, and a
      knock that loses costs most: searched knocks lost 0.12 of win rate, see docs/strength.md).
    - ``belief``: ``"learned"`` (the shipped ``BeliefNet`` for these rules and players, where there is
      one, else uniform) or ``"uniform"``.
    """

    def __init__(self, rules: str | Rules = "scat", num_players: int = 2, seed: int | None = None,
                 policy: Any = None, samples: int = 64, budget_ms: float | None = 100.0, z: float = 3.0,
                 chunk: int = 16, table_matches: int = 2000, knocks: bool = False, belief: str = "learned",
                 max_samples: int | None = None, close: float | None = None):
        super().__init__(rules, num_players, seed)
        if belief not in BELIEFS:
            raise ValueError(f"belief={belief!r} is unknown; allowed: {', '.join(BELIEFS)}")
        max_samples = samples if max_samples is None else max_samples
        for name, value, low in (("samples", samples, 1), ("chunk", chunk, 1), ("table_matches", table_matches, 1),
                                 ("max_samples", max_samples, samples)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
                raise ValueError(f"{name}={value!r} is invalid; allowed: an integer >= {low}")
        if budget_ms is not None and not budget_ms > 0:
            raise ValueError(f"budget_ms={budget_ms!r} is invalid; allowed: a positive number of milliseconds or None")
        if not z >= 0:
            raise ValueError(f"z={z!r} is invalid; allowed: a number >= 0")
        close = min(1.0, z) if close is None else close
        if not 0 <= close <= z:
            raise ValueError(f"close={close!r} is invalid; allowed: a number from 0 to z={z}")
        self.policy = policy if policy is not None else default_policy(self.rules, num_players)
        self.samples, self.chunk, self.budget_ms, self.z = int(samples), int(chunk), budget_ms, float(z)
        self.max_samples, self.close = int(max_samples), float(close)
        self.knocks = bool(knocks)
        self.belief_net = BeliefNet.pretrained(self.rules, num_players) if belief == "learned" else None
        self.table_matches = int(table_matches)
        self.rng = np.random.default_rng(seed)
        self.name = f"search:{getattr(self.policy, 'name', type(self.policy).__name__)}"
        self.worlds_played = 0.0  # worlds searched by the last act_batch, per decision on average (for reports)
        self.decisions, self.seconds = 0, 0.0  # decisions answered and the time they took, for reports

    @property
    def seconds_per_decision(self) -> float:
        return self.seconds / max(self.decisions, 1)

    @property
    def wins(self) -> WinTable:
        return win_table(self.rules, self.num_players, self.table_matches)

    def belief(self, obs: np.ndarray, samples: int, seeds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``samples`` guesses of the hidden cards per observation: opponents' hands ``[B*samples, n-1, 4]``
        and stocks ``[B*samples, 52]`` (top first), -1 padded. Reads nothing but ``obs``."""
        obs = np.ascontiguousarray(obs, np.int8)
        hands = np.empty((len(obs) * samples, self.num_players - 1, 4), np.int64)
        stocks = np.empty((len(obs) * samples, MAX_DECK), np.int64)
        if self.belief_net is None:
            weights = np.ones((len(obs), self.num_players - 1, self.deck_size))
        else:
            weights = self.belief_net.weights(obs)
        _deal_worlds(obs, self.offsets, self.params, self.num_players, self.deck_size, samples,
                     np.asarray(seeds, np.int64), self.wins.knock_floor2, weights, hands, stocks)
        return hands, stocks

    def values(self, obs: np.ndarray, mask: np.ndarray, samples: int, seeds: np.ndarray) -> np.ndarray:
        """Score of every action in each of ``samples`` worlds: float [B, samples, num_actions] (NaN: illegal)."""
        B, A = len(obs), self.num_actions
        legal = [np.flatnonzero(m) for m in mask]
        width = max(len(x) for x in legal)
        moves = np.array([np.resize(x, width) for x in legal])  # [B, width]; repeats fill short rows
        hands, stocks = self.belief(obs, samples, seeds)
        reps = np.repeat(np.arange(B * samples), width)  # row (b, k, j) -> world b*samples+k
        first = moves[np.repeat(np.arange(B), samples * width), np.tile(np.arange(width), B * samples)]
        t = Tables.from_observations(np.repeat(obs, samples * width, axis=0), hands[reps], stocks[reps], self.rules,
                                     self.num_players, seed=0, autoreset=False, parallel=False)
        streams = np.tile(np.repeat(np.arange(samples), width), B) + 7919 * np.repeat(seeds, samples * width)
        t.seed_streams(np.arange(t.num_tables), 0, streams % (2**62))  # common random numbers across moves
        score = self._play_out(t, first)
        out = np.full((B, samples, A), np.nan)
        per = score.reshape(B, samples, width)
        for j in range(width):
            out[np.arange(B)[:, None], np.arange(samples)[None, :], moves[:, j][:, None]] = per[:, :, j]
        return out

    def _play_out(self, t: Tables, first: np.ndarray) -> np.ndarray:
        """Play ``first`` then the policy everywhere until each row's deal ends; seat 0's score per row."""
        score = np.full(t.num_tables, np.nan)
        actions = first.astype(np.int64)
        active = np.arange(t.num_tables)
        while active.size:
            _, _, _, rewards, done = t.step(actions, rows=active)
            over = active[done[active]]
            if over.size:
                score[over] = win_shares(rewards[over])[:, 0]
            ended = active[(t.deal[active] != 1) & ~done[active]]
            if ended.size:
                score[ended] = self.wins(t.chips[ended], t.status[ended], seat=0)
            active = active[(t.deal[active] == 1) & ~done[active]]
            if active.size:
                actions[active] = self.policy.act_batch(t.obs[active], t.mask[active])
        return score

    def act_batch(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        obs, mask = self._check_batch(obs, mask)
        self.wins  # noqa: B018  built outside the time budget (once per rules and players, seconds)
        start = time.process_time()
        base = np.asarray(self.policy.act_batch(obs, mask), np.int64)
        if not self.knocks:
            mask = knocks_left_to(mask, base)
        if len(obs) == 0:
            return base
        budget = None if self.budget_ms is None else self.budget_ms / 1000 * len(obs)
        values = np.full((len(obs), self.max_samples, self.num_actions), np.nan)
        used = np.zeros(len(obs), np.int64)
        rows = np.arange(len(obs))  # the decisions still searched; all of them have played the same worlds
        last_cells, last_seconds = 0, 0.0
        while rows.size:
            n = int(used[rows[0]])
            size = min(self.chunk, (self.samples if n < self.samples else self.max_samples) - n)
            cells = rows.size * size
            # a round costs about what the last one did per world, and no less than it (fewer decisions
            # do not save their fixed cost)
            estimate = last_seconds * max(cells / max(last_cells, 1), 1.0)
            if budget is not None and n > 0 and time.process_time() - start + estimate > budget:
                break
            t0 = time.process_time()
            seeds = self.rng.integers(0, 2**31, rows.size)
            values[rows, n : n + size] = self.values(obs[rows], mask[rows], size, seeds)
            last_cells, last_seconds = cells, time.process_time() - t0
            used[rows] += size
            if n + size >= self.samples:
                if n + size >= self.max_samples:
                    break
                rows = rows[close_calls(values[rows, : n + size], base[rows], self.z, self.close)]
        self.worlds_played = float(used.mean())
        self.decisions += len(obs)
        self.seconds += time.process_time() - start
        return choose_by_worlds(values, used, base, self.z)


def knocks_left_to(mask: np.ndarray, base: np.ndarray) -> np.ndarray:
    """The moves the search weighs when knocking stays the policy's call: every legal move, but a knock
    only where the policy (``base``) knocks. A copy; ``mask`` is left as it was."""
    mask = mask.copy()
    mask[:, KNOCK] &= base == KNOCK
    return mask


def mean_values(values: np.ndarray) -> np.ndarray:
    """Each move's mean over the worlds, float [B, num_actions]; NaN for a move not searched (a move is
    searched in every world or in none)."""
    searched = ~np.isnan(values[:, 0, :])
    return np.where(searched, np.nan_to_num(values).mean(axis=1), np.nan)


def best_gain(values: np.ndarray, base: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row: the best mean move, its mean paired gain over ``base``'s, and that gain's standard error."""
    B, K, _ = values.shape
    mean = mean_values(values)
    best = np.where(np.isnan(mean), -np.inf, mean).argmax(axis=1)
    rows = np.arange(B)
    diff = values[rows, :, best] - values[rows, :, base]  # [B, K]
    se = diff.std(axis=1, ddof=1) / np.sqrt(K) if K > 1 else np.full(B, np.inf)
    return best, diff.mean(axis=1), se


def choose(values: np.ndarray, base: np.ndarray, z: float) -> np.ndarray:
    """The best mean move per row, unless ``base``'s is within ``z`` paired standard errors of it."""
    best, gain, se = best_gain(values, base)
    return np.where(gain <= z * se, base, best).astype(np.int64)


def choose_by_worlds(values: np.ndarray, used: np.ndarray, base: np.ndarray, z: float) -> np.ndarray:
    """``choose`` for rows that played different numbers of worlds: row ``b`` over its first ``used[b]``."""
    chosen = np.asarray(base, np.int64).copy()
    for n in np.unique(used):
        at = np.flatnonzero(used == n)
        chosen[at] = choose(values[at, :n], base[at], z)
    return chosen


def close_calls(values: np.ndarray, base: np.ndarray, z: float, close: float) -> np.ndarray:
    """Rows where more worlds could change the choice: the best move gains more than ``close`` standard errors
    over ``base``'s, but not the ``z`` that ``choose`` asks for."""
    _, gain, se = best_gain(values, base)
    return (gain > close * se) & (gain <= z * se)


def default_policy(rules: Rules, num_players: int) -> Any:
    """The shipped policy for these rules and players (greedy), else ``HeuristicAgent``."""
    from agents.heuristic import HeuristicAgent

    name = f"{rules.name}_{num_players}p"
    try:
        from agents.policy import PolicyAgent
    except ImportError:  # torch is optional for the core agents
        return HeuristicAgent(rules, num_players)
    if name in PolicyAgent.available() and rules.name in Rules.preset_names() and rules == Rules.preset(rules.name):
        return PolicyAgent.pretrained(rules.name, num_players)
    return HeuristicAgent(rules, num_players)
