"""Invariants under random legal play, over every preset, player count and episode kind."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from thirtyone_env import encoding
from thirtyone_env.actions import DRAW_DISCARD
from thirtyone_env.engine import OUT
from thirtyone_env.engine import layout as L
from thirtyone_env.engine.drivers import observe_row
from thirtyone_env.env import raw_env
from thirtyone_env.rules import Rules

CASES = [(name, n) for name in Rules.preset_names() for n in range(2, Rules.preset(name).max_players + 1)]
# option variants the presets do not cover; knock_min_value=31 forces long deals, so the stock refills
VARIANTS = [
    {},
    {"stock_refill": "shuffle", "knock_min_value": 31, "max_turns": 150},
    {"knock_min_value": 31, "max_turns": 150},
    {"discard_before_stock_draw": True, "may_return_discard": True},
    {"final_round_may_pass": True, "knocker_wins_ties": True, "knock_min_value": 20},
    {"three_aces": "31", "three_of_a_kind": 30, "lives": 1},
]
SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])


def decision_bound(rules: Rules, n: int, episode: str) -> int:
    """Most decisions a match can take: every lives deal costs someone a chip (or honor)."""
    deals = 1 if episode == "deal" else (rules.max_deals if rules.economy == "pot" else n * (rules.lives + 1))
    return deals * 2 * rules.max_turns


def check_table(env: raw_env, total: int) -> None:
    t = env.table
    hands = t.hands([0])[0]
    cards = np.concatenate([hands[hands >= 0], t.stock(0), t.discard_pile(0)])
    assert np.array_equal(np.sort(cards), np.arange(env.rules.deck_size))  # every card once: hands + stock + discard
    chips, status = t.chips[0], t.status[0]
    assert int(chips.sum()) + int(t.pot[0]) == total
    assert (chips >= 0).all()
    if t.finished[0]:
        return
    seat = int(t.current_player[0])
    assert status[seat] != OUT
    hand_n = (hands >= 0).sum(1)
    expected = np.where(status == OUT, 0, 3)
    if t._states[0][L.S_PHASE] == L.PH_DISCARD:  # the raw phase: a full view costs every hand's value
        expected[seat] = 4
    assert np.array_equal(hand_n, expected), (hand_n, expected)
    mask = t.mask[0]
    assert mask.any()  # the acting seat always has a legal action
    seen = np.array([env.observe(agent)["action_mask"] for agent in env.possible_agents])
    shown = np.zeros_like(seen)  # only the acting agent's observation carries its mask
    shown[env.possible_agents.index(env.agent_selection)] = mask
    assert np.array_equal(seen, shown)


@settings(max_examples=250, **SETTINGS)
@given(
    case=st.sampled_from(CASES),
    variant=st.sampled_from(VARIANTS),
    episode=st.sampled_from(["match", "deal"]),
    seed=st.integers(0, 2**31),
)
def test_random_play_keeps_the_invariants(case, variant, episode, seed):
    name, n = case
    env = raw_env(num_players=n, rules=Rules.preset(name, **variant), episode=episode)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    total = env.rules.start_chips * n
    bound = decision_bound(env.rules, n, episode)
    steps = 0
    while not env.table.finished[0]:
        check_table(env, total)
        env.step(int(rng.choice(np.flatnonzero(env.table.mask[0]))))
        steps += 1
        assert steps <= bound
        if not env.table.finished[0]:
            assert all(r == 0 for r in env.rewards.values())  # rewards only on the final step
    check_table(env, total)
    assert all(env.terminations.values()) and not any(env.truncations.values())
    final = np.array([env.rewards[a] for a in env.possible_agents])
    if episode == "match":
        check_match_rewards(env, final)
    else:
        assert final.sum() == -int(env.table.pot[0])  # net chips; what is missing lies in the pot
        assert (final == env.table.chips[0] - env.rules.start_chips).all()


def check_match_rewards(env: raw_env, final: np.ndarray) -> None:
    """Winners share +1, the others share -1 (all share: all 0); who wins follows the economy."""
    n = env.num_players
    assert final.sum() == pytest.approx(0, abs=1e-6)
    winners = final > 0
    w = int(winners.sum())
    if w == 0:
        assert (final == 0).all()
    else:
        assert final[winners] == pytest.approx(np.full(w, 1 / w))
        assert final[~winners] == pytest.approx(np.full(n - w, -1 / (n - w)))
    chips = env.table.chips[0]
    in_play = env.table.status[0] != OUT
    if env.rules.economy == "pot":
        most = chips == chips.max()
        assert (winners == most).all() or (w == 0 and most.all())
    elif in_play.sum() == 1:
        assert (winners == in_play).all()
    else:  # everyone out at once, or a drawn honor tiebreak: the co-winners were in play
        assert (winners <= in_play).all() or in_play.sum() == 0


# -- engine internals: the observation kernel on edited raw states (offsets from the layout) --
def hidden_cards(s: np.ndarray, observer: int) -> list[int]:
    """Slots (state indices) of cards ``observer`` cannot see: the stock and opponents' unknown cards."""
    n = int(s[L.S_NUM_PLAYERS])
    slots = list(range(L.S_STOCK, L.S_STOCK + int(s[L.S_STOCK_N])))
    for seat in range(n):
        if seat == observer:
            continue
        for i in range(int(s[L.S_HAND_N + seat])):
            card = int(s[L.S_HANDS + 4 * seat + i])
            if s[L.S_KNOWN + card] == 0 and s[L.S_SEEN + card] == 0:
                slots.append(L.S_HANDS + 4 * seat + i)
    return slots


def observe(env: raw_env, state: np.ndarray, seat: int) -> np.ndarray:
    """``seat``'s observation of ``state`` (a table's state row), by the kernel the env observes with."""
    out = np.empty(env.table.obs_dim, np.int8)
    observe_row(0, seat, np.ascontiguousarray(state[None]), env.table._params, env.table._offsets, out)
    return out


@settings(max_examples=150, **SETTINGS)
@given(case=st.sampled_from(CASES), seed=st.integers(0, 2**31), steps=st.integers(0, 120))
def test_hidden_cards_do_not_leak(case, seed, steps):
    name, n = case
    env = raw_env(num_players=n, rules=name)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        if env.table.finished[0]:
            break
        env.step(int(rng.choice(np.flatnonzero(env.table.mask[0]))))
    s = env.table._states[0]
    # the kernel on the live state says what the public path says
    for observer in range(n):
        assert np.array_equal(observe(env, s, observer), env.observe(f"player_{observer}")["observation"])
    for observer in range(n):
        slots = hidden_cards(s, observer)
        other = s.copy()
        other[slots] = np.roll(s[slots], 1)  # a different deal of the unseen cards
        if len(slots) >= 2:
            assert not np.array_equal(other, s)
        assert np.array_equal(observe(env, other, observer), observe(env, s, observer))
        # control: the observer's own cards do show
        own = s.copy()
        k = int(s[L.S_HAND_N + observer])
        if k and slots:
            mine = L.S_HANDS + 4 * observer
            own[mine], own[slots[0]] = s[slots[0]], s[mine]
            assert not np.array_equal(observe(env, own, observer), observe(env, s, observer))


def test_known_cards_are_shown_to_opponents():
    env = raw_env(num_players=3, rules="scat")
    env.reset(seed=3)
    seat = int(env.table.current_player[0])
    top = env.table.discard_pile(0)[-1]
    env.step(DRAW_DISCARD)
    assert top in env.table.known_cards(0, seat)
    d = env.rules.deck_size
    for observer in range(3):
        obs = env.observe(f"player_{observer}")["observation"]
        known = encoding.views(obs, d, 3)["opp_known"].reshape(2, d)
        if observer == seat:
            assert known.sum() == 0
        else:
            rel = (seat - observer - 1) % 3
            assert known[rel].nonzero()[0].tolist() == [top]
            assert known.sum() == 1


def test_soak_script_smoke():
    root = Path(__file__).resolve().parents[1]
    args = ["--matches", "35", "--deals", "35", "--pz-matches", "5", "--envs", "4"]
    script = str(root / "scripts" / "soak.py")
    out = subprocess.run([sys.executable, script, *args], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("soak ok: ") and "5 episodes through thirtyone_v0" in out.stdout
