"""The table drawing: SVG from a TableView (clickable legal moves, hidden cards stay hidden) and
render_mode="rgb_array" on thirtyone_v0 and ThirtyOne-v0, recorded by gymnasium's RecordVideo."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import gymnasium
import numpy as np
import pytest

import thirtyone_env  # noqa: F401 (registers ThirtyOne-v0)
from thirtyone_env import thirtyone_v0
from thirtyone_env.actions import DISCARD0
from thirtyone_env.cards import card_str
from thirtyone_env.engine import Tables
from thirtyone_env.render_svg import table_svg
from thirtyone_env.rules import Rules

TITLE = re.compile(r"<title>([^<]+)</title>")


def midgame(preset: str, n: int, seed: int = 0, moves: int = 9) -> Tables:
    t = Tables(1, n, preset, seed=seed, observe=False, parallel=False, autoreset=False)
    t.reset()
    rng = np.random.default_rng(seed)
    for _ in range(moves):
        if t.finished[0]:
            break
        t.step_at(0, int(rng.choice(np.flatnonzero(t.mask[0]))))
    return t


@pytest.mark.parametrize("preset", Rules.preset_names())
def test_svg_draws_the_seat_view_with_its_legal_moves(preset):
    rules = Rules.preset(preset)
    for n in (2, rules.max_players if 3 * rules.max_players + 2 <= rules.deck_size else 4):
        t = midgame(preset, n, seed=n)
        seat = int(t.current_player[0])
        view = t.view(0, seat)
        legal = np.flatnonzero(t.mask[0]).tolist()
        svg = table_svg(view, legal)
        ET.fromstring(svg)  # well-formed
        clickable = sorted(int(a) for a in re.findall(r'data-action="(\d+)"', svg))
        assert clickable == sorted(a for a in legal if a not in (2, 3))  # knock and pass are page buttons
        shown = set(TITLE.findall(svg)) - {"face down"}
        full = t.view(0)
        hidden = {card_str(c, rules.deck) for s, h in enumerate(full.hands) if s != seat
                  for c in h if c not in full.known[s]} | {card_str(c, rules.deck) for c in full.stock}
        assert shown and not shown & hidden
        assert {card_str(c, rules.deck) for c in full.hands[seat]} <= shown
        for a in legal:
            if a >= DISCARD0:
                assert f"<title>{card_str(a - DISCARD0, rules.deck)}</title>" in svg


def test_the_public_view_shows_no_hand():
    t = midgame("italian", 3)
    svg = table_svg(t.view(0, -1))
    full = t.view(0)
    known = {c for k in full.known for c in k}
    hands = {card_str(c, "italian40") for h in full.hands for c in h if c not in known}
    assert not set(TITLE.findall(svg)) & hands


def test_render_seat_is_checked():
    with pytest.raises(ValueError, match="render_seat"):
        thirtyone_v0.env(num_players=2, render_seat=5)


def test_rgb_array_on_both_envs():
    pytest.importorskip("resvg_py", reason="the render extra (resvg-py) is not installed")
    env = thirtyone_v0.env(num_players=3, rules="italian", render_mode="rgb_array", render_seat=1)
    env.reset(seed=0)
    frame = env.render()
    assert frame.shape == (640, 960, 3) and frame.dtype == np.uint8 and frame.std() > 10
    gym_env = gymnasium.make("ThirtyOne-v0", preset="scat", num_players=2, render_mode="rgb_array")
    gym_env.reset(seed=0)
    other = gym_env.render()
    assert other.shape == (640, 960, 3) and not np.array_equal(frame, other)


def test_record_video_writes_an_episode(tmp_path):
    pytest.importorskip("resvg_py", reason="the render extra (resvg-py) is not installed")
    pytest.importorskip("moviepy", reason="RecordVideo needs moviepy (the webtest extra)")
    from gymnasium.wrappers import RecordVideo

    env = gymnasium.make("ThirtyOne-v0", preset="scat", num_players=2, render_mode="rgb_array",
                         opponents="greedy")
    env = RecordVideo(env, str(tmp_path / "videos"), episode_trigger=lambda e: True, disable_logger=True)
    _, info = env.reset(seed=2)
    done, steps = False, 0
    while not done and steps < 40:
        legal = np.flatnonzero(info["action_mask"])
        action = 2 if 2 in legal else int(legal[0])  # knock when allowed: a short episode
        _, _, term, trunc, info = env.step(action)
        done, steps = term or trunc, steps + 1
    env.close()
    videos = list((tmp_path / "videos").glob("*.mp4"))
    assert done and len(videos) == 1 and videos[0].stat().st_size > 1000
