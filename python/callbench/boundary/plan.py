"""What the boundary table measures: the mechanisms (how Python reaches the work) and the operations
(seed 004's setup and step rows, the no-op, auth and echo), as cells of a callbench results.json."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from .. import _native, pure

PASSWORD, USER_ID = "callbench", 9999
ECHO_RECORDS = 10
STEP_NTIMES = (1, 10, 100, 1000)
STEP_GENERATIONS = 10_000  # per row, as the article: 10000/ntimes loops of step(ntimes)


@dataclass(frozen=True)
class Mechanism:
    name: str  # the cell's `server`
    transport: str  # inproc, rest-h1 or grpc
    server: str | None  # the callbench server it calls, when it goes over the wire
    library: str  # the Python package (or module) that does the call
    description: str


def mechanisms(rest_server: str, grpc_server: str) -> list[Mechanism]:
    return [
        Mechanism("pyo3", "inproc", None, "callbench._native", "the Rust workload through PyO3 bindings"),
        Mechanism("python", "inproc", None, "callbench.pure", "the same workload in pure Python"),
        Mechanism(f"requests+{rest_server}", "rest-h1", rest_server, "requests", "REST/JSON with requests (Session)"),
        Mechanism(
            f"requests-nosession+{rest_server}",
            "rest-h1",
            rest_server,
            "requests",
            "REST/JSON with requests.get/post, no Session: a new connection per call, as seed 004",
        ),
        Mechanism(f"httpx+{rest_server}", "rest-h1", rest_server, "httpx", "REST/JSON with httpx (Client)"),
        Mechanism(f"grpcio+{grpc_server}", "grpc", grpc_server, "grpcio", "gRPC with grpcio (one channel)"),
    ]


def article_rest(names: list[str]) -> str | None:
    """The mechanism beside which the article's rpc figures go: requests without a Session (as the
    article called), else with one."""
    for prefix in ("requests-nosession+", "requests+"):
        found = next((n for n in names if n.startswith(prefix)), None)
        if found:
            return found
    return None


@dataclass
class Operation:
    experiment: str
    workload: str
    loops: int
    ntimes: int | None = None
    params: dict[str, Any] = field(default_factory=dict)

    def key(self) -> str:
        return self.experiment + (f"/{self.ntimes}" if self.ntimes else "")


def operations(scale: float, noop_loops: int) -> list[Operation]:
    """Seed 004's rows (setup ×1000; step with ntimes 1..1000, 10000/ntimes loops) scaled by `scale`,
    the no-op, and auth and echo ×1000 scaled."""

    def n(loops: float) -> int:
        return max(1, round(loops * scale))

    ops = [Operation("noop", "noop", noop_loops), Operation("setup", "life", n(1000))]
    ops += [Operation("step", "life", n(STEP_GENERATIONS / k), k, {"ntimes": k}) for k in STEP_NTIMES]
    ops += [
        Operation("auth", "auth", n(1000), params={"mode": "preloaded", "user_id": USER_ID}),
        Operation("echo", "echo", n(1000), params={"records": ECHO_RECORDS}),
    ]
    return ops


class Target:
    """The workload functions of one mechanism, with the interfaces of the bindings."""

    def __init__(self, impl: Any, users: Any) -> None:
        self.impl, self.users = impl, users

    def noop(self) -> None:
        self.impl.noop()

    def auth(self) -> str:
        return self.users.test(USER_ID, PASSWORD) if self.users else self.impl.auth(USER_ID, PASSWORD)


def inproc_target(name: str, users_path: str | None) -> Target:
    """PyO3 or pure Python; auth needs `users_path` (users.json, parsed once here)."""
    impl = _native if name == "pyo3" else pure
    return Target(impl, impl.UserStore(users_path) if users_path else None)


def expected_board(generations: int) -> set[tuple[int, int]]:
    board = _native.life_setup()
    while generations > 0:
        k = min(generations, 1000)
        _native.life_step(board, k)
        generations -= k
    return board


def repetition_call(op: Operation, target: Target) -> tuple[Callable[[], object], Callable[[], str | None]]:
    """The call a repetition times (fresh state per repetition) and a check of what it produced."""
    impl = target.impl
    if op.experiment == "noop":
        return target.noop, lambda: None
    if op.experiment == "setup":
        expected = pure.life_setup()
        last: list[Any] = [None]

        def setup() -> None:
            last[0] = impl.life_setup()

        return setup, lambda: None if last[0] == expected else "setup did not return the acorn"
    if op.experiment == "step":
        board = pure.life_setup()
        ntimes = op.ntimes or 1
        want = expected_board(op.loops * ntimes)
        return (lambda: impl.life_step(board, ntimes)), lambda: None if board == want else "wrong board after the steps"
    if op.experiment == "auth":
        hashes: list[str] = []
        want_hash = _native.sha512_hex(PASSWORD)
        return (lambda: hashes.append(target.auth())), lambda: None if set(hashes) == {want_hash} else "wrong hash"
    if op.experiment == "echo":
        message = _native.echo_payload(ECHO_RECORDS)
        answers: list[Any] = []

        def echo() -> None:
            answers.append(impl.echo_message(message))

        return echo, lambda: None if all(a == message for a in answers[:1]) else "echo changed the message"
    raise ValueError(op.experiment)
