"""Layering: what imports what, and who may read the engine's state layout."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "thirtyone_env"


def run_python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_the_batched_engine_needs_neither_pettingzoo_nor_gymnasium():
    out = run_python(
        "import sys, thirtyone_env.vector\n"
        "assert 'pettingzoo' not in sys.modules and 'gymnasium' not in sys.modules, "
        "sorted(m for m in sys.modules if m.split('.')[0] in ('pettingzoo', 'gymnasium'))\n"
        "print('ok')"
    )
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


@pytest.mark.parametrize(
    "imports",
    [
        "import thirtyone_env\nassert 'gymnasium' not in sys.modules\nimport gymnasium",  # post-import hook
        "import gymnasium\nassert 'ThirtyOne-v0' not in gymnasium.registry\nimport thirtyone_env",
    ],
    ids=["thirtyone_env-first", "gymnasium-first"],
)
def test_gymnasium_make_works_in_either_import_order(imports):
    out = run_python(
        f"import sys\n{imports}\n"
        "env = gymnasium.make('ThirtyOne-v0')\n"
        "obs, info = env.reset(seed=0)\n"
        "assert env.observation_space.contains(obs) and info['action_mask'].any()\n"
        "assert gymnasium.spec('ThirtyOne-v0').entry_point == 'thirtyone_env.wrappers:SingleAgentEnv'\n"
        "print('ok')"
    )
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def _imported_modules(path: Path) -> set[str]:
    """Every module an ``import`` or ``from ... import`` statement names, anywhere in the file (lazy ones too)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
    return found


def test_the_core_never_imports_the_layers_above():
    files = sorted(CORE.rglob("*.py"))
    assert len(files) > 20 and CORE / "engine" / "tables.py" in files
    offenders = {}
    dynamic = re.compile(r"""(import_module|__import__)\(\s*f?["'](agents|train)\b""")
    for path in files:
        above = {m for m in _imported_modules(path) if m.split(".")[0] in ("agents", "train")}
        if above or dynamic.search(path.read_text()):
            offenders[str(path.relative_to(ROOT))] = sorted(above) or ["import_module"]
    assert offenders == {}
    # the check itself sees an import where there is one
    assert "thirtyone_env.engine.tables" in _imported_modules(CORE / "engine" / "__init__.py")


ACCEPTANCE = re.compile(r"\bS_[A-Z_]+\b|\._state\b|engine\._[a-z]")  # state offsets, raw state, engine privates
LAYERS_ABOVE = ("agents", "train", "scripts", "benchmarks", "examples")


def _layout_readers(paths: list[Path]) -> list[str]:
    hits = []
    for path in paths:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if ACCEPTANCE.search(line):
                hits.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    return hits


def test_the_adapters_read_named_views_only():
    paths = [CORE / name for name in ("env.py", "vector.py", "wrappers.py", "render.py")]
    assert all(p.exists() for p in paths)
    assert _layout_readers(paths) == []
    # the pattern does catch what it is for
    assert ACCEPTANCE.search("s[S_DONE]") and ACCEPTANCE.search("env._state.copy()")
    assert ACCEPTANCE.search("engine._step(s)") and not ACCEPTANCE.search("self.table.finished[0]")


@pytest.mark.parametrize("folder", LAYERS_ABOVE)
def test_the_layers_above_read_named_views_only(folder):
    paths = sorted((ROOT / folder).rglob("*.py"))
    assert paths, folder
    assert _layout_readers(paths) == []
