"""The numba cache guard: an edit that can change a kernel drops the cached kernels; any other keeps them."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from thirtyone_env import jit


def make_tree(root: Path) -> Path:
    """A copy of the kernel packages' sources (no caches), and one fake cached kernel per package."""
    for name in jit.KERNEL_PACKAGES:
        shutil.copytree(jit.ROOT / name, root / name, ignore=shutil.ignore_patterns("__pycache__", "*.safetensors",
                                                                                    "static", "pretrained"))
    for name in ("thirtyone_env/engine", "agents"):
        (root / name / "__pycache__").mkdir(parents=True, exist_ok=True)
    return root


def cached(root: Path) -> list[Path]:
    return sorted(root.rglob("__pycache__/*.nbi"))


def fake_cache(root: Path) -> None:
    for name in ("thirtyone_env/engine", "agents"):
        (root / name / "__pycache__" / "kernel-1.py311.nbi").write_text("index")


def touch(path: Path) -> None:
    path.write_text(path.read_text() + "\n# edited\n")
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))


def test_kernel_sources_cover_kernels_and_the_core_they_import_but_not_the_app():
    packages = [jit.ROOT / name for name in jit.KERNEL_PACKAGES]
    names = {str(f.relative_to(jit.ROOT)) for f in jit.kernel_sources(jit.ROOT, packages)}
    assert {"thirtyone_env/engine/turn.py", "thirtyone_env/engine/layout.py", "thirtyone_env/rules.py",
            "agents/heuristic.py", "agents/greedy.py", "thirtyone_env/jit.py"} <= names
    assert not {"train/cli.py", "agents/make.py", "thirtyone_env/wrappers.py"} & names


def test_guard_drops_caches_only_after_an_edit_a_kernel_can_see(tmp_path):
    root = make_tree(tmp_path)
    assert jit.guard_cache(root)  # no stamp yet: drop (nothing) and stamp
    fake_cache(root)
    assert not jit.guard_cache(root) and len(cached(root)) == 2  # unchanged: kept
    touch(root / "train" / "cli.py")
    assert not jit.guard_cache(root) and len(cached(root)) == 2  # the CLI holds no kernel: kept
    touch(root / "thirtyone_env" / "engine" / "layout.py")  # offsets baked into every kernel
    assert jit.guard_cache(root) and cached(root) == []
    fake_cache(root)
    touch(root / "agents" / "heuristic.py")
    assert jit.guard_cache(root) and cached(root) == []
