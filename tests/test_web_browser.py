"""The web app in a real browser (Debian's Chromium driven by Playwright): a whole 2-player scat
match against heuristic bots played by clicks, a replay stepped through, no console errors.
Screenshots go to ``$THIRTYONE_SCREENSHOTS`` (default: the test's temporary folder)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the web extra is not installed")
uvicorn = pytest.importorskip("uvicorn", reason="the web extra is not installed")
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (the webtest extra)")
CHROMIUM = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)
if CHROMIUM is None:
    pytest.skip("no Chromium executable (apt-get install chromium)", allow_module_level=True)

from thirtyone_env.replay import load  # noqa: E402
from thirtyone_web.app import create_app  # noqa: E402


@pytest.fixture(scope="module")
def server():
    """One server for the module, on a free port of 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    app = create_app(max_games=20)
    # compile the engine's and the bots' kernels now, not inside a browser wait
    game = app.state.store.new_game("scat", 2, ["heuristic"], 0, False, 0)
    game.act(int(game.state()["legal"][0]["id"]))
    app.state.store.new_replay(game.recorder.replay.dumps())
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    srv = uvicorn.Server(config)
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    for _ in range(200):
        if srv.started:
            break
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    srv.should_exit = True
    thread.join(timeout=10)


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture()
def shots(tmp_path) -> Path:
    folder = Path(os.environ.get("THIRTYONE_SCREENSHOTS", tmp_path))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def open_page(browser, server, width=1280, height=860):
    page = browser.new_page(viewport={"width": width, "height": height})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(server + "/")
    page.wait_for_selector("#play-opponents option[value=heuristic]", state="attached")
    return page, errors


def test_page_loads_without_console_errors_on_a_laptop_and_a_phone(browser, server, shots):
    for name, (w, h) in {"laptop": (1366, 860), "phone": (390, 844)}.items():
        page, errors = open_page(browser, server, w, h)
        for tab in ("watch", "replay", "play"):
            page.click(f"#tab-{tab}")
        page.click("#play-new")
        page.wait_for_selector("#table svg")
        page.screenshot(path=str(shots / f"web-{name}.png"))
        assert errors == []
        page.close()


def test_play_a_whole_scat_match_against_heuristic_by_clicks(browser, server, shots):
    page, errors = open_page(browser, server)
    page.select_option("#play-preset", "scat")
    page.select_option("#play-players", "2")
    page.select_option("#play-opponents", "heuristic")
    page.click("#play-new")
    page.wait_for_selector("#table svg")
    clicks, showdowns, shot = 0, 0, False
    while not page.is_visible("#result") and clicks < 400:
        if page.is_visible("#showdown"):
            if not shot:
                page.screenshot(path=str(shots / "web-showdown.png"))
            shot = True
            showdowns += 1
            page.click("#showdown-continue")
            continue
        if page.is_visible("#action-knock") and clicks > 8:
            target = "#action-knock"  # knock once the match is under way: matches end sooner
        elif page.locator("#table .card.act").count():
            target = "#table .card.act >> nth=-1" if page.locator("#table .stock.act").count() == 0 else (
                "#table .stock.act")
        else:
            page.wait_for_timeout(50)
            continue
        if clicks == 3:
            page.screenshot(path=str(shots / "web-play.png"))
        page.click(target)
        page.wait_for_function("!document.body.dataset.busy")  # the answer is drawn
        clicks += 1
    assert page.is_visible("#result"), "the match did not end"
    while page.is_visible("#showdown"):  # the last deal's settlement
        showdowns += 1
        page.click("#showdown-continue")
    result = page.inner_text("#result")
    assert result in ("you win", "heuristic 1 wins", "you share the win", "drawn match")
    assert showdowns >= 1 and "match over" in page.inner_text("#log")
    page.screenshot(path=str(shots / "web-result.png"))
    with page.expect_download() as download:
        page.click("#download")
    path = download.value.path()
    replay = load(path)
    assert replay.complete and replay.players[0] == "you" and replay.num_players == 2
    assert errors == []
    page.close()


def test_step_through_a_replay(browser, server, shots, tmp_path):
    from agents import make
    from thirtyone_env.replay import record_match

    agents = [make("heuristic", "italian", 3), make("greedy", "italian", 3)]
    replay = record_match(agents, [0, 1, 1], "italian", seed=3, stream=0, names=["heuristic", "greedy"])
    file = tmp_path / "italian.json"
    replay.save(file)
    page, errors = open_page(browser, server)
    page.click("#tab-replay")
    page.set_input_files("#replay-file", str(file))
    page.wait_for_selector("#table svg")
    last = len(replay.steps)
    assert page.inner_text("#replay-pos") == f"0 / {last}"
    for _ in range(3):
        page.click("#replay-next")
    page.wait_for_function("document.getElementById('replay-pos').textContent.startsWith('3 /')")
    assert page.locator("#log li").count() == 3
    page.screenshot(path=str(shots / "web-replay.png"))
    page.click("#replay-prev")
    page.wait_for_function("document.getElementById('replay-pos').textContent.startsWith('2 /')")
    page.click("#replay-last")
    page.wait_for_function(f"document.getElementById('replay-pos').textContent === '{last} / {last}'")
    assert "match over" in page.inner_html("#table")
    page.click("#replay-first")
    page.wait_for_function(f"document.getElementById('replay-pos').textContent === '0 / {last}'")
    bad = tmp_path / "bad.json"
    data = json.loads(file.read_text())
    data["steps"][1]["seat"] = (data["steps"][1]["seat"] + 1) % 3
    bad.write_text(json.dumps(data))
    page.set_input_files("#replay-file", str(bad))
    page.wait_for_function("document.getElementById('status').textContent.includes('replay refused')")
    assert "step 2" in page.inner_text("#status")
    assert [e for e in errors if "400" not in e] == []  # the refused file's 400 is the only error
    page.close()
