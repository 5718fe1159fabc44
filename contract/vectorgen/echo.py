"""The echo vectors of the contract (contract/vectors/echo.json), built from the reference workload."""

from __future__ import annotations

import math

from vectorgen.build import *  # noqa: F401,F403 (vector builders)
from vectorgen.reference import *  # noqa: F401,F403 (the reference workloads)


def echo_file() -> dict:
    vectors = []

    def case(name, cls, rest_message, proto_message=None, raw_rest=None, raw_grpc=None):
        """proto_message: the gRPC variant when it differs (full int64 range); raw_*: bodies that JSON
        cannot carry (they are judged by the code only)."""
        for proto, message in (("rest", rest_message), ("grpc", proto_message or rest_message)):
            raw = raw_rest if proto == "rest" else raw_grpc
            if message is None and raw is None:
                continue
            code, result = outcome(echo, message) if message is not None else (INVALID, None)
            check_class(name, cls, code)
            if proto == "rest":
                vectors.append(
                    rest(
                        f"echo-{name}",
                        cls,
                        "POST",
                        "/echo",
                        raw or body_json(message),
                        REST_STATUS[code],
                        "callbench.v1.EchoMessage" if result else None,
                        result,
                    )
                )
            else:
                vectors.append(
                    grpc(f"echo-{name}", cls, "callbench.v1.Echo/Echo", raw or body_json(message), code, result)
                )

    safe = 2**53 - 1
    int64_max, int64_min = 2**63 - 1, -(2**63)
    unicode_record = {
        "id": 7,
        "name": "héllo wörld · 日本語 · русский · العربية · 🎉🚀 · e\u0301",
        "score": -0.125,
        "active": True,
        "kind": "KIND_MEDIUM",
        "location": {"city": "Zürich ☃", "latitude": -33.8688, "longitude": 151.2093},
        "tags": ['"quoted"', "back\\slash", "new\nline\ttab", "\u2028", "𝄞"],
        "samples": [-1, 0, 1],
    }
    case("ok-0-records", "ok", {"records": []})
    case("ok-1-record", "ok", {"records": [echo_record(0)]})
    case("ok-50-records", "ok", {"records": [echo_record(i) for i in range(50)]})
    case(
        "ok-int64-extremes",
        "ok",
        {"records": [{"id": -safe, "samples": [safe, -safe, 0, 1, -1]}, {"id": safe}]},
        {
            "records": [
                {"id": str(int64_min), "samples": [str(int64_max), str(int64_min), "0", "1", "-1"]},
                {"id": str(int64_max)},
            ]
        },
    )
    case("ok-unicode-strings", "ok", {"records": [unicode_record]})
    case("ok-defaults", "ok", {"records": [{}, {"kind": "KIND_UNSPECIFIED"}, {"location": {}}]})
    nan_score = pb_bytes(1, pb_double(3, math.nan))
    inf_latitude = pb_bytes(1, pb_bytes(6, pb_double(2, math.inf)))
    case(
        "over-limit-unknown-kind",
        "over-limit",
        {"records": [{"kind": "KIND_HUGE"}]},
        raw_grpc=body_bytes(pb_bytes(1, pb_varint(5, 9))),
    )
    case("over-limit-nan-score", "over-limit", {"records": [{"score": "NaN"}]}, raw_grpc=body_bytes(nan_score))
    case(
        "over-limit-infinite-latitude",
        "over-limit",
        {"records": [{"location": {"latitude": "Infinity"}}]},
        raw_grpc=body_bytes(inf_latitude),
    )

    # Bodies at and over 4 MiB: one record whose name is a run of 'a'.
    prefix, suffix = b'{"records":[{"name":"', b'"}]}'
    at_limit = MAX_BODY_BYTES - len(prefix) - len(suffix)

    def pb_name_record(size):
        head = varint(2 << 3 | 2) + varint(size)
        return varint(1 << 3 | 2) + varint(len(head) + size) + head

    grpc_at_limit = next(n for n in range(MAX_BODY_BYTES, 0, -1) if len(pb_name_record(n)) + n == MAX_BODY_BYTES)
    vectors += [
        rest("echo-missing-field-records", "missing-field", "POST", "/echo", body_json({}), 400),
        rest("echo-malformed-json", "malformed-json", "POST", "/echo", body_text('{"records": [{"id": 1}'), 400),
        rest(
            "echo-invalid-utf8", "invalid-utf8", "POST", "/echo", body_bytes(b'{"records":[{"name":"\xc3\x28"}]}'), 400
        ),
        rest(
            "echo-content-type-text-plain",
            "content-type",
            "POST",
            "/echo",
            body_json({"records": []}),
            415,
            headers={"Content-Type": "text/plain"},
        ),
        rest("echo-wrong-method-get", "wrong-method", "GET", "/echo", status=405),
        rest("echo-ok-body-at-limit", "ok", "POST", "/echo", body_fill(ord("a"), at_limit, prefix, suffix), 200),
        rest(
            "echo-oversized-body", "oversized", "POST", "/echo", body_fill(ord("a"), at_limit + 1, prefix, suffix), 413
        ),
        grpc(
            "echo-ok-message-at-limit",
            "ok",
            "callbench.v1.Echo/Echo",
            body_fill(ord("a"), grpc_at_limit, pb_name_record(grpc_at_limit)),
            "OK",
        ),
        grpc(
            "echo-oversized-message",
            "oversized",
            "callbench.v1.Echo/Echo",
            body_fill(ord("a"), grpc_at_limit + 1, pb_name_record(grpc_at_limit + 1)),
            "RESOURCE_EXHAUSTED",
        ),
        grpc("echo-undecodable", "undecodable", "callbench.v1.Echo/Echo", body_bytes(b"\xff\xff\xff"), "ANY_ERROR"),
        grpc(
            "echo-invalid-utf8-name",
            "invalid-utf8",
            "callbench.v1.Echo/Echo",
            body_bytes(pb_bytes(1, pb_bytes(2, b"\xc3\x28"))),
            "ANY_ERROR",
        ),
    ]
    assert len(prefix) + at_limit + len(suffix) == MAX_BODY_BYTES
    return {
        "workload": "echo",
        "description": "POST /echo and callbench.v1.Echo/Echo: the message comes back unchanged (numbers finite, "
        "kinds known). Bodies of exactly 4 MiB are accepted (expect no body: it would be 4 MiB), "
        "one byte more is refused.",
        "vectors": vectors,
    }
