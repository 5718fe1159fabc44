"""Where a boundary run is and how long it has left, on stderr: one line redrawn on a terminal,
otherwise a line when a round starts and at most every 10 s within it (a log stays readable).
The time left counts each remaining cell at its own last measured time, and cells not yet
measured at the mean of those that were."""

from __future__ import annotations

import sys
import time


def clock(seconds: float) -> str:
    s = max(0, round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s // 60 % 60:02d} min"


class Progress:
    def __init__(self, cells: list[str], repetitions: int, quiet: bool, stream=None) -> None:
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self.terminal = self.stream.isatty()
        self.repetitions = repetitions
        self.left = {cell: repetitions for cell in cells}
        self.took: dict[str, float] = {}
        self.started = time.monotonic()
        self.last_line = 0.0

    def seconds_left(self) -> float:
        mean = sum(self.took.values()) / len(self.took) if self.took else None
        if mean is None:
            return float("nan")
        return sum(n * self.took.get(cell, mean) for cell, n in self.left.items())

    def line(self, what: str) -> str:
        left = self.seconds_left()
        eta = "estimating the time left" if left != left else f"about {clock(left)} left"
        return f"{what} · {clock(time.monotonic() - self.started)} so far · {eta}"

    def show(self, what: str, new_line: bool = False) -> None:
        if self.quiet:
            return
        now = time.monotonic()
        if self.terminal:
            print(f"\r{self.line(what):<100}", end="", file=self.stream, flush=True)
        elif new_line or now - self.last_line >= 10:
            print(self.line(what), file=self.stream, flush=True)
            self.last_line = now

    def done(self, cell: str, seconds: float) -> None:
        self.left[cell] = max(0, self.left.get(cell, 0) - 1)
        self.took[cell] = seconds

    def end(self) -> None:
        if self.terminal and not self.quiet:
            print("\r" + " " * 100 + "\r", end="", file=self.stream, flush=True)
