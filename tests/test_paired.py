"""Duplicate (paired) evaluation: every deck stream once per seat, paired intervals and differences."""

from __future__ import annotations

import numpy as np
import pytest

from agents import GreedyAgent, HeuristicAgent, RandomAgent
from thirtyone_env.evaluation import duplicate, load_paired, paired, paired_interval, play_matches, pool_paired
from train.cli import main


@pytest.mark.parametrize("preset, n", [("scat", 2), ("russian", 3), ("swedish", 2)])
def test_an_agent_against_itself_wins_exactly_its_fair_share_on_every_stream(preset, n):
    # the n matches of a stream are one game seen from each seat: the focus shares sum to one
    me = HeuristicAgent(preset, n)
    shares = duplicate(me, me, preset, n, deals=12, seed=3, num_tables=5)
    assert shares.shape == (12, n)
    np.testing.assert_allclose(shares.mean(axis=1), 1 / n)
    result = paired([me], me, preset, n, matches=12 * n, seed=3)
    assert result.win_rate() == pytest.approx(1 / n)
    assert result.interval() == pytest.approx((1 / n, 1 / n))


def test_both_agents_hold_the_same_cards_in_the_same_seats():
    # 2 players: A in seat r of stream k plays the very match B-focused play has with B in seat 1 - r
    a, b = GreedyAgent("scat", 2), RandomAgent("scat", 2, seed=0)
    ab = duplicate(a, b, "scat", 2, deals=10, seed=5)
    ba = duplicate(b, a, "scat", 2, deals=10, seed=5)
    np.testing.assert_allclose(ab, 1 - ba[:, ::-1])


def test_a_stream_is_dealt_once_per_seat_and_tables_do_not_matter():
    a, b = HeuristicAgent("italian", 3), GreedyAgent("italian", 3)
    few = duplicate(a, b, "italian", 3, deals=6, seed=11, num_tables=2)
    many = duplicate(a, b, "italian", 3, deals=6, seed=11, num_tables=64)
    np.testing.assert_array_equal(few, many)
    # the same as playing the seat plans by hand, stream k three times
    plan = np.array([[0, 1, 1], [1, 0, 1], [1, 1, 0]] * 6)
    rewards = play_matches([a, b], plan, "italian", seed=11, streams=np.repeat(np.arange(6), 3))
    focus = np.tile(np.arange(3), 6)
    winners = np.isclose(rewards, rewards.max(axis=1, keepdims=True), atol=1e-6)
    np.testing.assert_allclose(few.reshape(-1), (winners / winners.sum(axis=1, keepdims=True))[np.arange(18), focus])


def test_the_paired_difference_of_two_copies_is_exactly_zero_and_a_real_one_is_measured():
    opponent = GreedyAgent("scat", 2)
    result = paired([HeuristicAgent("scat", 2), HeuristicAgent("scat", 2), RandomAgent("scat", 2, seed=1)], opponent,
                    "scat", 2, matches=60, seed=2, names=["h1", "h2", "random"], opponent_name="greedy")
    assert result.deals == 30 and result.matches == 60
    assert result.difference(0, 1) == (0.0, 0.0, 0.0)
    mean, lo, hi = result.difference(0, 2)
    assert mean == pytest.approx(result.win_rate(0) - result.win_rate(2))
    assert lo > 0.3  # the heuristic beats random play by far, on the same decks
    text = result.table()
    assert "duplicate: 30 deck streams x 2 seats = 60 matches per agent against greedy" in text
    assert "difference h1 - random" in text


def test_paired_interval():
    mean, lo, hi = paired_interval(np.array([0.0, 1.0, 0.5, 0.5]))
    assert mean == 0.5 and lo < 0.5 < hi and hi - 0.5 == pytest.approx(1.96 * np.std([0, 1, 0.5, 0.5], ddof=1) / 2)
    with pytest.raises(ValueError, match="at least two streams"):
        paired_interval(np.array([1.0]))


def test_bad_input_is_named():
    me = GreedyAgent("scat", 2)
    with pytest.raises(ValueError, match="matches=3 is invalid"):
        paired([me], me, "scat", 2, matches=3)
    with pytest.raises(ValueError, match="needs act_batch"):
        paired([object()], me, "scat", 2, matches=8)
    with pytest.raises(ValueError, match="names: expected 1 names"):
        paired([me], me, "scat", 2, matches=8, names=["a", "b"])
    with pytest.raises(ValueError, match="deals=0 is invalid"):
        duplicate(me, me, "scat", 2, deals=0)
    with pytest.raises(ValueError, match="one stream per match"):
        play_matches([me], np.zeros((4, 2), np.int64), "scat", streams=np.arange(3))


def test_cli_eval_paired(capsys):
    argv = ["eval", "--paired", "--agents", "heuristic", "greedy", "random", "--matches", "20", "--seed", "4"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "10 deck streams x 2 seats = 20 matches per agent against random" in out
    assert "difference heuristic - greedy" in out
    assert main(["eval", "--paired", "--agents", "heuristic"]) == 2
    assert "--paired needs at least two agents" in capsys.readouterr().err


def _two_seeds(preset="russian", n=3):
    a, b, opponent = HeuristicAgent(preset, n), GreedyAgent(preset, n), RandomAgent(preset, n, seed=0)
    return [paired([a, b], opponent, preset, n, matches=8 * n, seed=seed, names=["h", "g"], opponent_name="random")
            for seed in (3, 4)]


def test_saved_streams_load_back_exactly(tmp_path):
    result = _two_seeds()[0]
    path = result.save(tmp_path / "runs" / "h_vs_random.npz")
    back = load_paired(path)
    assert (back.rules, back.num_players, back.names, back.opponent, back.seeds) == (
        result.rules, 3, ["h", "g"], "random", (3,))
    for a in range(2):
        np.testing.assert_array_equal(back.shares[a], result.shares[a])
    assert back.table() == result.table()
    assert not list((tmp_path / "runs").glob("*.partial"))
    with pytest.raises(FileExistsError, match="never overwritten"):
        result.save(path)
    np.testing.assert_array_equal(load_paired(path).shares[0], result.shares[0])  # the refused save changed nothing


def test_pooled_seeds_give_one_interval_over_all_their_streams():
    first, second = _two_seeds()
    pooled = pool_paired([first, second])
    assert pooled.seeds == (3, 4) and pooled.deals == 16 and pooled.matches == 48
    diffs = np.concatenate([r.shares[0].mean(axis=1) - r.shares[1].mean(axis=1) for r in (first, second)])
    assert pooled.difference(0, 1) == paired_interval(diffs)
    assert pooled.win_rate(1) == pytest.approx((first.win_rate(1) + second.win_rate(1)) / 2)
    assert "(seeds 3, 4 pooled; fair share 0.333)" in pooled.table()
    # a pool of a pool with a third seed is the pool of all three
    third = paired([HeuristicAgent("russian", 3), GreedyAgent("russian", 3)], RandomAgent("russian", 3, seed=0),
                   "russian", 3, matches=6, seed=5, names=["h", "g"], opponent_name="random")
    np.testing.assert_array_equal(pool_paired([pooled, third]).shares[1],
                                  pool_paired([first, second, third]).shares[1])


def test_pooling_refuses_what_would_not_be_one_measurement():
    first, second = _two_seeds()
    with pytest.raises(ValueError, match=r"seed\(s\) \[3\] appear in more than one run"):
        pool_paired([first, second, first])
    other = paired([GreedyAgent("russian", 3), GreedyAgent("russian", 3)], RandomAgent("russian", 3, seed=0),
                   "russian", 3, matches=6, seed=9, names=["g", "g2"], opponent_name="random")
    with pytest.raises(ValueError, match="different agents"):
        pool_paired([first, other])
    scat = paired([HeuristicAgent("scat", 3), GreedyAgent("scat", 3)], RandomAgent("scat", 3, seed=0), "scat", 3,
                  matches=6, seed=9, names=["h", "g"], opponent_name="random")
    with pytest.raises(ValueError, match="different rules"):
        pool_paired([first, scat])
    with pytest.raises(ValueError, match="at least one result"):
        pool_paired([])


def test_a_damaged_streams_file_is_named_and_refused(tmp_path):
    path = _two_seeds()[0].save(tmp_path / "good.npz")
    data = path.read_bytes()
    (tmp_path / "cut.npz").write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="cut.npz is not a saved paired-streams file"):
        load_paired(tmp_path / "cut.npz")
    with pytest.raises(FileNotFoundError, match="missing.npz: no such file"):
        load_paired(tmp_path / "missing.npz")
    with np.load(path) as f:
        header, seeds, shares = str(f["header"]), f["stream_seeds"], f["shares"]
    np.savez(tmp_path / "format.npz", header=np.array(header.replace("paired-streams/1", "other/9")),
             stream_seeds=seeds, shares=shares)
    with pytest.raises(ValueError, match="expected 'thirtyone-paired-streams/1'"):
        load_paired(tmp_path / "format.npz")
    np.savez(tmp_path / "range.npz", header=np.array(header), stream_seeds=seeds, shares=shares + 2)
    with pytest.raises(ValueError, match=r"win shares outside \[0, 1\]"):
        load_paired(tmp_path / "range.npz")
    np.savez(tmp_path / "dtype.npz", header=np.array(header), stream_seeds=seeds, shares=shares.astype(str))
    with pytest.raises(ValueError, match="expected floats and integers"):
        load_paired(tmp_path / "dtype.npz")
    np.savez(tmp_path / "shape.npz", header=np.array(header), stream_seeds=seeds[:-1], shares=shares)
    with pytest.raises(ValueError, match="do not fit 2 agents at 3 players"):
        load_paired(tmp_path / "shape.npz")


def test_cli_saves_streams_and_pools_them(tmp_path, capsys):
    files = [tmp_path / f"seed{s}.npz" for s in (4, 5)]
    for seed, f in zip((4, 5), files, strict=True):
        argv = ["eval", "--paired", "--agents", "heuristic", "greedy", "random", "--matches", "20", "--seed",
                str(seed), "--save-streams", str(f)]
        assert main(argv) == 0
        assert f"streams: {f}" in capsys.readouterr().out
    assert main(["pool", *map(str, files), "--out", str(tmp_path / "both.npz")]) == 0
    out = capsys.readouterr().out
    assert "20 deck streams x 2 seats = 40 matches per agent against random (seeds 4, 5 pooled" in out
    mean, lo, hi = pool_paired([load_paired(f) for f in files]).difference(0, 1)
    assert f"difference heuristic - greedy: {mean:+.4f} [{lo:+.4f}, {hi:+.4f}]" in out
    assert load_paired(tmp_path / "both.npz").seeds == (4, 5)
    # refusals come before any match is played, and name what was wrong
    assert main(["eval", "--paired", "--agents", "heuristic", "random", "--save-streams", str(files[0])]) == 2
    assert "exists; saved streams are never overwritten" in capsys.readouterr().err
    assert main(["eval", "--agents", "heuristic", "random", "--save-streams", str(tmp_path / "x.npz")]) == 2
    assert "--save-streams works with --paired" in capsys.readouterr().err
    assert main(["pool", str(files[0]), str(files[0])]) == 2
    assert "appear in more than one run" in capsys.readouterr().err
