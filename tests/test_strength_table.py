"""``scripts/strength_table.py``: its rows match the paired evaluation, and ``--streams`` saves what pools."""

from __future__ import annotations

import json
import pathlib
import runpy

import pytest

pytest.importorskip("torch")

from thirtyone_env.evaluation import load_paired  # noqa: E402

SCRIPT = pathlib.Path(__file__).parents[1] / "scripts" / "strength_table.py"


def run(monkeypatch, *argv: str) -> None:
    monkeypatch.setattr("sys.argv", ["strength_table.py", *argv])
    runpy.run_path(str(SCRIPT), run_name="__main__")


def test_streams_are_saved_per_cell_and_never_overwritten(tmp_path, monkeypatch):
    out, streams = tmp_path / "rows.jsonl", tmp_path / "streams"
    argv = ["--policies", "scat_2p", "--opponents", "random", "greedy", "--matches", "12", "--seed", "5",
            "--out", str(out), "--streams", str(streams)]
    run(monkeypatch, *argv)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["opponent"] for r in rows] == ["random", "greedy"]
    for row in rows:
        saved = load_paired(streams / f"scat_2p_{row['opponent']}_5.npz")
        assert saved.seeds == (5,) and saved.matches == row["matches"] == 12
        assert saved.opponent == row["opponent"] and saved.names == ["pretrained:scat_2p"]
        assert round(saved.win_rate(), 4) == row["win_rate"]
    # a second run into the same folder refuses before it plays a match: no row is added
    (streams / "scat_2p_random_5.npz").unlink()
    with pytest.raises(FileExistsError, match="scat_2p_greedy_5.npz exists"):
        run(monkeypatch, *argv)
    assert len(out.read_text().splitlines()) == 2 and not (streams / "scat_2p_random_5.npz").exists()


@pytest.mark.parametrize("argv, message", [
    (["--policies", "scat_2p", "scat_2p"], "--policies lists scat_2p more than once"),
    (["--opponents", "greedy", "random", "greedy"], "--opponents lists greedy more than once"),
    (["--policies", "scat_2p", "poker_2p"], "'poker_2p' is not PRESET_NP"),
    (["--policies", "scat_two"], "'scat_two' is not PRESET_NP"),
    # well-formed names, but an agent of some cell (the last, for the first two) cannot be built: no cell plays
    (["--policies", "scat_2p", "scat_9p"], "scat_9p against heuristic: no pretrained policy for 'scat' with 9"),
    (["--policies", "scat_2p", "--opponents", "heuristic", "heurstic"],
     "scat_2p against heurstic: unknown agent 'heurstic'"),
    (["--policies", "scat_2p", "--also", "search:worlds=8"], "search option 'worlds' is unknown"),
    (["--policies", "scat_2p", "--agent", "policy:/no/such/{name}.safetensors"],
     "scat_2p against heuristic: no checkpoint at /no/such/scat_2p.safetensors"),
])
def test_bad_cells_refuse_before_any_match(tmp_path, monkeypatch, capsys, argv, message):
    out = tmp_path / "rows.jsonl"
    with pytest.raises(SystemExit) as stop:
        run(monkeypatch, *argv, "--matches", "12", "--out", str(out))
    assert stop.value.code == 2 and message in capsys.readouterr().err
    assert not out.exists()  # no cell was played, not even the good policy's
