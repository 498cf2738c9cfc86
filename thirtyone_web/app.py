"""The HTTP layer: a Starlette app over ``GameStore`` (JSON API, static page, JSON errors).

| route | does |
|---|---|
| ``GET /`` | the page (``static/index.html``; every asset ships in the package, no CDN) |
| ``GET /api/meta`` | presets with their player counts and decks, opponent kinds |
| ``GET /api/opponents?preset=&players=`` | the opponent kinds that can sit at that table |
| ``POST /api/games`` | ``{"mode": "play"/"watch", "preset", "players", "opponents", "reveal", "seed"}`` |
| ``GET /api/games/{id}?since=N`` | the game as its seat sees it (log entries from N) |
| ``POST /api/games/{id}/action`` | ``{"action": id}``: your move, then the bots' |
| ``POST /api/games/{id}/advance`` | watch mode: ``{"steps": k}`` bot decisions |
| ``GET /api/games/{id}/replay`` | the replay file, once the match is over |
| ``POST /api/replays`` | a replay file's JSON: checked by re-execution, opened for stepping |
| ``GET /api/replays/{id}/frames/{k}`` | position ``k`` of an opened replay |

Errors are ``{"error": message}`` with a 4xx status; a refused request changes nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from thirtyone_env.rules import Rules
from thirtyone_web.games import OPPONENTS, Game, GameError, GameStore, ReplaySession, available_opponents

STATIC = Path(__file__).parent / "static"
MAX_BODY = 1 << 20  # bytes: a replay of the longest match is far smaller


def _error(message: str, status: int) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


async def _body(request: Request) -> dict[str, Any]:
    """The JSON object of a request, refused (413) past ``MAX_BODY`` bytes without reading it all."""
    length = request.headers.get("content-length")
    if length is not None and (not length.isdigit() or int(length) > MAX_BODY):
        raise GameError(f"request body too large (limit {MAX_BODY} bytes)", 413)
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            raise GameError(f"request body too large (limit {MAX_BODY} bytes)", 413)
        chunks.append(chunk)
    try:
        data = json.loads(b"".join(chunks) or b"null")
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise GameError(f"malformed JSON: {exc}") from None
    if not isinstance(data, dict):
        raise GameError(f"expected a JSON object, got {type(data).__name__}")
    return data


def _int(data: dict, key: str, default: Any = None) -> Any:
    value = data.get(key, default)
    if value is default:
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        raise GameError(f"{key!r} must be an integer, got {value!r}")
    return value


def create_app(max_games: int = 200, ttl: float = 1800.0, replay_dir: str | Path | None = None) -> Starlette:
    """The app; ``replay_dir`` also saves every finished match there as a replay file."""
    store = GameStore(max_games, ttl, Path(replay_dir) if replay_dir else None)
    if store.replay_dir is not None:
        store.replay_dir.mkdir(parents=True, exist_ok=True)

    async def index(request: Request) -> Response:
        return FileResponse(STATIC / "index.html")

    async def meta(request: Request) -> Response:
        presets = []
        for name in Rules.preset_names():
            rules = Rules.preset(name)
            counts = [n for n in range(rules.min_players, rules.max_players + 1) if 3 * n + 2 <= rules.deck_size]
            presets.append({"name": name, "players": counts, "deck": rules.deck, "economy": rules.economy})
        return JSONResponse({"presets": presets, "opponents": list(OPPONENTS)})

    async def opponents(request: Request) -> Response:
        preset, players = request.query_params.get("preset", "scat"), request.query_params.get("players", "2")
        if preset not in Rules.preset_names() or not players.isdigit():
            raise GameError(f"unknown preset {preset!r} or player count {players!r}")
        try:
            Rules.preset(preset).check_num_players(int(players))
        except ValueError as exc:
            raise GameError(str(exc)) from None
        return JSONResponse({"opponents": available_opponents(preset, int(players))})

    async def new_game(request: Request) -> Response:
        data = await _body(request)
        mode = data.get("mode", "play")
        if mode not in ("play", "watch"):
            raise GameError(f"mode={mode!r} is invalid; allowed: 'play', 'watch'")
        preset = data.get("preset", "scat")
        if preset not in Rules.preset_names():
            raise GameError(f"unknown preset {preset!r}; allowed: {Rules.preset_names()}")
        players = _int(data, "players", 2)
        try:
            Rules.preset(preset).check_num_players(players)
        except ValueError as exc:
            raise GameError(str(exc)) from None
        opp = data.get("opponents", "heuristic")
        opp = [opp] if isinstance(opp, str) else opp
        if not isinstance(opp, list) or not opp or not all(isinstance(o, str) for o in opp):
            raise GameError(f"'opponents' must be a kind or a list of kinds, got {opp!r}")
        seed = _int(data, "seed")
        if seed is not None and not 0 <= seed < 2**63:
            raise GameError(f"'seed' must be in 0..2**63-1, got {seed}")
        game = store.new_game(preset, players, opp, 0 if mode == "play" else None, bool(data.get("reveal", False)),
                              seed)
        with game.lock:
            return JSONResponse(game.state(), status_code=201)

    async def get_game(request: Request) -> Response:
        game = store.get(request.path_params["id"], Game)
        since = request.query_params.get("since", "0")
        if not since.isdigit():
            raise GameError(f"'since' must be a log index, got {since!r}")
        with game.lock:
            return JSONResponse(game.state(int(since)))

    async def action(request: Request) -> Response:
        data = await _body(request)
        game = store.get(request.path_params["id"], Game)
        if "action" not in data:
            raise GameError("missing 'action' (an action id from 'legal')")
        with game.lock:
            since = len(game.log)
            game.act(data["action"])
            return JSONResponse(game.state(since))

    async def advance(request: Request) -> Response:
        data = await _body(request)
        game = store.get(request.path_params["id"], Game)
        steps = _int(data, "steps", 1)
        if not 1 <= steps <= 1000:
            raise GameError(f"'steps' must be 1..1000, got {steps}")
        with game.lock:
            since = len(game.log)
            game.advance(steps)
            return JSONResponse(game.state(since))

    async def game_replay(request: Request) -> Response:
        game = store.get(request.path_params["id"], Game)
        with game.lock:
            text = game.replay().dumps()
        return Response(text, media_type="application/json",
                        headers={"Content-Disposition": f'attachment; filename="thirtyone-{game.id}.json"'})

    async def open_replay(request: Request) -> Response:
        data = await _body(request)
        session = store.new_replay(json.dumps(data))
        return JSONResponse(session.summary(), status_code=201)

    async def replay_frame(request: Request) -> Response:
        session = store.get(request.path_params["id"], ReplaySession)
        k = request.path_params["k"]
        if not k.isdigit():
            raise GameError(f"frame must be a number, got {k!r}", 404)
        return JSONResponse(session.frame(int(k)))

    async def game_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, GameError)
        return _error(str(exc), exc.status)

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        return _error(exc.detail or "error", exc.status_code)

    routes = [
        Route("/", index),
        Route("/api/meta", meta),
        Route("/api/opponents", opponents),
        Route("/api/games", new_game, methods=["POST"]),
        Route("/api/games/{id}", get_game),
        Route("/api/games/{id}/action", action, methods=["POST"]),
        Route("/api/games/{id}/advance", advance, methods=["POST"]),
        Route("/api/games/{id}/replay", game_replay),
        Route("/api/replays", open_replay, methods=["POST"]),
        Route("/api/replays/{id}/frames/{k}", replay_frame),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(routes=routes, exception_handlers={GameError: game_error, HTTPException: http_error})
    app.state.store = store
    return app


def serve(host: str = "127.0.0.1", port: int = 8031, **options: Any) -> None:
    """Run the app with uvicorn (``thirtyone serve``)."""
    import uvicorn

    uvicorn.run(create_app(**options), host=host, port=port, log_level="warning")
