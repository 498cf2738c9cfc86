"""The web app's API in-process: no hidden information in any response of whole matches, 4xx JSON
errors that leave the game unchanged, capped and expiring games, replays that reproduce."""

from __future__ import annotations

import ast
import json
import re
import time
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the web extra is not installed")
pytest.importorskip("httpx", reason="the webtest extra (httpx) is not installed")
from starlette.testclient import TestClient  # noqa: E402

from thirtyone_env.cards import card_str  # noqa: E402
from thirtyone_env.replay import frames, load  # noqa: E402
from thirtyone_env.rules import Rules  # noqa: E402
from thirtyone_web.app import MAX_BODY, create_app  # noqa: E402
from thirtyone_web.games import Game  # noqa: E402
from train.cli import main  # noqa: E402

TITLE = re.compile(r"<title>([^<]+)</title>")
MOVE = re.compile(r"^(you|[a-z]+ \d): (draw stock|take \w+|throw \w+|knock|pass)$")
KEYS = {"id", "mode", "preset", "deck", "num_players", "seat", "names", "svg", "your_turn", "legal", "log",
        "log_size", "showdowns", "deal", "over", "result"}


@pytest.fixture()
def client(tmp_path):
    app = create_app(max_games=50, replay_dir=tmp_path / "saved")
    with TestClient(app) as c:
        c.store = app.state.store
        yield c


def hidden_cards(game: Game) -> set[str]:
    """What the human seat may not see now: opponents' cards not taken from the discard, the stock."""
    full = game.table.view(0)
    deck = game.rules.deck
    cards = {c for s, h in enumerate(full.hands) if s != game.seat for c in h if c not in full.known[s]}
    return {card_str(c, deck) for c in cards | set(full.stock)}


def check_response(data: dict, game: Game, coverage: dict) -> None:
    """No hidden card anywhere in a response (the table, the legal moves, the log, the showdowns)."""
    assert set(data) == KEYS
    hidden = hidden_cards(game)
    assert not set(TITLE.findall(data["svg"])) & hidden
    # the log names public moves only (checked against the replay at the end): here, everything else
    rest = json.dumps({k: v for k, v in data.items() if k not in ("showdowns", "log", "svg")})
    named = set(re.findall(r"\b(?:10|[2-9JQKA])[CDHS]\b", rest))
    assert not named & hidden, named & hidden
    for entry in data["log"]:
        text = entry["text"]
        assert MOVE.match(text) or text.startswith(("deal ", "match over", "a blitz")), text
    for s in data["showdowns"]:  # every hand of the settled deal, nothing else
        revealed = {c for line in s["lines"][1:] for c in line.split(":", 1)[1].split("=")[0].split()}
        shown = set(TITLE.findall(s["svg"])) - {"face down"}
        public = set(TITLE.findall(coverage["last_svg"])) | {e["text"].split()[-1] for e in data["log"]}
        assert shown <= revealed | public, shown - revealed - public
        coverage["showdowns"] += 1
    coverage["responses"] += 1
    coverage["last_svg"] = data["svg"]


@pytest.mark.parametrize(("preset", "players", "opponents"), [("scat", 2, "heuristic"), ("italian", 3, "greedy"),
                                                              ("swedish", 2, "random")])
def test_no_response_of_a_whole_match_leaks_hidden_cards(client, preset, players, opponents):
    coverage = {"responses": 0, "showdowns": 0, "last_svg": ""}
    r = client.post("/api/games", json={"mode": "play", "preset": preset, "players": players,
                                        "opponents": opponents, "seed": 7})
    assert r.status_code == 201
    data = r.json()
    game = client.store.get(data["id"], Game)
    check_response(data, game, coverage)
    assert client.get(f"/api/games/{data['id']}/replay").status_code == 409  # every card: not before the end
    moves = 0
    while not data["over"]:
        assert data["your_turn"] and data["legal"]
        ids = [a["id"] for a in data["legal"]]
        action = 2 if 2 in ids and moves > 6 else ids[-1]  # throw the highest card id; knock after a while
        data = client.post(f"/api/games/{data['id']}/action", json={"action": action}).json()
        check_response(data, game, coverage)
        again = client.get(f"/api/games/{data['id']}?since={data['log_size']}").json()
        check_response(again, game, coverage)
        moves += 1
    assert data["result"] and coverage["showdowns"] >= 1 and coverage["responses"] == 2 * moves + 1
    text = client.get(f"/api/games/{data['id']}/replay").text
    replay = load(text=text)
    assert replay.complete and replay.players[0] == "you"
    # every logged move says what every seat saw: the action, and the card only for a throw or a take
    moves_logged = [e["text"] for e in client.get(f"/api/games/{data['id']}").json()["log"] if MOVE.match(e["text"])]
    frames_ = frames(replay)
    assert len(moves_logged) == len(replay.steps)
    for k, (text, step) in enumerate(zip(moves_logged, replay.steps, strict=True)):
        move = text.split(": ", 1)[1]
        before = frames_[k].view
        if step.action == 1:
            expected = f"take {card_str(before.discard_top, before.deck)}"
        else:
            expected = {0: "draw stock", 2: "knock", 3: "pass"}.get(step.action) or \
                f"throw {card_str(step.action - 4, before.deck)}"
        assert move == expected
    assert (Path(client.store.replay_dir) / f"{data['id']}.json").is_file()


def test_errors_are_json_4xx_and_change_nothing(client):
    data = client.post("/api/games", json={"preset": "scat", "players": 2, "seed": 3}).json()
    gid = data["id"]
    before = client.get(f"/api/games/{gid}").json()
    illegal = next(a for a in range(56) if a not in {x["id"] for x in before["legal"]})
    cases = [
        (client.post(f"/api/games/{gid}/action", json={"action": illegal}), 400, "illegal action"),
        (client.post(f"/api/games/{gid}/action", json={"action": "0"}), 400, "illegal action"),
        (client.post(f"/api/games/{gid}/action", json={}), 400, "missing 'action'"),
        (client.post(f"/api/games/{gid}/action", content=b"{not json"), 400, "malformed JSON"),
        (client.post(f"/api/games/{gid}/action", content=b"[1]"), 400, "expected a JSON object"),
        (client.post(f"/api/games/{gid}/action", content=b"{" + b" " * (MAX_BODY + 10) + b"}"), 413, "too large"),
        (client.post(f"/api/games/{gid}/advance", json={}), 409, "played, not watched"),
        (client.post("/api/games/nope/action", json={"action": 0}), 404, "unknown game id"),
        (client.get("/api/games/nope"), 404, "unknown game id"),
        (client.post("/api/games", json={"preset": "poker"}), 400, "unknown preset"),
        (client.post("/api/games", json={"preset": "scat", "players": 11}), 400, "num_players"),
        (client.post("/api/games", json={"opponents": "alphago"}), 400, "unknown opponent"),
        (client.post("/api/games", json={"mode": "spectate"}), 400, "mode"),
        (client.post("/api/replays", json={"format": "thirtyone-replay", "version": 1}), 400, "replay refused"),
        (client.get("/api/replays/nope/frames/0"), 404, "unknown replay id"),
        (client.get("/no/such/page"), 404, "Not Found"),
    ]
    for response, status, message in cases:
        assert response.status_code == status, (response.status_code, response.text)
        assert message in response.json()["error"]
    assert client.get(f"/api/games/{gid}").json() == before
    assert client.post(f"/api/games/{gid}/action", json={"action": before["legal"][0]["id"]}).status_code == 200


def test_games_are_capped_and_expire():
    app = create_app(max_games=3, ttl=0.3)
    with TestClient(app) as c:
        ids = [c.post("/api/games", json={"mode": "watch", "seed": k}).json()["id"] for k in range(5)]
        store = app.state.store
        assert len(store) == 3
        assert c.get(f"/api/games/{ids[0]}").status_code == 404  # the least recently used went first
        assert c.get(f"/api/games/{ids[4]}").status_code == 200
        time.sleep(0.4)
        assert c.get(f"/api/games/{ids[4]}").status_code == 404 and len(store) == 0


def test_watch_a_match_and_step_through_its_replay(client, tmp_path, capsys):
    data = client.post("/api/games", json={"mode": "watch", "preset": "russian", "players": 3,
                                           "opponents": "heuristic", "reveal": False, "seed": 1}).json()
    assert data["mode"] == "watch" and not data["legal"]
    game = client.store.get(data["id"], Game)
    assert set(TITLE.findall(data["svg"])) & {card_str(c) for h in game.table.view(0).hands for c in h} <= {
        card_str(c) for k in game.table.view(0).known for c in k}
    while not data["over"]:
        data = client.post(f"/api/games/{data['id']}/advance", json={"steps": 25}).json()
    text = client.get(f"/api/games/{data['id']}/replay").text
    path = tmp_path / "watched.json"
    path.write_text(text)
    assert main(["replay", str(path)]) == 0 and "result:" in capsys.readouterr().out
    opened = client.post("/api/replays", content=text).json()
    assert opened["frames"] == len(json.loads(text)["steps"]) + 1
    last = client.get(f"/api/replays/{opened['id']}/frames/{opened['frames'] - 1}").json()
    first = client.get(f"/api/replays/{opened['id']}/frames/0").json()
    assert "match over" in last["svg"] and first["svg"] != last["svg"]
    assert client.get(f"/api/replays/{opened['id']}/frames/{opened['frames']}").status_code == 404


def test_every_preset_and_player_count_can_be_dealt(client):
    meta = client.get("/api/meta").json()
    assert [p["name"] for p in meta["presets"]] == Rules.preset_names()
    assert {"pretrained", "heuristic", "greedy", "random"} <= set(
        client.get("/api/opponents?preset=scat&players=2").json()["opponents"])
    assert "pretrained" not in client.get("/api/opponents?preset=italian&players=10").json()["opponents"]
    for p in meta["presets"]:
        for n in (p["players"][0], p["players"][-1]):
            r = client.post("/api/games", json={"preset": p["name"], "players": n, "opponents": "greedy"})
            assert r.status_code == 201 and r.json()["num_players"] == n


def test_the_page_and_its_assets_are_served_from_the_package(client):
    page = client.get("/")
    assert page.status_code == 200 and "<script src=\"/static/app.js\">" in page.text
    assert "http://" not in page.text and "https://" not in page.text  # no CDN
    for asset in ("app.js", "style.css"):
        r = client.get(f"/static/{asset}")
        assert r.status_code == 200 and "https://" not in r.text


def test_the_web_app_is_an_app_layer_reading_named_views():
    folder = Path(__file__).resolve().parent.parent / "thirtyone_web"
    for path in folder.glob("*.py"):
        text = path.read_text()
        modules = {n.module for n in ast.walk(ast.parse(text)) if isinstance(n, ast.ImportFrom) and n.module}
        assert not {m for m in modules if m.split(".")[0] == "train"}, path
        assert not re.search(r"\bS_[A-Z_]+\b|\._states\b|engine\._[a-z]", text), path
