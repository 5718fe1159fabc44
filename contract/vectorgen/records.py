"""The records vectors of the contract (contract/vectors/records.json): the streaming calls and their
REST counterparts, built from the reference workload."""

from __future__ import annotations

import math

from vectorgen.build import *  # noqa: F401,F403 (vector builders)
from vectorgen.reference import *  # noqa: F401,F403 (the reference workloads)

NDJSON = {"Content-Type": "application/x-ndjson"}
MAX_UPLOAD_BYTES = 64 * 1024 * 1024


def records_file() -> dict:
    vectors = upload_vectors() + converse_vectors() + download_vectors()
    return {
        "workload": "records",
        "description": "The streaming calls: callbench.v1.Records/Upload (client streaming) and its REST counterparts "
        "POST /records/batch and POST /records/upload (NDJSON), Records/Converse (bidirectional), Records/Download "
        "(server streaming) and GET /records?count=N (NDJSON). Records are valid as in echo.",
        "vectors": vectors,
    }


def upload_vectors() -> list:
    vectors = []

    def case(name, cls, records, raw_grpc=None):
        """The same records three ways: one batched POST, an NDJSON upload, a client stream."""
        code, summary = outcome(upload_summary, records)
        check_class(name, cls, code)
        message = "callbench.v1.UploadSummary" if summary else None
        vectors.append(
            rest(
                f"records-batch-{name}",
                cls,
                "POST",
                "/records/batch",
                body_json({"records": records}),
                REST_STATUS[code],
                message,
                summary,
            )
        )
        vectors.append(
            rest(
                f"records-upload-{name}",
                cls,
                "POST",
                "/records/upload",
                {"ndjson": records},
                REST_STATUS[code],
                message,
                summary,
                headers=NDJSON,
            )
        )
        requests = raw_grpc or [body_json(r) for r in records]
        vectors.append(
            grpc_stream(f"records-upload-{name}", cls, "callbench.v1.Records/Upload", requests, code, summary)
        )

    many = [download_record(i) for i in range(100)]
    case("ok-0-records", "ok", [])
    case("ok-1-record", "ok", [echo_record(0)])
    case("ok-100-records", "ok", many)
    case("ok-defaults", "ok", [{}, {"kind": "KIND_UNSPECIFIED"}, {"location": {}}])
    nan_score = pb_double(3, math.nan)
    case(
        "over-limit-nan-score-in-the-middle",
        "over-limit",
        [echo_record(0), {"score": "NaN"}, echo_record(2)],
        raw_grpc=[body_json(echo_record(0)), body_bytes(nan_score), body_json(echo_record(2))],
    )
    case(
        "over-limit-unknown-kind",
        "over-limit",
        [{"kind": "KIND_HUGE"}],
        raw_grpc=[body_bytes(pb_varint(5, 9))],
    )

    # The NDJSON framing: blank lines skipped, the last line with or without its newline.
    two = [echo_record(1), echo_record(2)]
    lines = "\n\n" + compact(two[0]) + "\n\n" + compact(two[1])
    summary = upload_summary(two)
    record_line = compact(echo_record(0))
    vectors += [
        rest(
            "records-upload-ok-blank-lines-no-final-newline",
            "ok",
            "POST",
            "/records/upload",
            body_text(lines),
            200,
            "callbench.v1.UploadSummary",
            summary,
            headers=NDJSON,
        ),
        rest(
            "records-upload-malformed-json-line",
            "malformed-json",
            "POST",
            "/records/upload",
            body_text(record_line + "\n" + '{"id": 1' + "\n"),
            400,
            headers=NDJSON,
        ),
        rest(
            "records-upload-wrong-type-line",
            "wrong-type",
            "POST",
            "/records/upload",
            body_text('{"id": "one"}\n'),
            400,
            headers=NDJSON,
        ),
        rest(
            "records-upload-content-type-json",
            "content-type",
            "POST",
            "/records/upload",
            body_text(record_line + "\n"),
            415,
            headers=JSON_HEADERS,
        ),
        rest("records-upload-wrong-method-get", "wrong-method", "GET", "/records/upload", status=405),
        rest(
            "records-upload-oversized-line",
            "oversized",
            "POST",
            "/records/upload",
            body_fill(ord("a"), MAX_BODY_BYTES, b'{"name":"', b'"}\n'),
            413,
            headers=NDJSON,
        ),
        # Blank lines only: nothing to parse, but more than the whole upload may be.
        rest(
            "records-upload-oversized-upload",
            "oversized",
            "POST",
            "/records/upload",
            body_fill(ord("\n"), MAX_UPLOAD_BYTES + 1),
            413,
            headers=NDJSON,
        ),
        rest("records-batch-missing-field-records", "missing-field", "POST", "/records/batch", body_json({}), 400),
        rest(
            "records-batch-malformed-json",
            "malformed-json",
            "POST",
            "/records/batch",
            body_text('{"records": [{"id": 1}'),
            400,
        ),
        rest(
            "records-batch-content-type-text-plain",
            "content-type",
            "POST",
            "/records/batch",
            body_json({"records": []}),
            415,
            headers={"Content-Type": "text/plain"},
        ),
        rest("records-batch-wrong-method-get", "wrong-method", "GET", "/records/batch", status=405),
        rest(
            "records-batch-oversized-body",
            "oversized",
            "POST",
            "/records/batch",
            body_fill(ord("a"), MAX_BODY_BYTES, b'{"records":[{"name":"', b'"}]}'),
            413,
        ),
    ]

    def pb_named_record(size):
        return varint(2 << 3 | 2) + varint(size)

    vectors += [
        grpc_stream(
            "records-upload-oversized-message",
            "oversized",
            "callbench.v1.Records/Upload",
            [body_json(echo_record(0)), body_fill(ord("a"), MAX_BODY_BYTES, pb_named_record(MAX_BODY_BYTES))],
            "RESOURCE_EXHAUSTED",
        ),
        grpc_stream(
            "records-upload-undecodable",
            "undecodable",
            "callbench.v1.Records/Upload",
            [body_bytes(b"\xff\xff\xff")],
            "ANY_ERROR",
        ),
    ]
    return vectors


def converse_vectors() -> list:
    def message(i):
        return {"records": [echo_record(i)]}

    ten = [message(i) for i in range(10)]
    nan_message = pb_bytes(1, pb_double(3, math.nan))
    return [
        grpc_stream("records-converse-ok-0-messages", "ok", "callbench.v1.Records/Converse", [], "OK", messages=[]),
        grpc_stream(
            "records-converse-ok-10-messages",
            "ok",
            "callbench.v1.Records/Converse",
            [body_json(m) for m in ten],
            "OK",
            messages=ten,
        ),
        grpc_stream(
            "records-converse-ok-empty-messages",
            "ok",
            "callbench.v1.Records/Converse",
            [body_json({}), body_json({"records": []})],
            "OK",
            messages=[{}, {}],
        ),
        grpc_stream(
            "records-converse-over-limit-nan-score-second",
            "over-limit",
            "callbench.v1.Records/Converse",
            [body_json(ten[0]), body_bytes(nan_message), body_json(ten[2])],
            "INVALID_ARGUMENT",
            messages=[ten[0]],
        ),
        grpc_stream(
            "records-converse-undecodable",
            "undecodable",
            "callbench.v1.Records/Converse",
            [body_bytes(b"\xff\xff\xff")],
            "ANY_ERROR",
        ),
    ]


def download_vectors() -> list:
    vectors = []

    def case(name, cls, count):
        code, records = outcome(download, count)
        check_class(name, cls, code)
        query = f"/records?count={count}"
        if code == OK:
            vectors.append(
                rest(f"records-download-{name}", cls, "GET", query, status=200, message="callbench.v1.Record")
            )
            vectors[-1]["rest"]["expect"]["ndjson"] = records
        else:
            vectors.append(rest(f"records-download-{name}", cls, "GET", query, status=REST_STATUS[code]))
        grpc_case = grpc(f"records-download-{name}", cls, "callbench.v1.Records/Download", body_json({"count": count}))
        grpc_case["grpc"]["expect"]["code"] = code
        if code == OK:
            grpc_case["grpc"]["expect"]["messages"] = records
        vectors.append(grpc_case)

    case("ok-0-records", "ok", 0)
    case("ok-1-record", "ok", 1)
    case("ok-100-records", "ok", 100)
    case("over-limit-count-negative", "over-limit", -1)
    case("over-limit-count-100001", "over-limit", MAX_DOWNLOAD + 1)
    vectors += [
        rest("records-download-missing-field-count", "missing-field", "GET", "/records", status=400),
        rest("records-download-bad-query-count-not-integer", "bad-path", "GET", "/records?count=abc", status=400),
        rest("records-download-wrong-method-post", "wrong-method", "POST", "/records?count=1", status=405),
    ]
    return vectors


def grpc_stream(name, cls, method, requests, code="OK", json_=None, messages=None) -> dict:
    """A gRPC vector whose request is a stream of messages (sent in order, then half-closed), or
    whose every answer message is expected in order."""
    vector = grpc(name, cls, method, None, code, json_)
    del vector["grpc"]["request"]
    vector["grpc"] = {"method": method, "requests": requests, "expect": vector["grpc"]["expect"]}
    if messages is not None:
        vector["grpc"]["expect"]["messages"] = messages
    return vector
