"""Where a boundary run is and how long it has left, on stderr: one line redrawn on a terminal,
otherwise a line when a round starts and at most every 10 s within it (a log stays readable), and a
last line with the whole time.

The time left counts each remaining repetition of a cell at that cell's last measured time; before a
cell's first repetition, at the time its warm-up calls took per call times its calls (`guess`), and
with neither, at the mean of the cells measured so far."""

from __future__ import annotations

import os
import sys
import time
from typing import TextIO


def clock(seconds: float) -> str:
    s = max(0, round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s // 60 % 60:02d} min"


class Progress:
    def __init__(self, cells: list[str], repetitions: int, quiet: bool, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self.terminal = self.stream.isatty()
        self.repetitions = repetitions
        self.left = {cell: repetitions for cell in cells}
        self.took: dict[str, float] = {}
        self.guessed: dict[str, float] = {}
        self.started = time.monotonic()
        self.last_line = float("-inf")
        self.drawn = 0

    def guess(self, cell: str, seconds: float) -> None:
        """What one repetition of `cell` should take, before it was measured (from its warm-up)."""
        self.guessed[cell] = seconds

    def seconds_left(self) -> float:
        known = {**self.guessed, **self.took}
        if not known:
            return float("nan")
        mean = sum(known.values()) / len(known)
        return sum(n * known.get(cell, mean) for cell, n in self.left.items())

    def line(self, what: str) -> str:
        left = self.seconds_left()
        eta = "estimating the time left" if left != left else f"about {clock(left)} left"
        return f"{what} · {clock(time.monotonic() - self.started)} so far · {eta}"

    def show(self, what: str, new_line: bool = False) -> None:
        if self.quiet:
            return
        now = time.monotonic()
        if self.terminal:
            try:
                width = os.get_terminal_size(self.stream.fileno()).columns
            except (OSError, ValueError, AttributeError):
                width = 100
            text = self.line(what)[: max(20, width - 1)]  # a line longer than the terminal cannot be redrawn
            print(f"\r{text:<{self.drawn}}", end="", file=self.stream, flush=True)
            self.drawn = len(text)
        elif new_line or now - self.last_line >= 10:
            print(self.line(what), file=self.stream, flush=True)
            self.last_line = now

    def note(self, text: str) -> None:
        """A line of its own (a warning: printed even when quiet), below the redrawn one."""
        if self.terminal and self.drawn:
            print("\r" + " " * self.drawn + "\r", end="", file=self.stream)
            self.drawn = 0
        print(text, file=self.stream, flush=True)

    def done(self, cell: str, seconds: float) -> None:
        self.left[cell] = max(0, self.left.get(cell, 0) - 1)
        self.took[cell] = seconds

    def expect(self, cell: str, repetitions: int) -> None:
        """`repetitions` more of `cell` are to run (measured again after the rounds)."""
        self.left[cell] = repetitions

    def drop(self, cell: str) -> None:
        """`cell` failed: its remaining repetitions will not run."""
        self.left[cell] = 0

    def end(self, what: str) -> None:
        """The last line: `what` ("finished in", "interrupted after") and the whole time."""
        if self.quiet:
            return
        if self.terminal:
            print("\r" + " " * self.drawn + "\r", end="", file=self.stream)
        print(f"{what} {clock(time.monotonic() - self.started)}", file=self.stream, flush=True)
