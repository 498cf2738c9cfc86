"""Games the web app holds: play against bots, watch bots, step through a replay.

No HTTP here: ``GameStore`` keeps sessions (capped in number, expired when idle) and each
session answers with plain JSON-ready dicts. Everything a session sends is drawn from the
view its seat may see (``TableView.for_seat``): opponents' hidden cards and the stock order
never leave the server; at a settlement every hand of that deal is shown, as at the table.
"""

from __future__ import annotations

import functools
import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from thirtyone_env.actions import DRAW_DISCARD, action_name
from thirtyone_env.cards import card_str
from thirtyone_env.engine import Tables
from thirtyone_env.engine.record import DealEnd, deal_end
from thirtyone_env.render_svg import table_svg
from thirtyone_env.replay import Frame, Recorder, Replay, describe_end, frames, load, player_names
from thirtyone_env.rules import Rules
from thirtyone_env.view import TableView

OPPONENTS = ("pretrained", "heuristic", "greedy", "random", "search")
MAX_BOT_STEPS = 20_000  # bots' decisions answered by one request (a whole match is far fewer)


class GameError(ValueError):
    """A request the game refuses; ``status`` is the HTTP status to answer with."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


@functools.lru_cache(maxsize=64)
def available_opponents(preset: str, num_players: int) -> list[str]:
    """The opponent kinds that can sit at this table now (pretrained needs a shipped policy and torch)."""
    out = []
    for kind in OPPONENTS:
        try:
            _make_bot(kind, Rules.preset(preset), num_players, 0)
        except (GameError, ImportError, ValueError):
            continue
        out.append(kind)
    return out


def _make_bot(kind: str, rules: Rules, num_players: int, seed: int) -> Any:
    from agents import make

    if kind not in OPPONENTS:
        raise GameError(f"unknown opponent {kind!r}; allowed: {list(OPPONENTS)}")
    return make(kind, rules, num_players, seed=seed)


@dataclass
class Session:
    """What every session kind shares: an id and when it was last used."""

    id: str
    last_used: float = field(default_factory=time.monotonic)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)


class Game(Session):
    """A match on one table: ``seat`` is the human's (play) or None (watch: every seat a bot)."""

    def __init__(self, game_id: str, preset: str, num_players: int, opponents: list[str], seat: int | None,
                 reveal: bool, seed: int, replay_dir: Path | None = None):
        super().__init__(game_id)
        self.rules = Rules.preset(preset)
        self.rules.check_num_players(num_players)
        self.num_players, self.seat, self.reveal, self.seed = num_players, seat, reveal, seed
        bots = [s for s in range(num_players) if s != seat]
        if len(opponents) == 1:
            opponents = opponents * len(bots)
        if len(opponents) != len(bots):
            raise GameError(f"opponents: give one kind, or one per bot seat ({len(bots)}), got {opponents}")
        self.bots: dict[int, Any] = {}
        for s, kind in zip(bots, opponents, strict=True):
            try:
                self.bots[s] = _make_bot(kind, self.rules, num_players, seed + s)
            except ImportError as exc:
                raise GameError(f"opponent {kind!r} needs a package that is not installed ({exc.name})") from None
            except ValueError as exc:
                raise GameError(f"opponent {kind!r}: {exc}") from None
        self.names = [("you" if s == seat else f"{opponents[bots.index(s)]} {s}") for s in range(num_players)]
        self.table = Tables(1, num_players, self.rules, seed=0, observe=False, parallel=False, autoreset=False)
        self.recorder = Recorder(self.table, 0, players=self.names)
        self.recorder.reset(seed=seed)
        self.log: list[dict[str, Any]] = []  # {"deal": k, "text": ...}, public moves and settlements
        self.showdowns: list[dict[str, Any]] = []
        self.replay_dir = replay_dir
        self.saved: Path | None = None
        if seat is not None:
            self._play_bots()

    # -- what the browser sees -------------------------------------------------------------------
    @property
    def viewer(self) -> int | None:
        if self.seat is not None:
            return self.seat
        return None if self.reveal else -1

    def view(self) -> TableView:
        return self.table.view(0, self.viewer)

    def state(self, since: int = 0) -> dict[str, Any]:
        t = self.table
        over = bool(t.finished[0])
        mine = self.seat is not None and not over and int(t.current_player[0]) == self.seat
        legal = np.flatnonzero(t.mask[0]).tolist() if mine else []
        view = self.view()
        return {
            "id": self.id,
            "mode": "play" if self.seat is not None else "watch",
            "preset": self.rules.name,
            "deck": self.rules.deck,
            "num_players": self.num_players,
            "seat": self.seat,
            "names": self.names,
            "svg": table_svg(view, legal, self.names),
            "your_turn": mine,
            "legal": [{"id": a, "name": self._name(a, view)} for a in legal],
            "log": self.log[since:],
            "log_size": len(self.log),
            "showdowns": self.showdowns[self._showdown_index(since):],
            "deal": view.deal,
            "over": over,
            "result": self._result() if over else None,
        }

    def _showdown_index(self, since: int) -> int:
        return next((k for k, s in enumerate(self.showdowns) if s["log_index"] >= since), len(self.showdowns))

    def _name(self, action: int, view: TableView) -> str:
        if action == DRAW_DISCARD and view.discard:
            return f"take {card_str(view.discard_top, self.rules.deck)}"
        return action_name(action, self.rules.deck)

    def _result(self) -> str:
        rewards = self.recorder.replay.rewards
        best = max(rewards)
        winners = [self.names[s] for s, r in enumerate(rewards) if abs(r - best) < 1e-9]
        if len(winners) == self.num_players:
            return "drawn match"
        if self.seat is not None:
            you = abs(rewards[self.seat] - best) < 1e-9
            return ("you win" if len(winners) == 1 else "you share the win") if you else f"{', '.join(winners)} wins"
        return f"{', '.join(winners)} {'wins' if len(winners) == 1 else 'share the win'}"

    # -- moves -------------------------------------------------------------------------------------
    def act(self, action: Any) -> None:
        """The human's move, then the bots' until it is the human's turn again or the match is over."""
        t = self.table
        if self.seat is None:
            raise GameError("this game is watched, not played: use advance", 409)
        if t.finished[0]:
            raise GameError("the match is over; start a new one", 409)
        if int(t.current_player[0]) != self.seat:
            raise GameError(f"it is not your turn ({self.names[int(t.current_player[0])]} is to act)", 409)
        if isinstance(action, bool) or not isinstance(action, int) or not t.is_legal(0, action):
            legal = np.flatnonzero(t.mask[0]).tolist()
            raise GameError(f"illegal action {action!r}; legal action ids now: {legal}")
        self._step(action)
        self._play_bots()

    def advance(self, steps: int = 1) -> None:
        """Watch mode: the bots make ``steps`` decisions."""
        if self.seat is not None:
            raise GameError("this game is played, not watched: send your action", 409)
        for _ in range(steps):
            if self.table.finished[0]:
                break
            self._bot_step()

    def _play_bots(self) -> None:
        for _ in range(MAX_BOT_STEPS):
            t = self.table
            if t.finished[0] or int(t.current_player[0]) == self.seat:
                return
            self._bot_step()

    def _bot_step(self) -> None:
        t = self.table
        seat = int(t.current_player[0])
        obs = {"observation": t.observe_at(0, seat), "action_mask": t.mask[0].astype(np.int8)}
        self._step(int(self.bots[seat].act(obs)))

    def _step(self, action: int) -> None:
        t = self.table
        seat, deal, before = int(t.current_player[0]), int(t.deal[0]), t.view(0)
        ended = deal_end(t, 0, action)
        self.recorder.step_at(action)
        self.log.append({"deal": deal, "text": f"{self.names[seat]}: {self._name(action, before)}"})
        if ended is not None:
            self._settled(before, ended, deal)
        if int(t.deal[0]) > deal + (ended is not None):  # deals dealt and settled at once (a dealt blitz)
            self.log.append({"deal": int(t.deal[0]), "text": "a blitz was dealt: the deal ended at once"})
        if t.finished[0]:
            self.log.append({"deal": deal, "text": f"match over: {self._result()}"})
            if self.replay_dir is not None:
                self.saved = self.recorder.replay.save(self.replay_dir / f"{self.id}.json")

    def _settled(self, before: TableView, ended: DealEnd, deal: int) -> None:
        """Every hand of the settled deal, its value and who paid or won: drawn and logged."""
        unit = "chips" if self.rules.economy == "pot" else "lives"
        lines = describe_end(ended, self.names, self.rules.deck, unit)
        shown = replace(before.for_seat(None), hands=ended.hands, hand_values=ended.values, chips=ended.chips_after,
                        status=ended.status_after, current=-1, stock=None, viewer=None)
        self.log.append({"deal": deal, "text": f"deal {deal} over: " + "; ".join(x.strip() for x in lines)})
        self.showdowns.append({"deal": deal, "lines": lines, "log_index": len(self.log) - 1,
                               "svg": table_svg(shown, (), self.names, bottom=self.seat or 0,
                                                message=f"deal {deal}: {ended.kind}")})

    def replay(self) -> Replay:
        if not self.table.finished[0]:
            raise GameError("the replay holds every card: it is available when the match is over", 409)
        return self.recorder.replay


class ReplaySession(Session):
    """A replay file opened in the browser: every position, stepped forwards and backwards."""

    def __init__(self, session_id: str, text: str):
        super().__init__(session_id)
        try:
            self.replay = load(text=text)
        except ValueError as exc:
            raise GameError(f"replay refused: {exc}") from None
        self.frames: list[Frame] = frames(self.replay)
        self.names = player_names(self.replay)

    def summary(self) -> dict[str, Any]:
        r = self.replay
        return {"id": self.id, "preset": r.rules.name, "num_players": r.num_players, "frames": len(self.frames),
                "names": self.names, "rewards": r.rewards, "complete": r.complete,
                "lines": [f.line for f in self.frames]}

    def frame(self, k: int) -> dict[str, Any]:
        if not 0 <= k < len(self.frames):
            raise GameError(f"frame {k} does not exist; this replay has frames 0..{len(self.frames) - 1}", 404)
        f = self.frames[k]
        unit = "chips" if self.replay.rules.economy == "pot" else "lives"
        return {"k": k, "line": f.line, "svg": table_svg(f.view, (), self.names),
                "ended": describe_end(f.ended, self.names, self.replay.rules.deck, unit) if f.ended else None}


class GameStore:
    """Sessions by id: at most ``max_games``; one idle for ``ttl`` seconds is dropped; when full,
    the least recently used goes first, so memory stays bounded whatever the clients do."""

    def __init__(self, max_games: int = 200, ttl: float = 1800.0, replay_dir: Path | None = None):
        self.max_games, self.ttl, self.replay_dir = max_games, ttl, replay_dir
        self._sessions: OrderedDict[str, Session] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._sessions)

    def new_game(self, preset: str, num_players: int, opponents: list[str], seat: int | None, reveal: bool,
                 seed: int | None) -> Game:
        seed = secrets.randbelow(2**31) if seed is None else seed
        game = Game(secrets.token_urlsafe(12), preset, num_players, opponents, seat, reveal, seed, self.replay_dir)
        return self._add(game)

    def new_replay(self, text: str) -> ReplaySession:
        return self._add(ReplaySession(secrets.token_urlsafe(12), text))

    def _add(self, session: Session) -> Any:
        with self._lock:
            self._expire()
            while len(self._sessions) >= self.max_games:
                self._sessions.popitem(last=False)
            self._sessions[session.id] = session
        return session

    def get(self, session_id: str, kind: type) -> Any:
        with self._lock:
            self._expire()
            session = self._sessions.get(session_id)
            if not isinstance(session, kind):
                raise GameError(f"unknown {'game' if kind is Game else 'replay'} id {session_id!r} "
                                "(it may have expired)", 404)
            session.last_used = time.monotonic()
            self._sessions.move_to_end(session_id)
            return session

    def _expire(self) -> None:
        now = time.monotonic()
        for key in [k for k, s in self._sessions.items() if now - s.last_used > self.ttl]:
            del self._sessions[key]

