"""Tournaments: one definition of a match win, paired seeds, seats rotated, Wilson intervals.

Every evaluation in the project (the CLI, training, the benchmark, the examples, the docs'
figures) comes from ``tournament``. Its rules:

- **A match win**: the seats with the highest final reward share one win (a sole winner
  gets 1; two co-winners 1/2 each; a drawn match, where every seat shares, 1/n each). An
  agent in several seats adds up its seats' shares, so the win rates of a tournament's
  agents sum to 1 per match.
- **Paired seeds**: match ``k`` draws its decks from stream ``k`` of ``seed``, whatever the
  agents, the number of tables or the thread count. Two tournaments with the same seed deal
  the same decks to the same seats, so entries can be compared match by match (exactly for
  ``stock_refill="flip"``, every preset; with ``"shuffle"`` a refill mid-deal depends on play).
- **Seats**: ``"rotate"`` gives seat s of match k to agent (k + s) mod m; ``"one-vs-rest"``
  puts agent 0 in seat k mod n and the others around it; a list is a seat pattern that is
  rotated match by match.
- **Intervals**: 95% Wilson score intervals of each agent's win rate.
- **Duplicate play** (``paired``): every deck stream is played once per seat, the focus agent
  taking each seat in turn, so luck of the cards cancels; intervals are paired (over streams),
  and two agents compared against the same opponent on the same streams get a paired difference.
  A result saves its per-stream shares (``PairedResult.save``), and runs on other seeds pool into
  one interval (``pool_paired``).
"""

from __future__ import annotations

import json
import math
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from thirtyone_env.engine import Tables
from thirtyone_env.rules import Rules

SEATINGS = ("auto", "rotate", "one-vs-rest")


def win_shares(final_rewards: np.ndarray) -> np.ndarray:
    """Each seat's share of the match win from the final rewards (rows: matches, columns: seats)."""
    r = np.atleast_2d(np.asarray(final_rewards, np.float64))
    winners = np.isclose(r, r.max(axis=1, keepdims=True), rtol=0, atol=1e-6)
    shares = winners / winners.sum(axis=1, keepdims=True)
    return shares if np.ndim(final_rewards) == 2 else shares[0]


def wilson(wins: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a win rate (``wins`` may be fractional: shared wins)."""
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    if p <= 0.0 or p >= 1.0:  # exact bounds: rounding must not leave the rate outside its interval
        edge = z * z / (n + z * z)  # the Wilson bound on the other side of an all-or-nothing record
        return (0.0, edge) if p <= 0.0 else (1.0 - edge, 1.0)
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(max(p * (1 - p), 0.0) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def seating_plan(num_agents: int, num_players: int, num_matches: int, seating: str | Sequence[int] = "auto"
                 ) -> np.ndarray:
    """Agent index per (match, seat) (see the module docstring)."""
    if not isinstance(seating, str):
        pattern = [int(a) for a in seating]
        if len(pattern) != num_players or not all(0 <= a < num_agents for a in pattern):
            raise ValueError(f"seating pattern {pattern} must give one of agents 0..{num_agents - 1} "
                             f"to each of {num_players} seats")
        rotations = np.array([pattern[k:] + pattern[:k] for k in range(num_players)], np.int64)
        return rotations[np.arange(num_matches) % num_players]
    if seating == "auto":
        seating = "one-vs-rest" if num_agents == 2 and num_players > 2 else "rotate"
    k = np.arange(num_matches)[:, None]
    s = np.arange(num_players)[None, :]
    if seating == "rotate":
        return (k + s) % num_agents
    if seating == "one-vs-rest":
        if num_agents < 2:
            raise ValueError("one-vs-rest needs at least two agents")
        rel = (s - k % num_players) % num_players  # 0 = the focus seat
        return np.where(rel == 0, 0, 1 + ((k + rel - 1) % (num_agents - 1)))
    raise ValueError(f"seating={seating!r} is invalid; allowed: {list(SEATINGS)} or a seat pattern")


def play_matches(agents: Sequence[Any], plan: np.ndarray, rules: str | Rules = "scat", seed: int = 0,
                 num_tables: int = 256, episode: str = "match", streams: np.ndarray | None = None) -> np.ndarray:
    """Play match ``k`` with agent ``plan[k, s]`` in seat ``s``; returns final rewards (matches, seats).

    Each table plays the next unplayed match when it finishes one, with that match's own
    random stream (paired seeds): the result depends only on the agents, the plan and the seed.
    ``streams[k]`` is match ``k``'s stream (default ``k``; duplicate play deals one stream several times).
    """
    plan = np.asarray(plan, np.int64)
    matches, n = plan.shape
    streams = np.arange(matches) if streams is None else np.asarray(streams, np.int64)
    if streams.shape != (matches,):
        raise ValueError(f"streams must hold one stream per match ({matches}), got shape {streams.shape}")
    tables = Tables(min(num_tables, matches), n, rules, seed=seed, episode=episode, autoreset=False)
    playing = np.arange(tables.num_tables)  # the match each table plays
    tables.seed_streams(playing, seed, streams[playing])
    obs, mask, player = tables.reset()
    next_match = tables.num_tables
    out = np.zeros((matches, n), np.float32)
    active = playing.copy()
    actions = np.zeros(tables.num_tables, np.int64)
    while active.size:
        who = plan[playing[active], player[active]]
        for a, agent in enumerate(agents):
            rows = active[who == a]
            if rows.size:
                actions[rows] = agent.act_batch(obs[rows], mask[rows])
        obs, mask, player, rewards, done = tables.step(actions, rows=active)
        finished = active[done[active]]
        if finished.size:
            out[playing[finished]] = rewards[finished]
            starts = finished[: max(0, min(finished.size, matches - next_match))]
            if starts.size:
                playing[starts] = np.arange(next_match, next_match + starts.size)
                next_match += starts.size
                tables.seed_streams(starts, seed, streams[playing[starts]])
                tables.reset(rows=starts)
            active = np.setdiff1d(active, finished[starts.size :], assume_unique=True)
    return out


@dataclass
class AgentResult:
    """One agent's record: match wins are shares (see ``win_shares``)."""

    name: str
    matches: int = 0
    wins: float = 0.0
    seats: int = 0
    reward: float = 0.0
    rating: float | None = None  # filled by train.evaluate.add_ratings (OpenSkill, mu - 3 sigma)

    @property
    def win_rate(self) -> float:
        return self.wins / self.matches if self.matches else 0.0

    @property
    def ci(self) -> tuple[float, float]:
        return wilson(self.wins, self.matches)

    @property
    def mean_reward(self) -> float:
        return self.reward / self.seats if self.seats else 0.0


@dataclass
class TournamentResult:
    rules: Rules
    num_players: int
    seed: int
    results: list[AgentResult]
    match_rewards: np.ndarray = field(repr=False)  # (matches, seats) final rewards
    plan: np.ndarray = field(repr=False)  # (matches, seats) agent index per seat

    @property
    def matches(self) -> int:
        return len(self.match_rewards)

    def win_rate(self, agent: int) -> float:
        return self.results[agent].win_rate

    def interval(self, agent: int) -> tuple[float, float]:
        return self.results[agent].ci

    def match_wins(self, agent: int) -> np.ndarray:
        """Agent ``agent``'s win share in each match (for paired comparisons across tournaments)."""
        shares = win_shares(self.match_rewards)
        return (shares * (self.plan == agent)).sum(axis=1)

    def table(self) -> str:
        ratings = any(r.rating is not None for r in self.results)
        head = (f"{self.rules.name}, {self.num_players} players, {self.matches} matches (seed {self.seed})\n"
                f"{'agent':<34} {'matches':>7} {'win rate':>8} {'95% CI':>15} {'reward/seat':>11}"
                + (f" {'rating':>7}" if ratings else ""))
        rows = [head, "-" * len(head.splitlines()[1])]
        for r in self.results:
            lo, hi = r.ci
            rows.append(f"{r.name[:34]:<34} {r.matches:>7} {r.win_rate:>8.3f} {f'[{lo:.3f}, {hi:.3f}]':>15} "
                        f"{r.mean_reward:>+11.3f}" + (f" {r.rating:>7.2f}" if ratings else ""))
        return "\n".join(rows)


def agent_label(agent: Any) -> str:
    return str(getattr(agent, "name", None) or type(agent).__name__)


def score(agents: Sequence[Any], rules: Rules, num_players: int, seed: int, rewards: np.ndarray, plan: np.ndarray,
          names: Sequence[str] | None = None) -> TournamentResult:
    """Win shares, seats and rewards per agent from played matches."""
    labels = list(names) if names else [agent_label(a) for a in agents]
    shares = win_shares(rewards)
    results = []
    for i, label in enumerate(labels):
        seats = plan == i
        present = seats.any(axis=1)
        results.append(AgentResult(label, matches=int(present.sum()), wins=float((shares * seats).sum()),
                                   seats=int(seats.sum()), reward=float((rewards * seats).sum())))
    return TournamentResult(rules, num_players, seed, results, rewards, plan)


def tournament(
    agents: Sequence[Any],
    rules: str | Rules = "scat",
    num_players: int = 2,
    matches: int = 1000,
    seed: int = 0,
    seating: str | Sequence[int] = "auto",
    names: Sequence[str] | None = None,
    num_tables: int = 256,
) -> TournamentResult:
    """Play ``matches`` whole matches between ``agents`` (objects with ``act_batch``).

    ``seating``: ``"auto"`` (one-vs-rest for two agents at a bigger table, else rotate),
    ``"rotate"``, ``"one-vs-rest"`` or a seat pattern such as ``[0, 1, 1]``.
    """
    rules = Rules.resolve(rules)
    rules.check_num_players(num_players)
    if isinstance(matches, bool) or not isinstance(matches, (int, np.integer)) or matches < 1:
        raise ValueError(f"matches={matches!r} is invalid; allowed: an integer >= 1")
    if names is not None and len(names) != len(agents):
        raise ValueError(f"names: expected {len(agents)} names, got {len(names)}")
    for a in agents:
        if not callable(getattr(a, "act_batch", None)):
            raise ValueError(f"every agent needs act_batch(obs, mask); {a!r} has none")
    plan = seating_plan(len(agents), num_players, matches, seating)
    rewards = play_matches(agents, plan, rules, seed, num_tables)
    return score(agents, rules, num_players, seed, rewards, plan, names)


# -- duplicate (paired) evaluation ------------------------------------------------------------
def duplicate(agent: Any, opponent: Any, rules: str | Rules = "scat", num_players: int = 2, deals: int = 500,
              seed: int = 0, num_tables: int = 256) -> np.ndarray:
    """``agent``'s win share per (stream, seat): stream ``k`` of ``seed`` is played ``num_players``
    times, ``agent`` in seat ``r`` of the ``r``-th and ``opponent`` in every other seat."""
    rules = Rules.resolve(rules)
    rules.check_num_players(num_players)
    if isinstance(deals, bool) or not isinstance(deals, (int, np.integer)) or deals < 1:
        raise ValueError(f"deals={deals!r} is invalid; allowed: an integer >= 1")
    n = num_players
    seat = np.tile(np.arange(n), deals)  # the focus seat of each match
    plan = (np.arange(n)[None, :] != seat[:, None]).astype(np.int64)  # 0 = agent, 1 = opponent
    streams = np.repeat(np.arange(deals), n)
    rewards = play_matches([agent, opponent], plan, rules, seed, num_tables, streams=streams)
    return win_shares(rewards)[np.arange(len(seat)), seat].reshape(deals, n)


def paired_interval(values: np.ndarray, z: float = 1.96) -> tuple[float, float, float]:
    """Mean and normal 95% interval of per-stream values (each already averaged over its seats)."""
    x = np.asarray(values, np.float64)
    if x.ndim != 1 or x.size < 2:
        raise ValueError(f"a paired interval needs at least two streams, got {x.size}")
    mean = float(x.mean())
    half = z * float(x.std(ddof=1)) / math.sqrt(x.size)
    return mean, mean - half, mean + half


@dataclass
class PairedResult:
    """Duplicate results: ``shares[a]`` is agent ``a``'s win share per (stream, focus seat) against ``opponent``.

    ``stream_seeds[k]`` is the seed whose stream row ``k`` was dealt from: one seed for a single run,
    several after ``pool_paired`` (streams of different seeds are independent, so they pool).
    """

    rules: Rules
    num_players: int
    stream_seeds: np.ndarray = field(repr=False)
    names: list[str]
    opponent: str
    shares: list[np.ndarray] = field(repr=False)

    @property
    def seeds(self) -> tuple[int, ...]:
        """The seeds played, in the order their streams appear."""
        return tuple(int(s) for s in dict.fromkeys(self.stream_seeds.tolist()))

    @property
    def deals(self) -> int:
        return int(self.shares[0].shape[0])

    @property
    def matches(self) -> int:
        return int(self.shares[0].size)

    def win_rate(self, agent: int = 0) -> float:
        return float(self.shares[agent].mean())

    def interval(self, agent: int = 0) -> tuple[float, float]:
        """Paired 95% interval of the win rate (over streams: the card luck of a stream cancels)."""
        _, lo, hi = paired_interval(self.shares[agent].mean(axis=1))
        return lo, hi

    def difference(self, a: int = 0, b: int = 1) -> tuple[float, float, float]:
        """Win rate of agent ``a`` minus agent ``b`` on the same streams, with its paired 95% interval."""
        return paired_interval(self.shares[a].mean(axis=1) - self.shares[b].mean(axis=1))

    def table(self) -> str:
        seeds = self.seeds
        played = f"seed {seeds[0]}" if len(seeds) == 1 else f"seeds {', '.join(map(str, seeds))} pooled"
        head = (f"{self.rules.name}, {self.num_players} players, duplicate: {self.deals} deck streams x "
                f"{self.num_players} seats = {self.matches} matches per agent against {self.opponent} "
                f"({played}; fair share {1 / self.num_players:.3f})\n"
                f"{'agent':<34} {'matches':>7} {'win rate':>8} {'paired 95% CI':>15} {'Wilson 95% CI':>15}")
        rows = [head, "-" * len(head.splitlines()[1])]
        for a, name in enumerate(self.names):
            lo, hi = self.interval(a)
            wlo, whi = wilson(float(self.shares[a].sum()), self.matches)
            rows.append(f"{name[:34]:<34} {self.matches:>7} {self.win_rate(a):>8.3f} "
                        f"{f'[{lo:.3f}, {hi:.3f}]':>15} {f'[{wlo:.3f}, {whi:.3f}]':>15}")
        for b in range(1, len(self.names)):
            mean, lo, hi = self.difference(0, b)
            rows.append(f"difference {self.names[0]} - {self.names[b]}: {mean:+.4f} [{lo:+.4f}, {hi:+.4f}] "
                        f"(paired over the same {self.deals} streams)")
        return "\n".join(rows)

    def save(self, path: str | Path) -> Path:
        """Write every stream's win shares and what they measured, so runs on other seeds can be pooled.

        An ``.npz`` (numpy arrays and a JSON header, no pickles); an existing file is never overwritten.
        """
        path = new_streams_path(path)
        header = {"format": STREAMS_FORMAT, "rules": self.rules.to_dict(), "num_players": self.num_players,
                  "names": self.names, "opponent": self.opponent}
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".partial")
        try:
            with open(partial, "wb") as f:
                np.savez(f, header=np.array(json.dumps(header)), stream_seeds=self.stream_seeds.astype(np.int64),
                         shares=np.stack(self.shares).astype(np.float64))
            partial.replace(path)
        finally:
            partial.unlink(missing_ok=True)
        return path


STREAMS_FORMAT = "thirtyone-paired-streams/1"


def new_streams_path(path: str | Path) -> Path:
    """``path`` if nothing is there yet: saved streams are never overwritten (callers check before a long run)."""
    path = Path(path)
    if path.exists():
        raise FileExistsError(f"{path} exists; saved streams are never overwritten, choose another path")
    return path


def load_paired(path: str | Path) -> PairedResult:
    """Read a file ``PairedResult.save`` wrote, checking it is whole before trusting any figure in it."""
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as f:
            header = json.loads(str(f["header"]))
            stream_seeds, shares = f["stream_seeds"], f["shares"]
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no such file") from None
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as e:
        raise ValueError(f"{path} is not a saved paired-streams file ({e})") from None
    if not isinstance(header, dict) or header.get("format") != STREAMS_FORMAT:
        raise ValueError(f"{path}: format {header.get('format') if isinstance(header, dict) else header!r}, "
                         f"expected {STREAMS_FORMAT!r}")
    try:
        rules, n = Rules(**header["rules"]), int(header["num_players"])
        names, opponent = [str(x) for x in header["names"]], str(header["opponent"])
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"{path}: a corrupt header ({e})") from None
    if shares.dtype.kind != "f" or stream_seeds.dtype.kind not in "iu":
        raise ValueError(f"{path}: shares of dtype {shares.dtype} and stream seeds of dtype {stream_seeds.dtype}, "
                         f"expected floats and integers")
    if (shares.ndim != 3 or shares.shape[0] != len(names) or shares.shape[2] != n
            or stream_seeds.shape != (shares.shape[1],) or shares.shape[1] < 1):
        raise ValueError(f"{path}: shares of shape {shares.shape} and {stream_seeds.shape[0]} stream seeds do not "
                         f"fit {len(names)} agents at {n} players")
    if not np.all(np.isfinite(shares)) or shares.min() < 0 or shares.max() > 1:
        raise ValueError(f"{path}: win shares outside [0, 1]")
    return PairedResult(rules, n, stream_seeds.astype(np.int64), names, opponent, list(shares))


def pool_paired(results: Sequence[PairedResult]) -> PairedResult:
    """One result over the streams of several runs that measured the same agents on different seeds.

    Streams of different seeds are independent deals, so their paired intervals pool; a seed in two
    runs would count its streams twice and is refused, as are runs of different rules, table sizes,
    agents or opponents.
    """
    if not results:
        raise ValueError("pool_paired needs at least one result")
    first = results[0]
    for r in results[1:]:
        for what, a, b in [("rules", r.rules, first.rules), ("players", r.num_players, first.num_players),
                           ("agents", r.names, first.names), ("opponent", r.opponent, first.opponent)]:
            if a != b:
                raise ValueError(f"cannot pool runs with different {what}: {b!r} and {a!r}")
    seen: set[int] = set()
    for r in results:
        twice = seen & set(r.seeds)
        if twice:
            raise ValueError(f"seed(s) {sorted(twice)} appear in more than one run; their streams would count twice")
        seen |= set(r.seeds)
    return PairedResult(first.rules, first.num_players, np.concatenate([r.stream_seeds for r in results]),
                        list(first.names), first.opponent,
                        [np.concatenate([r.shares[a] for r in results]) for a in range(len(first.names))])


def paired(
    agents: Sequence[Any],
    opponent: Any,
    rules: str | Rules = "scat",
    num_players: int = 2,
    matches: int = 1000,
    seed: int = 0,
    names: Sequence[str] | None = None,
    opponent_name: str | None = None,
    num_tables: int = 256,
) -> PairedResult:
    """Each of ``agents`` in duplicate play against ``opponent`` on the same deck streams.

    ``matches`` per agent, rounded up to whole streams (``num_players`` matches each). With
    several agents the table also gives each one's paired difference from the first.
    """
    rules = Rules.resolve(rules)
    rules.check_num_players(num_players)
    if isinstance(matches, bool) or not isinstance(matches, (int, np.integer)) or matches < 2 * num_players:
        raise ValueError(f"matches={matches!r} is invalid; allowed: an integer >= {2 * num_players} "
                         f"(two deck streams of {num_players} seats)")
    if not agents:
        raise ValueError("paired needs at least one agent besides the opponent")
    if names is not None and len(names) != len(agents):
        raise ValueError(f"names: expected {len(agents)} names, got {len(names)}")
    for a in [*agents, opponent]:
        if not callable(getattr(a, "act_batch", None)):
            raise ValueError(f"every agent needs act_batch(obs, mask); {a!r} has none")
    deals = -(-int(matches) // num_players)
    shares = [duplicate(a, opponent, rules, num_players, deals, seed, num_tables) for a in agents]
    labels = list(names) if names else [agent_label(a) for a in agents]
    return PairedResult(rules, num_players, np.full(deals, seed, np.int64), labels,
                        opponent_name or agent_label(opponent), shares)
