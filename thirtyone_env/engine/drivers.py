"""Batch drivers: one loop over tables around the per-table kernels, compiled once, run serially or threaded.

Threaded over chunks of tables for large batches (both cores), serial for small ones (where
waking threads costs more than the work, badly so on a busy machine); ``jit.jit_variants``
builds both from one loop. Every driver takes the rows (table indices) to work on, so a
caller can step or reset any subset of its tables.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from thirtyone_env.engine.deal import _reset
from thirtyone_env.engine.layout import (
    MAXD,
    S_CHIPS,
    S_CURRENT,
    S_DEALS,
    S_DISCARD,
    S_DISCARD_N,
    S_DONE,
    S_EPISODE_DEAL,
    S_HAND_N,
    S_HANDS,
    S_NUM_PLAYERS,
    S_QLEN,
    S_QPOS,
    S_STATUS,
    S_STOCK,
    S_STOCK_N,
    S_TURNS,
)
from thirtyone_env.engine.observe import _global_state, _observe
from thirtyone_env.engine.turn import _forfeit, _legal_mask, _step
from thirtyone_env.jit import INLINE, JIT, jit_variants, prefetch_row


# -- one table ------------------------------------------------------------------------------
@njit(**INLINE)
def _reset_table(s, rng, decks, params, num_players, episode_deal, dealer, off, obs, mask, scratch):
    """A new match (or deal episode) from the first stacked deck; then the mask and observation."""
    s[S_QPOS] = 0
    s[S_QLEN] = decks.shape[0]
    _reset(s, rng, decks, params, num_players, episode_deal, dealer, scratch)
    _legal_mask(s, params, mask)
    if off.shape[0] > 0:
        _observe(s, params, s[S_CURRENT], off, obs)


@njit(**INLINE)
def _step_table(s, rng, decks, params, action, autoreset, off, obs, mask, rewards, scratch):
    """Play ``action`` for the seat to act; an illegal one forfeits the match (``_forfeit``).

    ``rewards`` receives this step's rewards; with ``autoreset`` a finished table starts its
    next match at once (its mask and observation are then the new match's). Returns done.
    """
    if s[S_DONE] == 1:  # a finished table without autoreset stays as it is
        rewards[:] = 0
        return True
    if 0 <= action < mask.shape[0] and mask[action]:
        _step(s, rng, decks, params, action, scratch)
    else:
        _forfeit(s, s[S_CURRENT], scratch)
    for seat in range(rewards.shape[0]):
        rewards[seat] = scratch[seat]
    done = s[S_DONE] == 1
    if done and autoreset:
        _reset(s, rng, decks, params, s[S_NUM_PLAYERS], s[S_EPISODE_DEAL], -1, scratch)
    _legal_mask(s, params, mask)
    if off.shape[0] > 0:
        _observe(s, params, s[S_CURRENT], off, obs)
    return done


@njit(**JIT)
def _step_at_lean(states, rngs, decks, params, i, action, masks, players, rewards, dones):
    """One table of a batch without observation or autoreset (the PettingZoo env's path: no loop, no
    threads): half the arguments and code of ``_step_table``, a third of the time of a step."""
    s = states[i]
    if s[S_DONE] == 1:  # a finished table stays as it is
        rewards[i, :] = 0
    elif 0 <= action < masks.shape[1] and masks[i, action]:
        _step(s, rngs[i], decks[i], params, action, rewards[i])
    else:
        _forfeit(s, s[S_CURRENT], rewards[i])
    _legal_mask(s, params, masks[i])
    dones[i] = s[S_DONE] == 1
    players[i] = s[S_CURRENT]


@njit(**JIT)
def step_row(b, action, states, rngs, decks, params, autoreset, off, obs, masks, players, rewards, dones, scratch):
    """Step table ``b`` of a batch in place; returns done. For kernels outside the engine that play whole
    turns inside one compiled loop (an agent's fused opponent turns): they get the arrays after ``b`` and
    ``action`` from ``Tables.kernel_args`` and never look inside them. Called, not inlined: a kernel that
    inlined the whole step took minutes more to compile (twice: serial and threaded), for a call that
    costs little next to a step."""
    done = _step_table(states[b], rngs[b], decks[b], params, action, autoreset, off, obs[b], masks[b], rewards[b],
                       scratch[b])
    dones[b] = done
    players[b] = states[b, S_CURRENT]
    return done


@njit(**INLINE)
def prefetch_table(b, states, rngs, decks, params, autoreset, off, obs, masks, players, rewards, dones, scratch):
    """Start fetching table ``b``'s rows into the caches (its state, observation, mask), for a kernel that steps
    many tables, one after the other: called for the next table while it works on this one, a state row
    is in the cache when its turn comes (at 4,096 tables the rows are more than the caches hold). Same
    arguments after ``b`` as ``step_row``."""
    prefetch_row(states[b])
    prefetch_row(obs[b])
    prefetch_row(masks[b])


@njit(**JIT)
def reset_row(b, states, rngs, decks, params, num_players, episode_deal, dealer, off, obs, masks, players, dones,
              scratch):
    """A new match (or deal episode) at table ``b``: the reset drivers' body and the agents' kernels'
    (``restart_row``). Called, not inlined: one compiled copy serves them all, where every inlined copy of
    the deal costs its kernel a minute of compile time, for a step taken once an episode."""
    _reset_table(states[b], rngs[b], decks[b], params, num_players, episode_deal, dealer, off, obs[b], masks[b],
                 scratch[b])
    players[b] = states[b, S_CURRENT]
    dones[b] = False


@njit(**INLINE)
def restart_row(b, states, rngs, decks, params, autoreset, off, obs, masks, players, rewards, dones, scratch):
    """A new episode at table ``b`` like its last one (players, episode kind; dealer drawn), for the same
    kernels as ``step_row`` and with the same arguments after ``b``."""
    s = states[b]
    reset_row(b, states, rngs, decks, params, np.int64(s[S_NUM_PLAYERS]), np.int64(s[S_EPISODE_DEAL]),
              np.int64(-1), off, obs, masks, players, dones, scratch)


@njit(**JIT)
def observe_row(b, seat, states, params, off, out):
    """``seat``'s observation of table ``b`` into ``out`` (int8 [obs_dim]); called, not inlined (see
    ``reset_row``)."""
    _observe(states[b], params, seat, off, out)


@njit(**JIT)
def _step_at(states, rngs, decks, params, i, action, autoreset, off, obs, masks, players, rewards, dones, scratch):
    """``_step_at_lean``, then the autoreset and the observation: ``_step_table`` for one table, put together
    from compiled calls (a copy of the inlined step cost 90 s of compile, for a path where Python's call
    dominates the time)."""
    if states[i, S_DONE] == 1:  # a finished table without autoreset stays as it is
        rewards[i, :] = 0
        dones[i] = True
        players[i] = states[i, S_CURRENT]
        return
    _step_at_lean(states, rngs, decks, params, i, action, masks, players, rewards, dones)
    s = states[i]
    if dones[i] and autoreset:
        _reset(s, rngs[i], decks[i], params, s[S_NUM_PLAYERS], s[S_EPISODE_DEAL], -1, scratch[i])
        _legal_mask(s, params, masks[i])
        players[i] = s[S_CURRENT]
    if off.shape[0] > 0:
        observe_row(i, np.int64(s[S_CURRENT]), states, params, off, obs[i])


@njit(**JIT)
def _count_illegal(actions, masks, rows):
    """Rows whose action is out of range or not legal (the fast path of the step check)."""
    bad = 0
    for r in range(rows.shape[0]):
        b = rows[r]
        a = actions[b]
        if a < 0 or a >= masks.shape[1] or not masks[b, a]:
            bad += 1
    return bad


@njit(**JIT)
def seat_info(states, seats, out):
    """Per table ``b``: deals begun, completed turns this deal, ``seats[b]``'s chips and whether it is in
    play, into ``out[0..3, b]`` (int64): a vector env's per-step info in one pass over the state rows
    (numpy's column reads and fancy indexing went over them four times)."""
    for b in range(states.shape[0]):
        s = states[b]
        out[0, b] = s[S_DEALS]
        out[1, b] = s[S_TURNS]
        out[2, b] = s[S_CHIPS + seats[b]]
        out[3, b] = s[S_STATUS + seats[b]] != 0


@njit(**JIT)
def _card_counts(states, deck_size):
    out = np.zeros((states.shape[0], MAXD), np.int64)
    for b in range(states.shape[0]):
        s = states[b]
        for seat in range(s[S_NUM_PLAYERS]):
            for i in range(s[S_HAND_N + seat]):
                out[b, s[S_HANDS + 4 * seat + i]] += 1
        for i in range(s[S_STOCK_N]):
            out[b, s[S_STOCK + i]] += 1
        for i in range(s[S_DISCARD_N]):
            out[b, s[S_DISCARD + i]] += 1
    return out


# -- many tables: loops over rows lo..hi, each compiled once and run serially or in threaded chunks -------------
def _reset_rows(lo, hi, states, rngs, decks, params, num_players, episode_deal, dealer, rows, off, obs, masks,
                players, dones, scratch):
    for r in range(lo, hi):
        reset_row(rows[r], states, rngs, decks, params, num_players, episode_deal, dealer, off, obs, masks, players,
                  dones, scratch)


def _step_rows(lo, hi, states, rngs, decks, params, rows, actions, autoreset, off, obs, masks, players, rewards,
               dones, scratch):
    for r in range(lo, hi):
        b = rows[r]
        if r + 1 < hi:
            prefetch_table(rows[r + 1], states, rngs, decks, params, autoreset, off, obs, masks, players, rewards,
                           dones, scratch)
        dones[b] = _step_table(states[b], rngs[b], decks[b], params, actions[b], autoreset, off, obs[b], masks[b],
                               rewards[b], scratch[b])
        players[b] = states[b, S_CURRENT]


def _step_all(lo, hi, states, rngs, decks, params, actions, autoreset, off, obs, masks, players, rewards, dones,
              scratch):
    """``_step_rows`` over tables ``lo..hi`` themselves: indexing by the loop variable is measurably faster
    (18% at 4096 tables with observations) than going through a rows array."""
    for b in range(lo, hi):
        if b + 1 < hi:
            prefetch_table(b + 1, states, rngs, decks, params, autoreset, off, obs, masks, players, rewards, dones,
                           scratch)
        dones[b] = _step_table(states[b], rngs[b], decks[b], params, actions[b], autoreset, off, obs[b], masks[b],
                               rewards[b], scratch[b])
        players[b] = states[b, S_CURRENT]


def _observe_rows(lo, hi, states, params, rows, seats, off, out):
    for r in range(lo, hi):
        b = rows[r]
        observe_row(b, seats[b], states, params, off, out[b])


def _global_state_rows(lo, hi, states, params, rows, off, out):
    for r in range(lo, hi):
        b = rows[r]
        _global_state(states[b], params, off, out[b])


STEP, STEP_ALL = jit_variants(_step_rows), jit_variants(_step_all)
# serial only: resets come a few tables at a time after the first, observations of any seat and global
# states are read now and then, so a threaded driver would not repay its compile
RESET, OBSERVE, GLOBAL_STATE = (jit_variants(fn, threads=False) for fn in (_reset_rows, _observe_rows,
                                                                          _global_state_rows))
