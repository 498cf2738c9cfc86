"""Self-play PPO, checkpoints, PolicyAgent and the ``thirtyone`` CLI."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agents.policy import PolicyAgent, export_policy, load_checkpoint  # noqa: E402
from thirtyone_env import thirtyone_v0  # noqa: E402
from thirtyone_env.evaluation import seating_plan, tournament, wilson  # noqa: E402
from thirtyone_env.vector import VectorThirtyOne  # noqa: E402
from train import ppo  # noqa: E402
from train.cli import deal_outcome, main  # noqa: E402
from train.evaluate import add_ratings  # noqa: E402


def tiny_args(out: Path, **overrides) -> ppo.Args:
    values = dict(out=str(out), num_envs=32, num_steps=16, total_decisions=32 * 16 * 4, bc_decisions=2048,
                  bc_epochs=1, eval_matches=16, eval_every_minutes=1e6, checkpoint_minutes=0.0,
                  snapshot_every=2, progress=False, threads=1, seed=3)
    values.update(overrides)
    return ppo.Args(**values)


# -- GAE along each seat's own decisions ---------------------------------------------------
def test_gae_per_seat_follows_each_seats_decisions_and_cuts_at_match_end():
    # one table, two seats: seat 0 acts at t=0,1 and 4; seat 1 at t=2,3; the match ends at t=4
    seats = np.array([[0], [0], [1], [1], [0], [1]])
    dones = np.array([[0], [0], [0], [0], [1], [0]], bool)
    rewards = np.zeros((6, 1, 2), np.float32)
    rewards[4, 0] = [1.0, -1.0]
    values = np.array([[0.1], [0.2], [0.3], [0.4], [0.5], [0.6]], np.float32)
    boot = np.array([[0.9, 0.7]], np.float32)
    adv = np.zeros((6, 1), np.float32)
    ppo.gae_per_seat(rewards, dones, seats, values, boot, 1.0, 1.0, adv)
    # seat 0: t=4 is terminal with +1, so with lambda = 1 every earlier advantage is 1 - value
    assert adv[4, 0] == pytest.approx(1.0 - 0.5)
    assert adv[1, 0] == pytest.approx(1.0 - 0.2)
    assert adv[0, 0] == pytest.approx(1.0 - 0.1)
    # seat 1: its last decision (t=3) before the end receives -1; t=5 is a new match bootstrapped
    assert adv[3, 0] == pytest.approx(-1.0 - 0.4)
    assert adv[2, 0] == pytest.approx(-1.0 - 0.3)
    assert adv[5, 0] == pytest.approx(0.7 - 0.6)


def test_deal_shaping_is_zero_sum_and_skips_finished_tables():
    before = np.array([[3, 3, 3], [3, 3, 3]], np.float32)
    after = np.array([[1, 3, 3], [2, 3, 3]], np.float32)
    shaped = ppo.shaping_reward(before, after, np.array([False, True]), 0.5)
    assert shaped[0].sum() == pytest.approx(0.0)
    assert shaped[0, 0] == pytest.approx(0.5 * -2)
    assert shaped[0, 1] == pytest.approx(0.5 * 1)
    assert (shaped[1] == 0).all()


# -- the residual policy over HeuristicAgent ---------------------------------------------------
@pytest.mark.parametrize("num_players", [2, 4])
def test_untrained_residual_policy_plays_exactly_like_its_advisor(num_players):
    from agents.heuristic import HeuristicAgent
    from agents.policy import PolicyNet

    env = VectorThirtyOne(128, num_players, "scat", seed=4)
    torch.manual_seed(0)
    net = PolicyNet(env.obs_dim, env.num_actions, env.obs_scale, 32, advice=True)
    agent, advisor = PolicyAgent(net, "scat", num_players), HeuristicAgent("scat", num_players)
    obs, mask, _ = env.reset()
    for _ in range(100):
        actions = agent.act_batch(obs, mask)
        np.testing.assert_array_equal(actions, advisor.act_batch(obs, mask))
        obs, mask, *_ = env.step(actions)


def test_residual_policy_needs_advice_and_departs_from_it_when_trained_to():
    from agents.policy import PolicyNet

    env = VectorThirtyOne(8, 2, "scat", seed=5)
    obs, mask, _ = env.reset()
    net = PolicyNet(env.obs_dim, env.num_actions, env.obs_scale, 16, advice=True)
    with pytest.raises(ValueError, match="advice"):
        net.act(obs, mask)
    first_legal = mask.argmax(1)
    other = np.array([np.flatnonzero(m)[-1] for m in mask])
    with torch.no_grad():  # a large actor bias on the last legal action outweighs the advice bonus
        net.actor.bias.zero_()
        net.actor.bias[other[0]] = 10.0
    acted = net.act(obs[:1], mask[:1], advice=first_legal[:1])
    assert acted[0] == other[0] != first_legal[0]


# -- a tiny run end to end -------------------------------------------------------------------
def test_tiny_run_writes_a_checkpoint_that_loads_and_plays_legally(tmp_path):
    path = ppo.train(tiny_args(tmp_path / "run"))
    rows = (tmp_path / "run" / "progress.csv").read_text().count("\n")
    assert path.is_file() and rows == 6  # the header, the starting policy's evaluation, 4 updates
    ckpt = load_checkpoint(path)
    assert ckpt["decisions"] == 32 * 16 * 4 and ckpt["updates"] == 4
    agent = PolicyAgent.load(path)
    env = thirtyone_v0.env(num_players=2, rules="scat")
    env.reset(seed=1)
    for _ in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        action = None if term or trunc else agent.act(obs)
        if action is not None:
            assert obs["action_mask"][action] == 1
        env.step(action)
    vec = VectorThirtyOne(64, 2, "scat", seed=2)
    obs, mask, _ = vec.reset()
    for _ in range(200):
        actions = agent.act_batch(obs, mask)
        assert mask[np.arange(64), actions].all()
        obs, mask, _, _, _ = vec.step(actions)


def test_init_from_fine_tunes_a_trained_policy_and_refuses_a_mismatched_one(tmp_path):
    first = ppo.train(tiny_args(tmp_path / "first"))
    exported = export_policy(first, tmp_path / "first.pt")
    tuned = ppo.train(tiny_args(tmp_path / "tuned", init_from=str(exported), total_decisions=32 * 16,
                                learning_rate=0.0))
    before, after = load_checkpoint(first)["model"], load_checkpoint(tuned)["model"]
    assert all(torch.equal(before[key], after[key]) for key in before), "lr 0: the weights must be the source's"
    with pytest.raises(ValueError, match="hidden 128, this run 8 \\(a policy can be widened, not narrowed\\)"):
        ppo.train(tiny_args(tmp_path / "narrow", init_from=str(exported), hidden=8))
    with pytest.raises(ValueError, match="players 2, this run 3"):
        ppo.train(tiny_args(tmp_path / "p3", init_from=str(exported), num_players=3))
    with pytest.raises(ValueError, match="rules option name is 'scat', this run 'italian'"):
        ppo.train(tiny_args(tmp_path / "it", init_from=str(exported), preset="italian"))


def test_resume_after_a_kill_continues_exactly_from_the_checkpoint(tmp_path, monkeypatch):
    whole = ppo.train(tiny_args(tmp_path / "whole"))
    real_save = ppo.RunState.save
    calls = []

    def save_then_die(state, path):
        real_save(state, path)
        calls.append(state.updates)
        if len(calls) == 2:
            raise KeyboardInterrupt  # the process is killed right after its second checkpoint

    monkeypatch.setattr(ppo.RunState, "save", save_then_die)
    with pytest.raises(KeyboardInterrupt):
        ppo.train(tiny_args(tmp_path / "killed"))
    monkeypatch.setattr(ppo.RunState, "save", real_save)
    assert load_checkpoint(tmp_path / "killed" / "last.pt")["updates"] == 2
    resumed = ppo.train(tiny_args(tmp_path / "killed"), resume=True)
    a, b = load_checkpoint(whole), load_checkpoint(resumed)
    assert b["updates"] == 4 and b["decisions"] == a["decisions"]
    logged = [line.split(",")[1] for line in (tmp_path / "killed" / "progress.csv").read_text().splitlines()[1:]]
    assert logged == ["0", "1", "2", "3", "4"]  # the start, then no row twice, none lost
    for key in a["model"]:
        assert torch.equal(a["model"][key], b["model"][key]), key


def test_corrupt_foreign_and_mismatched_checkpoints_give_clear_errors(tmp_path):
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a checkpoint at all")
    with pytest.raises(ValueError, match="corrupt"):
        PolicyAgent.load(bad)
    foreign = tmp_path / "foreign.pt"
    torch.save({"weights": 1}, foreign)
    with pytest.raises(ValueError, match="not a thirtyone-env policy checkpoint"):
        PolicyAgent.load(foreign)
    with pytest.raises(FileNotFoundError):
        PolicyAgent.load(tmp_path / "missing.pt")
    path = ppo.train(tiny_args(tmp_path / "run", total_decisions=32 * 16))
    with pytest.raises(ValueError, match="trained for 2 players, not 4"):
        PolicyAgent.load(path, num_players=4)
    slim = export_policy(path, tmp_path / "slim.pt")
    assert slim.stat().st_size < path.stat().st_size
    assert PolicyAgent.load(slim).num_players == 2


def test_resume_refuses_a_corrupt_checkpoint_and_keeps_it(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "last.pt").write_bytes(b"\x00garbage")
    with pytest.raises(ValueError, match="corrupt"):
        ppo.train(tiny_args(run), resume=True)
    assert (run / "last.pt").read_bytes() == b"\x00garbage"


def test_a_run_saved_before_the_opponents_moves_were_observed_is_refused_with_the_way_on(tmp_path):
    from thirtyone_env import encoding

    run = tmp_path / "run"
    path = ppo.train(tiny_args(run, total_decisions=32 * 16))
    ckpt = torch.load(path, weights_only=True)
    ckpt["model"]["trunk.0.weight"] = ckpt["model"]["trunk.0.weight"][:, : encoding.obs_dim_v1(52, 2)].clone()
    torch.save(ckpt, path)
    saved = path.read_bytes()
    with pytest.raises(ValueError, match=r"saved with 383 observation entries, today's layout has 487 .* "
                                         r"--init-from .*last\.pt"):
        ppo.train(tiny_args(run), resume=True)
    assert path.read_bytes() == saved
    assert PolicyAgent.load(path).net.obs_dim == 487  # its weights still load, for --init-from


# -- evaluation -----------------------------------------------------------------------------------
def test_lineups_rotate_seats_and_one_vs_rest_keeps_one_focus_seat():
    rot = seating_plan(2, 2, 4, "rotate")
    assert rot.tolist() == [[0, 1], [1, 0], [0, 1], [1, 0]]
    ovr = seating_plan(2, 4, 4, "one-vs-rest")
    assert (ovr == 0).sum(1).tolist() == [1, 1, 1, 1]
    assert [row.tolist().index(0) for row in ovr] == [0, 1, 2, 3]


def test_wilson_interval_brackets_the_rate():
    lo, hi = wilson(650, 1000)
    assert lo < 0.65 < hi and hi - lo == pytest.approx(0.059, abs=0.002)


def test_tournament_is_reproducible_and_greedy_beats_random_in_wins_and_rating():
    from agents import GreedyAgent, RandomAgent

    def run():
        return add_ratings(tournament([GreedyAgent("scat", 2), RandomAgent("scat", 2, seed=0)], "scat", 2, 200, seed=4))

    first, second = run(), run()
    assert np.array_equal(first.match_rewards, second.match_rewards)
    greedy = first.results[0]
    assert greedy.matches == 200 and greedy.ci[0] > 0.8
    assert greedy.rating > first.results[1].rating
    assert "win rate" in first.table()


# -- the command line -----------------------------------------------------------------------------
def test_cli_rejects_bad_arguments_with_a_message(capsys):
    assert main(["train", "--players", "12", "--minutes", "1"]) == 2
    assert "outside the 'scat' range 2..9" in capsys.readouterr().err
    assert main(["eval", "--agents", "bogus", "greedy"]) == 2
    assert "unknown agent 'bogus'" in capsys.readouterr().err
    assert main(["eval", "--agents", "policy:/no/such.pt", "greedy"]) == 2
    assert "no checkpoint" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["train", "--preset", "poker"])
    assert exc.value.code == 2


def test_cli_eval_prints_the_table_and_writes_the_plot(tmp_path, capsys):
    png = tmp_path / "ratings.png"
    code = main(["eval", "--agents", "greedy", "random", "--players", "3", "--matches", "60", "--plot", str(png)])
    out = capsys.readouterr().out
    assert code == 0 and "greedy" in out and "95% CI" in out
    assert png.stat().st_size > 1000


def test_cli_play_runs_a_match_from_scripted_input(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.StringIO("1\n" * 5000))
    assert main(["play", "--players", "2", "--opponents", "greedy", "--seed", "5"]) == 0
    assert "Match over" in capsys.readouterr().out


def test_deal_outcome_names_payments_and_players_going_out():
    before = {"player_0": {"chips": 0, "in_play": 1}, "player_1": {"chips": 2, "in_play": 1},
              "player_2": {"chips": 3, "in_play": 1}}
    # player_0 pays on honor: no chip to lose, but it is out
    after = {"player_0": {"chips": 0, "in_play": 0}, "player_1": {"chips": 1, "in_play": 1},
             "player_2": {"chips": 3, "in_play": 1}}
    assert deal_outcome(before, after, "lives") == "player_0 out, player_1 -1 (lives)"
    assert deal_outcome(before, before, "chips") == "no change (chips)"


def test_cli_play_reports_every_lives_deal_with_a_payment(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.StringIO("1\n" * 5000))
    assert main(["play", "--players", "5", "--opponents", "pretrained", "--seed", "3"]) == 0
    deals = [line for line in capsys.readouterr().out.splitlines() if "over:" in line]
    assert len(deals) > 3 and sum(line.count(" out") for line in deals) == 4  # all but the winner; two may go at once
    assert not any("no change" in line for line in deals)  # every lives deal makes someone pay


def test_pretrained_policies_ship_with_the_package_and_play_legally():
    shipped = PolicyAgent.available()
    assert {"scat_2p", "scat_3p", "scat_4p"} <= set(shipped)
    for name in shipped:
        preset, players = name.rsplit("_", 1)
        n = int(players.removesuffix("p"))
        agent = PolicyAgent.pretrained(preset, n)
        assert agent.num_players == n and agent.rules.name == preset
        vec = VectorThirtyOne(32, n, preset, seed=n)
        obs, mask, _ = vec.reset()
        for _ in range(100):
            actions = agent.act_batch(obs, mask)
            assert mask[np.arange(32), actions].all()
            obs, mask, _, _, _ = vec.step(actions)
    with pytest.raises(ValueError, match="no pretrained policy for 'italian' with 5 players"):
        PolicyAgent.pretrained("italian", 5)
