"""The Game of Life vectors of the contract (contract/vectors/life.json), built from the reference workload."""

from __future__ import annotations

from vectorgen.build import *  # noqa: F401,F403 (vector builders)
from vectorgen.reference import *  # noqa: F401,F403 (the reference workloads)


def rest_board(cells) -> dict:
    return {"board": [[x, y] for x, y in cells]}


def proto_board(cells) -> dict:
    return {"board": [{"x": x, "y": y} for x, y in cells]} if cells else {}


def life_file() -> dict:
    vectors = []
    acorn = sorted(ACORN)
    vectors.append(
        rest(
            "life-setup-ok",
            "ok",
            "GET",
            "/life/setup",
            status=200,
            message="callbench.v1.Board",
            json_=rest_board(acorn),
        )
    )
    vectors.append(grpc("life-setup-ok", "ok", "callbench.v1.Life/Setup", body_json({}), "OK", proto_board(acorn)))

    def case(name, cls, ntimes, cells, raw=False, heavy=False):
        """raw: big boards go as compact JSON text (REST) and raw protobuf (gRPC) to keep the files small.
        heavy: the server computes generations before it can refuse (floods send it rarely)."""
        code, result = outcome(life_step, cells, ntimes)
        check_class(name, cls, code)
        if raw:
            rest_body = body_text(compact({"ntimes": ntimes, "board": [[x, y] for x, y in cells]}))
            grpc_body = body_bytes(pb_step_request(ntimes, cells))
        else:
            rest_body = body_json({"ntimes": ntimes, "board": [[x, y] for x, y in cells]})
            grpc_body = body_json({"ntimes": ntimes, **proto_board(cells)})
        ok = result is not None
        pair = [
            rest(
                f"life-step-{name}",
                cls,
                "POST",
                "/life/step",
                rest_body,
                REST_STATUS[code],
                "callbench.v1.Board" if ok else None,
                rest_board(result) if ok else None,
            ),
            grpc(
                f"life-step-{name}", cls, "callbench.v1.Life/Step", grpc_body, code, proto_board(result) if ok else None
            ),
        ]
        vectors.extend({"name": v["name"], "class": cls, "heavy": True, **v} if heavy else v for v in pair)

    blinker = [(0, 1), (1, 1), (2, 1)]
    glider = [(1, 0), (2, 1), (0, 2), (1, 2), (2, 2)]
    block_at_limit = [
        (MAX_COORDINATE - 1, -MAX_COORDINATE),
        (MAX_COORDINATE - 1, 1 - MAX_COORDINATE),
        (MAX_COORDINATE, -MAX_COORDINATE),
        (MAX_COORDINATE, 1 - MAX_COORDINATE),
    ]
    case("ok-acorn-1", "ok", 1, ACORN)
    case("ok-acorn-10", "ok", 10, ACORN)
    case("ok-acorn-100", "ok", 100, ACORN)
    case("ok-blinker-1", "ok", 1, blinker)
    case("ok-blinker-1000", "ok", MAX_NTIMES, blinker)
    case("ok-glider-4", "ok", 4, glider)
    case("ok-glider-negative-coordinates", "ok", 8, [(x - 50, y - 70) for x, y in glider])
    case("ok-empty-board", "ok", 1, [])
    case("ok-duplicated-cells", "ok", 1, blinker + [(1, 1), (2, 1)])
    case("ok-coordinates-at-limit", "ok", 3, block_at_limit)
    case("over-limit-ntimes-0", "over-limit", 0, ACORN)
    case("over-limit-ntimes-1001", "over-limit", MAX_NTIMES + 1, ACORN)
    case("over-limit-10001-cells", "over-limit", 1, [(3 * i, 0) for i in range(MAX_BOARD_CELLS + 1)], raw=True)
    case("over-limit-coordinate", "over-limit", 1, [(0, 0), (MAX_COORDINATE + 1, 0)])
    case("over-limit-negative-coordinate", "over-limit", 1, [(0, -MAX_COORDINATE - 1)])
    # A row of 1200 cells grows to 55,072 cells at generation 31 and falls back to 2,696 at 32:
    # a server must check the population after every generation, not only at the end.
    explosion = [(i, 0) for i in range(1200)]
    case("over-limit-population", "over-limit", 32, explosion, raw=True, heavy=True)
    populations = life_populations(explosion, 32)
    over = [generation for generation, n in enumerate(populations, 1) if n > MAX_POPULATION]
    assert over == [31] and populations[-1] < MAX_POPULATION, populations

    acorn_step = {"ntimes": 1, "board": [[x, y] for x, y in ACORN]}
    vectors += [
        rest(
            "life-step-malformed-json",
            "malformed-json",
            "POST",
            "/life/step",
            body_text('{"ntimes": 1, "board": [[0, 0]'),
            400,
        ),
        rest(
            "life-step-wrong-type-ntimes-string",
            "wrong-type",
            "POST",
            "/life/step",
            body_json({**acorn_step, "ntimes": "1"}),
            400,
        ),
        rest(
            "life-step-wrong-type-board-string",
            "wrong-type",
            "POST",
            "/life/step",
            body_json({"ntimes": 1, "board": "acorn"}),
            400,
        ),
        rest(
            "life-step-wrong-type-cell-triple",
            "wrong-type",
            "POST",
            "/life/step",
            body_json({"ntimes": 1, "board": [[0, 0], [1, 2, 3]]}),
            400,
        ),
        rest(
            "life-step-wrong-type-cell-single",
            "wrong-type",
            "POST",
            "/life/step",
            body_json({"ntimes": 1, "board": [[1]]}),
            400,
        ),
        rest("life-step-missing-field-board", "missing-field", "POST", "/life/step", body_json({"ntimes": 1}), 400),
        rest(
            "life-step-missing-field-ntimes",
            "missing-field",
            "POST",
            "/life/step",
            body_json({"board": acorn_step["board"]}),
            400,
        ),
        rest(
            "life-step-content-type-text-plain",
            "content-type",
            "POST",
            "/life/step",
            body_json(acorn_step),
            415,
            headers={"Content-Type": "text/plain"},
        ),
        rest("life-step-wrong-method-get", "wrong-method", "GET", "/life/step", status=405),
        rest("life-setup-wrong-method-post", "wrong-method", "POST", "/life/setup", body_json({}), 405),
        grpc(
            "life-step-undecodable", "undecodable", "callbench.v1.Life/Step", body_bytes(b"\xff\xff\xff"), "ANY_ERROR"
        ),
    ]
    return {
        "workload": "life",
        "description": "GET /life/setup, POST /life/step and callbench.v1.Life/{Setup,Step}: Game of Life B3/S23 "
        "on an unbounded plane; boards sorted by x then y, without duplicates. Big boards are sent "
        "as compact JSON text (REST) or raw protobuf (gRPC).",
        "vectors": vectors,
    }
