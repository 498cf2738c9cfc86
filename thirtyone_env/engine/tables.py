"""``Tables``: N tables of one game behind names; the only Python code that knows the state layout.

It owns the engine state, the RNGs, the stacked decks and the rules' parameters of N tables
and offers ``reset``, ``step``, ``observe``, the legal ``mask`` and named read-only views
(``current_player``, ``chips``, ``status``, ``done``, ``deal``, ...). ``thirtyone_v0`` is one
table of it, ``VectorThirtyOne`` is N. Inputs are validated here, with errors that name
what was wrong; the kernels below trust them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from thirtyone_env import encoding
from thirtyone_env.actions import action_name
from thirtyone_env.cards import card_str
from thirtyone_env.engine import drivers as D
from thirtyone_env.engine.layout import (
    MAXD,
    MAXP,
    PH_OVER,
    S_CHIPS,
    S_CURRENT,
    S_DEALER,
    S_DEALS,
    S_DECISIONS,
    S_DISCARD,
    S_DISCARD_N,
    S_DONE,
    S_FINAL_LEFT,
    S_HAND_N,
    S_HANDS,
    S_KNOCKER,
    S_KNOWN,
    S_LAST_ACTION,
    S_LAST_END,
    S_LAST_SEAT,
    S_PHASE,
    S_POT,
    S_STATUS,
    S_STOCK,
    S_STOCK_N,
    S_TAKEN,
    S_TURNS,
    STATE_SIZE,
)
from thirtyone_env.engine.observe import global_state_dim
from thirtyone_env.engine.rng import seed_rng
from thirtyone_env.jit import PARALLEL_FROM
from thirtyone_env.rules import Rules
from thirtyone_env.view import DEAL_ENDS, PHASES, SEAT_STATUS, TableView

EPISODES = ("match", "deal")
ILLEGAL_ACTIONS = ("raise", "penalize")


# -- validators -------------------------------------------------------------------------------
def check_episode(episode: str) -> int:
    if episode not in EPISODES:
        raise ValueError(f"episode={episode!r} is invalid; allowed: {list(EPISODES)}")
    return int(episode == "deal")


def check_illegal_action(illegal_action: str) -> str:
    if illegal_action not in ILLEGAL_ACTIONS:
        raise ValueError(f"illegal_action={illegal_action!r} is invalid; allowed: {list(ILLEGAL_ACTIONS)}")
    return illegal_action


def check_decks(decks: Any, rules: Rules) -> np.ndarray:
    """Stacked decks (``options["decks"]``) as an int16 [Q, 52] array padded with -1.

    Each deck lists card ids top first; it may list only its top cards, the rest are then
    shuffled below them by the seeded RNG.
    """
    size = rules.deck_size
    out = np.full((len(decks), MAXD), -1, np.int16)
    for q, deck in enumerate(decks):
        cards = [int(c) for c in deck]
        for c in cards:
            if not 0 <= c < size:
                raise ValueError(f"options['decks'][{q}]: card id {c} out of range 0..{size - 1}")
        if len(set(cards)) != len(cards):
            dup = next(c for c in cards if cards.count(c) > 1)
            raise ValueError(f"options['decks'][{q}]: duplicate card {card_str(dup, rules.deck)} ({dup})")
        out[q, : len(cards)] = cards
    return out


def check_dealer(dealer: Any, num_players: int) -> int:
    """``-1`` (drawn by the RNG) or a seat."""
    if dealer is None or dealer == -1:
        return -1
    if isinstance(dealer, bool) or not isinstance(dealer, (int, np.integer)) or not 0 <= dealer < num_players:
        raise ValueError(f"options['dealer']={dealer!r} is invalid; allowed: a seat 0..{num_players - 1}")
    return int(dealer)


def _read_only(a: np.ndarray) -> np.ndarray:
    view = a.view()
    view.flags.writeable = False
    return view


class Tables:
    """``num_tables`` independent tables of ``num_players`` under one set of ``rules``.

    - ``observe=False`` skips writing the acting seat's observation after each step.
    - ``parallel`` spreads tables over numba's threads (default: from ``PARALLEL_FROM`` tables).
    - ``illegal_action``: ``"raise"`` refuses a step with an illegal action (``ValueError``
      naming the table, the action and the legal ids; nothing changes); ``"penalize"`` ends that
      match with -1 for the offender and 0 for the others.
    - ``autoreset``: a finished table starts its next match inside ``step`` (its outputs are
      then the new match's); without it, it stays finished until ``reset``.
    - Table ``i`` draws from random stream ``i`` of the seed, so a table's matches do not
      depend on the batch size or the thread count.
    """

    PARALLEL_FROM = PARALLEL_FROM

    def __init__(
        self,
        num_tables: int,
        num_players: int = 2,
        rules: str | Rules = "scat",
        seed: int | None = 0,
        episode: str = "match",
        observe: bool = True,
        parallel: bool | None = None,
        illegal_action: str = "raise",
        autoreset: bool = True,
    ):
        if isinstance(num_tables, bool) or not isinstance(num_tables, (int, np.integer)) or num_tables < 1:
            raise ValueError(f"num_tables={num_tables!r} is invalid; allowed: an integer >= 1")
        self.rules = Rules.resolve(rules)
        self.rules.check_num_players(num_players)
        self.num_tables = int(num_tables)
        self.num_players = int(num_players)
        self.episode = episode
        self._episode_deal = check_episode(episode)
        self.illegal_action = check_illegal_action(illegal_action)
        self.autoreset = bool(autoreset)
        self.num_actions = self.rules.num_actions
        self.obs_dim = encoding.obs_dim(self.rules.deck_size, self.num_players)
        self.obs_scale = encoding.scale(self.rules.deck_size, self.num_players, self.total_chips)
        self._params = self.rules.params()
        self._offsets = encoding.offsets(self.rules.deck_size, self.num_players)
        self._observe = bool(observe)
        self._obs_offsets = self._offsets if self._observe else self._offsets[:0]
        self.parallel = self.num_tables >= self.PARALLEL_FROM if parallel is None else bool(parallel)
        self._all = np.arange(self.num_tables)

        n = self.num_tables
        self._states = np.zeros((n, STATE_SIZE), np.int32)
        self._rngs = np.zeros((n, 4), np.int64)
        self._decks = np.full((n, 0, MAXD), -1, np.int16)
        self._scratch = np.zeros((n, MAXP), np.float64)
        self._step_rewards = np.zeros((n, MAXP), np.float64)  # step_at's exact (float64) rewards
        self.obs = np.zeros((n, self.obs_dim if self._observe else 0), np.int8)
        self.mask = np.zeros((n, self.num_actions), np.bool_)
        self.player = np.zeros(n, np.int64)
        self.rewards = np.zeros((n, self.num_players), np.float32)
        self.done = np.zeros(n, np.bool_)
        self.seed(seed)
        # what every step passes to the kernels, gathered once (updated in place; see _decks)
        self._outputs = (self._obs_offsets, self.obs, self.mask, self.player, self.rewards, self.done, self._scratch)
        self._at_outputs = (self._obs_offsets, self.obs, self.mask, self.player, self._step_rewards, self.done,
                            self._scratch)
        self._threads_all = self._threads(self._all)
        self._lean = not (self._observe or self.autoreset)  # step_at's short kernel applies

        # named read-only views of the state: they follow every step
        s, p = self._states, self.num_players
        self.current_player = _read_only(s[:, S_CURRENT])  # seat to act (meaningless once done)
        self.chips = _read_only(s[:, S_CHIPS : S_CHIPS + p])  # lives or chips per seat
        self.status = _read_only(s[:, S_STATUS : S_STATUS + p])  # 0 out, 1 in play, 2 on honor
        self.finished = _read_only(s[:, S_DONE])  # 1 once the episode is over (``done`` is per step)
        self.deal = _read_only(s[:, S_DEALS])  # deals begun this match
        self.turn = _read_only(s[:, S_TURNS])  # completed turns this deal
        self.dealer = _read_only(s[:, S_DEALER])
        self.knocker = _read_only(s[:, S_KNOCKER])  # -1 = nobody knocked this deal
        self.pot = _read_only(s[:, S_POT])
        self.stock_size = _read_only(s[:, S_STOCK_N])
        self.decisions = _read_only(s[:, S_DECISIONS])  # decisions taken this episode

    @property
    def _decks(self) -> np.ndarray:
        """Stacked decks per table, int16 [N, Q, 52]; replacing them refreshes the kernels' arguments."""
        return self._engine[2]

    @_decks.setter
    def _decks(self, decks: np.ndarray) -> None:
        self._engine = (self._states, self._rngs, decks, self._params)

    @property
    def kernel_args(self) -> tuple:
        """The arrays ``engine.drivers.step_row(b, action, *kernel_args)`` steps in place, for a compiled
        loop outside the engine (an agent playing whole turns); their layout stays the engine's business."""
        return (*self._engine, self.autoreset, *self._outputs)

    def _threads(self, rows: np.ndarray) -> bool:
        """Threads pay off only for enough rows (a partial step of a few tables runs serially)."""
        return self.parallel and len(rows) >= self.PARALLEL_FROM

    @property
    def total_chips(self) -> int:
        return self.rules.start_chips * self.num_players

    # -- seeding and resets -------------------------------------------------------------------
    def seed(self, seed: int | None, rows: Sequence[int] | np.ndarray | None = None) -> None:
        """Table ``i`` draws from stream ``i`` of ``seed`` (None: fresh OS entropy)."""
        entropy = seed if isinstance(seed, (int, np.integer)) else np.random.SeedSequence(seed).entropy
        for i in self._all if rows is None else rows:
            self._rngs[i] = seed_rng(entropy, int(i))

    def seed_streams(self, rows: np.ndarray, seed: int, streams: np.ndarray) -> None:
        """Table ``rows[k]`` draws from stream ``streams[k]`` of ``seed`` (e.g. one stream per
        match of a tournament, so that every entry plays the same decks)."""
        entropy = seed if isinstance(seed, (int, np.integer)) else np.random.SeedSequence(seed).entropy
        for i, stream in zip(rows, streams, strict=True):
            self._rngs[i] = seed_rng(entropy, int(stream))

    def reset(
        self,
        seed: int | None = None,
        decks: Sequence[Sequence[int]] | None = None,
        dealer: int | None = None,
        rows: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """New matches (or deal episodes) on ``rows`` (default: every table).

        ``seed`` reseeds them first (else their random streams continue). ``decks`` stacks the
        same decks on every table (None keeps the decks stacked before); ``dealer`` fixes the
        first dealer (None: drawn by each table's RNG).
        """
        rows = self._all if rows is None else np.asarray(rows, np.int64)
        if seed is not None:
            self.seed(seed, rows)
        if decks is not None and (len(decks) or self._decks.shape[1]):  # nothing to do: none before, none now
            stacked = check_decks(decks, self.rules)
            if stacked.shape[0] != self._decks.shape[1]:
                self._decks = np.full((self.num_tables, stacked.shape[0], MAXD), -1, np.int16)
            self._decks[rows] = stacked
        D.RESET.run(
            len(rows), self._threads(rows), *self._engine, self.num_players, self._episode_deal,
            check_dealer(dealer, self.num_players), rows, self._obs_offsets, self.obs, self.mask, self.player,
            self.done, self._scratch,
        )
        self.rewards[rows] = 0
        return self.obs, self.mask, self.player

    # -- stepping -------------------------------------------------------------------------------
    def step(
        self, actions: np.ndarray, rows: np.ndarray | None = None, check: bool = True
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """One action per table (``actions[i]`` for table ``i``); returns ``(obs, mask, player, rewards, done)``.

        ``rows`` steps only those tables (``actions`` still has one entry per table; the
        other tables report no reward and not done). A finished table (without autoreset)
        stays as it is and reports done. ``check=False``: the caller has checked the actions
        (``check_actions``). The returned arrays are reused by the next call: copy what you keep.
        """
        given = actions
        if not (type(actions) is np.ndarray and actions.dtype == np.int64 and actions.shape == self._all.shape):
            actions = self._check_shape(actions)  # the fast path above is the common case: skip the checks
        check = check and self.illegal_action == "raise"
        if rows is None:
            if check and D._count_illegal(actions, self.mask, self._all):
                self.check_actions(given, self._all)  # raises, naming the tables
            D.STEP_ALL.run(self.num_tables, self._threads_all, *self._engine, actions, self.autoreset, *self._outputs)
        else:
            rows = np.asarray(rows, np.int64)
            self.rewards[:] = 0
            self.done[:] = False
            if check and D._count_illegal(actions, self.mask, rows):
                self.check_actions(given, rows)
            D.STEP.run(len(rows), self._threads(rows), *self._engine, rows, actions, self.autoreset, *self._outputs)
        return self.obs, self.mask, self.player, self.rewards, self.done

    def step_at(self, i: int, action: int, who: str | None = None) -> np.ndarray:
        """Step table ``i`` alone (no batch overhead); returns its rewards for this step (float64, by seat).

        ``who`` names the seat in the error an illegal action raises (``"raise"``).
        """
        try:  # is_legal, inlined: this is the PettingZoo env's path, once per decision
            a = int(action)
            legal = a == action and 0 <= a < self.num_actions and self.mask[i, a]
        except (TypeError, ValueError, OverflowError):
            legal = False
        if not legal:
            if self.illegal_action == "raise":
                raise ValueError(self.illegal_message(i, action, who))
            a = -1
        if self._lean:
            D._step_at_lean(*self._engine, i, a, self.mask, self.player, self._step_rewards, self.done)
        else:
            D._step_at(*self._engine, i, a, self.autoreset, *self._at_outputs)
        return self._step_rewards[i, : self.num_players]

    def is_legal(self, i: int, action: Any) -> bool:
        """An integer action id that is legal for table ``i``'s seat to act."""
        try:
            a = int(action)
        except (TypeError, ValueError, OverflowError):
            return False
        return a == action and 0 <= a < self.num_actions and bool(self.mask[i, a])

    def illegal_message(self, i: int, action: Any, who: str | None = None) -> str:
        legal = np.flatnonzero(self.mask[i]).tolist()
        names = ", ".join(f"{a} ({action_name(a, self.rules.deck)})" for a in legal)
        who = who or f"player_{int(self._states[i, S_CURRENT])}"
        if self._states[i, S_DONE]:
            return f"illegal action {action!r} for {who}: the match is over; reset it"
        return f"illegal action {action!r} for {who}; legal action ids: {legal} = {names}"

    def _check_shape(self, actions: Any) -> np.ndarray:
        actions = np.asarray(actions)
        if actions.shape != (self.num_tables,):
            raise ValueError(f"actions must have shape ({self.num_tables},), got {actions.shape}")
        if actions.dtype.kind not in "iu":
            raise ValueError(f"actions must be integers, got dtype {actions.dtype}")
        return actions.astype(np.int64, copy=False)  # a huge uint64 wraps negative: still illegal

    def check_actions(self, actions: np.ndarray, rows: np.ndarray | None = None) -> None:
        """Raise ``ValueError`` naming every table in ``rows`` whose action is not legal (up to five)."""
        shown = np.asarray(actions)
        rows = self._all if rows is None else np.asarray(rows, np.int64)
        if not D._count_illegal(self._check_shape(actions), self.mask, rows):
            return
        # the slow path, only to explain: the caller's values, a huge uint64 by its own value
        bad = [int(b) for b in rows if not self.is_legal(int(b), int(shown[b]))]
        details = "; ".join(
            f"table {b}: action {int(shown[b])}, legal {np.flatnonzero(self.mask[b]).tolist()} "
            f"({', '.join(action_name(a, self.rules.deck) for a in np.flatnonzero(self.mask[b]))})"
            for b in bad[:5]
        )
        more = f" (and {len(bad) - 5} more tables)" if len(bad) > 5 else ""
        raise ValueError(f"illegal actions at {len(bad)} table(s): {details}{more}")

    # -- observations -----------------------------------------------------------------------
    def _check_seats(self, seats: Any) -> np.ndarray:
        """One seat number per table as int64, or a ValueError naming the shape and range."""
        seats = np.asarray(seats, np.int64)
        if seats.shape != (self.num_tables,) or ((seats < 0) | (seats >= self.num_players)).any():
            raise ValueError(f"seats must be {self.num_tables} seat numbers in 0..{self.num_players - 1}")
        return seats

    def observe(self, seats: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        """Observation of any seat per table (int8 [num_tables, obs_dim]), e.g. every seat's
        view at the end of a match. ``rows``: only those tables (the others are left zero)."""
        seats = self._check_seats(seats)
        out = np.zeros((self.num_tables, self.obs_dim), np.int8)
        rows = self._all if rows is None else np.asarray(rows, np.int64)
        D.OBSERVE.run(len(rows), self._threads(rows), self._states, self._params, rows, seats, self._offsets, out)
        return out

    def seat_info(self, seats: np.ndarray) -> np.ndarray:
        """Per table: deals begun, completed turns this deal, ``seats[i]``'s chips, 1 if that seat is in
        play (int64 [4, num_tables]); what a vector env's info reports each step for its learners."""
        seats = self._check_seats(seats)
        out = np.empty((4, self.num_tables), np.int64)
        D.seat_info(self._states, seats, out)
        return out

    def observe_at(self, i: int, seat: int, out: np.ndarray | None = None) -> np.ndarray:
        """Observation of ``seat`` at table ``i`` (int8 [obs_dim])."""
        out = np.empty(self.obs_dim, np.int8) if out is None else out
        D.observe_row(i, seat, self._states, self._params, self._offsets, out)
        return out

    @property
    def state_dim(self) -> int:
        return global_state_dim(self.rules.deck_size, self.num_players)

    def global_state(self, rows: np.ndarray | None = None) -> np.ndarray:
        """The full state of every table (all hands, the stock, whose turn, seat 0's view), int8."""
        out = np.zeros((self.num_tables, self.state_dim), np.int8)
        rows = self._all if rows is None else np.asarray(rows, np.int64)
        D.GLOBAL_STATE.run(len(rows), self._threads(rows), self._states, self._params, rows, self._offsets, out)
        return out

    # -- copies -----------------------------------------------------------------------------
    _SNAPSHOT = ("_states", "_rngs", "_decks", "obs", "mask", "player", "rewards", "done")

    def snapshot(self) -> dict[str, np.ndarray]:
        """Everything needed to continue exactly (tables, RNGs, stacked decks, last outputs)."""
        return {name: getattr(self, name).copy() for name in self._SNAPSHOT}

    def restore(self, snapshot: dict[str, np.ndarray]) -> None:
        """Continue from a ``snapshot()`` of tables of the same shape (copied in place)."""
        missing = sorted(set(self._SNAPSHOT) - set(snapshot))
        if missing:
            raise ValueError(f"snapshot lacks {missing}")
        for name in self._SNAPSHOT:
            value, current = np.asarray(snapshot[name]), getattr(self, name)
            if name == "_decks":
                if value.ndim != 3 or value.shape[0] != self.num_tables or value.shape[2] != MAXD:
                    raise ValueError(f"snapshot field _decks has shape {value.shape}, expected "
                                     f"({self.num_tables}, Q, {MAXD})")
                self._decks = value.astype(np.int16, copy=True)
                continue
            if value.shape != current.shape:
                raise ValueError(f"snapshot field {name} has shape {value.shape}, expected {current.shape}")
            current[...] = value

    def take(self, rows: np.ndarray, **options: Any) -> Tables:
        """New tables holding copies of ``rows`` (state, RNG, decks, mask, observation): what-if
        play-outs from a position. ``options`` override the constructor's (e.g. ``observe``)."""
        rows = np.asarray(rows, np.int64)
        kwargs = dict(num_players=self.num_players, rules=self.rules, seed=0, episode=self.episode,
                      observe=self._observe, illegal_action=self.illegal_action, autoreset=self.autoreset)
        kwargs.update(options)
        out = Tables(len(rows), **kwargs)
        out._states[:] = self._states[rows]
        out._rngs[:] = self._rngs[rows]
        out._decks = self._decks[rows].copy()
        out.mask[:] = self.mask[rows]
        out.player[:] = self.player[rows]
        if out._observe and self._observe:
            out.obs[:] = self.obs[rows]
        elif out._observe:
            out.obs[:] = self.observe(self.current_player.astype(np.int64))[rows]
        return out

    @classmethod
    def stack(cls, parts: Sequence[Tables]) -> Tables:
        """One ``Tables`` holding every table of ``parts`` (same rules, players and options), in order."""
        if not parts:
            raise ValueError("stack needs at least one Tables")
        first = parts[0]
        for p in parts[1:]:
            if (p.rules, p.num_players, p.episode, p._observe) != (first.rules, first.num_players, first.episode,
                                                                    first._observe):
                raise ValueError("stack: every part must have the same rules, players, episode and observe")
        out = cls(sum(p.num_tables for p in parts), first.num_players, first.rules, seed=0, episode=first.episode,
                  observe=first._observe, illegal_action=first.illegal_action, autoreset=first.autoreset)
        q = max(p._decks.shape[1] for p in parts)
        out._decks = np.full((out.num_tables, q, MAXD), -1, np.int16)
        at = 0
        for p in parts:
            rows = slice(at, at + p.num_tables)
            for name in ("_states", "_rngs", "mask", "player", "obs"):
                getattr(out, name)[rows] = getattr(p, name)
            out._decks[rows, : p._decks.shape[1]] = p._decks
            at += p.num_tables
        return out

    @classmethod
    def from_observations(cls, obs: np.ndarray, hands: np.ndarray, stocks: np.ndarray, rules: str | Rules = "scat",
                          num_players: int = 2, seed: int = 0, **options: Any) -> Tables:
        """Tables rebuilt from observations of the seat to act and guesses of what it cannot see.

        Table ``i``'s observer (``obs[i]``) becomes seat 0, to act; ``hands[i, r]`` (card ids,
        padded with -1) is the hand of the opponent ``r`` seats to its left and must hold the
        cards the observation says it took from the discard pile; ``stocks[i]`` is the stock,
        top first, padded with -1. Not observed, so not restored: the discard pile's order below
        its top, which of the observer's cards it took earlier, the deal number. For searches
        that deal the hidden cards many ways; ``options`` go to the constructor.
        """
        from thirtyone_env.engine.worlds import load_worlds

        rules = Rules.resolve(rules)
        out = cls(len(obs), num_players, rules, seed=seed, **options)
        n, d = out.num_players, rules.deck_size
        obs = np.ascontiguousarray(obs, np.int8)
        hands = np.ascontiguousarray(hands, np.int64)
        stocks = np.ascontiguousarray(stocks, np.int64)
        need = {"obs": ((out.num_tables, out.obs_dim), obs.shape), "hands": ((out.num_tables, n - 1, 4), hands.shape),
                "stocks": ((out.num_tables, MAXD), stocks.shape)}
        for name, (want, got) in need.items():
            if want != got:
                raise ValueError(f"{name} must have shape {want}, got {got}")
        if ((hands < -1) | (hands >= d)).any() or ((stocks < -1) | (stocks >= d)).any():
            raise ValueError(f"hands and stocks hold card ids 0..{d - 1} or -1 (empty)")
        stock_sizes = load_worlds(out._states, out._params, n, out._offsets, obs, hands, stocks, out.obs, out.mask)
        st = out._states
        bad = (out.card_counts() != (np.arange(MAXD) < d)).any(axis=1)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            cards = np.flatnonzero(out.card_counts()[i] != (np.arange(MAXD) < d))
            raise ValueError(f"table {i}: cards {[card_str(int(c), rules.deck) for c in cards[:8]]} are "
                             f"missing or held twice (every card must lie in exactly one place)")
        bad = st[:, S_STOCK_N] != stock_sizes
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"table {i}: the stock holds {st[i, S_STOCK_N]} cards, the observation says "
                             f"{stock_sizes[i]}")
        held, in_play = st[:, S_HAND_N + 1 : S_HAND_N + n], st[:, S_STATUS + 1 : S_STATUS + n] != 0
        bad = held != np.where(in_play, 3, 0)
        if bad.any():
            i, r = (int(x) for x in np.argwhere(bad)[0])
            raise ValueError(f"table {i}: the opponent in seat {r + 1} holds {held[i, r]} cards; a seat in play "
                             f"holds 3 while another acts, a seat out none")
        hands_at = st[:, S_HANDS : S_HANDS + 4 * n].reshape(-1, n, 4)
        owner = st[:, S_KNOWN : S_KNOWN + d] - 1  # seat said to hold each card, -1 none
        holds = (hands_at[:, :, :, None] == np.arange(d)[None, None, None, :]).any(axis=2)  # [N, n, d]
        rows, cards = np.nonzero(owner >= 0)
        lost = ~holds[rows, owner[rows, cards], cards]
        if lost.any():
            i = int(rows[lost][0])
            names = [card_str(int(c), rules.deck) for c in cards[lost][rows[lost] == i]]
            raise ValueError(f"table {i}: the observation shows cards {names} in an opponent's hand "
                             f"that hands[{i}] does not give it")
        out.player[:] = 0
        return out

    def card_counts(self) -> np.ndarray:
        """How often each card id lies in a hand, the stock or the discard pile, per table
        (int [num_tables, 52]): 1 for every card of the deck and 0 beyond it, or cards were lost."""
        return D._card_counts(self._states, self.rules.deck_size)

    # -- one table, as plain data -------------------------------------------------------------
    def hand(self, i: int, seat: int) -> list[int]:
        """Card ids in ``seat``'s hand at table ``i`` (hidden information: for tests, people, critics)."""
        s = self._states[i]
        return [int(c) for c in s[S_HANDS + 4 * seat : S_HANDS + 4 * seat + s[S_HAND_N + seat]]]

    def hands(self, rows: np.ndarray | None = None) -> np.ndarray:
        """Every seat's hand at the given tables, -1 past its end (int [R, num_players, 4]; hidden
        information: for labels of what a player could not see, such as a belief's training targets)."""
        s = self._states if rows is None else self._states[np.asarray(rows)]
        n = self.num_players
        cards = s[:, S_HANDS : S_HANDS + 4 * n].reshape(len(s), n, 4).astype(np.int64)
        held = np.arange(4)[None, None, :] < s[:, S_HAND_N : S_HAND_N + n, None]
        return np.where(held, cards, -1)

    def stock(self, i: int) -> list[int]:
        """The stock of table ``i``, top first (hidden information)."""
        s = self._states[i]
        return [int(c) for c in s[S_STOCK : S_STOCK + s[S_STOCK_N]][::-1]]

    def discard_pile(self, i: int) -> list[int]:
        """The discard pile of table ``i``, oldest first (top last)."""
        s = self._states[i]
        return [int(c) for c in s[S_DISCARD : S_DISCARD + s[S_DISCARD_N]]]

    def known_cards(self, i: int, seat: int) -> list[int]:
        """Cards ``seat`` holds that it took from the discard pile (every seat saw them)."""
        s = self._states[i]
        return [c for c in self.hand(i, seat) if s[S_KNOWN + c] == seat + 1]

    def hand_value(self, i: int, seat: int) -> float:
        from thirtyone_env.engine.hands import hand_value

        cards = self.hand(i, seat)
        return hand_value(cards, self.rules) if cards else 0.0

    def view(self, i: int, seat: int | None = None) -> TableView:
        """Table ``i`` as plain data, everything visible or (``seat``) as that seat sees it."""
        s = self._states[i]
        n = self.num_players
        hands = tuple(tuple(self.hand(i, p)) for p in range(n))
        done = bool(s[S_DONE])
        view = TableView(
            rules_name=self.rules.name, deck=self.rules.deck, economy=self.rules.economy, num_players=n,
            deal=int(s[S_DEALS]), turn=int(s[S_TURNS]), dealer=int(s[S_DEALER]),
            current=-1 if done else int(s[S_CURRENT]), phase=PHASES[min(int(s[S_PHASE]), PH_OVER)],
            knocker=int(s[S_KNOCKER]), final_turns_left=int(s[S_FINAL_LEFT]),
            chips=tuple(int(c) for c in s[S_CHIPS : S_CHIPS + n]),
            status=tuple(SEAT_STATUS[int(x)] for x in s[S_STATUS : S_STATUS + n]),
            hands=hands, hand_values=tuple(self.hand_value(i, p) if hands[p] else None for p in range(n)),
            known=tuple(tuple(self.known_cards(i, p)) for p in range(n)), taken=int(s[S_TAKEN]),
            discard=tuple(self.discard_pile(i)), stock_size=int(s[S_STOCK_N]), stock=tuple(self.stock(i)),
            pot=int(s[S_POT]), last_seat=int(s[S_LAST_SEAT]), last_action=int(s[S_LAST_ACTION]),
            last_end=DEAL_ENDS[int(s[S_LAST_END])], done=done,
        )
        return view.for_seat(seat)
