"""``HeuristicAgent``: the strongest rule-based player here (docs/agents.md has the figures).

What it knows beyond ``GreedyAgent``:
- **Live cards.** A card is live when it is neither in its hand, nor in the discard
  pile, nor known to sit in an opponent's hand (``opp_known``); only live cards can
  still come from the stock. A three-card hand is scored as
  ``value + w * potential``, potential being the expected gain of one more draw
  over the live cards, so it keeps suits whose high cards are still out there.
- **Draw choice.** Take the discard when the best keep with it beats drawing from
  the stock (current value plus the expected gain of the draw).
- **Denial.** Throwing a card of a suit the next opponent is known to collect costs
  ``deny`` times that card's value.
- **Knocking** uses ``KNOCK_TABLE``: per rule preset, the doubled hand value from
  which knocking pays, by players in play and completed turns this deal (which
  also fixes the seat's position in the round). ``scripts/derive_knock_thresholds.py``
  derives it by simulation with the engine and rewrites the table below. It also
  never knocks into an opponent whose known cards already match its hand.
- **Final round** (someone knocked): no future draws count, so it maximises the
  value it will show, i.e. plays to stay off the bottom; it passes (Russian) only
  when no draw can help.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import njit

from agents.base import BaseAgent
from agents.greedy import _find_one, _first_legal, _keep_index, _phase
from thirtyone_env import encoding as E
from thirtyone_env.actions import DISCARD0, DRAW_DISCARD, DRAW_STOCK, KNOCK, PASS
from thirtyone_env.engine import MAXD, MAXP, Tables
from thirtyone_env.engine.drivers import observe_row, prefetch_table, restart_row, step_row
from thirtyone_env.engine.hands import hand_value2, triple_value2
from thirtyone_env.jit import INLINE, jit_variants, prefetch_row
from thirtyone_env.rules import P_DECK_SIZE, P_RANK_OF, P_RANKS, P_SUIT_OF, P_VALUES, Rules

TMAX = 16  # turn columns of the knock table; later turns use the last one

# BEGIN KNOCK TABLE (written by scripts/derive_knock_thresholds.py; doubled values, by players in play,
# then by completed turns 0..TMAX-1)
KNOCK_TABLE: dict[str, dict[int, list[int]]] = {
    'scat': {
        2: [45, 45, 45, 45, 45, 45, 48, 48, 48, 48, 50, 52, 52, 52, 54, 54],
        3: [40, 42, 42, 42, 44, 44, 45, 45, 47, 47, 47, 48, 51, 51, 52, 54],
        4: [42, 42, 42, 44, 44, 44, 44, 46, 46, 46, 55, 55, 57, 57, 61, 61],
    },
    "swedish": {
        2: [42, 42, 42, 42, 42, 42, 43, 43, 43, 44, 46, 46, 46, 46, 48, 48],
        3: [44, 44, 44, 44, 44, 44, 44, 44, 44, 44, 47, 47, 47, 47, 47, 54],
        4: [44, 44, 44, 44, 44, 44, 44, 49, 49, 49, 49, 49, 49, 49, 54, 56],
    },
    "swedish-chips": {
        2: [42, 42, 42, 42, 42, 42, 43, 43, 43, 44, 46, 46, 46, 46, 48, 48],
        3: [40, 40, 42, 42, 44, 44, 44, 44, 44, 44, 44, 44, 44, 44, 44, 44],
        4: [40, 40, 40, 42, 42, 44, 44, 44, 44, 44, 44, 44, 44, 44, 47, 47],
    },
    "italian": {
        2: [41, 41, 41, 41, 41, 43, 43, 43, 43, 43, 43, 43, 44, 44, 44, 44],
        3: [41, 41, 41, 41, 41, 44, 44, 44, 44, 44, 44, 44, 44, 44, 44, 44],
        4: [41, 41, 41, 41, 41, 41, 41, 41, 41, 41, 42, 42, 42, 44, 44, 44],
    },
    "russian": {
        2: [41, 41, 41, 41, 41, 42, 44, 44, 44, 45, 45, 45, 45, 45, 45, 46],
        3: [40, 40, 41, 41, 42, 43, 43, 43, 44, 44, 44, 44, 44, 44, 50, 54],
        4: [40, 40, 40, 40, 40, 40, 42, 42, 43, 43, 43, 44, 44, 44, 44, 44],
    },
}
# END KNOCK TABLE

DEFAULT_KNOCK2 = 54  # 27 points, for cells the table does not cover

# tuning knobs (cfg vector)
C_POTENTIAL, C_DENY, C_TAKE_MARGIN, C_KNOCK_SHIFT = 0, 1, 2, 3
DEFAULT_CFG = (2.0, 0.6, 2.0, 0.0)  # tuned by tournaments against GreedyAgent (scat)


def knock_table(rules: Rules, overrides: dict[int, list[int]] | None = None) -> np.ndarray:
    """The int64 [MAXP + 1, TMAX] doubled knock thresholds for ``rules`` (rows: players in play)."""
    source = dict(KNOCK_TABLE.get(rules.name, KNOCK_TABLE.get("scat", {})))
    if overrides:
        source.update(overrides)
    table = np.full((MAXP + 1, TMAX), DEFAULT_KNOCK2, np.int64)
    known = sorted(source)
    for k in range(2, MAXP + 1):
        if not known:
            break
        row = source[k] if k in source else source[min(known, key=lambda j: abs(j - k))]
        table[k, : len(row)] = row
        table[k, len(row) :] = row[-1]
    return table


# -- the parts of a decision ------------------------------------------------------------
# Card sets are bit sets of ranks, one per suit (card id = suit * ranks + rank). Per rule set, ``rank_tables``
# holds for every rank set its size and its total value, and per value t the ranks worth at least t: the
# live cards of a suit worth at least t and their total are then two lookups, so the expected gain of a
# draw takes four steps (one per suit) instead of one per live card.
MAX_RANKS = 13
L_COUNT, L_TOTAL, L_LOWEST = 0, 1 << MAX_RANKS, 2 << MAX_RANKS  # per rank set: size, value total, lowest rank
L_AT_LEAST = 3 << MAX_RANKS  # per value t = 0..12: the ranks worth at least t
L_SIZE = L_AT_LEAST + 13
# scratch row of a decision (int64): the live rank set per suit, then the doubled value the i-th opponent
# is known to hold per suit (cards it took from the discard pile)
LIVE, KNOWN_SUM = 0, 4
SCRATCH = KNOWN_SUM + 4 * (MAXP - 1)
PARALLEL_FROM = 64  # a decision costs about 0.3 us on one core: threads pay off from fewer rows than a step


def rank_tables(rules: Rules) -> np.ndarray:
    """The lookup tables of ``L_*`` for a deck (card values depend on the rank alone), a copy per agent."""
    return _rank_tables(rules.deck_spec.rank_values).copy()


@functools.cache
def _rank_tables(values: tuple[int, ...]) -> np.ndarray:
    """Built once per deck: 8,192 rank sets in Python take milliseconds, every agent would pay them."""
    table = np.zeros(L_SIZE, np.int64)
    for ranks in range(1 << len(values)):
        held = [r for r in range(len(values)) if ranks >> r & 1]
        table[L_COUNT + ranks] = len(held)
        table[L_TOTAL + ranks] = sum(values[r] for r in held)
        table[L_LOWEST + ranks] = held[0] if held else -1
    for t in range(13):
        table[L_AT_LEAST + t] = sum(1 << r for r, v in enumerate(values) if v >= t)
    return table


@njit(**INLINE)
def _rank_set(piece, suit, ranks):
    """The ranks of ``suit`` set in a one-hot piece (``deck size`` entries), as a bit set."""
    seg = piece[suit * ranks : (suit + 1) * ranks]
    out = 0
    for r in range(ranks):
        out |= np.int64(seg[r] != 0) << r
    return out


@njit(**INLINE)
def _scan(obs, off, params, n, lut, hand, scratch, seen):
    """Own cards into ``hand`` (ascending) and the live rank set of each suit into ``scratch``; returns
    how many cards are held and how many are live (not ours, not discarded, not known held).

    The pieces are read through slices: plain loops over local arrays are what LLVM vectorizes, and
    this way the scan costs a quarter of indexing the observation directly."""
    d = params[P_DECK_SIZE]
    ranks = params[P_RANKS]
    own = obs[off[E.HAND] : off[E.HAND] + d]
    pile = obs[off[E.DISCARD_PILE] : off[E.DISCARD_PILE] + d]
    for c in range(d):
        seen[c] = own[c] | pile[c]
    for rel in range(n - 1):
        known = obs[off[E.OPP_KNOWN] + rel * d : off[E.OPP_KNOWN] + (rel + 1) * d]
        for c in range(d):
            seen[c] |= known[c]
    nh = nlive = 0
    every = (1 << ranks) - 1
    for s in range(4):
        live = every & ~_rank_set(seen, s, ranks)
        scratch[LIVE + s] = live
        nlive += lut[L_COUNT + live]
        mine = _rank_set(own, s, ranks)
        while mine != 0 and nh < 4:
            hand[nh] = s * ranks + lut[L_LOWEST + mine]
            nh += 1
            mine &= mine - 1
    return nh, nlive


@njit(**INLINE)
def _known_best(obs, off, params, rel, lut, scratch):
    """The doubled value per suit of the cards opponent ``rel`` is known to hold (into ``scratch``); returns
    the best of them."""
    d, ranks = params[P_DECK_SIZE], params[P_RANKS]
    known = obs[off[E.OPP_KNOWN] + rel * d : off[E.OPP_KNOWN] + (rel + 1) * d]
    best = 0
    for s in range(4):
        total = 2 * lut[L_TOTAL + _rank_set(known, s, ranks)]
        scratch[KNOWN_SUM + 4 * rel + s] = total
        best = max(best, total)
    return best


@njit(**INLINE)
def _is_live(card, scratch, params):
    return card < params[P_DECK_SIZE] and (scratch[LIVE + params[P_SUIT_OF + card]] >> params[P_RANK_OF + card]) & 1


@njit(**INLINE)
def _kept2(a, b, c, suit, params):
    """Twice the sum of the two highest values among cards a, b, c of ``suit``: what a drawn card
    of that suit would join."""
    m1, m2 = 0, 0
    for card in (a, b, c):
        if params[P_SUIT_OF + card] == suit:
            x = params[P_VALUES + card]
            if x > m1:
                m2, m1 = m1, x
            elif x > m2:
                m2 = x
    return 2 * (m1 + m2)


@njit(**INLINE)
def _potential(a, b, c, v, scratch, nlive, params, lut):
    """Expected doubled gain of one more card drawn uniformly from the live cards."""
    if nlive == 0:
        return 0.0
    ranks = params[P_RANKS]
    ra, rb, rc = params[P_RANK_OF + a], params[P_RANK_OF + b], params[P_RANK_OF + c]
    pair = ra if (ra == rb or ra == rc) else (rb if rb == rc else -1)
    total = 0
    for s in range(4):
        kept = _kept2(a, b, c, s, params)
        # a drawn card of value x gains 2x + kept - v when that is positive: x > (v - kept) / 2
        gaining = scratch[LIVE + s] & lut[L_AT_LEAST + min(max((v - kept) // 2 + 1, 0), 12)]
        total += 2 * lut[L_TOTAL + gaining] + (kept - v) * lut[L_COUNT + gaining]
    if pair >= 0:  # a live card of the pair's rank may make three of a kind: count it at its best
        for s in range(4):
            x = s * ranks + pair
            if _is_live(x, scratch, params):
                plain = 2 * params[P_VALUES + x] + _kept2(a, b, c, s, params)
                best = max(plain, triple_value2(x, params))
                total += max(best - v, 0) - max(plain - v, 0)
    return total / nlive


@njit(**INLINE)
def _draw_total(p, q, scratch, params, lut):
    """Sum over the live cards x of ``hand_value2(p, q, x)``, from the rank-set tables.

    A drawn card x of suit s and value vx makes ``2 * max(K_s + vx, M_s)``: K_s is what p and q
    hold in s, M_s the best total of p's or q's suit when that is not s."""
    sp, sq = params[P_SUIT_OF + p], params[P_SUIT_OF + q]
    vp, vq = params[P_VALUES + p], params[P_VALUES + q]
    total = 0
    for s in range(4):
        k = vp * (sp == s) + vq * (sq == s)
        m = 0
        if sp != s:
            m = vp + vq * (sq == sp)
        if sq != s:
            m = max(m, vq + vp * (sp == sq))
        live = scratch[LIVE + s]
        joining = live & lut[L_AT_LEAST + min(max(m - k, 0), 12)]  # x joins its suit when k + vx >= m
        joined = lut[L_COUNT + joining]
        total += 2 * (k * joined + lut[L_TOTAL + joining]) + 2 * m * (lut[L_COUNT + live] - joined)
    rank = params[P_RANK_OF + p]
    if rank == params[P_RANK_OF + q]:  # a live card of the pair's rank may make a special hand
        for s in range(4):
            x = s * params[P_RANKS] + rank
            if _is_live(x, scratch, params):
                special = triple_value2(p, params)
                if special > 0:  # hand_value2 then returns the special value instead of the suit total
                    sx, vx = params[P_SUIT_OF + x], params[P_VALUES + x]
                    plain = max(vx + vp * (sp == sx) + vq * (sq == sx), vp + vx * (sx == sp) + vq * (sq == sp),
                                vq + vx * (sx == sq) + vp * (sp == sq))
                    total += special - 2 * plain
    return total


@njit(**INLINE)
def _score(a, b, c, w, scratch, nlive, params, lut):
    v = hand_value2(a, b, c, params)
    if w == 0.0:
        return float(v)
    return v + w * _potential(a, b, c, v, scratch, nlive, params, lut)


@njit(**INLINE)
def _heuristic_row(obs, mask, off, params, n, table, cfg, lut, hand, scratch, seen):
    """``hand`` (4), ``scratch`` (``SCRATCH``) and ``seen`` (``MAXD`` int8) are scratch rows, allocated once
    per batch; ``lut`` is ``rank_tables``."""
    d = params[P_DECK_SIZE]
    nh, nlive = _scan(obs, off, params, n, lut, hand, scratch, seen)
    phase = _phase(obs, off)
    final = obs[off[E.FINAL_ROUND]] != 0
    w = 0.0 if final else cfg[C_POTENTIAL]
    # opponents in play, the next one to act, and the strongest hand they are known to hold
    in_play = 1
    nxt = -1
    known_best = 0
    for rel in range(n - 1):
        if obs[off[E.OPP_IN_PLAY] + rel] != 0:
            in_play += 1
            if nxt < 0:
                nxt = rel
            known_best = max(known_best, _known_best(obs, off, params, rel, lut, scratch))
    action = -1
    if phase == 0:
        a, b, c = hand[0], hand[1], hand[2]
        v = obs[off[E.HAND_VALUE]]
        turns = min(obs[off[E.TURNS]], TMAX - 1)
        threshold = table[min(in_play, MAXP), turns] + cfg[C_KNOCK_SHIFT]
        if mask[KNOCK] and v >= threshold and v > known_best:
            action = KNOCK
        else:
            pot = _potential(a, b, c, v, scratch, nlive, params, lut)
            q_stock = v + pot + w * pot
            q_take = -1.0
            top = _find_one(obs, off[E.DISCARD_TOP], d)
            if top >= 0 and mask[DRAW_DISCARD]:
                q_take = max(
                    _score(top, b, c, w, scratch, nlive, params, lut),
                    _score(a, top, c, w, scratch, nlive, params, lut),
                    _score(a, b, top, w, scratch, nlive, params, lut),
                )
            # the observation's take_value: the best hand that keeps the discard top
            if mask[PASS] and pot == 0.0 and obs[off[E.TAKE_VALUE]] <= v:
                action = PASS
            elif q_take > q_stock + cfg[C_TAKE_MARGIN]:
                action = DRAW_DISCARD
            else:
                action = DRAW_STOCK
    elif phase == 1 or phase == 2:
        best = -1e18
        deny = cfg[C_DENY] if nxt >= 0 else 0.0  # what throwing a card of a suit the next opponent collects costs
        for i in range(nh):
            card = hand[i]
            if not mask[DISCARD0 + card]:
                continue
            i0, i1, i2 = _keep_index(i)
            if phase == 1:
                score = _score(hand[i0], hand[i1], hand[i2], w, scratch, nlive, params, lut)
            else:  # two cards kept, the stock card comes next: average over the live cards
                score = _draw_total(hand[i0], hand[i1], scratch, params, lut) / max(nlive, 1)
            if deny != 0.0 and scratch[KNOWN_SUM + 4 * nxt + params[P_SUIT_OF + card]] != 0:
                score -= deny * 2 * params[P_VALUES + card]
            score -= 1e-3 * params[P_VALUES + card]  # ties: throw the lower card
            if score > best:
                best = score
                action = DISCARD0 + card
    if action < 0 or not mask[action]:
        action = _first_legal(mask)
    return action


def _heuristic_rows(lo, hi, obs, mask, off, params, n, table, cfg, lut, out):
    # scratch per call (a chunk of rows), not per row: a [B, SCRATCH] array is megabytes of fresh pages
    # to fault in on every call, which cost more than the decisions themselves
    hand, scratch, seen = np.empty(4, np.int64), np.empty(SCRATCH, np.int64), np.empty(MAXD, np.int8)
    for b in range(lo, hi):
        out[b] = _heuristic_row(obs[b], mask[b], off, params, n, table, cfg, lut, hand, scratch, seen)


_heuristic_batch = jit_variants(_heuristic_rows)


def _heuristic_turns(lo, hi, states, rngs, decks, eparams, autoreset, eoff, obs, masks, players, rewards, dones,
                     escratch, rows, actions, restart, seat, learner_rewards, ended, scale, out, final, off, params, n,
                     table, cfg, lut):
    """At each table ``b`` of ``rows[lo:hi]``: ``seat[b]`` plays ``actions[b]`` (an empty ``actions``: it has
    no move to make), then every other seat its whole turns, decided and stepped in one compiled loop, until
    ``seat[b]`` is to act again or the episode ends (``ended[b]``); ``seat[b]``'s rewards go to
    ``learner_rewards[b]`` (set by its move, else added to). Where ``restart[b]`` (a non-empty ``restart``),
    a new episode is dealt instead of the move, and dealt again until ``seat[b]`` gets a move in it
    (``learner_rewards[b]`` 0). An episode that ends writes ``seat[b]``'s last observation into ``final[b]``
    (a non-empty ``final``); ``seat[b]``'s observation then (that one, at an end) divided by ``scale`` goes
    to ``out[b]`` (float32; ``out`` without columns: none). The arguments after ``hi`` up to ``escratch``
    are ``Tables.kernel_args``."""
    hand, scratch, seen = np.empty(4, np.int64), np.empty(SCRATCH, np.int64), np.empty(MAXD, np.int8)
    for r in range(lo, hi):
        b = rows[r]
        if r + 1 < hi:
            prefetch_table(rows[r + 1], states, rngs, decks, eparams, autoreset, eoff, obs, masks, players, rewards,
                           dones, escratch)
            prefetch_row(out[rows[r + 1]])
        dealt = restart.shape[0] > 0 and restart[b]
        deal, learner_moves, done = dealt, actions.shape[0] > 0 and not dealt, False
        if learner_moves:
            learner_rewards[b] = 0.0
        # one call site each for the engine's step and reset: every inlined copy costs compile time
        while True:
            if deal:
                restart_row(b, states, rngs, decks, eparams, autoreset, eoff, obs, masks, players, rewards, dones,
                            escratch)
                deal = done = False
                continue
            if learner_moves:
                action = actions[b]
                learner_moves = False
            elif not done and players[b] != seat[b]:
                action = _heuristic_row(obs[b], masks[b], off, params, n, table, cfg, lut, hand, scratch, seen)
            elif dealt and done:  # an episode the opponents end before the learner's first move is dealt again
                deal = True
                continue
            else:
                break
            done = step_row(b, action, states, rngs, decks, eparams, autoreset, eoff, obs, masks, players, rewards,
                            dones, escratch)
            learner_rewards[b] += rewards[b, seat[b]]
        if dealt:
            learner_rewards[b] = 0.0  # what happened before the learner's first move is not its reward
        ended[b] = done
        row = obs[b]
        if done and final.shape[0] > 0:
            observe_row(b, seat[b], states, eparams, eoff, final[b])
            row = final[b]
        dest = out[b]
        for j in range(dest.shape[0]):
            dest[j] = np.float32(row[j]) / scale[j]


_heuristic_turns_batch = jit_variants(_heuristic_turns)
NO_MOVES, NO_RESTARTS = np.zeros(0, np.int64), np.zeros(0, np.bool_)


class HeuristicAgent(BaseAgent):
    """Card counting, denial and simulation-derived knock thresholds (see the module docstring).

    ``table`` replaces the knock thresholds (int [MAXP + 1, TMAX], doubled values), ``cfg`` the
    tuning knobs ``(potential weight, deny, take margin, knock shift)``.
    """

    def __init__(
        self,
        rules: str | Rules = "scat",
        num_players: int = 2,
        seed: int | None = None,
        table: np.ndarray | None = None,
        cfg: tuple[float, ...] = DEFAULT_CFG,
    ):
        super().__init__(rules, num_players, seed)
        self.table = knock_table(self.rules) if table is None else np.asarray(table, np.int64)
        if self.table.shape != (MAXP + 1, TMAX):
            raise ValueError(f"table must have shape ({MAXP + 1}, {TMAX}), got {self.table.shape}")
        self.cfg = np.asarray(cfg, np.float64)
        if self.cfg.shape != (4,):
            raise ValueError(f"cfg must hold 4 numbers, got {cfg!r}")
        self.lut = rank_tables(self.rules)

    def act(self, obs: dict) -> int:
        row, mask = self._check_one(obs)
        args = (self.offsets, self.params, self.num_players, self.table, self.cfg, self.lut)
        return int(_heuristic_row(row, mask, *args, np.empty(4, np.int64), np.empty(SCRATCH, np.int64),
                                  np.empty(MAXD, np.int8)))

    def act_batch(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        obs, mask = self._check_batch(obs, mask)
        out = np.empty(obs.shape[0], np.int64)
        _heuristic_batch.run(len(obs), len(obs) >= PARALLEL_FROM, obs, mask, self.offsets, self.params,
                             self.num_players, self.table, self.cfg, self.lut, out)
        return out

    def play_turns(self, tables: Tables, rows: np.ndarray, seat: np.ndarray, rewards: np.ndarray,
                   ended: np.ndarray, actions: np.ndarray | None = None, restart: np.ndarray | None = None,
                   scale: np.ndarray | None = None, out: np.ndarray | None = None,
                   final: np.ndarray | None = None) -> None:
        """This agent in every seat but ``seat[b]`` at each table ``b`` of ``rows``: whole turns, decided
        and stepped in one compiled loop, until ``seat[b]`` is to act or the episode ends (``ended[b]``
        set); ``seat[b]``'s rewards meanwhile are added to ``rewards[b]``. The same moves as ``act_batch``
        turn by turn, without a round trip to Python per decision (``ThirtyOneVectorEnv`` uses it).

        A whole ``ThirtyOneVectorEnv.step`` in one pass over the tables: with ``actions``, ``seat[b]`` first
        plays ``actions[b]`` (checked by the caller; ``rewards[b]`` is then this step's alone); tables where
        ``restart[b]`` get a new episode instead, dealt until ``seat[b]`` has a move (reward 0); with ``out``,
        ``seat[b]``'s observation afterwards, divided by ``scale``, lands in ``out[b]`` (float32), and with
        ``final`` an episode's last observation also in ``final[b]`` (int8)."""
        if (tables.rules, tables.num_players, tables.obs_dim) != (self.rules, self.num_players, self.obs_dim):
            raise ValueError(f"{self!r} cannot play tables of {tables.rules.name}, {tables.num_players} players")
        if out is None:
            scale, out = np.zeros(0, np.float32), np.zeros((tables.num_tables, 0), np.float32)
        if final is None:
            final = np.zeros((0, 0), np.int8)
        _heuristic_turns_batch.run(len(rows), len(rows) >= PARALLEL_FROM, *tables.kernel_args, rows,
                                   NO_MOVES if actions is None else actions,
                                   NO_RESTARTS if restart is None else restart, seat, rewards, ended, scale, out,
                                   final, self.offsets, self.params, self.num_players, self.table, self.cfg, self.lut)
