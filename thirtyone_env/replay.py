"""Replay files: one match as versioned JSON that re-executes through the engine (docs/replay.md).

A replay holds the full rules, the player count, the table's random state at the start, the
first dealer, every deck as dealt (one per deal, dealt blitzes included), every action with its
seat and the rewards. ``Recorder`` writes one while a table plays (``thirtyone_v0.env(record=True)``,
``thirtyone eval --save-replays``, the web app); ``load`` reads one and plays it again on a fresh
table, checking every deck, seat, action and reward: a file that was changed, or that another
engine would play differently, is refused with the step where it diverges.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from thirtyone_env.actions import action_name
from thirtyone_env.cards import card_str, cards_str, parse_card
from thirtyone_env.engine import Tables
from thirtyone_env.engine.record import DealEnd, DealTracker, deal_end, rng_words, set_rng_words, stacked_decks
from thirtyone_env.rules import Rules
from thirtyone_env.view import TableView

FORMAT = "thirtyone-replay"
VERSION = 1
MAX_STEPS = 100_000  # more than any match under the engine's turn and deal limits


class ReplayError(ValueError):
    """A replay file that cannot be read or does not reproduce (the message says where)."""


@dataclass(frozen=True)
class Step:
    seat: int
    action: int
    rewards: tuple[float, ...] | None = None  # this step's rewards where any is not zero


@dataclass
class Replay:
    """One match (or deal episode) of one table, as recorded."""

    rules: Rules
    num_players: int
    rng: list[int]  # the table's random state when the match began
    dealer: int  # the first deal's dealer
    decks: list[list[int]]  # one per deal, top first
    steps: list[Step]
    rewards: list[float]  # each seat's total reward
    complete: bool  # the match is over
    episode: str = "match"
    illegal_action: str = "raise"
    dealer_option: int = -1  # reset(dealer=...): -1 = drawn by the table
    stacked_decks: list[list[int]] = field(default_factory=list)  # reset(decks=...)
    players: list[str] | None = None  # who sat where (labels only)
    package_version: str = ""

    # -- JSON ---------------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        deck = self.rules.deck
        return {
            "format": FORMAT,
            "version": VERSION,
            "package_version": self.package_version,
            "rules": self.rules.to_dict(),
            "num_players": self.num_players,
            "episode": self.episode,
            "illegal_action": self.illegal_action,
            "players": self.players,
            "start": {"rng": self.rng, "dealer_option": self.dealer_option,
                      "stacked_decks": [[card_str(c, deck) for c in d] for d in self.stacked_decks]},
            "dealer": self.dealer,
            "decks": [" ".join(card_str(c, deck) for c in d) for d in self.decks],
            "steps": [
                {"seat": s.seat, "action": s.action, "move": _move(s.action, deck),
                 **({"rewards": list(s.rewards)} if s.rewards is not None else {})}
                for s in self.steps
            ],
            "rewards": self.rewards,
            "complete": self.complete,
        }

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=1)

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.dumps())
        return path

    @classmethod
    def from_json(cls, data: Any) -> Replay:
        """Parse (not yet re-executed: ``verify``); a ``ReplayError`` names the bad field."""
        if not isinstance(data, dict):
            raise ReplayError(f"a replay is a JSON object, got {type(data).__name__}")
        if data.get("format") != FORMAT:
            raise ReplayError(f"not a replay: 'format' is {data.get('format')!r}, expected {FORMAT!r}")
        if data.get("version") != VERSION:
            raise ReplayError(f"replay version {data.get('version')!r} is not supported; this package reads {VERSION}")
        try:
            rules = Rules(**_get(data, "rules", dict))
        except (TypeError, ValueError) as exc:
            raise ReplayError(f"'rules': {exc}") from None
        deck = rules.deck
        start = _get(data, "start", dict)
        steps = []
        for k, raw in enumerate(_get(data, "steps", list)[: MAX_STEPS + 1]):
            if not isinstance(raw, dict) or not _is_int(raw.get("seat")) or not _is_int(raw.get("action")):
                raise ReplayError(f"step {k + 1}: expected {{'seat': int, 'action': int}}, got {raw!r}")
            if "move" in raw and raw["move"] != _move(raw["action"], deck):
                raise ReplayError(f"step {k + 1}: 'move' {raw['move']!r} does not name action {raw['action']} "
                                  f"({_move(raw['action'], deck)!r})")
            paid = None if raw.get("rewards") is None else _floats(raw["rewards"], f"step {k + 1}")
            steps.append(Step(raw["seat"], raw["action"], paid))
        if len(steps) > MAX_STEPS:
            raise ReplayError(f"'steps': more than {MAX_STEPS} steps")
        players = data.get("players")
        if players is not None and (not isinstance(players, list) or not all(isinstance(p, str) for p in players)):
            raise ReplayError(f"'players' must be a list of names or null, got {players!r}")
        return cls(
            rules=rules,
            num_players=_get(data, "num_players", int),
            rng=_words(_get(start, "rng", list)),
            dealer=_get(data, "dealer", int),
            decks=[_cards(d, deck, f"decks[{q}]") for q, d in enumerate(_get(data, "decks", list))],
            steps=steps,
            rewards=list(_floats(_get(data, "rewards", list), "'rewards'")),
            complete=_get(data, "complete", bool),
            episode=_get(data, "episode", str),
            illegal_action=_get(data, "illegal_action", str),
            dealer_option=_get(start, "dealer_option", int),
            stacked_decks=[_cards(d, deck, f"start.stacked_decks[{q}]")
                           for q, d in enumerate(_get(start, "stacked_decks", list))],
            players=players,
            package_version=str(data.get("package_version", "")),
        )

    # -- re-execution -------------------------------------------------------------------------
    def verify(self) -> Replay:
        """Play the replay again on a fresh table; ``ReplayError`` at the first divergence."""
        self.play()
        return self

    def play(self, visit: Callable[[int, Tables, DealEnd | None], None] | None = None) -> Tables:
        """Re-execute through the engine. ``visit(k, tables, ended)`` runs after the reset
        (``k = 0``) and after each step ``k`` (1-based), ``ended`` being the deal that step settled."""
        try:
            table = Tables(1, self.num_players, self.rules, seed=0, episode=self.episode, observe=False,
                           parallel=False, illegal_action=self.illegal_action, autoreset=False)
            set_rng_words(table, 0, self.rng)
            tracker = DealTracker(table, 0)
            tracker.before()
            table.reset(decks=self.stacked_decks, dealer=self.dealer_option)
        except ValueError as exc:
            raise ReplayError(f"cannot set up the table: {exc}") from None
        dealt = tracker.after_reset(self.dealer_option)
        self._check_decks(dealt, 0, 0)
        if int(table.dealer[0]) != self.dealer:
            raise ReplayError(f"at the start: the engine's first dealer is seat {int(table.dealer[0])}, "
                              f"the file says seat {self.dealer}")
        if visit:
            visit(0, table, None)
        used, totals = len(dealt), np.zeros(self.num_players)
        deck = self.rules.deck
        for k, step in enumerate(self.steps, start=1):
            where = f"step {k} ({_seat_move(step, deck)})"
            if table.finished[0]:
                raise ReplayError(f"{where}: the match is already over after step {k - 1}")
            seat = int(table.current_player[0])
            if step.seat != seat:
                raise ReplayError(f"{where}: the file has seat {step.seat} acting, the engine has seat {seat} to act")
            legal = table.is_legal(0, step.action)
            if not legal and self.illegal_action == "raise":
                raise ReplayError(f"{where}: {table.illegal_message(0, step.action)}")
            ended = deal_end(table, 0, step.action) if legal else None
            tracker.before()
            rewards = table.step_at(0, step.action).copy()
            dealt = tracker.after_step(step.action if legal else -1)
            self._check_decks(dealt, used, k)
            used += len(dealt)
            if not np.allclose(rewards, step.rewards if step.rewards is not None else 0.0, atol=1e-6):
                raise ReplayError(f"{where}: the engine pays rewards {rewards.tolist()}, the file says "
                                  f"{list(step.rewards) if step.rewards else 'none'}")
            totals += rewards
            if visit:
                visit(k, table, ended)
        if used != len(self.decks):
            raise ReplayError(f"the file lists {len(self.decks)} decks, the match dealt {used}")
        if bool(table.finished[0]) != self.complete:
            state = "over" if table.finished[0] else "not over"
            raise ReplayError(f"after the last step ({len(self.steps)}) the match is {state}, "
                              f"the file says complete={self.complete}")
        if not np.allclose(totals, self.rewards, atol=1e-6):
            raise ReplayError(f"total rewards: the engine pays {totals.tolist()}, the file says {self.rewards}")
        return table

    def _check_decks(self, dealt: list[list[int]], used: int, k: int) -> None:
        deck = self.rules.deck
        for q, cards in enumerate(dealt, start=used):
            where = "at the start" if k == 0 else f"at step {k}"
            if q >= len(self.decks):
                raise ReplayError(f"{where}: the engine deals deal {q + 1}, the file lists {len(self.decks)} decks")
            if cards != self.decks[q]:
                first = next(j for j in range(len(cards)) if j >= len(self.decks[q]) or cards[j] != self.decks[q][j])
                theirs = card_str(self.decks[q][first], deck) if first < len(self.decks[q]) else "nothing"
                raise ReplayError(f"{where}: deal {q + 1}'s deck differs from the file's at card {first + 1}: "
                                  f"the engine deals {card_str(cards[first], deck)}, the file has {theirs}")


class Recorder:
    """Records table ``i`` of ``tables`` (``autoreset=False``): call its ``reset`` and ``step_at``
    instead of the table's; ``replay`` is the match so far (``complete`` once it is over)."""

    def __init__(self, tables: Tables, i: int = 0, players: Sequence[str] | None = None):
        from thirtyone_env import __version__

        if tables.autoreset:
            raise ValueError("Recorder needs tables with autoreset=False (a replay is one match)")
        self.tables, self.i = tables, i
        self.players = list(players) if players is not None else None
        self._tracker = DealTracker(tables, i)
        self._version = __version__
        self.replay: Replay | None = None

    def reset(self, seed: int | None = None, decks: Sequence[Sequence[int]] | None = None,
              dealer: int | None = None) -> None:
        t, i = self.tables, self.i
        if seed is not None:
            t.seed(seed, [i])
        start = rng_words(t, i)
        self._tracker.before()
        t.reset(decks=decks, dealer=dealer, rows=np.array([i]))
        dealer_option = -1 if dealer is None else int(dealer)
        self.replay = Replay(
            rules=t.rules, num_players=t.num_players, rng=start, dealer=int(t.dealer[i]),
            decks=self._tracker.after_reset(dealer_option), steps=[], rewards=[0.0] * t.num_players,
            complete=bool(t.finished[i]), episode=t.episode, illegal_action=t.illegal_action,
            dealer_option=dealer_option, stacked_decks=stacked_decks(t, i), players=self.players,
            package_version=self._version,
        )

    def step_at(self, action: int, who: str | None = None) -> np.ndarray:
        """``tables.step_at(i, action, who)``, recorded (an action ``"raise"`` refuses is not)."""
        t, i, replay = self.tables, self.i, self.replay
        if replay is None:
            raise RuntimeError("Recorder.step_at before reset")
        seat, legal = int(t.current_player[i]), t.is_legal(i, action)
        if t.finished[i]:
            return t.step_at(i, action, who)  # raises or reports nothing: a finished match records nothing
        self._tracker.before()
        rewards = t.step_at(i, action, who)
        replay.decks += self._tracker.after_step(int(action) if legal else -1)
        recorded = int(action) if legal else _as_int(action)
        replay.steps.append(Step(seat, recorded, tuple(float(r) for r in rewards) if rewards.any() else None))
        replay.rewards = [a + float(b) for a, b in zip(replay.rewards, rewards, strict=True)]
        replay.complete = bool(t.finished[i])
        return rewards


def record_match(agents: Sequence[Any], seats: Sequence[int], rules: str | Rules, seed: int, stream: int,
                 names: Sequence[str] | None = None, episode: str = "match") -> Replay:
    """Match ``stream`` of a tournament seeded ``seed`` (``evaluation.tournament``'s paired seeds),
    agent ``seats[s]`` in seat ``s``, played again on one recording table: the tournament's own
    match wherever the agents choose the same moves one row at a time as in a batch."""
    rules = Rules.resolve(rules)
    n = len(seats)
    table = Tables(1, n, rules, seed=0, episode=episode, observe=False, parallel=False, autoreset=False)
    table.seed_streams(np.array([0]), seed, np.array([stream]))
    labels = [(names[a] if names else type(agents[a]).__name__) for a in seats]
    recorder = Recorder(table, 0, players=labels)
    recorder.reset()
    for _ in range(MAX_STEPS):
        if table.finished[0]:
            break
        seat = int(table.current_player[0])
        action = agents[seats[seat]].act_batch(table.observe_at(0, seat)[None], table.mask[:1].copy())[0]
        recorder.step_at(int(action))
    assert recorder.replay is not None
    return recorder.replay


def load(path: str | Path | None = None, text: str | None = None) -> Replay:
    """Read a replay file (or its ``text``) and re-execute it; ``ReplayError`` says what is wrong."""
    if text is None:
        if path is None:
            raise ValueError("load: give a path or the text")
        text = Path(path).read_text()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReplayError(f"not JSON: {exc}") from None
    return Replay.from_json(data).verify()


# -- people -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Frame:
    """The table after step ``k`` (0 = the deal), everything visible, and what happened."""

    k: int
    view: TableView
    line: str
    ended: DealEnd | None


def frames(replay: Replay) -> list[Frame]:
    """Every position of the replay, for stepping forwards and backwards."""
    out: list[Frame] = []
    names = player_names(replay)

    def visit(k: int, table: Tables, ended: DealEnd | None) -> None:
        view = table.view(0)
        if k == 0:
            line = f"deal 1, {names[view.dealer]} deals"
        else:
            step = replay.steps[k - 1]
            line = f"{names[step.seat]}: {_described(step.action, out[-1].view, replay.rules.deck)}"
        out.append(Frame(k, view, line, ended))

    replay.play(visit)
    return out


def describe_end(ended: DealEnd, names: Sequence[str], deck: str, unit: str) -> list[str]:
    """Every hand at a settlement with its value, and who paid or won."""
    lines = [f"{ended.kind}:" + (f" {names[ended.knocker]} knocked" if ended.knocker >= 0 else "")]
    for seat, hand in enumerate(ended.hands):
        if not hand:
            continue
        delta = ended.chips_after[seat] - ended.chips_before[seat]
        change = ", ".join(([f"{delta:+d} {unit}"] if delta else []) + (["out"] if ended.status_after[seat] == "out"
                                                                          else []))
        lines.append(f"  {names[seat]}: {cards_str(hand, deck)} = {ended.values[seat]:g}  {change}".rstrip())
    return lines


def format_replay(replay: Replay) -> str:
    """The replay step by step, for the terminal (``thirtyone replay FILE``)."""
    from thirtyone_env.render import render_table

    names = player_names(replay)
    unit = "chips" if replay.rules.economy == "pot" else "lives"
    lines = [f"replay: {replay.rules.name}, {replay.num_players} players ({', '.join(names)}), "
             f"{len(replay.steps)} steps, {len(replay.decks)} deals, package {replay.package_version or '?'}"]
    deal = 0
    shown = frames(replay)
    for frame in shown:
        if frame.k:
            lines.append(f"{frame.k:>4}. {frame.line}")
        if frame.ended is not None:
            lines += ["      " + x for x in describe_end(frame.ended, names, replay.rules.deck, unit)]
        if frame.view.deal != deal and not frame.view.done:
            deal = frame.view.deal
            lines += ["", render_table(frame.view)]
    final = ", ".join(f"{n} {r:+.3g}" for n, r in zip(names, replay.rewards, strict=True))
    lines += ["", render_table(shown[-1].view), f"result: {final}" + ("" if replay.complete else " (not finished)")]
    return "\n".join(lines)


# -- helpers ----------------------------------------------------------------------------------
def player_names(replay: Replay) -> list[str]:
    """``player_0 (heuristic)``: seats with the labels the recorder was given."""
    base = [f"player_{s}" for s in range(replay.num_players)]
    if replay.players and len(replay.players) == replay.num_players:
        return [f"{b} ({p})" for b, p in zip(base, replay.players, strict=True)]
    return base


def _described(action: int, before: TableView, deck: str) -> str:
    if action == 1 and before.discard:  # name the card taken from the discard pile
        return f"take {card_str(before.discard_top, deck)}"
    return _move(action, deck)


def _move(action: Any, deck: str) -> str:
    try:
        return action_name(int(action), deck)
    except (ValueError, TypeError):
        return "illegal"


def _seat_move(step: Step, deck: str) -> str:
    return f"seat {step.seat}: {_move(step.action, deck)}"


def _as_int(action: Any) -> int:
    try:
        return int(action)
    except (TypeError, ValueError, OverflowError):
        return -1


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _words(rng: list) -> list[int]:
    if len(rng) != 4 or not all(_is_int(w) for w in rng):
        raise ReplayError(f"'start.rng' must be four integers, got {rng!r}")
    return rng


def _get(data: dict, key: str, kind: type) -> Any:
    if key not in data:
        raise ReplayError(f"missing field {key!r}")
    value = data[key]
    ok = _is_int(value) if kind is int else isinstance(value, kind)
    if not ok:
        raise ReplayError(f"field {key!r} must be {kind.__name__}, got {value!r}")
    return value


def _floats(values: Any, where: str) -> tuple[float, ...]:
    if not isinstance(values, list) or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                               for v in values):
        raise ReplayError(f"{where}: rewards must be a list of numbers, got {values!r}")
    return tuple(float(v) for v in values)


def _cards(text: Any, deck: str, where: str) -> list[int]:
    tokens = text.split() if isinstance(text, str) else text
    if not isinstance(tokens, list) or not all(isinstance(c, str) for c in tokens):
        raise ReplayError(f"{where}: expected card text such as '7H 2C', got {text!r}")
    try:
        return [parse_card(c, deck) for c in tokens]
    except ValueError as exc:
        raise ReplayError(f"{where}: {exc}") from None
