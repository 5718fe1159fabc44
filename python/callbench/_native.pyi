"""Type stubs of the PyO3 extension (python/src/*.rs)."""

from os import PathLike
from typing import Any

__version__: str
PYO3_VERSION: str
RESULTS_SCHEMA: str

Cell = tuple[int, int]

def noop() -> None:
    """Does nothing: the cost of a call from Python into Rust and back."""

def life_setup() -> set[Cell]:
    """The acorn, as a new set of (x, y) cells."""

def life_step(board: set[Cell], ntimes: int) -> None:
    """Advances `board` by `ntimes` generations in place (ValueError outside the contract's limits)."""

def sha512_hex(text: str) -> str: ...
def echo_message(message: dict[str, Any]) -> dict[str, Any]:
    """The echo workload: `{"records": [...]}` checked (ValueError) and returned."""

def echo_payload(records: int) -> dict[str, Any]:
    """The contract's deterministic echo message of `records` records (about 190 bytes of JSON each)."""

def write_users_json(path: str | PathLike[str]) -> None:
    """Writes the contract's users.json (10,000 users) to `path`."""

def descriptor_set() -> bytes:
    """The contract's encoded FileDescriptorSet (contract/proto/callbench/v1/*.proto)."""

def summarise_results(json: str) -> str:
    """Fills summaries, noise flags, bottlenecks, disturbed notes and comparisons of a results.json text from its
    runs."""

def write_reports(json: str, dir: str | PathLike[str]) -> None:
    """Writes report.md and report.html of a results.json text into `dir`."""

class CpusAwake:
    """Idle CPUs kept polling (/dev/cpu_dma_latency held at 0) until `release()`; a context manager."""

    held: bool
    def release(self) -> None: ...
    def probe_steadiness(self, client_cpus: list[int], server_cpus: list[int]) -> str:
        """results.json's `steadiness` (JSON text) for these CPUs, probed under this hold (about 1.5 s)."""
    def __enter__(self) -> CpusAwake: ...
    def __exit__(self, *exc: object) -> bool: ...

def keep_cpus_awake(allow_idle: bool = False) -> CpusAwake:
    """Keeps idle CPUs out of deep idle states for as long as the result lives (not taken with `allow_idle`)."""

class MachineSnapshot:
    """The machine at one edge of a measured window (per-CPU counters, this process's and the server's CPU)."""

def machine_snapshot(server_pids: list[int] = ...) -> MachineSnapshot:
    """Reads the machine now; `server_pids`: the server's processes (none in-process)."""

def interference_between(
    before: MachineSnapshot, after: MachineSnapshot, client_cpus: list[int], server_cpus: list[int], calls: int
) -> str:
    """JSON text: the window's `interference` and `disturbed` (why, or null), judged as `callbench run` does."""

def slow_runs(runs_json: str, client: bool, server: bool) -> list[tuple[int, str]]:
    """A cell's repetitions run in a slow spell (CPU per call of a judged side above the median), slowest first."""

SLOW_ATTEMPTS_PER_REPETITION: int
"""How many times a slow repetition is measured again after the rounds (`callbench run`'s rule)."""

def may_rerun(this_repetition: int, cell_reruns: int, repetitions: int) -> bool:
    """Whether a disturbed repetition is measured again at once, by `callbench run`'s rule."""

def slow_against(run_json: str, runs_json: str, client: bool, server: bool) -> bool:
    """Whether a repetition measured again is itself slow against the medians of `runs_json`."""

class UserStore:
    """The auth workload's users: `UserStore(path, mode="preloaded")` (or "per-request")."""

    mode: str
    def __init__(self, path: str | PathLike[str], mode: str = "preloaded") -> None: ...
    def test(self, id: int, password: str) -> str:
        """The SHA-512 hex of `password` for user `id` (LookupError: no such user; ValueError: bad password)."""

def monotonic_now() -> float:
    """CLOCK_MONOTONIC in seconds (Python's `time.monotonic()` on Linux): the clock `run_load`'s start_at uses."""

class Cancel:
    """Ends a `run_load` early from another thread (as Ctrl-C ends `callbench load`)."""

    def __init__(self) -> None: ...
    def cancel(self) -> None: ...
    def cancelled(self) -> bool: ...

class Progress:
    """How many calls a `run_load` has done so far (warm-up included), read from another thread while it runs."""

    def __init__(self) -> None: ...
    def done(self) -> int:
        """Calls done; 0 before the run started."""

def run_load(
    args: list[str],
    start_at: float | None = None,
    cancel: Cancel | None = None,
    progress: Progress | None = None,
) -> tuple[str, bytes, bytes, float]:
    """`callbench load <args>`: (report JSON, latency histogram, uncorrected latency histogram, started_at).
    Histograms in µs, HdrHistogram V2 deflated; `start_at`/`started_at` on the monotonic clock."""

def planned_length(args: list[str]) -> float | None:
    """How long `callbench load <args>` is planned to take in seconds, warm-up included; None when only a count of
    calls bounds it."""

class PreparedLoad:
    """A load ready to run once (see `prepare_load`)."""

    def run(
        self, start_at: float | None = None, cancel: Cancel | None = None, progress: Progress | None = None
    ) -> tuple[str, bytes, bytes, float]:
        """Runs it (once), as `run_load` does."""

def prepare_load(args: list[str]) -> PreparedLoad:
    """`callbench load <args>` prepared (flags checked, target resolved, the server probed), not yet run."""

def merge_histograms(histograms: list[bytes]) -> bytes:
    """One serialised histogram holding every value of `histograms` (counts added per bucket)."""

def histogram_percentiles(histogram: bytes) -> str | None:
    """JSON of p50 … p99.9, max, min, mean and count of a serialised histogram; None when empty."""
