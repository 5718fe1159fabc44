"""Shared fixtures: the checkout (for the contract's vectors and the servers) and users.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import callbench

REPO = Path(__file__).resolve().parents[2]


def vectors(workload: str) -> list[dict]:
    return json.loads((REPO / "contract" / "vectors" / f"{workload}.json").read_text())["vectors"]


@pytest.fixture(scope="session")
def users(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("users") / "users.json"
    callbench.write_users_json(path)
    return path
