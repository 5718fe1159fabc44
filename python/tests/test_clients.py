"""requests, httpx and grpcio against the real Rust servers (started by `callbench serve`): the same
answers as the bindings, errors as CallFailed, and no server left behind."""

from __future__ import annotations

import os

import pytest
from conftest import REPO

import callbench
from callbench.clients import CallFailed, connect
from callbench.servers import Server, find_cli


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture(scope="module")
def servers():
    cli = find_cli(REPO)
    with (
        Server(REPO, cli, "rust-axum", None, build=False) as rest,
        Server(REPO, cli, "rust-tonic", None, build=False) as grpc,
    ):
        yield rest, grpc


@pytest.fixture(params=["requests", "requests-nosession", "httpx", "grpcio"])
def client(request, servers):
    rest, grpc = servers
    c = connect(request.param, grpc.addr if request.param == "grpcio" else rest.addr)
    yield c
    c.close()


def test_every_client_gives_the_bindings_answers(client):
    assert client.noop() is None
    assert client.life_setup() == callbench.life_setup()
    over_wire, in_process = callbench.life_setup(), callbench.life_setup()
    client.life_step(over_wire, 250)
    callbench.life_step(in_process, 250)
    assert over_wire == in_process
    assert client.auth(9999, "callbench") == callbench.sha512_hex("callbench")
    message = callbench._native.echo_payload(4)
    assert client.echo_message(message) == message


def test_every_client_reports_the_servers_refusals(client):
    with pytest.raises(CallFailed):
        client.auth(10001, "x")
    board = callbench.life_setup()
    with pytest.raises(CallFailed):
        client.life_step(board, 1001)


def test_a_stopped_server_leaves_no_process(servers):
    with Server(REPO, find_cli(REPO), "rust-axum", None, build=False) as s:
        assert s.proc is not None
        pid, server_pid = s.proc.pid, s.server_pid
        assert server_pid and alive(server_pid)
    assert not alive(pid) and not alive(server_pid)


def test_an_unknown_server_is_a_clear_error():
    with pytest.raises(RuntimeError, match="did not start"):
        Server(REPO, find_cli(REPO), "no-such-server", None, build=False).start(timeout=60)


def test_connect_refuses_unknown_clients():
    with pytest.raises(ValueError):
        connect("carrier-pigeon", "127.0.0.1:1")
