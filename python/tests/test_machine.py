"""Idle CPUs kept awake from Python (`_native.keep_cpus_awake`), as `callbench run` keeps them: the
kernel's request is 0 while the hold stands and back to what it was after; opting out takes nothing;
the steadiness probe under it says what was held."""

from __future__ import annotations

import json
import os
import struct

from callbench import _native

DEVICE = "/dev/cpu_dma_latency"


def request() -> int | None:
    """The kernel's current request in µs, as the device reports it (None where it cannot be read)."""
    try:
        with open(DEVICE, "rb") as f:
            return struct.unpack("i", f.read(4))[0]
    except OSError:
        return None


def test_the_request_is_zero_while_held_and_restored_after():
    before = request()
    awake = _native.keep_cpus_awake()
    writable = os.access(DEVICE, os.W_OK)
    assert awake.held == writable
    if writable:
        assert request() == 0
    awake.release()
    assert not awake.held
    assert request() == before


def test_opting_out_takes_nothing_and_the_probe_says_so():
    before = request()
    with _native.keep_cpus_awake(allow_idle=True) as awake:
        assert not awake.held and request() == before
        cpu = sorted(os.sched_getaffinity(0))[0]
        steadiness = json.loads(awake.probe_steadiness([cpu], [cpu]))
    assert steadiness["idle"]["held"] is False and steadiness["idle"]["why_not"] == "--allow-cpu-idle"
    assert [c["cpu"] for c in steadiness["cpus"]] == [cpu] and steadiness["cpus"][0]["loop_ns"] > 0
    assert 0 <= steadiness["loop_spread"] <= steadiness["cpus"][0]["spread"]
    assert not any("could not be kept awake" in w for w in steadiness["warnings"])
