"""``Tables``: the one Python layer over the engine state (views, rows, copies, resets, penalties)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import action_id, all_cards, same_snapshot, stack

from thirtyone_env import encoding
from thirtyone_env.actions import DRAW_DISCARD, DRAW_STOCK, KNOCK, PASS, action_name
from thirtyone_env.cards import parse_card, parse_cards
from thirtyone_env.engine import Tables, hand_value
from thirtyone_env.engine import layout as L
from thirtyone_env.engine.tables import check_dealer, check_decks, check_episode, check_illegal_action
from thirtyone_env.render import render_table
from thirtyone_env.rules import Rules
from thirtyone_env.vector import VectorThirtyOne
from thirtyone_env.view import SEAT_STATUS, TableView

VIEWS = ("current_player", "chips", "status", "finished", "deal", "turn", "dealer", "knocker", "pot", "stock_size",
         "decisions")


def random_actions(t: Tables, rng: np.random.Generator) -> np.ndarray:
    """One random legal action per table (0 where nothing is legal: a finished table)."""
    return (rng.random(t.mask.shape) * t.mask).argmax(1)


def outputs(out: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
    return tuple(x.copy() for x in out)


def play_to_a_finish(t: Tables, rng: np.random.Generator, limit: int = 5_000) -> np.ndarray:
    """Step every table with random legal actions until a step finishes some table; returns those tables."""
    for _ in range(limit):
        *_, done = t.step(random_actions(t, rng))
        if done.any():
            return np.flatnonzero(done)
    raise AssertionError("no table finished")


def check_views_match_the_tables(t: Tables, counts: np.ndarray) -> None:
    hands = t.hands()
    assert hands.shape == (t.num_tables, t.num_players, 4)
    np.testing.assert_array_equal(t.hands(np.array([t.num_tables - 1, 0])), hands[[-1, 0]])
    for i in range(t.num_tables):
        for seat in range(t.num_players):
            held = [int(c) for c in hands[i, seat] if c >= 0]
            assert held == t.hand(i, seat) and (hands[i, seat, len(held):] == -1).all()
        v = t.view(i)
        assert bool(t.finished[i]) == v.done
        if not v.done:
            assert t.current_player[i] == v.current == t.player[i]
        assert tuple(t.chips[i]) == v.chips
        assert tuple(SEAT_STATUS[x] for x in t.status[i]) == v.status
        assert (t.deal[i], t.turn[i], t.dealer[i], t.knocker[i], t.pot[i]) == (v.deal, v.turn, v.dealer, v.knocker,
                                                                                 v.pot)
        assert t.stock_size[i] == v.stock_size == len(t.stock(i))
        assert t.decisions[i] == counts[i]


# -- named views ---------------------------------------------------------------------------
def test_named_views_are_read_only():
    t = Tables(3, 3, "swedish", seed=1)
    t.reset()
    for name in VIEWS:
        view = getattr(t, name)
        assert not view.flags.writeable, name
        with pytest.raises(ValueError, match="read-only"):
            view[0] = 1
        with pytest.raises(ValueError, match="read-only"):
            view[...] = 0
    assert t.chips.shape == t.status.shape == (3, 3)
    assert all(getattr(t, name).shape == (3,) for name in VIEWS if name not in ("chips", "status"))


@pytest.mark.parametrize("rules, n", [("scat", 3), ("russian", 4)])
def test_named_views_follow_every_step(rules, n):
    t = Tables(6, n, rules, seed=3)
    refs = {name: getattr(t, name) for name in VIEWS}  # taken once, before anything happens
    t.reset()
    counts = np.zeros(6, np.int64)
    check_views_match_the_tables(t, counts)
    rng = np.random.default_rng(0)
    finished = 0
    seen_knock = False
    for _ in range(400):
        *_, done = t.step(random_actions(t, rng))
        counts += 1
        counts[done] = 0  # autoreset: a new match has taken no decision yet
        finished += int(done.sum())
        seen_knock |= bool((t.knocker >= 0).any())
        check_views_match_the_tables(t, counts)
        for name, ref in refs.items():
            assert getattr(t, name) is ref  # the same arrays: views, not copies made per step
    assert finished > 0 and seen_knock


# -- stepping some rows -------------------------------------------------------------------------
def test_step_with_rows_steps_only_those_rows():
    t = Tables(6, 2, "scat", seed=4)
    t.reset()
    rng = np.random.default_rng(1)
    just_done = play_to_a_finish(t, rng)  # the last step left rewards and done set on these tables
    assert t.rewards[just_done].any()
    rows = np.array([r for r in range(6) if r not in just_done][:2])
    twin = t.take(np.arange(6))
    before = t.snapshot()
    actions = random_actions(t, rng)
    obs, mask, player, rewards, done = t.step(actions, rows=rows)
    _, twin_mask, twin_player, twin_rewards, twin_done = twin.step(actions)  # every table
    others = np.setdiff1d(np.arange(6), rows)
    after = t.snapshot()
    for name in ("_states", "_rngs", "obs", "mask", "player"):
        assert np.array_equal(after[name][others], before[name][others]), name
    for i in rows:  # the rows did move
        assert not np.array_equal(after["_states"][i], before["_states"][i])
    assert not rewards[others].any() and not done[others].any()
    assert np.array_equal(t._states[rows], twin._states[rows])  # the stepped rows moved as a full step moves them
    for mine, full in ((mask, twin_mask), (player, twin_player), (rewards, twin_rewards), (done, twin_done)):
        assert np.array_equal(mine[rows], full[rows])
    assert np.array_equal(obs[rows], twin.obs[rows])


def test_step_with_rows_only_checks_the_actions_of_those_rows():
    t = Tables(4, 2, "scat", seed=5)
    t.reset()
    actions = t.mask.argmax(1)
    actions[2] = PASS  # illegal, but table 2 is not stepped
    t.step(actions, rows=[0, 1, 3])
    with pytest.raises(ValueError, match="table 2"):
        t.step(np.full(4, PASS), rows=[2])


# -- illegal actions --------------------------------------------------------------------------
def test_penalize_ends_only_the_offenders_match_and_starts_the_next():
    vec = VectorThirtyOne(4, 3, "scat", seed=2, illegal_action="penalize")
    vec.reset()
    rng = np.random.default_rng(3)
    for _ in range(5):  # into the match, away from a fresh deal
        vec.step(random_actions(vec, rng))
    twin = vec.take(np.arange(4), illegal_action="raise")  # the same tables, before the step
    offenders = {1: int(vec.current_player[1]), 3: int(vec.current_player[3])}
    before = vec.snapshot()
    actions = random_actions(vec, rng)
    legal = actions.copy()
    actions[1] = 999  # out of range
    actions[3] = -1
    obs, mask, player, rewards, done = vec.step(actions)
    assert done[1] and done[3]
    for i, seat in offenders.items():
        expected = np.zeros(3, np.float32)
        expected[seat] = -1
        assert np.array_equal(rewards[i], expected)
        # autoreset: table i plays a new match (its RNG stream goes on)
        assert vec.finished[i] == 0 and vec.decisions[i] == 0 and vec.turn[i] == 0 and vec.deal[i] >= 1
        assert not np.array_equal(vec._rngs[i], before["_rngs"][i])
        assert mask[i].any() and player[i] == vec.current_player[i]
    assert np.array_equal(obs[[1, 3]], vec.observe(player)[[1, 3]])
    # the other tables stepped as they would have under "raise"
    *_, twin_rewards, twin_done = twin.step(legal)
    for i in (0, 2):
        assert np.array_equal(vec._states[i], twin._states[i])
        assert np.array_equal(rewards[i], twin_rewards[i]) and done[i] == twin_done[i]


def test_penalize_step_at_and_a_pass_before_a_knock():
    t = Tables(2, 4, "russian", seed=6, illegal_action="penalize", autoreset=False)
    t.reset()
    seat = int(t.current_player[0])
    assert not t.is_legal(0, PASS)
    rewards = t.step_at(0, PASS)
    assert rewards.tolist() == [-1.0 if s == seat else 0.0 for s in range(4)]
    assert t.finished[0] and t.done[0] and not t.finished[1]
    assert not t.mask[0].any() and t.view(0).current == -1 and t.view(0).done


@pytest.mark.parametrize("rules, n, episode, autoreset", [
    ("scat", 3, "match", True), ("swedish-chips", 2, "match", True), ("italian", 4, "deal", True),
    ("russian", 2, "match", False)])
def test_step_at_steps_a_table_as_a_batch_step_does(rules, n, episode, autoreset):
    """``step_at`` (its own kernel) and ``step(rows=[i])`` (the batch loop): the same table after every step,
    illegal actions (forfeits) and finished matches (autoreset, or left as they are) included."""
    one, batch = (Tables(3, n, rules, seed=5, episode=episode, illegal_action="penalize", autoreset=autoreset)
                  for _ in range(2))
    one.reset(), batch.reset()
    rng, finished = np.random.default_rng(8), 0
    for step in range(600):
        i = step % 3
        action = int(random_actions(one, rng)[i]) if step % 50 else PASS  # PASS: now and then illegal, a forfeit
        rewards = one.step_at(i, action).copy()
        actions = np.zeros(3, np.int64)
        actions[i] = action
        *_, batch_rewards, done = batch.step(actions, rows=[i])
        finished += int(done[i])
        assert np.array_equal(rewards.astype(np.float32), batch_rewards[i]) and one.done[i] == done[i]
        for name in ("_states", "_rngs", "obs", "mask", "player"):
            assert np.array_equal(getattr(one, name)[i], getattr(batch, name)[i]), (step, name)
        if not autoreset and done[i]:
            one.reset(rows=[i]), batch.reset(rows=[i])
    assert finished >= 3


def test_raise_names_the_legal_ids_and_changes_no_table():
    t = Tables(3, 2, "scat", seed=7)
    t.reset()
    before = t.snapshot()
    actions = t.mask.argmax(1)
    actions[1] = KNOCK + 1  # PASS: never legal before a knock
    legal = np.flatnonzero(t.mask[1]).tolist()
    names = ", ".join(action_name(a) for a in legal)
    with pytest.raises(ValueError) as err:
        t.step(actions)
    assert f"table 1: action {PASS}, legal {legal} ({names})" in str(err.value)
    assert "table 0" not in str(err.value) and "table 2" not in str(err.value)
    assert same_snapshot(t.snapshot(), before)
    with pytest.raises(ValueError, match=r"illegal action 3 for player_\d; legal action ids: \[0, 1"):
        t.step_at(1, PASS)
    assert same_snapshot(t.snapshot(), before)
    for bad in (1.5, None, "0", -1, 10**30, PASS, t.num_actions):
        assert not t.is_legal(0, bad)
    assert t.is_legal(0, DRAW_STOCK) and t.is_legal(0, np.int16(DRAW_DISCARD))


# -- copies --------------------------------------------------------------------------------------
@pytest.mark.parametrize("rules, n, episode", [("scat", 3, "match"), ("italian", 4, "deal")])
def test_take_copies_play_on_like_the_originals(rules, n, episode):
    t = Tables(8, n, rules, seed=5, episode=episode)
    t.reset()
    rng = np.random.default_rng(4)
    for _ in range(30):
        t.step(random_actions(t, rng))
    rows = np.array([2, 5, 7])
    copy = t.take(rows)
    assert copy.num_tables == 3 and copy.rules == t.rules and copy.episode == episode
    assert np.array_equal(copy.obs, t.obs[rows]) and np.array_equal(copy.mask, t.mask[rows])
    for k, i in enumerate(rows):
        assert copy.view(k) == t.view(i)
    finished = 0
    for _ in range(300):
        actions = random_actions(t, rng)
        full = t.step(actions)
        part = copy.step(actions[rows])
        for x, y in zip(full, part, strict=True):
            assert np.array_equal(x[rows], y)
        finished += int(part[-1].sum())
    assert finished >= 2  # the copies' RNGs came along: the next matches are the same too
    assert np.array_equal(copy._states, t._states[rows])


def test_take_is_independent_and_can_switch_observations():
    full = Tables(4, 3, "scat", seed=8)
    bare = Tables(4, 3, "scat", seed=8, observe=False)
    full.reset()
    bare.reset()
    assert bare.obs.shape == (4, 0)
    seen = bare.take([1, 3], observe=True)  # observations computed from the copied state
    assert np.array_equal(seen.obs, full.obs[[1, 3]])
    blind = full.take([0], observe=False)
    assert blind.obs.shape == (1, 0)
    before = full.snapshot()
    rng = np.random.default_rng(0)
    for _ in range(20):
        seen.step(random_actions(seen, rng))
    assert same_snapshot(full.snapshot(), before)  # stepping a copy leaves the original alone


def test_snapshot_and_restore_continue_identically():
    t = Tables(5, 4, "russian", seed=9)
    t.reset()
    rng = np.random.default_rng(5)
    for _ in range(25):
        t.step(random_actions(t, rng))
    snap = t.snapshot()
    first, actions = [], []
    for _ in range(200):
        actions.append(random_actions(t, rng))
        first.append(outputs(t.step(actions[-1])))
    assert not same_snapshot(t.snapshot(), snap)  # the snapshot is a copy: it did not move
    for target in (t, Tables(5, 4, "russian", seed=123)):  # the same tables, or others of the same shape
        target.restore(snap)
        assert same_snapshot(target.snapshot(), snap)
        for a, expected in zip(actions, first, strict=True):
            for x, y in zip(target.step(a), expected, strict=True):
                assert np.array_equal(x, y)


def test_restore_refuses_a_snapshot_of_other_tables():
    t = Tables(3, 2, seed=0)
    snap = t.snapshot()
    del snap["_rngs"]
    with pytest.raises(ValueError, match="lacks"):
        t.restore(snap)
    with pytest.raises(ValueError, match="shape"):
        t.restore(Tables(4, 2, seed=0).snapshot())
    with pytest.raises(ValueError, match="shape"):
        t.restore(Tables(3, 3, seed=0).snapshot())


# -- without autoreset ------------------------------------------------------------------------
def test_without_autoreset_a_finished_table_stays_finished():
    t = Tables(4, 2, "scat", seed=10, illegal_action="penalize", autoreset=False)
    t.reset()
    rng = np.random.default_rng(6)
    done_rows = play_to_a_finish(t, rng)
    i = int(done_rows[0])
    assert t.finished[i] and not t.mask[i].any()
    frozen = t.snapshot()
    for _ in range(5):
        actions = random_actions(t, rng)
        _, _, _, rewards, done = t.step(actions)
        assert done[i] and not rewards[i].any()
        assert np.array_equal(t._states[i], frozen["_states"][i]) and np.array_equal(t._rngs[i], frozen["_rngs"][i])
    assert t.step_at(i, DRAW_STOCK).tolist() == [0.0, 0.0] and t.done[i]
    assert np.array_equal(t._states[i], frozen["_states"][i])
    t.reset(rows=[i])
    assert not t.finished[i] and t.mask[i].any() and t.decisions[i] == 0


def test_without_autoreset_raise_refuses_to_step_a_finished_table():
    t = Tables(2, 2, "scat", seed=11, autoreset=False)
    t.reset()
    rng = np.random.default_rng(7)
    while not t.finished.any():
        t.step(random_actions(t, rng), rows=np.flatnonzero(t.finished == 0))
    i = int(np.flatnonzero(t.finished)[0])
    before = t.snapshot()
    with pytest.raises(ValueError, match="the match is over; reset it"):
        t.step_at(i, DRAW_STOCK)
    with pytest.raises(ValueError, match=f"table {i}"):
        t.step(random_actions(t, rng))
    assert same_snapshot(t.snapshot(), before)


# -- resets ----------------------------------------------------------------------------------------
def test_reset_rows_resets_only_those_rows():
    t = Tables(5, 3, "scat", seed=12)
    t.reset()
    rng = np.random.default_rng(8)
    for _ in range(40):
        t.step(random_actions(t, rng))
    play_to_a_finish(t, rng)
    before = t.snapshot()
    rows, others = np.array([0, 3]), np.array([1, 2, 4])
    obs, mask, player = t.reset(rows=rows)
    after = t.snapshot()
    for name in ("_states", "_rngs", "obs", "mask", "player", "rewards", "done"):
        assert np.array_equal(after[name][others], before[name][others]), name
    assert (t.decisions[rows] == 0).all() and (t.turn[rows] == 0).all() and not t.finished[rows].any()
    assert not t.rewards[rows].any() and not t.done[rows].any()
    assert np.array_equal(obs[rows], t.observe(player)[rows])
    # a reseed of some rows: row i restarts stream i of the seed, like a fresh batch's table i
    t.reset(seed=77, rows=rows)
    fresh = Tables(5, 3, "scat", seed=77)
    fresh.reset()
    for i in rows:
        assert np.array_equal(t._states[i], fresh._states[i]) and np.array_equal(t._rngs[i], fresh._rngs[i])
    assert np.array_equal(t._states[others], after["_states"][others])


def test_reset_with_stacked_decks_and_a_dealer():
    deck = stack(["2C 3D 5H", "KS QS JS", "4C 6D 8H"], "9D", "7C", dealer=2)
    t = Tables(3, 3, "scat", seed=13, autoreset=False)
    t.reset(decks=[deck], dealer=2)
    for i in range(3):
        assert t.dealer[i] == 2 and t.current_player[i] == 0
        assert sorted(t.hand(i, 1)) == sorted(deck[1:9:3])
        assert t.discard_pile(i) == [deck[9]] and t.stock(i)[0] == deck[10]
        assert all_cards(t, i) == list(range(52))
    assert t.stock(0) != t.stock(1)  # below the stacked cards each table shuffles on its own stream
    with pytest.raises(ValueError, match="dealer"):
        t.reset(dealer=3)


def test_seed_streams_give_table_i_the_deal_of_that_stream():
    ref = Tables(8, 3, "swedish", seed=21)
    ref.reset()
    one = Tables(1, 3, "swedish", seed=21)  # stream 0
    one.reset()
    t = Tables(4, 3, "swedish", seed=0)
    streams = np.array([5, 0, 7, 2])
    t.seed_streams(np.arange(4), 21, streams)
    t.reset()
    for i, k in enumerate(streams):
        assert [t.hand(i, p) for p in range(3)] == [ref.hand(k, p) for p in range(3)]
        assert t.stock(i) == ref.stock(k) and t.discard_pile(i) == ref.discard_pile(k)
        assert same_snapshot(t.take([i]).snapshot(), ref.take([k]).snapshot())
    assert same_snapshot(t.take([1]).snapshot(), one.snapshot())
    # seeding some rows again leaves the others' streams alone
    rngs = t._rngs.copy()
    t.seed_streams(np.array([2]), 21, np.array([3]))
    assert np.array_equal(np.delete(t._rngs, 2, 0), np.delete(rngs, 2, 0))
    assert not np.array_equal(t._rngs[2], rngs[2])


# -- readers and views ----------------------------------------------------------------------
def test_readers_describe_the_table():
    deck = stack(["2C 3D 5H", "KS QS 4H"], "JS", "9C")  # dealer 0: seat 1 acts first
    t = Tables(1, 2, "scat", seed=0, autoreset=False)
    t.reset(decks=[deck], dealer=0)
    assert sorted(t.hand(0, 0)) == sorted(parse_cards("2C 3D 5H"))
    assert sorted(t.hand(0, 1)) == sorted(parse_cards("KS QS 4H"))
    assert t.hand_value(0, 1) == hand_value(parse_cards("KS QS 4H"), "scat") == 20
    assert t.discard_pile(0) == [parse_card("JS")] and t.known_cards(0, 1) == []
    t.step(np.array([DRAW_DISCARD]))
    assert t.known_cards(0, 1) == [parse_card("JS")] and t.known_cards(0, 0) == [] and t.discard_pile(0) == []
    assert t.hand_value(0, 1) == 30  # holding four: the best three
    t.step(np.array([action_id("4H")]))
    assert t.discard_pile(0) == [parse_card("4H")] and t.known_cards(0, 1) == [parse_card("JS")]
    assert t.stock(0)[0] == parse_card("9C") and len(t.stock(0)) == t.stock_size[0] == 52 - 7
    assert t.current_player[0] == 0 and all_cards(t) == list(range(52))


def test_view_for_a_seat_hides_other_hands_and_the_stock():
    t = Tables(2, 3, "scat", seed=14)
    t.reset()
    rng = np.random.default_rng(9)
    for _ in range(7):
        t.step(random_actions(t, rng))
    full = t.view(1)
    assert isinstance(full, TableView) and full.viewer is None
    assert full.hands == tuple(tuple(t.hand(1, p)) for p in range(3))
    assert full.stock == tuple(t.stock(1)) and full.discard == tuple(t.discard_pile(1))
    for seat in range(3):
        mine = t.view(1, seat)
        assert mine.viewer == seat and mine.stock is None and mine.stock_size == full.stock_size
        assert mine.hands[seat] == full.hands[seat] and mine.hand_values[seat] == full.hand_values[seat]
        assert all(mine.hands[p] is None and mine.hand_values[p] is None for p in range(3) if p != seat)
        assert (mine.discard, mine.known, mine.chips, mine.status) == (full.discard, full.known, full.chips,
                                                                       full.status)
        text = render_table(mine)
        assert text.count("?? ?? ??") == 2
        for p in range(3):
            assert (f"player_{p}: ??" in text) == (p != seat)
    assert render_table(full).count("??") == 0


def test_observe_rows_and_observe_at_agree():
    t = Tables(4, 3, "italian", seed=15)
    t.reset()
    for seat in range(3):
        seats = np.full(4, seat)
        every = t.observe(seats)
        for i in range(4):
            assert np.array_equal(every[i], t.observe_at(i, seat))
        some = t.observe(seats, rows=[2])
        assert np.array_equal(some[2], every[2]) and not some[[0, 1, 3]].any()
    assert np.array_equal(t.observe(t.current_player.astype(np.int64)), t.obs)
    views = encoding.views(t.obs, 40, 3)
    assert (views["hand"].sum(1) == 3).all()
    with pytest.raises(ValueError, match="seats"):
        t.observe(np.full(4, 3))
    state = t.global_state()
    assert state.shape == (4, t.state_dim) and state.dtype == np.int8
    assert not t.global_state(rows=[1])[[0, 2, 3]].any()


def test_seat_info_reads_the_named_views_for_each_tables_seat():
    t = Tables(6, 3, "swedish-chips", seed=21)
    t.reset()
    rng = np.random.default_rng(0)
    for _ in range(40):  # into later deals, with chips moved and seats out
        t.step(np.array([rng.choice(np.flatnonzero(m)) for m in t.mask]), check=False)
    seats = np.array([0, 1, 2, 2, 1, 0])
    deal, turn, chips, in_play = t.seat_info(seats)
    rows = np.arange(6)
    assert np.array_equal(deal, t.deal) and np.array_equal(turn, t.turn)
    assert np.array_equal(chips, t.chips[rows, seats])
    assert np.array_equal(in_play, (t.status[rows, seats] != 0).astype(np.int64))
    for bad in (np.full(6, 3), np.full(6, -1), np.zeros(5, np.int64)):
        with pytest.raises(ValueError, match="seats must be 6 seat numbers in 0..2"):
            t.seat_info(bad)


def test_outputs_have_documented_types():
    t = Tables(3, 4, "scat", seed=16)
    obs, mask, player = t.reset()
    assert obs.dtype == np.int8 and obs.shape == (3, t.obs_dim)
    assert mask.dtype == np.bool_ and mask.shape == (3, Rules.preset("scat").num_actions)
    obs, mask, player, rewards, done = t.step(mask.argmax(1))
    assert rewards.dtype == np.float32 and rewards.shape == (3, 4)
    assert done.dtype == np.bool_ and done.shape == (3,)
    assert player.shape == (3,) and np.array_equal(player, t.current_player)


# -- validation ---------------------------------------------------------------------------------
@pytest.mark.parametrize("num_tables", [0, -1, 2.0, True])
def test_bad_num_tables(num_tables):
    with pytest.raises(ValueError, match="num_tables"):
        Tables(num_tables)


@pytest.mark.parametrize("kwargs, word", [({"episode": "game"}, "episode"), ({"illegal_action": "ignore"},
                                                                              "illegal_action"),
                                          ({"num_players": 11}, "player")])
def test_bad_options(kwargs, word):
    with pytest.raises(ValueError, match=word):
        Tables(2, **kwargs)


def test_validators():
    assert check_episode("match") == 0 and check_episode("deal") == 1
    assert check_illegal_action("penalize") == "penalize"
    rules = Rules.preset("italian")
    decks = check_decks([[39, 0], list(range(40))], rules)
    assert decks.shape == (2, 52) and decks.dtype == np.int16
    assert decks[0, :3].tolist() == [39, 0, -1] and decks[1, 39] == 39 and decks[1, 40] == -1
    with pytest.raises(ValueError, match="card id 40 out of range 0..39"):
        check_decks([[40]], rules)
    with pytest.raises(ValueError, match=r"options\['decks'\]\[1\]: duplicate card"):
        check_decks([[1], [2, 2]], rules)
    assert check_dealer(None, 3) == -1 and check_dealer(-1, 3) == -1 and check_dealer(np.int8(2), 3) == 2
    for bad in (3, -2, True, 1.0, "1"):
        with pytest.raises(ValueError, match="dealer"):
            check_dealer(bad, 3)


# -- batch helpers: the legality check, card counts, stacking --------------------------------
def test_check_actions_names_the_bad_tables_of_the_rows_asked_about():
    t = Tables(8, 2, "scat", seed=17)
    t.reset()
    good = t.mask.argmax(1)
    assert t.check_actions(good) is None
    bad = np.full(8, PASS)  # never legal before a knock
    assert t.check_actions(bad, rows=[]) is None
    with pytest.raises(ValueError, match=r"illegal actions at 2 table\(s\): table 3: action 3, .*; table 6"):
        t.check_actions(np.where(np.isin(np.arange(8), [3, 6]), PASS, good))
    with pytest.raises(ValueError, match=r"at 8 table\(s\).*table 4: .* \(and 3 more tables\)$"):
        t.check_actions(bad)
    with pytest.raises(ValueError, match=r"at 1 table\(s\): table 5: action 3"):
        t.check_actions(bad, rows=[5])


def test_card_counts_find_every_card_once():
    t = Tables(6, 4, "italian", seed=18)
    t.reset()
    rng = np.random.default_rng(10)
    for _ in range(150):
        t.step(random_actions(t, rng))
        counts = t.card_counts()
        assert counts.shape == (6, 52)
        assert (counts[:, :40] == 1).all() and not counts[:, 40:].any()
    for i in range(6):
        assert np.flatnonzero(counts[i]).tolist() == all_cards(t, i)
    # engine internals: a card doubled in place of another shows as 2 and 0
    broken = t.take([0])
    hand = broken.hand(0, int(broken.current_player[0]))
    broken._states[0, L.S_STOCK + int(broken.stock_size[0]) - 1] = hand[0]
    counts = broken.card_counts()[0]
    assert counts[hand[0]] == 2 and (counts[:40] == 0).sum() == 1


def test_stack_joins_tables_that_play_on_like_their_parts():
    rng = np.random.default_rng(11)
    a = Tables(3, 3, "scat", seed=19)
    b = Tables(2, 3, "scat", seed=20)
    a.reset(decks=[list(range(10))])
    b.reset()
    for _ in range(15):
        a.step(random_actions(a, rng))
        b.step(random_actions(b, rng))
    part_a = a.take([2, 0])
    both = Tables.stack([part_a, b])  # copies: the parts play on by themselves below
    assert both.num_tables == 4 and both._decks.shape == (4, 1, 52)  # b's tables get padded decks
    assert [both.view(i) for i in range(4)] == [a.view(2), a.view(0), b.view(0), b.view(1)]
    finished = 0
    for _ in range(300):
        actions = random_actions(both, rng)
        whole = both.step(actions)
        for part, rows in ((part_a, slice(0, 2)), (b, slice(2, 4))):
            for x, y in zip(whole, part.step(actions[rows]), strict=True):
                assert np.array_equal(x[rows], y)
        finished += int(whole[-1].sum())
    assert finished >= 2
    with pytest.raises(ValueError, match="same rules"):
        Tables.stack([a, Tables(1, 3, "swedish")])
    with pytest.raises(ValueError, match="at least one"):
        Tables.stack([])
