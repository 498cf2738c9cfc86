"""The parts of ``train/ppo.py`` one at a time: opponents, rollout, update, run state, logger, the train CLI."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agents.policy import CHECKPOINT_FORMAT, PolicyAgent, PolicyNet, load_checkpoint  # noqa: E402
from thirtyone_env.rules import Rules  # noqa: E402
from thirtyone_env.vector import VectorThirtyOne  # noqa: E402
from train import ppo  # noqa: E402
from train.cli import build_parser, main  # noqa: E402
from train.logger import Logger  # noqa: E402


def tiny_args(out: Path, **overrides) -> ppo.Args:
    values = dict(out=str(out), num_envs=32, num_steps=16, total_decisions=32 * 16 * 2, bc_decisions=1024,
                  bc_epochs=1, eval_matches=16, eval_every_minutes=1e6, checkpoint_minutes=1e6,
                  snapshot_every=1, progress=False, threads=1, seed=3)
    values.update(overrides)
    return ppo.Args(**values)


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Path:
    """The checkpoint of a tiny run: a frozen policy to play against."""
    return ppo.train(tiny_args(tmp_path_factory.mktemp("frozen") / "run"))


# -- --rule-based: any agent, with an optional weight ---------------------------------------------------
@pytest.mark.parametrize("spec, expected", [
    ("heuristic:3,greedy:1", {"heuristic": 3.0, "greedy": 1.0}),
    (" heuristic , greedy:2.5 ", {"heuristic": 1.0, "greedy": 2.5}),
    ("policy:agents/pretrained/scat_2p.safetensors:1", {"policy:agents/pretrained/scat_2p.safetensors": 1.0}),
    ("policy:C:\\runs\\x.pt", {"policy:C:\\runs\\x.pt": 1.0}),  # a drive letter is no weight
    ("policy:/tmp/a:b/last.pt:2", {"policy:/tmp/a:b/last.pt": 2.0}),
    ("pretrained:scat_2p,pretrained", {"pretrained:scat_2p": 1.0, "pretrained": 1.0}),
    ("random:0,heuristic:1e1", {"random": 0.0, "heuristic": 10.0}),
    ("", {}),
])
def test_parse_opponents_takes_the_weight_after_the_last_colon_only_when_it_is_a_number(spec, expected):
    assert ppo.parse_opponents(spec) == expected


@pytest.mark.parametrize("spec, message", [
    (":3", "names no agent"),
    ("heuristic:-1", "allowed: a finite number >= 0"),
    ("heuristic:nan", "allowed: a finite number >= 0"),
    ("heuristic:inf", "allowed: a finite number >= 0"),
    ("heuristic,greedy,heuristic:2", "'heuristic' is listed twice"),
    ("heuristic:0,greedy:0", "sum to 0"),
    ("policy:a/b.pt,policy:a_b.pt", "the same names"),
])
def test_parse_opponents_refuses_bad_items_naming_them(spec, message):
    with pytest.raises(ValueError, match=message):
        ppo.parse_opponents(spec)


def test_an_opponent_that_cannot_be_built_is_a_clear_error_naming_it(tmp_path):
    with pytest.raises(ValueError, match="cannot build the opponent 'bogus': unknown agent"):
        ppo.Opponents(tiny_args(tmp_path, rule_based="heuristic:2,bogus:1"), Rules.preset("scat"),
                      np.random.default_rng(0))
    with pytest.raises(ValueError, match="'policy:/no/such.pt': no checkpoint"):
        ppo.Opponents(tiny_args(tmp_path, rule_based="policy:/no/such.pt"), Rules.preset("scat"),
                      np.random.default_rng(0))


def test_building_a_policy_opponent_leaves_the_seeded_torch_stream_alone(trained, tmp_path):
    colon = tmp_path / "a:b" / "last.pt"  # a path with a colon, weight after it
    colon.parent.mkdir()
    shutil.copy(trained, colon)
    torch.manual_seed(0)
    before = torch.get_rng_state()
    opponents = ppo.Opponents(tiny_args(tmp_path, rule_based=f"policy:{colon}:2,greedy"), Rules.preset("scat"),
                              np.random.default_rng(0))
    assert torch.equal(before, torch.get_rng_state())
    assert isinstance(opponents.fixed[0][1], PolicyAgent) and opponents.fixed_weights.tolist() == [2 / 3, 1 / 3]


# -- rollout, GAE and the update -------------------------------------------------------------------------
def small_run(num_envs=16, num_steps=48, **overrides):
    args = ppo.Args(num_envs=num_envs, num_steps=num_steps, hidden=16, seed=5, **overrides)
    rules = Rules.preset(args.preset)
    torch.manual_seed(0)
    env = VectorThirtyOne(num_envs, args.num_players, rules, seed=args.seed)
    net = PolicyNet(env.obs_dim, env.num_actions, env.obs_scale, args.hidden, args.advice)
    opponents = ppo.Opponents(args, rules, np.random.default_rng(0))
    opponents.draw(np.arange(num_envs))
    buf = ppo.Rollout.zeros(num_steps, num_envs, args.num_players, env.obs_dim, env.num_actions)
    return args, env, net, opponents, buf


@pytest.mark.parametrize("shaping", [0.0, 0.5])
def test_rollout_fills_every_step_with_legal_moves_and_zero_sum_rewards(shaping):
    args, env, net, opponents, buf = small_run(rule_based="greedy", rule_based_share=0.8)
    turn, results = ppo.rollout(net, env, opponents, buf, env.reset(), shaping)
    T, B = buf.actions.shape
    assert buf.obs.shape == (T, B, env.obs_dim) and buf.rewards.shape == (T, B, args.num_players)
    rows = np.arange(B)
    for t in range(T):
        assert buf.action_masks[t, rows, buf.actions[t]].all()
    assert (buf.logprobs[buf.learner] <= 0).all() and not buf.learner.all() and buf.learner.any()
    np.testing.assert_allclose(buf.rewards.sum(-1), 0.0, atol=1e-5)  # match results and shaping are zero-sum
    settled_deals = (buf.rewards != 0).any(-1) & ~buf.dones
    assert settled_deals.any() == bool(shaping)  # shaping is the only reward before a match ends
    assert len(results) == buf.dones.sum()
    np.testing.assert_array_equal(turn[0], env.observe(turn[2]))


def test_advantages_and_returns_add_up():
    args, env, net, opponents, buf = small_run()
    ppo.rollout(net, env, opponents, buf, env.reset(), 0.1)
    advantages, returns = ppo.advantages_and_returns(net, env, buf, args)
    assert advantages.shape == buf.values.shape and np.isfinite(advantages).all()
    np.testing.assert_allclose(returns - buf.values, advantages, atol=1e-6)


@pytest.mark.parametrize("value_only", [True, False])
def test_ppo_update_trains_the_critic_and_the_policy_only_when_asked(value_only):
    args, env, net, opponents, buf = small_run(update_epochs=2, num_minibatches=3)
    ppo.rollout(net, env, opponents, buf, env.reset(), 0.1)
    advantages, returns = ppo.advantages_and_returns(net, env, buf, args)
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3, eps=ppo.ADAM_EPS)
    before = {k: v.clone() for k, v in net.state_dict().items()}
    stats = ppo.ppo_update(net, optimizer, buf, advantages, returns, args, value_only=value_only)
    assert set(stats) == {"pg_loss", "v_loss", "entropy", "approx_kl", "clipfrac"}
    assert all(np.isfinite(v) for v in stats.values())
    changed = {k for k, v in net.state_dict().items() if not torch.equal(v, before[k])}
    assert "critic.weight" in changed
    assert ("actor.weight" in changed) != value_only


# -- checkpoints -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("advice", [False, True])
def test_widening_a_policy_keeps_its_play_and_values_and_trains_the_added_units(advice):
    rules = Rules.preset("scat")
    env = VectorThirtyOne(64, 2, rules, seed=4)
    obs, mask, _ = env.reset(seed=4)
    torch.manual_seed(0)
    small = PolicyNet(env.obs_dim, env.num_actions, env.obs_scale, 16, advice)
    with torch.no_grad():  # every weight nonzero, so that a copy error cannot hide behind a zero
        for p in small.parameters():
            p.add_(torch.randn_like(p) * 0.1)
    wide = PolicyNet(env.obs_dim, env.num_actions, env.obs_scale, 40, advice)
    ppo.widen_into(wide, small)
    x, m = torch.as_tensor(obs), torch.as_tensor(mask)
    advice_t = torch.zeros(len(obs), dtype=torch.long) + int(np.flatnonzero(mask[0])[0]) if advice else None

    def play(net: PolicyNet) -> tuple[torch.Tensor, torch.Tensor]:
        return net.masked_logits(net.features(x), m, advice_t), net.get_value(x)

    with torch.no_grad():
        (small_logits, small_values), (wide_logits, wide_values) = play(small), play(wide)
    assert torch.allclose(small_logits, wide_logits, atol=1e-5) and torch.allclose(small_values, wide_values, atol=1e-5)
    assert wide.trunk[0].weight[16:].abs().sum() > 0, "the added units get random inputs"
    logits, values = play(wide)
    (values.sum() + logits.clamp(min=-1e4).sum()).backward()
    assert wide.actor.weight.grad[:, 16:].abs().sum() > 0 and wide.trunk[2].weight.grad[:, 16:].abs().sum() > 0


def test_run_state_checkpoint_is_weights_only_and_round_trips(trained, tmp_path):
    payload = torch.load(trained, map_location="cpu", weights_only=True)
    assert payload["format"] == CHECKPOINT_FORMAT and payload["rules"] == Rules.preset("scat").to_dict()
    assert (payload["num_players"], payload["hidden"], payload["advice"]) == (2, 128, True)
    assert isinstance(payload["decisions"], int) and isinstance(payload["elapsed"], float)
    assert load_checkpoint(trained)["updates"] == 2  # a policy checkpoint for agents.policy too

    state = ppo.RunState.load(trained)
    fresh = VectorThirtyOne(32, 2, "scat").snapshot()
    assert {k: v.dtype for k, v in state.env.items()} == {k: v.dtype for k, v in fresh.items()}
    assert state.opponent_mode.dtype == state.learner_seat.dtype == np.int64
    assert state.numpy_rng["bit_generator"] == "PCG64" and isinstance(state.numpy_rng["state"]["state"], int)
    assert state.args == tiny_args(Path(state.args.out)) and len(state.snapshots) == 2

    copy = tmp_path / "copy.pt"
    state.save(copy)
    assert [p.name for p in tmp_path.iterdir()] == ["copy.pt"]  # the temporary file is gone
    again = ppo.RunState.load(copy)
    rng = np.random.default_rng()
    rng.bit_generator.state = again.numpy_rng  # the big integers of PCG64 survive
    for name, value in state.env.items():
        np.testing.assert_array_equal(again.env[name], value)
    assert all(torch.equal(again.model[k], v) for k, v in state.model.items())
    assert again.decisions == state.decisions and again.elapsed == state.elapsed


def test_run_state_refuses_a_policy_file_without_run_state(tmp_path):
    slim = tmp_path / "slim.pt"
    torch.save({"format": CHECKPOINT_FORMAT, "rules": {}, "model": {}}, slim)
    with pytest.raises(ValueError, match="no run state to resume"):
        ppo.RunState.load(slim)
    with pytest.raises(FileNotFoundError):
        ppo.RunState.load(tmp_path / "missing.pt")


# -- logging ---------------------------------------------------------------------------------------------
def test_logger_drops_the_rows_logged_after_the_checkpoint_a_resume_continues_from(tmp_path):
    keys = ["eval/win_rate_greedy"]

    def row(updates):
        return {"decisions": 100 * updates, "updates": updates, "pg_loss": 0.1, keys[0]: 0.5}

    with Logger(tmp_path, keys) as logger:
        for updates in (1, 2, 3, 4):
            logger.log(row(updates), 100 * updates)
    with Logger(tmp_path, keys, resume_at=(2, 200)) as logger:
        logger.log(row(3), 300)
    with open(tmp_path / "progress.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["updates"] for r in rows] == ["1", "2", "3"] and rows[0][keys[0]] == "0.5"


# -- the train command line ------------------------------------------------------------------------------
@pytest.mark.parametrize("argv, message", [
    (["--advice", "ture"], "argument --advice: expected a boolean, got 'ture'; allowed values: true/false"),
    (["--num-envs", "x"], "argument --num-envs: expected an integer, got 'x'"),
    (["--learning-rate", "fast"], "argument --learning-rate: expected a number, got 'fast'"),
    (["--rule-based", "heuristic:-2"], "argument --rule-based: item 'heuristic:-2' has weight"),
    (["--final-matches", "0"], "argument --final-matches: expected an integer >= 1"),
])
def test_train_flags_refuse_bad_values_naming_the_flag(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["train", *argv])
    assert exc.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.parametrize("word, value", [("true", True), ("TRUE", True), ("1", True), ("Yes", True),
                                         ("false", False), ("False", False), ("0", False), ("NO", False)])
def test_train_bool_flags_accept_the_usual_words(word, value):
    assert build_parser().parse_args(["train", "--advice", word]).advice is value


def test_train_flags_keep_names_defaults_and_document_themselves(capsys):
    ns = build_parser().parse_args(["train"])
    assert (ns.preset, ns.players, ns.minutes, ns.out, ns.resume, ns.final_matches, ns.no_progress) == \
        ("scat", 2, 10.0, None, False, 1000, False)
    defaults = ppo.Args()
    assert all(getattr(ns, name) == getattr(defaults, name) for name in ("num_envs", "advice", "rule_based", "seed"))
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    assert "tables stepped together (default 512)" in " ".join(capsys.readouterr().out.split())


def test_values_out_of_range_are_refused_before_training(tmp_path, capsys):
    assert main(["train", "--out", str(tmp_path / "r"), "--num-envs", "0", "--self-play", "2"]) == 2
    err = capsys.readouterr().err
    assert "--num-envs must be an integer >= 1, got 0" in err and "--self-play must be between 0 and 1" in err
    assert not (tmp_path / "r").exists()


# -- a run against a frozen policy -----------------------------------------------------------------------
def test_training_against_a_frozen_saved_policy(trained, tmp_path):
    args = tiny_args(tmp_path / "run", rule_based=f"policy:{trained}:2,greedy:1", rule_based_share=0.8,
                     total_decisions=32 * 16)
    path = ppo.train(args)
    with open(tmp_path / "run" / "progress.csv", newline="") as f:
        start, row = list(csv.DictReader(f))  # the starting policy's evaluation, then the one update's
    label = "eval/win_rate_" + ppo.opponent_label(f"policy:{trained}")
    for r in (start, row):
        assert 0 <= float(r[label]) <= 1 and 0 <= float(r["eval/win_rate_greedy"]) <= 1
    assert start["updates"] == "0" and row["updates"] == "1"
    assert ppo.RunState.load(path).args.rule_based == args.rule_based
