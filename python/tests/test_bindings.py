"""The PyO3 bindings and the pure-Python baseline give the contract's answers (contract/vectors)."""

from __future__ import annotations

import hashlib
import math

import pytest
from conftest import vectors

import callbench
from callbench import pure

IMPLEMENTATIONS = [pytest.param(callbench, id="pyo3"), pytest.param(pure, id="python")]
LIFE_STEPS = [v for v in vectors("life") if "rest" in v and v["rest"]["method"] == "POST"]


@pytest.mark.parametrize("impl", IMPLEMENTATIONS)
def test_noop_returns_none(impl):
    assert impl.noop() is None


@pytest.mark.parametrize("impl", IMPLEMENTATIONS)
def test_setup_is_the_acorn_of_the_vectors_and_a_new_set_each_time(impl):
    want = next(v for v in vectors("life") if v["name"] == "rest-life-setup-ok")["rest"]["expect"]["json"]["board"]
    a, b = impl.life_setup(), impl.life_setup()
    assert a == {tuple(c) for c in want} and a is not b
    a.clear()
    assert impl.life_setup() == b


@pytest.mark.parametrize("impl", IMPLEMENTATIONS)
@pytest.mark.parametrize("vector", LIFE_STEPS, ids=lambda v: v["name"])
def test_step_follows_every_life_vector_in_place(impl, vector):
    body, expect = vector["rest"].get("body", {}).get("json"), vector["rest"]["expect"]
    if not isinstance(body, dict) or not isinstance(body.get("ntimes"), int) or not isinstance(body.get("board"), list):
        pytest.skip("malformed REST body: no Python call to make")
    try:
        board = {(x, y) for x, y in body["board"]}
    except (TypeError, ValueError):
        pytest.skip("not a list of pairs")
    if expect["status"] == 200:
        impl.life_step(board, body["ntimes"])
        assert board == {tuple(c) for c in expect["json"]["board"]}
    elif vector["class"] == "over-limit" and (impl is callbench or "ntimes" in vector["name"]):
        # The bindings enforce every limit of the contract; the pure baseline only ntimes.
        before = set(board)
        with pytest.raises(ValueError):
            impl.life_step(board, body["ntimes"])
        assert board == before, "a refused step leaves the board as it was"
    else:
        pytest.skip("a limit the pure-Python baseline does not check")


def test_pyo3_and_python_agree_over_a_long_run():
    a, b = callbench.life_setup(), pure.life_setup()
    for _ in range(3):
        callbench.life_step(a, 1000)
        pure.life_step(b, 1000)
    assert a == b and len(a) > 300


def test_step_refuses_what_is_not_a_board():
    with pytest.raises(TypeError):
        callbench.life_step({(1, "x")}, 1)  # type: ignore[arg-type]  # the wrong type under test
    with pytest.raises(TypeError):
        callbench.life_step([(1, 2)], 1)  # type: ignore[arg-type]  # the wrong type under test
    with pytest.raises(OverflowError):
        callbench.life_step({(1, 2)}, -1)


@pytest.mark.parametrize("impl", IMPLEMENTATIONS)
@pytest.mark.parametrize("mode", ["preloaded", "per-request"])
def test_auth_hashes_known_users_and_refuses_the_rest(impl, users, mode):
    store = impl.UserStore(users, mode)
    assert store.mode == mode
    assert store.test(9999, "callbench") == hashlib.sha512(b"callbench").hexdigest()
    assert store.test(1, "password-1") == hashlib.sha512(b"password-1").hexdigest()
    with pytest.raises(LookupError):
        store.test(10001, "x")
    with pytest.raises(ValueError):
        store.test(1, "")
    with pytest.raises(ValueError):
        store.test(1, "x" * 1025)


def test_auth_refuses_an_unknown_mode_and_a_missing_file(users, tmp_path):
    with pytest.raises(ValueError):
        callbench.UserStore(users, "lazy")
    with pytest.raises(OSError):
        callbench.UserStore(tmp_path / "none.json")


@pytest.mark.parametrize("impl", IMPLEMENTATIONS)
def test_echo_returns_the_message_and_refuses_non_finite_numbers(impl):
    message = callbench._native.echo_payload(3)
    assert impl.echo_message(message) == message
    bad = callbench._native.echo_payload(1)
    bad["records"][0]["score"] = math.inf
    with pytest.raises(ValueError):
        impl.echo_message(bad)


def test_echo_refuses_what_is_not_an_echo_message():
    with pytest.raises(ValueError):
        callbench.echo_message({"records": [{"id": "not a number"}]})


def test_sha512_matches_hashlib():
    assert callbench.sha512_hex("é") == hashlib.sha512("é".encode()).hexdigest()
