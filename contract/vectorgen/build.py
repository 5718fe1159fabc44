"""Protobuf encoding of raw gRPC messages, and the builders of single vectors."""

from __future__ import annotations

import base64
import json
import struct

from vectorgen.reference import *  # noqa: F401,F403 (limits and outcome classes)

# ---------------------------------------------------------------------------
# Protobuf encoding, for raw gRPC messages.


def varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


def zigzag(n: int) -> int:
    return (n << 1) ^ (n >> 63)


def pb_varint(field: int, value: int) -> bytes:
    return varint(field << 3) + varint(value) if value else b""


def pb_bytes(field: int, data: bytes) -> bytes:
    return varint(field << 3 | 2) + varint(len(data)) + data


def pb_double(field: int, value: float) -> bytes:
    return varint(field << 3 | 1) + struct.pack("<d", value)


def pb_step_request(ntimes: int, cells: list) -> bytes:
    board = b"".join(pb_bytes(2, pb_varint(1, zigzag(x)) + pb_varint(2, zigzag(y))) for x, y in cells)
    return pb_varint(1, ntimes) + board


def compact(value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# ---------------------------------------------------------------------------
# Vector builders.

JSON_HEADERS = {"Content-Type": "application/json"}


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def body_json(value) -> dict:
    return {"json": value}


def body_text(text: str) -> dict:
    return {"text": text}


def body_bytes(data: bytes) -> dict:
    return {"base64": b64(data)}


def body_fill(byte: int, size: int, prefix: bytes = b"", suffix: bytes = b"") -> dict:
    fill: dict[str, int | str] = {"byte": byte, "size": size}
    if prefix:
        fill["prefix_base64"] = b64(prefix)
    if suffix:
        fill["suffix_base64"] = b64(suffix)
    return {"fill": fill}


def rest(name, cls, method, path, body=None, status=200, message=None, json_=None, headers=None) -> dict:
    case = {"method": method, "path": path}
    if headers is None and body is not None and "json" not in body:
        headers = JSON_HEADERS  # raw bodies are JSON too unless the vector says otherwise
    if headers:
        case["headers"] = dict(headers)
    if body is not None:
        case["body"] = body
    expect = {"status": status}
    if message is not None:
        expect["message"] = message
    if json_ is not None:
        expect["json"] = json_
    case["expect"] = expect
    return {"name": f"rest-{name}", "class": cls, "rest": case}


def grpc(name, cls, method, request, code="OK", json_=None, content_type=None) -> dict:
    case = {"method": method}
    if content_type is not None:
        case["content_type"] = content_type
    case["request"] = request
    expect = {"code": code}
    if json_ is not None:
        expect["json"] = json_
    case["expect"] = expect
    return {"name": f"grpc-{name}", "class": cls, "grpc": case}


def outcome(compute, *args):
    """(code, result) of a workload call."""
    try:
        return OK, compute(*args)
    except Refused as refused:
        return refused.code, None


def check_class(name: str, cls: str, code: str):
    assert (cls == "ok") == (code == OK), f"{name}: class {cls} but the workload answers {code}"
