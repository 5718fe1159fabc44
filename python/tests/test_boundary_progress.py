"""The boundary run's time left: each repetition still to run counted at its cell's last measured time
(before that, its warm-up's guess; with neither, the mean of the known cells), the repetitions measured
again after the rounds included, a failed cell's dropped; the lines a log gets."""

from __future__ import annotations

import io

from callbench.boundary.progress import Progress, clock


def test_the_time_left_counts_what_is_still_to_run():
    p = Progress(["a", "b"], 2, quiet=False, stream=io.StringIO())
    assert p.seconds_left() != p.seconds_left()  # nothing known yet: NaN, "estimating the time left"
    p.guess("a", 1.0)
    assert p.seconds_left() == 4.0  # b at the mean of what is known
    p.done("a", 3.0)
    assert p.seconds_left() == 1 * 3.0 + 2 * 3.0
    p.expect("a", 2)  # two of its repetitions to measure again after the rounds
    assert p.seconds_left() == 2 * 3.0 + 2 * 3.0
    p.drop("b")
    assert p.seconds_left() == 6.0


def test_a_log_gets_the_lines_asked_for_and_the_last_one():
    out = io.StringIO()
    p = Progress(["a"], 1, quiet=False, stream=out)
    p.show("round 1/1: a", new_line=True)
    p.show("round 1/1: a")  # a redraw: within 10 s of the last line, nothing in a log
    p.note("callbench: a warning")
    p.end("every round measured in")
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("round 1/1: a · ") and "estimating the time left" in lines[0]
    assert len(lines) == 3 and lines[1] == "callbench: a warning"
    assert lines[2].startswith("every round measured in ") and lines[2].endswith(" s")


def test_clock_reads_like_the_terminal_lines():
    assert (clock(5.4), clock(61), clock(3720)) == ("5 s", "1 min 01 s", "1 h 02 min")
