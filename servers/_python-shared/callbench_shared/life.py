"""Seed 004's Game of Life (B3/S23) on an unbounded plane of live cells, each an (x, y) pair."""

from collections import Counter
from collections.abc import Sequence

from .errors import WorkloadError
from .limits import MAX_BOARD_CELLS, MAX_COORDINATE, MAX_NTIMES, MAX_POPULATION, MIN_NTIMES

Cell = tuple[int, int]

# The acorn: 7 cells that take 5206 generations to settle.
ACORN: tuple[Cell, ...] = ((1, 0), (3, 1), (0, 2), (1, 2), (4, 2), (5, 2), (6, 2))

_NEIGHBOURS = tuple((dx, dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1) if dx or dy)


def setup() -> list[Cell]:
    """The acorn, sorted by x then y."""
    return sorted(ACORN)


def step(board: Sequence[Cell], ntimes: int) -> list[Cell]:
    """Advances `board` by `ntimes` generations within the contract's limits; live cells sorted by x then y."""
    if not MIN_NTIMES <= ntimes <= MAX_NTIMES:
        raise WorkloadError.invalid(f"ntimes must be in {MIN_NTIMES}..{MAX_NTIMES}")
    if len(board) > MAX_BOARD_CELLS:
        raise WorkloadError.invalid(f"board is limited to {MAX_BOARD_CELLS} cells")
    if any(abs(x) > MAX_COORDINATE or abs(y) > MAX_COORDINATE for x, y in board):
        raise WorkloadError.invalid(f"coordinates are limited to +-{MAX_COORDINATE}")
    live = set(board)
    for _ in range(ntimes):
        live = next_generation(live)
        if len(live) > MAX_POPULATION:
            raise WorkloadError.invalid(f"population grew past {MAX_POPULATION} cells")
    return sorted(live)


def next_generation(live: set[Cell]) -> set[Cell]:
    neighbours = Counter((x + dx, y + dy) for x, y in live for dx, dy in _NEIGHBOURS)
    return {cell for cell, n in neighbours.items() if n == 3 or (n == 2 and cell in live)}
