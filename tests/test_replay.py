"""Replay files: recorded by thirtyone_v0, eval --save-replays and record_match; loading re-executes
them through the engine, and a changed file is refused with the step where it diverges."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from conftest import stack

from agents import make
from thirtyone_env import thirtyone_v0
from thirtyone_env.evaluation import tournament
from thirtyone_env.replay import Replay, ReplayError, format_replay, load, record_match
from thirtyone_env.rules import Rules
from train.cli import main


def play(env, seed: int = 0, options: dict | None = None) -> Replay:
    """A whole episode of random legal moves; the env's replay."""
    env.reset(seed=seed, options=options)
    rng = np.random.default_rng(seed)
    for _agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return env.unwrapped.replay


@pytest.mark.parametrize("preset", Rules.preset_names())
def test_every_preset_round_trips_and_reproduces(preset):
    rules = Rules.preset(preset)
    for n in (2, min(rules.max_players, 5)):
        env = thirtyone_v0.env(num_players=n, rules=preset, record=True)
        replay = play(env, seed=n)
        assert replay.complete and len(replay.decks) >= 1 and len(replay.steps) > 0
        assert replay.rules == rules and replay.num_players == n
        data = json.loads(replay.dumps())
        assert data["format"] == "thirtyone-replay" and data["version"] == 1 and data["package_version"]
        assert data["rules"] == rules.to_dict()  # every option
        loaded = load(text=replay.dumps())
        assert loaded.rewards == pytest.approx(replay.rewards) and len(loaded.decks) == len(replay.decks)
        assert sum(replay.rewards) == pytest.approx(0.0, abs=1e-9)


def test_decks_are_the_decks_as_dealt():
    deck = stack(["AS KS 2D", "3H 4C 5S"], "9H", "8C 7D")
    env = thirtyone_v0.env(num_players=2, rules="scat", record=True)
    env.reset(seed=1, options={"decks": [deck], "dealer": 0})
    replay = env.unwrapped.replay
    assert replay.decks[0][: len(deck)] == deck and sorted(replay.decks[0]) == list(range(52))
    assert replay.dealer == 0 and replay.stacked_decks == [deck]


def test_dealt_blitzes_and_voided_starts_are_recorded():
    """A dealt 31 ends its deal inside the reset or step; a deal episode voids it and deals again."""
    blitz = stack(["AS KS QS", "2D 3H 4C"], "5S")
    env = thirtyone_v0.env(num_players=2, rules="scat", record=True, episode="deal")
    env.reset(seed=3, options={"decks": [blitz, blitz], "dealer": 0})
    replay = env.unwrapped.replay
    assert replay.decks[0][:7] != blitz[:7]  # both stacked deals were voided: the episode's deal is a fresh one
    play_env = thirtyone_v0.env(num_players=2, rules="scat", record=True, episode="deal")
    replay = play(play_env, seed=3, options={"decks": [blitz, blitz], "dealer": 0})
    load(text=replay.dumps())
    match = thirtyone_v0.env(num_players=2, rules="scat", record=True)
    replay = play(match, seed=4, options={"decks": [stack(["2D 3H 4C", "7C 8D 9S"], "5S"), blitz], "dealer": 0})
    assert replay.decks[1][:7] == blitz[:7]  # the blitz dealt and settled inside a step is in the file
    load(text=replay.dumps())


def test_shuffled_refills_reproduce():
    rules = Rules.preset("swedish", stock_refill="shuffle", name="shuffled")
    env = thirtyone_v0.env(num_players=2, rules=rules, record=True)
    for seed in range(3):
        replay = play(env, seed=seed)
        assert load(text=replay.dumps()).rewards == pytest.approx(replay.rewards)


def _replay() -> dict:
    env = thirtyone_v0.env(num_players=3, rules="scat", record=True)
    return json.loads(play(env, seed=11).dumps())


def _first_throw(data: dict) -> int:
    return next(k for k, s in enumerate(data["steps"]) if s["action"] >= 4)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["steps"][4].update(seat=(d["steps"][4]["seat"] + 1) % 3), "step 5 .*seat"),
        (lambda d: d["steps"][_first_throw(d)].update(action=0, move="draw stock"), "step .*illegal action 0"),
        (lambda d: d["decks"].__setitem__(0, " ".join(reversed(d["decks"][0].split()))), "deal 1's deck"),
        (lambda d: d["decks"].pop(), "decks"),
        (lambda d: d["steps"].pop(), "after the last step|rewards"),
        (lambda d: d["rewards"].__setitem__(0, 5.0), "total rewards"),
        (lambda d: d["start"].__setitem__("rng", [1, 2, 3, 4]), "deal 1's deck"),
        (lambda d: d.update(dealer=(d["dealer"] + 1) % 3), "first dealer"),
        (lambda d: d["steps"][0].update(move="throw AS", action=3), "step 1: 'move'"),
        (lambda d: d.update(version=99), "version 99"),
        (lambda d: d["rules"].update(lives="three"), "'rules'"),
        (lambda d: d.__delitem__("steps"), "missing field 'steps'"),
    ],
)
def test_a_changed_file_is_refused_where_it_diverges(change, message):
    data = _replay()
    change(data)
    with pytest.raises(ReplayError, match=message):
        Replay.from_json(data).verify()


def test_not_json_and_not_a_replay():
    with pytest.raises(ReplayError, match="not JSON"):
        load(text="{oops")
    with pytest.raises(ReplayError, match="not a replay"):
        load(text='{"format": "something else"}')


def test_record_match_is_the_tournament_match():
    agents = [make("heuristic", "scat", 3), make("greedy", "scat", 3)]
    t = tournament(agents, "scat", 3, matches=6, seed=5)
    for k in range(t.matches):
        replay = record_match(agents, t.plan[k].tolist(), t.rules, t.seed, k, ["heuristic", "greedy"])
        assert replay.rewards == pytest.approx(t.match_rewards[k], abs=1e-6)
        assert replay.players == [["heuristic", "greedy"][a] for a in t.plan[k]]


def test_cli_eval_save_replays_and_replay(tmp_path, capsys):
    out = tmp_path / "replays"
    assert main(["eval", "--agents", "heuristic", "greedy", "--preset", "italian", "--matches", "3",
                 "--save-replays", str(out)]) == 0
    files = sorted(out.glob("match_*.json"))
    assert len(files) == 3 and "replays: 3 files" in capsys.readouterr().out
    assert main(["replay", str(files[1])]) == 0
    text = capsys.readouterr().out
    assert "replay: italian, 2 players" in text and "result:" in text and "showdown" in text or "blitz" in text
    assert format_replay(load(files[1])).splitlines()[0] in text
    bad = tmp_path / "bad.json"
    data = json.loads(files[0].read_text())
    data["steps"][2]["action"] = 1 - data["steps"][2]["action"] if data["steps"][2]["action"] < 2 else 0
    data["steps"][2].pop("move")
    bad.write_text(json.dumps(data))
    assert main(["replay", str(bad)]) == 2
    assert re.search(r"error: step \d+ \(seat \d: ", capsys.readouterr().err)  # where the game diverged
