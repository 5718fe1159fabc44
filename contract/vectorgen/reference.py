"""The workloads, written independently of the Rust code, and the contract's limits."""

from __future__ import annotations

import hashlib
import math
from collections import Counter

# ---------------------------------------------------------------------------
# The contract's limits (contract/README.md).

MAX_BODY_BYTES = 4 * 1024 * 1024
USER_COUNT = 10_000
MAX_PASSWORD_BYTES = 1024
MAX_STRING_BYTES = 256
MIN_CAR_YEAR, MAX_CAR_YEAR = 1886, 2100
MAX_MILEAGE = 10_000_000
MIN_NTIMES, MAX_NTIMES = 1, 1000
MAX_BOARD_CELLS = 10_000
MAX_COORDINATE = 1_000_000_000
MAX_POPULATION = 50_000

CLASSES = {
    "ok",
    "malformed-json",
    "wrong-type",
    "missing-field",
    "invalid-utf8",
    "bad-path",
    "not-found",
    "over-limit",
    "oversized",
    "undecodable",
    "content-type",
    "unknown-route",
    "wrong-method",
}

OK, INVALID, NOT_FOUND = "OK", "INVALID_ARGUMENT", "NOT_FOUND"
REST_STATUS = {OK: 200, INVALID: 400, NOT_FOUND: 404}


class Refused(Exception):
    """A call the contract refuses; `code` is the gRPC status name."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


# ---------------------------------------------------------------------------
# The workloads, written independently of the Rust code.


def sha512_hex(text: str) -> str:
    return hashlib.sha512(text.encode("utf-8")).hexdigest()


def auth(user_id: int, password: str) -> dict:
    size = len(password.encode("utf-8"))
    if not 1 <= size <= MAX_PASSWORD_BYTES:
        raise Refused(INVALID, "password must be 1..1024 bytes")
    if not 1 <= user_id <= USER_COUNT:
        raise Refused(NOT_FOUND, f"no user {user_id}")
    return {"hash": sha512_hex(password)}


STUDENTS = {
    "students": [
        {
            "id": 1,
            "firstName": "Emily",
            "lastName": "Johnson",
            "email": "emily.johnson@example.edu",
            "age": 20,
            "gpa": 3.8,
            "enrolled": True,
            "major": "Computer Science",
            "courses": ["Data Structures", "Operating Systems", "Linear Algebra", "Databases"],
            "address": {
                "street": "1420 Maple Avenue",
                "city": "Springfield",
                "state": "IL",
                "postalCode": "62704",
                "country": "USA",
            },
            "enrollmentDate": "2023-09-01",
            "phone": "+1-217-555-0142",
        },
        {
            "id": 2,
            "firstName": "Michael",
            "lastName": "Chen",
            "email": "michael.chen@example.edu",
            "age": 22,
            "gpa": 3.45,
            "enrolled": True,
            "major": "Mechanical Engineering",
            "courses": ["Thermodynamics", "Fluid Mechanics", "Materials Science", "Calculus III"],
            "address": {
                "street": "87 Oak Street, Apt 3B",
                "city": "Madison",
                "state": "WI",
                "postalCode": "53703",
                "country": "USA",
            },
            "enrollmentDate": "2021-09-01",
            "phone": "+1-608-555-0187",
        },
    ]
}


def cars(message: dict) -> dict:
    car, driver = message.get("car"), message.get("driver")
    if car is None or driver is None:
        raise Refused(INVALID, "car and driver are required")
    if not car.get("make") or not car.get("model"):
        raise Refused(INVALID, "car.make and car.model are required")
    strings = [car.get(k, "") for k in ("make", "model", "trim", "color")]
    strings += [driver.get(k, "") for k in ("firstname", "lastname", "driverId")]
    if any(len(s.encode("utf-8")) > MAX_STRING_BYTES for s in strings):
        raise Refused(INVALID, "strings are limited to 256 bytes")
    if not MIN_CAR_YEAR <= car.get("year", 0) <= MAX_CAR_YEAR:
        raise Refused(INVALID, "car.year must be in 1886..2100")
    if car.get("mileage", 0) > MAX_MILEAGE:
        raise Refused(INVALID, "car.mileage is limited to 10,000,000")
    return message


ACORN = [(1, 0), (3, 1), (0, 2), (1, 2), (4, 2), (5, 2), (6, 2)]


# A cell (x, y) is kept as the integer x * 2**33 + (y + 2**32) (|y| < 2**32): a neighbour is then one
# addition away, which makes this plain-set Life fast enough in Python.
_SHIFT, _BIAS = 33, 2**32
_NEIGHBOURS = [(dx << _SHIFT) + dy for dx in (-1, 0, 1) for dy in (-1, 0, 1) if dx or dy]


def _pack(x: int, y: int) -> int:
    assert abs(y) < 2**31, "coordinates this large are refused before any generation"
    return (x << _SHIFT) + y + _BIAS


def _unpack(key: int) -> tuple:
    return key >> _SHIFT, (key & ((1 << _SHIFT) - 1)) - _BIAS


def life_generation(live: set) -> set:
    """One B3/S23 generation of a set of packed cells on an unbounded plane."""
    neighbours: Counter[int] = Counter()
    for offset in _NEIGHBOURS:
        neighbours.update([key + offset for key in live])
    return {key for key, n in neighbours.items() if n == 3 or (n == 2 and key in live)}


def life_populations(cells: list, generations: int) -> list:
    """The population after each of the first `generations` generations, without limits."""
    live, populations = {_pack(x, y) for x, y in cells}, []
    for _ in range(generations):
        live = life_generation(live)
        populations.append(len(live))
    return populations


def life_step(cells: list, ntimes: int) -> list:
    if not MIN_NTIMES <= ntimes <= MAX_NTIMES:
        raise Refused(INVALID, "ntimes must be in 1..1000")
    if len(cells) > MAX_BOARD_CELLS:
        raise Refused(INVALID, "at most 10,000 cells")
    if any(abs(x) > MAX_COORDINATE or abs(y) > MAX_COORDINATE for x, y in cells):
        raise Refused(INVALID, "coordinates are limited to +-1,000,000,000")
    live = {_pack(x, y) for x, y in cells}
    for _ in range(ntimes):
        live = life_generation(live)
        if len(live) > MAX_POPULATION:
            raise Refused(INVALID, "population grew past 50,000 cells")
    return sorted(_unpack(key) for key in live)


KINDS = ["KIND_UNSPECIFIED", "KIND_SMALL", "KIND_MEDIUM", "KIND_LARGE"]


def echo_record(i: int) -> dict:
    """The deterministic record i of the echo payloads (as crates/workloads/src/echo.rs)."""
    return {
        "id": 1_000_000 + i,
        "name": f"record-{i:06}",
        "score": i * 0.25 + 0.5,
        "active": i % 2 == 0,
        "kind": KINDS[1 + i % 3],
        "location": {"city": "Springfield", "latitude": 39.78, "longitude": -89.65},
        "tags": ["alpha", "beta"],
        "samples": [i, 2 * i, 3 * i],
    }


def echo(message: dict) -> dict:
    for r in message["records"]:
        numbers = [r.get("score", 0.0)] + [r.get("location", {}).get(k, 0.0) for k in ("latitude", "longitude")]
        if not all(isinstance(n, (int, float)) and math.isfinite(n) for n in numbers):
            raise Refused(INVALID, "numbers must be finite")
        if r.get("kind", KINDS[0]) not in KINDS:
            raise Refused(INVALID, "unknown kind")
    return message


MAX_DOWNLOAD = 100_000


def upload_summary(records: list) -> dict:
    """Records/Upload's answer for these records (each valid as in echo)."""
    echo({"records": records})
    ids = [r.get("id", 0) for r in records]
    return {
        "count": len(records),
        "activeCount": sum(1 for r in records if r.get("active", False)),
        "firstId": ids[0] if ids else 0,
        "lastId": ids[-1] if ids else 0,
        "sampleCount": sum(len(r.get("samples", [])) for r in records),
    }


def download_record(i: int) -> dict:
    """Record i (from 0) of Records/Download."""
    return {
        "id": i + 1,
        "name": f"record-{i:06}",
        "score": i / 2,
        "active": i % 2 == 0,
        "kind": KINDS[1 + i % 3],
        "location": {"city": "Springfield", "latitude": 39.78, "longitude": -89.65},
        "tags": ["alpha", "beta"],
        "samples": [i, i + 1, i + 2],
    }


def download(count: int) -> list:
    if not 0 <= count <= MAX_DOWNLOAD:
        raise Refused(INVALID, f"count must be in 0..{MAX_DOWNLOAD}")
    return [download_record(i) for i in range(count)]
