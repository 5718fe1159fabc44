"""callbench.load() from Python against a real server: the Rust engine's report and histograms, a run split
into segments whose calls add up to the one-machine run by the server's own count, a common start time,
and merging that adds histograms instead of averaging percentiles."""

from __future__ import annotations

import json
import struct
import threading
from fractions import Fraction

import pytest
from conftest import REPO

import callbench.engine as engine
from callbench import _native
from callbench.servers import Server, find_cli


def percentiles(histogram: bytes) -> dict[str, float]:
    """engine.percentiles of a histogram that holds values (None only for an empty one)."""
    p = engine.percentiles(histogram)
    assert p is not None, "an empty histogram"
    return p


@pytest.fixture(scope="module")
def server(tmp_path_factory, monkeypatch_module):
    # The server counts every call it answers into this file (see crates/serverkit/src/answered.rs).
    counter = tmp_path_factory.mktemp("answered") / "count"
    monkeypatch_module.setenv("CALLBENCH_ANSWERED_FILE", str(counter))
    with Server(REPO, find_cli(REPO), "rust-axum", None, build=False) as s:
        yield s, counter


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as mp:
        yield mp


def answered(counter) -> int:
    return struct.unpack("<Q", counter.read_bytes()[:8])[0]


def run_split(url: str, parts: list[tuple], **options) -> list[engine.LoadResult]:
    """Every segment run at once, from a common start time, as the machines of a split would."""
    start = _native.monotonic_now() + 0.5
    results: list = [None] * len(parts)
    errors: list = []

    def one(i: int) -> None:
        try:
            results[i] = engine.load(url, segment=parts[i], start_at=start, **options)
        except Exception as e:  # noqa: BLE001 - reported below, with the segment
            errors.append((parts[i], e))

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(parts))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for r in results:
        assert r.started_at >= start, "a segment started before the common start time"
    return results


def test_flags_are_the_clis():
    assert engine.flags(
        "http://x",
        {
            "concurrency": 5,
            "http2": True,
            "gzip": False,
            "headers": ["A: b", "C: d"],
            "duration": 2,
            "rate_shape": "10@1s",
        },
    ) == [
        "http://x",
        "--concurrency",
        "5",
        "--http2",
        "--header",
        "A: b",
        "--header",
        "C: d",
        "--duration",
        "2s",
        "--rate-shape",
        "10@1s",
    ]
    assert engine.segment_flag((0, Fraction(1, 3))) == "0:1/3"
    assert engine.segment_flag(("1/3", 1)) == "1/3:1"
    assert engine.segment_flag((0.5, 1)) == "1/2:1"
    with pytest.raises(ValueError):
        engine.segment_flag((Fraction(1, 2), Fraction(1, 3)))


def test_bad_options_are_one_line_errors_before_any_call():
    with pytest.raises(ValueError, match="unexpected argument"):
        engine.load("inproc:auth", no_such_flag=1)
    with pytest.raises(RuntimeError, match="gets none"):
        engine.load("inproc:auth", segment=(0, Fraction(1, 2)), calls=10)
    with pytest.raises(RuntimeError, match="start time passed"):
        engine.load("inproc:auth", calls=10, start_at=_native.monotonic_now() - 1)


def test_an_in_process_load_reports_like_the_cli():
    r = engine.load("inproc:echo", calls=500)
    assert r.report["calls"] == {"ok": 500, "errors": 0}
    assert r.report["protocol"] == "inproc" and "segment" not in r.report["settings"]
    assert percentiles(r.histogram)["count"] == 500


def test_closed_loop_segments_add_up_to_the_whole_run(server):
    s, counter = server
    url = f"http://{s.addr}/"
    before = answered(counter)
    parts = [(0, Fraction(1, 3)), (Fraction(1, 3), Fraction(2, 3)), (Fraction(2, 3), 1)]
    results = run_split(url, parts, workload="students", calls=1001, concurrency=6)
    assert [r.report["calls"]["ok"] for r in results] == [333, 334, 334]
    assert [r.report["settings"]["concurrency"] for r in results] == [2, 2, 2]
    merged = engine.merge(results)
    assert merged["calls"] == {"ok": 1001, "errors": 0}
    assert merged["latency_us"]["count"] == 1001
    assert answered(counter) - before == 1001, "the server's own count"


def test_an_open_loop_rate_split_is_the_one_machine_schedule(server):
    s, counter = server
    url = f"http://{s.addr}/"
    before = answered(counter)
    results = run_split(url, [(0, Fraction(1, 2)), (Fraction(1, 2), 1)], workload="students", rate=400, duration="1s")
    assert [r.report["settings"]["segment"] for r in results] == ["0:1/2", "1/2:1"]
    assert [r.report["rate"]["requested"] for r in results] == [200.0, 200.0]
    merged = engine.merge(results)
    # Even spacing dealt call by call: the second's 400 starts, 200 each (a start the machine could not
    # make in time is counted as not started, never lost).
    made = merged["calls"]["ok"] + merged["calls"]["errors"]
    assert made + merged["rate"]["not_started"] == 400 and merged["rate"]["requested"] == 400.0
    assert answered(counter) - before == made


def test_merged_histograms_hold_every_value():
    a = engine.load("inproc:echo", calls=300)
    b = engine.load("inproc:auth", calls=200)
    pa, pb = percentiles(a.histogram), percentiles(b.histogram)
    merged = percentiles(engine.merge_histograms([a.histogram, b.histogram]))
    assert merged["count"] == 500
    assert merged["max"] == max(pa["max"], pb["max"]) and merged["min"] == min(pa["min"], pb["min"])
    # A histogram merged with itself: twice the counts, the same percentiles.
    twice = percentiles(engine.merge_histograms([a.histogram, a.histogram]))
    assert twice["count"] == 600 and twice["p50"] == pa["p50"] and twice["p99"] == pa["p99"]
    with pytest.raises(ValueError):
        engine.merge_histograms([b"not a histogram"])


def test_a_run_cancelled_from_another_thread_keeps_what_it_measured():
    cancel = _native.Cancel()
    done = threading.Event()
    out: list = []

    def run() -> None:
        out.append(_native.run_load(["inproc:noop", "-z", "60s"], None, cancel))
        done.set()

    t = threading.Thread(target=run)
    t.start()
    # Cancelled whenever it is (before its first call or during its run), it ends within its 60 s.
    assert not done.wait(0.3), "a 60 s run ended by itself"
    cancel.cancel()
    t.join(timeout=60)
    report = json.loads(out[0][0])
    assert report["interrupted"] is True and cancel.cancelled()
    assert (percentiles(out[0][1]) or {"count": 0})["count"] == report["calls"]["ok"]
