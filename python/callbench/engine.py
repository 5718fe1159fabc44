"""callbench's load engine from Python: `load()` runs what `callbench load` runs (the same flags, the same
Rust engine) and returns its report with the latency histograms serialised, so that the runs of several
machines merge exactly (`merge()`): counts are summed, histograms added bucket by bucket, and percentiles
read from the merged histogram, never averaged."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from . import _native

# Keyword names whose flag is not the name with dashes.
_FLAG_NAMES = {"headers": "header", "protos": "proto", "import_paths": "import-path", "objective": "slo"}


@dataclass
class LoadResult:
    """One run: `report` is `callbench load -o json`'s document; the histograms hold latencies in µs
    (from the intended start, and from the actual start), serialised as HdrHistogram V2; `started_at` is
    when the engine started, on this machine's monotonic clock (`time.monotonic()`)."""

    report: dict[str, Any]
    histogram: bytes
    uncorrected_histogram: bytes
    started_at: float


def fraction(value: Any) -> Fraction:
    """An exact fraction of a run: Fraction, int, '1/3', '0.25', or a float (to the nearest 1/1000000)."""
    if isinstance(value, float):
        return Fraction(value).limit_denominator(1_000_000)
    return Fraction(value)


def segment_flag(segment: tuple[Any, Any]) -> str:
    """`(Fraction(1, 3), Fraction(2, 3))` as `--segment`'s `1/3:2/3`."""
    a, b = (fraction(x) for x in segment)
    if not 0 <= a < b <= 1:
        raise ValueError(f"a segment (a, b) needs 0 <= a < b <= 1, not ({a}, {b})")
    return f"{a}:{b}"


def flags(target: str, options: dict[str, Any]) -> list[str]:
    """`callbench load`'s command line for `target` and keyword options (`concurrency=50`, `http2=True`,
    `headers=["A: b"]`, `duration="10s"` or `duration=10` seconds)."""
    args = [target]
    for name, value in options.items():
        if value is None or value is False:
            continue
        flag = "--" + _FLAG_NAMES.get(name, name.replace("_", "-"))
        if value is True:
            args.append(flag)
        elif isinstance(value, (list, tuple)):
            for v in value:
                args += [flag, str(v)]
        elif name in ("duration", "warmup", "timeout") and isinstance(value, (int, float)):
            args += [flag, f"{value}s"]
        else:
            args += [flag, str(value)]
    return args


def load(
    target: str,
    *,
    segment: tuple[Any, Any] | None = None,
    stripes: int | None = None,
    start_at: float | None = None,
    **options: Any,
) -> LoadResult:
    """Runs one load of `target` with `callbench load`'s options as keywords. `segment=(a, b)`: this
    machine's share of a run split across several (callers, connections and calls split as ⌊N·b⌋ − ⌊N·a⌋,
    an open-loop schedule dealt call by call); `start_at`: a `time.monotonic()` time to start at once the
    target is prepared. Raises ValueError for bad options, RuntimeError when the run cannot be made."""
    args = flags(target, options)
    if segment is not None:
        args += ["--segment", segment_flag(segment)]
    if stripes is not None:
        args += ["--segment-stripes", str(stripes)]
    report, histogram, uncorrected, started = _native.run_load(args, start_at)
    return LoadResult(json.loads(report), bytes(histogram), bytes(uncorrected), started)


def percentiles(histogram: bytes) -> dict[str, float] | None:
    """p50 … max, min, mean and count (µs) of a serialised histogram; None when empty."""
    text = _native.histogram_percentiles(histogram)
    return None if text is None else json.loads(text)


def merge_histograms(histograms: Iterable[bytes]) -> bytes:
    return bytes(_native.merge_histograms(list(histograms)))


def merge(results: Sequence[LoadResult]) -> dict[str, Any]:
    """One report for runs of the same load on several machines: calls, errors, connections and bytes
    summed; client CPU per call over all calls; latencies from the merged histograms; throughput over the
    longest window (the machines started together); the rate requested and achieved summed."""
    if not results:
        raise ValueError("nothing to merge")
    reports = [r.report for r in results]
    ok = sum(r["calls"]["ok"] for r in reports)
    failed = sum(r["calls"]["errors"] for r in reports)
    calls = ok + failed
    errors: dict[str, int] = {}
    for r in reports:
        for kind, n in r["errors"].items():
            errors[kind] = errors.get(kind, 0) + n
    window = max(r["duration_s"] for r in reports)

    def over_all_calls(get: Any) -> float:
        # Per-call figures are over each machine's own calls: back to totals, then over all calls.
        total = sum(get(r) * (r["calls"]["ok"] + r["calls"]["errors"]) for r in reports)
        return total / calls if calls else 0.0

    merged_latency = merge_histograms(r.histogram for r in results)
    merged_uncorrected = merge_histograms(r.uncorrected_histogram for r in results)
    rates = [r["rate"] for r in reports if r.get("rate")]
    return {
        "machines": len(reports),
        "calls": {"ok": ok, "errors": failed},
        "errors": errors,
        "duration_s": window,
        "throughput_per_s": ok / window if window > 0 else 0.0,
        "latency_us": percentiles(merged_latency),
        "latency_uncorrected_us": percentiles(merged_uncorrected),
        "connections_opened": sum(r["connections_opened"] for r in reports),
        "goaways": sum(r["goaways"] for r in reports),
        "retries": sum(r["retries"] for r in reports),
        "wire_bytes_per_call": {
            k: over_all_calls(lambda r, k=k: r["wire_bytes_per_call"][k]) for k in reports[0]["wire_bytes_per_call"]
        },
        "payload_bytes_per_call": {
            k: over_all_calls(lambda r, k=k: r["payload_bytes_per_call"][k])
            for k in reports[0]["payload_bytes_per_call"]
        },
        "client_cpu_us_per_call": over_all_calls(lambda r: r["client_cpu_us_per_call"]),
        # Each machine holds its own memory: the largest of them.
        "client_rss_peak_kib": max((r.get("client_rss_peak_kib") or 0 for r in reports), default=0) or None,
        "rate": {
            "requested": sum(r["requested"] for r in rates),
            "achieved": sum(r["achieved"] for r in rates),
            "late_starts": sum(r["late_starts"] for r in rates),
            "not_started": sum(r["not_started"] for r in rates),
        }
        if rates
        else None,
        "histogram": merged_latency,
    }
