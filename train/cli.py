"""The ``thirtyone`` command: ``train``, ``eval`` and ``play``."""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import math
import os
import sys
import textwrap
from pathlib import Path

from thirtyone_env.rules import Rules

EVAL_OPPONENTS = ("random", "greedy", "heuristic")


def _players(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--players must be an integer, got {text!r}") from None


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


TRUE_WORDS, FALSE_WORDS = ("true", "1", "yes"), ("false", "0", "no")


def _bool(text: str) -> bool:
    word = text.strip().lower()
    if word in TRUE_WORDS or word in FALSE_WORDS:
        return word in TRUE_WORDS
    raise argparse.ArgumentTypeError(f"expected a boolean, got {text!r}; allowed values: true/false "
                                     f"(also 1/0, yes/no, any case)")


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None


def _positive_int(text: str) -> int:
    value = _int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}")
    return value


def _float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def _opponents(text: str) -> str:
    """``--rule-based``: checked now (syntax and weights), built when training starts."""
    from train.ppo import parse_opponents

    try:
        parse_opponents(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--rule-based: ")) from None
    return text


TRAIN_FLAG_TYPES = {"bool": _bool, "int": _int, "float": _float, "str": str}
TRAIN_FLAG_PARSERS = {"rule_based": _opponents}  # fields with more to check than their type


def field_docs(cls: type) -> dict[str, str]:
    """The docstring under each dataclass field (as CleanRL's ``Args``), for ``--help``."""
    try:
        body = ast.parse(textwrap.dedent(inspect.getsource(cls))).body[0].body
    except (OSError, TypeError):  # no source (a frozen install): plain help
        return {}
    return {
        field.target.id: " ".join(doc.value.value.split())
        for field, doc in zip(body, body[1:], strict=False)
        if isinstance(field, ast.AnnAssign) and isinstance(field.target, ast.Name)
        and isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant) and isinstance(doc.value.value, str)
    }


def _shown(default: object) -> str:
    """A default as it is typed on the command line: ``true``, ``''``, ``0.0005``."""
    if isinstance(default, bool):
        return str(default).lower()
    return repr(default) if default == "" else str(default)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="thirtyone", description="Thirty-one: train, evaluate and play.")
    sub = parser.add_subparsers(dest="command", required=True)

    from train.ppo import Args

    tr = sub.add_parser("train", help="self-play PPO, then an evaluation table")
    tr.add_argument("--preset", default="scat", choices=Rules.preset_names())
    tr.add_argument("--players", type=_players, default=2)
    tr.add_argument("--minutes", type=_positive_float, default=10.0)
    tr.add_argument("--out", default=None, help="run folder (default runs/<preset>_<players>p)")
    tr.add_argument("--resume", action="store_true", help="continue the run in --out from its last checkpoint")
    tr.add_argument("--final-matches", type=_positive_int, default=1000,
                    help="matches per opponent in the final table")
    tr.add_argument("--no-progress", action="store_true")
    skip = {"preset", "num_players", "minutes", "out", "progress"}
    docs = field_docs(Args)
    for f in dataclasses.fields(Args):
        if f.name in skip:
            continue
        kind = TRAIN_FLAG_PARSERS.get(f.name) or TRAIN_FLAG_TYPES[str(f.type)]
        text = f"{docs.get(f.name, '')} (default {_shown(f.default)})".strip().replace("%", "%%")
        tr.add_argument("--" + f.name.replace("_", "-"), type=kind, default=f.default, help=text,
                        metavar="{true,false}" if kind is _bool else None)

    ev = sub.add_parser("eval", help="tournament between agents")
    ev.add_argument("--agents", nargs="+", required=True,
                    help="random, greedy, heuristic, pretrained[:PRESET_NP], policy:PATH, search[:OPTIONS][:SPEC]")
    ev.add_argument("--preset", default="scat", choices=Rules.preset_names())
    ev.add_argument("--players", type=_players, default=2)
    ev.add_argument("--matches", type=_positive_int, default=2000)
    ev.add_argument("--seed", type=_int, default=0, help="match k deals from stream k of this seed (paired seeds)")
    ev.add_argument("--mode", choices=["rotate", "one-vs-rest"], default=None,
                    help="seating (default: one-vs-rest for two agents at a bigger table, else rotate)")
    ev.add_argument("--plot", default=None, help="write the ratings PNG here")
    ev.add_argument("--paired", action="store_true",
                    help="duplicate play: each agent but the last against the last on the same deck streams, "
                         "every seat in turn; paired intervals and differences from the first agent")
    ev.add_argument("--save-replays", default=None, metavar="DIR",
                    help="also write every match as a replay file (DIR/match_00000.json; thirtyone replay FILE)")
    ev.add_argument("--save-streams", default=None, metavar="FILE",
                    help="with --paired: also write every stream's win shares to FILE (.npz, never overwritten) "
                         "so runs on other seeds pool into one interval: thirtyone pool FILE FILE ...")

    po = sub.add_parser("pool", help="one paired table over the streams of several --save-streams files "
                                     "(the same agents, different seeds)")
    po.add_argument("files", nargs="+", metavar="FILE")
    po.add_argument("--out", default=None, metavar="FILE", help="also write the pooled streams here")

    pl = sub.add_parser("play", help="play in the terminal against bots")
    pl.add_argument("--preset", default="scat", choices=Rules.preset_names())
    pl.add_argument("--players", type=_players, default=3)
    pl.add_argument("--opponents", default="heuristic",
                    help="any agent spec: random, greedy, heuristic, pretrained (falls back to heuristic "
                         "where no policy ships), pretrained:PRESET_NP, policy:PATH, search[:OPTIONS][:SPEC]")
    pl.add_argument("--seat", type=_int, default=0)
    pl.add_argument("--seed", type=_int, default=None)

    wu = sub.add_parser("warmup", help="compile the engine's numba kernels now (make setup runs it; later runs "
                                       "start at once)")
    wu.add_argument("--jobs", type=_positive_int, default=min(2, os.cpu_count() or 1),
                    help="processes compiling at once (numba compiles on one core per process; the kernels fall in "
                         "2 groups, so more than 2 gains nothing; default: 2, or 1 on a 1-core machine)")

    rp = sub.add_parser("replay", help="print a replay file step by step (checked by re-executing it)")
    rp.add_argument("file")

    sv = sub.add_parser("serve", help="the web app: play, watch and replay in the browser (the web extra)")
    sv.add_argument("--host", default="127.0.0.1", help="interface to bind (default 127.0.0.1: this machine only)")
    sv.add_argument("--port", type=_int, default=8031)
    sv.add_argument("--max-games", type=_positive_int, default=200, help="open games kept at most (oldest go first)")
    sv.add_argument("--idle-minutes", type=_positive_float, default=30.0, help="a game idle this long is dropped")
    sv.add_argument("--replays", default=None, metavar="DIR", help="save every finished match here as a replay")

    from train import benchmark, exploit

    benchmark.add_parser(sub)
    exploit.add_parser(sub)
    return parser


def head_to_head(policy, rules: Rules, num_players: int, matches: int, seed: int = 0) -> str:
    """One row per rule-based opponent: the policy against a table of them."""
    from agents import make
    from thirtyone_env.evaluation import tournament
    from train.evaluate import add_ratings

    lines = []
    for k, name in enumerate(EVAL_OPPONENTS):
        opponent = make(name, rules, num_players, seed=seed)
        t = add_ratings(tournament([policy, opponent], rules, num_players, matches, seed=seed + k,
                                   names=["policy", name]))
        lines.append(t.table() if not lines else "\n".join(t.table().splitlines()[2:]))
    return "\n".join(lines)


def before_after(trained, start, rules: Rules, num_players: int, matches: int, seed: int = 0) -> str:
    """The starting and the trained policy against each rule-based opponent on the same paired matches."""
    from agents import make
    from thirtyone_env.evaluation import paired

    head = (f"{rules.name}, {num_players} players: the policy before and after training, duplicate matches "
            f"(the same deck streams, every seat; seed {seed})\n"
            f"{'opponent':<10} {'matches':>7} {'start':>22} {'trained':>22} {'gain (paired 95% CI)':>26}")
    rows = [head, "-" * len(head.splitlines()[1])]
    for name in EVAL_OPPONENTS:
        r = paired([trained, start], make(name, rules, num_players, seed=seed), rules, num_players, matches,
                   seed=seed, names=["trained", "start"], opponent_name=name)
        (slo, shi), (tlo, thi) = r.interval(1), r.interval(0)
        gain, lo, hi = r.difference(0, 1)
        rows.append(f"{name:<10} {r.matches:>7} {f'{r.win_rate(1):.3f} [{slo:.3f}, {shi:.3f}]':>22} "
                    f"{f'{r.win_rate(0):.3f} [{tlo:.3f}, {thi:.3f}]':>22} {f'{gain:+.3f} [{lo:+.3f}, {hi:+.3f}]':>26}")
    return "\n".join(rows)


def next_commands(path: Path, preset: str, num_players: int) -> str:
    """What to try with the trained policy."""
    import importlib.util

    spec = f"policy:{path}"
    lines = ["next:",
             f"  thirtyone play --preset {preset} --players {num_players} --opponents {spec}   # play against it",
             f"  thirtyone eval --paired --preset {preset} --players {num_players} --agents {spec} heuristic "
             f"--matches 4000   # measure it",
             f"  tensorboard --logdir {path.parent / 'tb'}   # its training curves"]
    if importlib.util.find_spec("fastapi") is not None:
        lines.append("  thirtyone serve   # watch and play in the browser (pick the opponents there)")
    else:
        lines.append('  pip install -e ".[web]" && thirtyone serve   # watch and play in the browser')
    return "\n".join(lines)


def cmd_train(ns: argparse.Namespace) -> int:
    from agents.policy import PolicyAgent
    from train.evaluate import plot_learning_curve
    from train.ppo import Args, check_args, train

    rules = Rules.preset(ns.preset)
    rules.check_num_players(ns.players)
    out = ns.out or f"runs/{ns.preset}_{ns.players}p"
    values = {f.name: getattr(ns, f.name) for f in dataclasses.fields(Args) if hasattr(ns, f.name)}
    args = Args(**{**values, "preset": ns.preset, "num_players": ns.players, "minutes": ns.minutes,
                   "out": out, "progress": not ns.no_progress})
    check_args(args)
    if ns.resume and not (Path(out) / "last.pt").is_file():
        raise ValueError(f"--resume: no checkpoint at {Path(out) / 'last.pt'}")
    if not ns.resume and (Path(out) / "last.pt").is_file():
        raise ValueError(f"{out} already holds a run; pass --resume to continue it or choose another --out")
    if args.advice:
        print("setting: a residual policy on top of HeuristicAgent (it starts as the heuristic: learning shows as "
              "departures from it)")
    else:
        print(f"setting: a plain network{' warm-started by imitation' if args.bc_decisions else ' from scratch'}, "
              f"trained against {args.rule_based}")
    path = train(args, resume=ns.resume)
    print(f"checkpoint: {path}")
    curve = plot_learning_curve(Path(out) / "progress.csv", Path(out) / "learning_curve.png")
    print(f"learning curve: {curve} ({learning_curve_points(Path(out) / 'progress.csv')} evaluations)")
    print(f"[final evaluation] {ns.final_matches} matches per opponent")
    policy = PolicyAgent.load(path)
    start = Path(out) / "start.pt"
    if start.is_file():
        print(before_after(policy, PolicyAgent.load(start), rules, ns.players, ns.final_matches, seed=12345))
    else:  # a run from before start.pt existed
        print(head_to_head(policy, rules, ns.players, ns.final_matches, seed=12345))
    print(next_commands(path, ns.preset, ns.players))
    return 0


def learning_curve_points(csv_path: Path) -> int:
    import csv

    with open(csv_path, newline="") as f:
        return sum(1 for row in csv.DictReader(f) if any(k.startswith("eval/") and v for k, v in row.items()))


def cmd_warmup(ns: argparse.Namespace) -> int:
    from train.warmup import warm_up

    print("compiling every numba kernel a first session uses (once per machine and install)")
    warm_up(jobs=ns.jobs)
    return 0


def cmd_pool(ns: argparse.Namespace) -> int:
    from thirtyone_env.evaluation import load_paired, new_streams_path, pool_paired

    if ns.out:
        new_streams_path(ns.out)
    result = pool_paired([load_paired(f) for f in ns.files])
    print(result.table())
    if ns.out:
        print(f"streams: {result.save(ns.out)}")
    return 0


def cmd_eval(ns: argparse.Namespace) -> int:
    from agents import make
    from thirtyone_env.evaluation import tournament
    from train.evaluate import add_ratings, plot_ratings

    rules = Rules.preset(ns.preset)
    rules.check_num_players(ns.players)
    agent_list = [make(spec, rules, ns.players, seed=ns.seed + i) for i, spec in enumerate(ns.agents)]
    if ns.paired and ns.save_replays:
        raise ValueError("--save-replays works with the plain tournament, not --paired")
    if ns.save_streams and not ns.paired:
        raise ValueError("--save-streams works with --paired (the plain tournament has no streams to pool)")
    if ns.paired:
        from thirtyone_env.evaluation import new_streams_path, paired

        if ns.save_streams:
            new_streams_path(ns.save_streams)  # before the matches, not after them
        if len(agent_list) < 2:
            raise ValueError("--paired needs at least two agents: the ones to measure, then the opponent")
        result = paired(agent_list[:-1], agent_list[-1], rules, ns.players, ns.matches, seed=ns.seed,
                        names=ns.agents[:-1], opponent_name=ns.agents[-1])
        print(result.table())
        if ns.save_streams:
            print(f"streams: {result.save(ns.save_streams)}")
        return 0
    t = add_ratings(tournament(agent_list, rules, ns.players, ns.matches, seed=ns.seed, seating=ns.mode or "auto",
                               names=ns.agents))
    print(t.table())
    if ns.plot:
        print(f"ratings plot: {plot_ratings(t, ns.plot)}")
    if ns.save_replays:
        print(save_replays(t, agent_list, ns.agents, Path(ns.save_replays)))
    return 0


def save_replays(t, agent_list: list, names: list[str], folder: Path) -> str:
    """Each match of tournament ``t`` played again on a recording table from its own seed stream
    (paired seeds make it the same match) and written as ``folder/match_NNNNN.json``."""
    import numpy as np

    from thirtyone_env.replay import record_match

    folder.mkdir(parents=True, exist_ok=True)
    differ = 0
    for k in range(t.matches):
        replay = record_match(agent_list, t.plan[k].tolist(), t.rules, t.seed, k, names)
        differ += not np.allclose(replay.rewards, t.match_rewards[k], atol=1e-5)
        replay.save(folder / f"match_{k:05d}.json")
    note = f" ({differ} played differently from the tournament: agents with random moves)" if differ else ""
    return f"replays: {t.matches} files in {folder}{note}"


def cmd_replay(ns: argparse.Namespace) -> int:
    from thirtyone_env.replay import format_replay, load

    print(format_replay(load(ns.file)))
    return 0


def cmd_serve(ns: argparse.Namespace) -> int:
    try:
        from thirtyone_web import serve
    except ImportError as exc:
        raise ValueError(f"the web app needs the web extra ({exc.name} is missing): "
                         'pip install "thirtyone-env[web]"') from None
    print(f"thirtyone: serving on http://{ns.host}:{ns.port}/ (Ctrl+C stops)")
    serve(ns.host, ns.port, max_games=ns.max_games, ttl=ns.idle_minutes * 60, replay_dir=ns.replays)
    return 0


def deal_outcome(before: dict[str, dict], after: dict[str, dict], unit: str) -> str:
    """``player_1 -1, player_3 out (lives)``: who paid or won, and who went out.

    A player on honor who pays goes out with no chips to lose, so going out is named apart.
    """
    changes = []
    for agent, info in after.items():
        delta = info["chips"] - before[agent]["chips"]
        went_out = before[agent]["in_play"] and not info["in_play"]
        words = ([f"{delta:+d}"] if delta else []) + (["out"] if went_out else [])
        if words:
            changes.append(" ".join([agent, *words]))
    return f"{', '.join(changes) or 'no change'} ({unit})"


def cmd_play(ns: argparse.Namespace) -> int:
    import numpy as np

    from agents import make
    from agents.human import HumanAgent
    from agents.policy import PolicyAgent
    from thirtyone_env import encoding, thirtyone_v0
    from thirtyone_env.actions import action_name
    from thirtyone_env.cards import card_str

    rules = Rules.preset(ns.preset)
    rules.check_num_players(ns.players)
    if not 0 <= ns.seat < ns.players:
        raise ValueError(f"--seat must be 0..{ns.players - 1}, got {ns.seat}")
    if ns.opponents == "pretrained" and f"{ns.preset}_{ns.players}p" not in PolicyAgent.available():
        print(f"(no pretrained policy for {ns.preset} with {ns.players} players; playing heuristic bots; "
              f"shipped: {', '.join(PolicyAgent.available())})")
        ns.opponents = "heuristic"
    bots = {seat: make(ns.opponents, rules, ns.players, seed=seat) for seat in range(ns.players)}
    human = HumanAgent(rules, ns.players)
    env = thirtyone_v0.env(num_players=ns.players, rules=rules)
    env.reset(seed=ns.seed)
    me = f"player_{ns.seat}"
    unit = "chips" if rules.economy == "pot" else "lives"

    def views(observation):
        return encoding.views(observation, rules.deck_size, ns.players)

    before = dict(env.unwrapped.infos)  # a copy: dead steps delete entries in place
    for agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        if term or trunc:
            if agent == me:
                print(f"\nMatch over. Your reward: {reward:+.2f}")
            env.step(None)
            continue
        seat = int(agent.split("_")[1])
        action = human.act(obs) if agent == me else bots[seat].act(obs)
        move = action_name(action, rules.deck)
        if move == "take discard":
            move = f"take {card_str(int(np.flatnonzero(views(obs['observation'])['discard_top'])[0]), rules.deck)}"
        env.step(action)
        if agent != me:
            print(f"  {agent}: {move}")
        infos = env.unwrapped.infos
        if infos[me]["deal"] != before[me]["deal"] or env.unwrapped.terminations[me]:
            print(f"-- deal {before[me]['deal']} over: {deal_outcome(before, infos, unit)} --")
            before = dict(infos)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    ns = parser.parse_args(argv)
    try:
        if ns.command in ("benchmark", "exploit"):
            from train import benchmark, exploit

            return {"benchmark": benchmark.command, "exploit": exploit.command}[ns.command](ns)
        return {"train": cmd_train, "eval": cmd_eval, "pool": cmd_pool, "play": cmd_play, "replay": cmd_replay,
                "serve": cmd_serve, "warmup": cmd_warmup}[ns.command](ns)
    except (ValueError, FileNotFoundError, FileExistsError) as exc:
        print(f"thirtyone {ns.command}: error: {exc}", file=sys.stderr)
        return 2
    except (KeyboardInterrupt, EOFError):
        print("\nbye", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
