"""The workloads in pure Python, with the same interfaces as the PyO3 bindings: the baseline that
crosses no boundary at all. Written as plain idiomatic Python (sets, collections.Counter, json, hashlib)."""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from os import PathLike
from typing import Any

Cell = tuple[int, int]

MIN_NTIMES, MAX_NTIMES = 1, 1000
MAX_POPULATION = 50_000
ACORN: tuple[Cell, ...] = ((1, 0), (3, 1), (0, 2), (1, 2), (4, 2), (5, 2), (6, 2))
NEIGHBOURS = tuple((dx, dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1) if dx or dy)


def noop() -> None:
    """Does nothing: the cost of a Python function call."""


def life_setup() -> set[Cell]:
    return set(ACORN)


def life_step(board: set[Cell], ntimes: int) -> None:
    """Advances `board` by `ntimes` generations (B3/S23), in place."""
    if not MIN_NTIMES <= ntimes <= MAX_NTIMES:
        raise ValueError(f"ntimes must be in {MIN_NTIMES}..{MAX_NTIMES}")
    live = board
    for _ in range(ntimes):
        counts = Counter((x + dx, y + dy) for x, y in live for dx, dy in NEIGHBOURS)
        live = {cell for cell, n in counts.items() if n == 3 or (n == 2 and cell in live)}
        if len(live) > MAX_POPULATION:
            raise ValueError(f"population grew past {MAX_POPULATION} cells")
    if live is not board:
        board.clear()
        board.update(live)


def sha512_hex(text: str) -> str:
    return hashlib.sha512(text.encode()).hexdigest()


class UserStore:
    """users.json parsed once (`preloaded`) or read, parsed and searched on every call (`per-request`)."""

    def __init__(self, path: str | PathLike[str], mode: str = "preloaded") -> None:
        if mode not in ("preloaded", "per-request"):
            raise ValueError(f"unknown mode '{mode}' (expected preloaded or per-request)")
        self.path, self.mode = path, mode
        self._users = {u["id"]: u["hash"] for u in self._read()} if mode == "preloaded" else None

    def _read(self) -> list[dict[str, Any]]:
        with open(self.path, encoding="utf-8") as f:
            return json.load(f)

    def test(self, id: int, password: str) -> str:
        if not 1 <= len(password.encode()) <= 1024:
            raise ValueError("password must be 1..1024 bytes")
        found = id in self._users if self._users is not None else any(u["id"] == id for u in self._read())
        if not found:
            raise LookupError(f"no user {id}")
        return sha512_hex(password)


def echo_message(message: dict[str, Any]) -> dict[str, Any]:
    """The message back, after the contract's check (finite numbers)."""
    for i, r in enumerate(message["records"]):
        location = r.get("location") or {}
        numbers = [r.get("score", 0.0), location.get("latitude", 0.0), location.get("longitude", 0.0)]
        if not all(math.isfinite(n) for n in numbers):
            raise ValueError(f"records[{i}]: numbers must be finite")
    return message
