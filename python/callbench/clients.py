"""The workloads over the wire from Python, with the same interfaces as the bindings (Python values in,
Python values out, as seed 004's rpc_setup/rpc_step): REST/JSON with `requests` or `httpx`, gRPC with
`grpcio`. Each client keeps one connection open (a session / channel), as a real client would.
The no-op is each server's cheapest call: `GET /health` and `grpc.health.v1.Health/Check`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Cell = tuple[int, int]


class CallFailed(RuntimeError):
    """The server answered with an error status."""


class _Rest:
    """Shared REST mapping (contract/README.md); subclasses give `_get`, `_post`, `_put`."""

    def __init__(self, base_url: str) -> None:
        self.base = base_url.rstrip("/")

    def _checked(self, response: Any, what: str) -> Any:
        if response.status_code != 200:
            raise CallFailed(f"{what}: HTTP {response.status_code} {response.text[:200]}")
        return response.json()

    def _get(self, path: str) -> Any:
        raise NotImplementedError

    def _post(self, path: str, body: Any) -> Any:
        raise NotImplementedError

    def _put(self, path: str, body: Any) -> Any:
        raise NotImplementedError

    def noop(self) -> None:
        self._checked(self._get("/health"), "GET /health")

    def life_setup(self) -> set[Cell]:
        return {(x, y) for x, y in self._checked(self._get("/life/setup"), "GET /life/setup")["board"]}

    def life_step(self, board: set[Cell], ntimes: int) -> None:
        body = {"ntimes": ntimes, "board": list(board)}
        answer = self._checked(self._post("/life/step", body), "POST /life/step")
        board.clear()
        board.update((x, y) for x, y in answer["board"])

    def auth(self, id: int, password: str) -> str:
        return self._checked(self._put(f"/auth/{id}", {"password": password}), f"PUT /auth/{id}")["hash"]

    def echo_message(self, message: dict[str, Any]) -> dict[str, Any]:
        return self._checked(self._post("/echo", message), "POST /echo")


class RequestsClient(_Rest):
    """REST with requests (one Session: keep-alive)."""

    library = "requests"

    def __init__(self, base_url: str) -> None:
        import requests

        super().__init__(base_url)
        self.session = requests.Session()

    def _get(self, path: str) -> Any:
        return self.session.get(self.base + path)

    def _post(self, path: str, body: Any) -> Any:
        return self.session.post(self.base + path, json=body)

    def _put(self, path: str, body: Any) -> Any:
        return self.session.put(self.base + path, json=body)

    def close(self) -> None:
        self.session.close()


class RequestsNoSessionClient(RequestsClient):
    """REST with plain `requests.get/post/put`, as seed 004 called its server: every call opens (and
    closes) its own connection. Loopback's TIME_WAIT sockets are reused (Linux tcp_tw_reuse=2)."""

    def __init__(self, base_url: str) -> None:
        import requests

        _Rest.__init__(self, base_url)
        self.session = requests  # type: ignore[assignment]  # the module's get/post/put: no pool, a connection per call

    def close(self) -> None:
        pass


class HttpxClient(_Rest):
    """REST with httpx (one Client, HTTP/1.1, keep-alive)."""

    library = "httpx"

    def __init__(self, base_url: str) -> None:
        import httpx

        super().__init__(base_url)
        self.client = httpx.Client(timeout=30.0)

    def _get(self, path: str) -> Any:
        return self.client.get(self.base + path)

    def _post(self, path: str, body: Any) -> Any:
        return self.client.post(self.base + path, json=body)

    def _put(self, path: str, body: Any) -> Any:
        return self.client.put(self.base + path, json=body)

    def close(self) -> None:
        self.client.close()


class GrpcClient:
    """gRPC with grpcio (one channel); messages built from the contract's descriptors."""

    library = "grpcio"
    # HealthCheckRequest{} encodes to nothing; HealthCheckResponse{status: SERVING} to field 1 = 1.
    _HEALTH_SERVING = b"\x08\x01"

    def __init__(self, target: str) -> None:
        import grpc

        from .messages import messages

        self.grpc = grpc
        self.m = messages()
        self.channel = grpc.insecure_channel(target)

        def method(name: str, request: Any, response: Any) -> Any:
            return self.channel.unary_unary(
                name, request_serializer=request.SerializeToString, response_deserializer=response.FromString
            )

        m = self.m
        self._health: Callable[..., Any] = self.channel.unary_unary("/grpc.health.v1.Health/Check")
        self._setup = method("/callbench.v1.Life/Setup", m.SetupRequest, m.Board)
        self._step = method("/callbench.v1.Life/Step", m.StepRequest, m.Board)
        self._auth = method("/callbench.v1.Auth/Test", m.AuthRequest, m.AuthResponse)
        self._echo = method("/callbench.v1.Echo/Echo", m.EchoMessage, m.EchoMessage)

    def _call(self, stub: Any, request: Any, what: str) -> Any:
        try:
            return stub(request, timeout=30.0)
        except self.grpc.RpcError as e:
            raise CallFailed(f"{what}: {e.code().name} {e.details()}") from None

    def noop(self) -> None:
        answer = self._call(self._health, b"", "Health/Check")
        if answer != self._HEALTH_SERVING:
            raise CallFailed(f"Health/Check: not SERVING ({answer!r})")

    def life_setup(self) -> set[Cell]:
        return {(c.x, c.y) for c in self._call(self._setup, self.m.SetupRequest(), "Life/Setup").board}

    def life_step(self, board: set[Cell], ntimes: int) -> None:
        Cell_ = self.m.Cell
        request = self.m.StepRequest(ntimes=ntimes, board=[Cell_(x=x, y=y) for x, y in board])
        answer = self._call(self._step, request, "Life/Step")
        board.clear()
        board.update((c.x, c.y) for c in answer.board)

    def auth(self, id: int, password: str) -> str:
        return self._call(self._auth, self.m.AuthRequest(id=id, password=password), "Auth/Test").hash

    def echo_message(self, message: dict[str, Any]) -> dict[str, Any]:
        from google.protobuf import json_format

        request = json_format.ParseDict(message, self.m.EchoMessage())
        answer = self._call(self._echo, request, "Echo/Echo")
        return {"records": [_record(r) for r in answer.records]}

    def close(self) -> None:
        self.channel.close()


def _record(r: Any) -> dict[str, Any]:
    """An echo Record as the REST mapping writes it (int64 as numbers, the enum by name)."""
    kind = r.DESCRIPTOR.fields_by_name["kind"].enum_type.values_by_number[r.kind].name
    out: dict[str, Any] = {"id": r.id, "name": r.name, "score": r.score, "active": r.active, "kind": kind}
    if r.HasField("location"):
        loc = r.location
        out["location"] = {"city": loc.city, "latitude": loc.latitude, "longitude": loc.longitude}
    out["tags"], out["samples"] = list(r.tags), list(r.samples)
    return out


def connect(client: str, address: str) -> Any:
    """The client called `client` (requests, requests-nosession, httpx, grpcio) for the server at host:port."""
    if client == "grpcio":
        return GrpcClient(address)
    rest = {"requests": RequestsClient, "requests-nosession": RequestsNoSessionClient, "httpx": HttpxClient}
    if client not in rest:
        raise ValueError(f"unknown client {client!r}")
    return rest[client](f"http://{address}")
