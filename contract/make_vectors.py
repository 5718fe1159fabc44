#!/usr/bin/env python3
"""Writes the shared test vectors of the callbench contract: contract/vectors/*.json.

The expected answers come from the small, independent Python implementation of the
workloads in vectorgen/reference.py (SHA-512 via hashlib, Game of Life on a set of cells, the validation
rules of contract/README.md), so the Rust code is checked against something it did not
produce. Standard library only (Python 3.11).

    python3 contract/make_vectors.py          # (re)write contract/vectors/*.json
    python3 contract/make_vectors.py --check  # exit 1 if a committed file differs

The file format is described in contract/README.md ("Test vectors").
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from vectorgen.build import *  # noqa: E402,F401,F403 (vector builders)
from vectorgen.echo import echo_file  # noqa: E402
from vectorgen.life import life_file  # noqa: E402
from vectorgen.records import records_file  # noqa: E402
from vectorgen.reference import *  # noqa: E402,F401,F403 (the reference workloads)

VECTOR_DIR = Path(__file__).resolve().parent / "vectors"


# ---------------------------------------------------------------------------
# auth


def auth_file() -> dict:
    vectors = []

    def case(name, cls, user_id, password):
        code, result = outcome(auth, user_id, password)
        check_class(name, cls, code)
        vectors.append(
            rest(
                f"auth-{name}",
                cls,
                "PUT",
                f"/auth/{user_id}",
                body_json({"password": password}),
                REST_STATUS[code],
                "callbench.v1.AuthResponse" if result else None,
                result,
            )
        )
        vectors.append(
            grpc(
                f"auth-{name}",
                cls,
                "callbench.v1.Auth/Test",
                body_json({"id": user_id, "password": password}),
                code,
                result,
            )
        )

    case("ok-id-1", "ok", 1, "password-1")
    case("ok-seed-request", "ok", 9999, "thisispassword")
    case("ok-id-10000", "ok", 10000, "thisispassword")
    case("ok-unicode-password", "ok", 42, "pässwörd-🔑")
    case("ok-password-1024-bytes", "ok", 7, "x" * 1024)
    case("ok-password-1024-bytes-multibyte", "ok", 8, "é" * 512)
    case("not-found-id-0", "not-found", 0, "thisispassword")
    case("not-found-id-10001", "not-found", 10001, "thisispassword")
    case("not-found-negative-id", "not-found", -5, "thisispassword")
    case("over-limit-empty-password", "over-limit", 1, "")
    case("over-limit-password-1025-bytes", "over-limit", 1, "x" * 1025)
    case("over-limit-password-1026-bytes-multibyte", "over-limit", 1, "é" * 513)

    good = {"password": "thisispassword"}
    charset = {"Content-Type": "application/json; charset=utf-8"}
    vectors += [
        rest(
            "auth-ok-content-type-charset",
            "ok",
            "PUT",
            "/auth/9999",
            body_json(good),
            200,
            "callbench.v1.AuthResponse",
            auth(9999, "thisispassword"),
            headers=charset,
        ),
        rest("auth-malformed-json", "malformed-json", "PUT", "/auth/1", body_text('{"password": '), 400),
        rest("auth-wrong-type-password-number", "wrong-type", "PUT", "/auth/1", body_json({"password": 42}), 400),
        rest("auth-missing-field-password", "missing-field", "PUT", "/auth/1", body_json({}), 400),
        rest("auth-invalid-utf8", "invalid-utf8", "PUT", "/auth/1", body_bytes(b'{"password":"\xff\xfe"}'), 400),
        rest("auth-bad-path-id-not-integer", "bad-path", "PUT", "/auth/abc", body_json(good), 400),
        rest(
            "auth-content-type-text-plain",
            "content-type",
            "PUT",
            "/auth/1",
            body_json(good),
            415,
            headers={"Content-Type": "text/plain"},
        ),
        rest(
            "auth-content-type-missing",
            "content-type",
            "PUT",
            "/auth/1",
            body_json(good),
            415,
            headers={"Content-Type": ""},
        ),
        rest("auth-wrong-method-get", "wrong-method", "GET", "/auth/1", status=405),
        rest(
            "auth-oversized-body",
            "oversized",
            "PUT",
            "/auth/1",
            body_fill(ord("a"), MAX_BODY_BYTES + 1, b'{"password":"', b'"}'),
            413,
        ),
        grpc("auth-undecodable", "undecodable", "callbench.v1.Auth/Test", body_bytes(b"\xff\xff\xff"), "ANY_ERROR"),
        grpc(
            "auth-undecodable-wrong-wire-type",
            "undecodable",
            "callbench.v1.Auth/Test",
            body_bytes(pb_bytes(1, b"abc")),
            "ANY_ERROR",
        ),
        grpc(
            "auth-invalid-utf8-password",
            "invalid-utf8",
            "callbench.v1.Auth/Test",
            body_bytes(pb_bytes(2, b"\xff\xfe")),
            "ANY_ERROR",
        ),
        grpc(
            "auth-content-type-json",
            "content-type",
            "callbench.v1.Auth/Test",
            body_json({"id": 9999, "password": "thisispassword"}),
            "ANY_ERROR",
            content_type="application/json",
        ),
    ]
    return {
        "workload": "auth",
        "description": "PUT /auth/{id} and callbench.v1.Auth/Test: the lowercase hex SHA-512 of the password "
        "(1..1024 UTF-8 bytes) of a user 1..10000; malformed requests on both protocols.",
        "vectors": vectors,
    }


# ---------------------------------------------------------------------------
# students


def students_file() -> dict:
    return {
        "workload": "students",
        "description": "GET /students and callbench.v1.Students/List: always these two records "
        "(this file is their specification).",
        "vectors": [
            rest(
                "students-ok",
                "ok",
                "GET",
                "/students",
                status=200,
                message="callbench.v1.ListStudentsResponse",
                json_=STUDENTS,
            ),
            grpc("students-ok", "ok", "callbench.v1.Students/List", body_json({}), "OK", STUDENTS),
            rest("students-wrong-method-post", "wrong-method", "POST", "/students", body_json({}), 405),
        ],
    }


# ---------------------------------------------------------------------------
# cars

SEED_CAR: dict[str, dict[str, object]] = {
    "car": {
        "make": "toyota",
        "model": "corolla",
        "trim": "4DR Sedan",
        "color": "gray",
        "year": 2012,
        "mileage": 120000,
    },
    "driver": {"firstname": "John", "lastname": "Smith", "driverId": "someId"},
}


def seed_car(car=None, driver=None, drop=()) -> dict:
    message = {"car": {**SEED_CAR["car"], **(car or {})}, "driver": {**SEED_CAR["driver"], **(driver or {})}}
    for key in drop:
        del message[key]
    return message


def cars_file() -> dict:
    vectors = []

    def case(name, cls, message):
        code, result = outcome(cars, message)
        check_class(name, cls, code)
        vectors.append(
            rest(
                f"cars-{name}",
                cls,
                "POST",
                "/cars",
                body_json(message),
                REST_STATUS[code],
                "callbench.v1.CarMessage" if result else None,
                result,
            )
        )
        vectors.append(grpc(f"cars-{name}", cls, "callbench.v1.Cars/Send", body_json(message), code, result))

    case("ok-seed-message", "ok", SEED_CAR)
    case(
        "ok-limits",
        "ok",
        seed_car(
            car={"make": "m" * MAX_STRING_BYTES, "model": "Ω-model ✓", "year": MIN_CAR_YEAR, "mileage": MAX_MILEAGE},
            driver={"firstname": "José", "lastname": "Müller-Łukasiewicz", "driverId": "ü" * 128},
        ),
    )
    case("ok-defaults", "ok", {"car": {"make": "tesla", "model": "model 3", "year": MAX_CAR_YEAR}, "driver": {}})
    case("missing-field-car", "missing-field", seed_car(drop=("car",)))
    case("missing-field-driver", "missing-field", seed_car(drop=("driver",)))
    case("over-limit-empty-make", "over-limit", seed_car(car={"make": ""}))
    case("over-limit-empty-model", "over-limit", seed_car(car={"model": ""}))
    case("over-limit-year-1800", "over-limit", seed_car(car={"year": 1800}))
    case("over-limit-year-1885", "over-limit", seed_car(car={"year": 1885}))
    case("over-limit-year-2101", "over-limit", seed_car(car={"year": 2101}))
    case("over-limit-mileage", "over-limit", seed_car(car={"mileage": MAX_MILEAGE + 1}))
    case("over-limit-string-257-bytes", "over-limit", seed_car(driver={"driverId": "d" * (MAX_STRING_BYTES + 1)}))
    case("over-limit-string-258-bytes-multibyte", "over-limit", seed_car(car={"color": "é" * 129}))

    seed_text = compact(SEED_CAR)
    bad_utf8 = seed_text.replace('"gray"', '"gr\udcffy"').encode("utf-8", "surrogateescape")
    vectors += [
        rest("cars-malformed-json", "malformed-json", "POST", "/cars", body_text(seed_text[:-10]), 400),
        rest(
            "cars-wrong-type-year-string", "wrong-type", "POST", "/cars", body_json(seed_car(car={"year": "2012"})), 400
        ),
        rest(
            "cars-wrong-type-car-string",
            "wrong-type",
            "POST",
            "/cars",
            body_json({"car": "toyota", "driver": SEED_CAR["driver"]}),
            400,
        ),
        rest("cars-invalid-utf8", "invalid-utf8", "POST", "/cars", body_bytes(bad_utf8), 400),
        rest(
            "cars-content-type-text-plain",
            "content-type",
            "POST",
            "/cars",
            body_json(SEED_CAR),
            415,
            headers={"Content-Type": "text/plain"},
        ),
        rest("cars-wrong-method-get", "wrong-method", "GET", "/cars", status=405),
        grpc("cars-undecodable", "undecodable", "callbench.v1.Cars/Send", body_bytes(b"\xff\xff\xff"), "ANY_ERROR"),
        grpc(
            "cars-invalid-utf8-make",
            "invalid-utf8",
            "callbench.v1.Cars/Send",
            body_bytes(
                pb_bytes(1, pb_bytes(1, b"\xff\xfe") + pb_bytes(2, b"corolla") + pb_varint(5, 2012))
                + pb_bytes(2, pb_bytes(1, b"John"))
            ),
            "ANY_ERROR",
        ),
    ]
    return {
        "workload": "cars",
        "description": "POST /cars and callbench.v1.Cars/Send: the car + driver message comes back unchanged "
        "once validated (car and driver present, make and model non-empty, strings <= 256 bytes, "
        "year 1886..2100, mileage <= 10,000,000).",
        "vectors": vectors,
    }


# ---------------------------------------------------------------------------
# health and protocol

SERVICES = ["Auth", "Students", "Cars", "Life", "Echo"]


def health_file() -> dict:
    vectors = [
        rest("health-ok", "ok", "GET", "/health", status=200),
        grpc("health-ok", "ok", "grpc.health.v1.Health/Check", body_json({}), "OK", {"status": "SERVING"}),
    ]
    for service in SERVICES:
        vectors.append(
            grpc(
                f"health-ok-{service.lower()}",
                "ok",
                "grpc.health.v1.Health/Check",
                body_json({"service": f"callbench.v1.{service}"}),
                "OK",
                {"status": "SERVING"},
            )
        )
    return {
        "workload": "health",
        "description": "GET /health (200) and grpc.health.v1.Health/Check: SERVING for the server ('') and for "
        "every callbench.v1 service.",
        "vectors": vectors,
    }


def protocol_file() -> dict:
    return {
        "workload": "protocol",
        "description": "Routes and methods outside the contract: unknown routes (404 / UNIMPLEMENTED), known "
        "routes with the wrong HTTP method (405), an empty gRPC message.",
        "vectors": [
            rest("protocol-unknown-route-nope", "unknown-route", "GET", "/nope", status=404),
            rest("protocol-unknown-route-root", "unknown-route", "GET", "/", status=404),
            rest("protocol-wrong-method-health-delete", "wrong-method", "DELETE", "/health", status=405),
            grpc(
                "protocol-unknown-method", "unknown-route", "callbench.v1.Auth/Nope", body_bytes(b""), "UNIMPLEMENTED"
            ),
            grpc(
                "protocol-unknown-service", "unknown-route", "callbench.v1.Nope/Test", body_bytes(b""), "UNIMPLEMENTED"
            ),
            # id 0 and an empty password: wrong twice, and the contract does not say which check comes first.
            grpc("protocol-empty-message", "missing-field", "callbench.v1.Auth/Test", body_bytes(b""), "ANY_ERROR"),
        ],
    }


# ---------------------------------------------------------------------------
# Output


def depth(value) -> int:
    children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else None
    return 0 if children is None else 1 + max(map(depth, children), default=0)


def render(value, indent: int = 0, in_list: bool = False) -> str:
    """JSON with 2-space indentation; small values stay on one line (up to 100 columns, or 260 for the
    items of a list: one cell, one record per line)."""
    if isinstance(value, (dict, list)) and value:
        inline = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
        if depth(value) <= 2 and indent + len(inline) <= (260 if in_list else 100):
            return inline
        pad = " " * (indent + 2)
        if isinstance(value, dict):
            items = [f"{pad}{json.dumps(k, ensure_ascii=False)}: {render(v, indent + 2)}" for k, v in value.items()]
            return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
        items = [pad + render(v, indent + 2, True) for v in value]
        return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def self_test():
    assert sha512_hex("abc").startswith("ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a")
    blinker = [(0, 1), (1, 1), (2, 1)]
    assert life_step(blinker, 1) == [(1, 0), (1, 1), (1, 2)]
    assert life_step(blinker, 2) == blinker
    glider = [(1, 0), (2, 1), (0, 2), (1, 2), (2, 2)]
    assert life_step(glider, 4) == sorted((x + 1, y + 1) for x, y in glider)
    assert varint(300) == b"\xac\x02" and zigzag(-1) == 1 and zigzag(1) == 2 and zigzag(-(2**63)) == 2**64 - 1


def build() -> dict[str, str]:
    self_test()
    files = {
        "auth.json": auth_file(),
        "students.json": students_file(),
        "cars.json": cars_file(),
        "life.json": life_file(),
        "echo.json": echo_file(),
        "records.json": records_file(),
        "health.json": health_file(),
        "protocol.json": protocol_file(),
    }
    names = set()
    for file in files.values():
        for v in file["vectors"]:
            assert re.fullmatch(r"(rest|grpc)-[a-z0-9]+(-[a-z0-9]+)*", v["name"]), v["name"]
            assert v["name"] not in names, f"duplicate vector {v['name']}"
            assert v["class"] in CLASSES, f"{v['name']}: class {v['class']}"
            names.add(v["name"])
    return {name: render(file) + "\n" for name, file in files.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a committed vector file differs")
    args = parser.parse_args()
    outputs = build()
    if args.check:
        stale = [
            name
            for name, text in outputs.items()
            if not (VECTOR_DIR / name).exists() or (VECTOR_DIR / name).read_text(encoding="utf-8") != text
        ]
        for name in stale:
            print(f"contract/vectors/{name} differs from make_vectors.py's output", file=sys.stderr)
        if stale:
            print("run: python3 contract/make_vectors.py", file=sys.stderr)
        return 1 if stale else 0
    VECTOR_DIR.mkdir(parents=True, exist_ok=True)
    for name, text in outputs.items():
        path = VECTOR_DIR / name
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
