"""The behaviour recorded before the engine-layer refactor, for every preset: unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fingerprint import fingerprint

RECORDED = json.loads((Path(__file__).parent / "data" / "fingerprint.json").read_text())


@pytest.fixture(scope="module")
def current() -> dict[str, str]:
    return fingerprint()


@pytest.mark.parametrize("key", sorted(RECORDED))
def test_same_behaviour_as_recorded(current, key):
    assert current[key] == RECORDED[key]
