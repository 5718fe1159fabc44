"""End-to-end tests of the records routes on the running server (POST /records/batch, POST /records/upload,
GET /records), with the standard library's HTTP client. Run with the server's venv, after its build:

    target/servers/python-fastapi/venv/bin/python -m unittest discover -s servers/python-fastapi/tests
"""

import gzip
import http.client
import json
import subprocess
import sys
import tempfile
import unittest
from collections.abc import Iterable
from pathlib import Path

try:
    import callbench_fastapi  # noqa: F401 (only: is this the server's venv)
except ImportError as e:
    raise unittest.SkipTest(f"needs the python-fastapi venv (servers/_python-shared/build.py): {e}") from e

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "_python-shared"))

from callbench_shared import records  # noqa: E402
from callbench_shared.limits import MAX_DOWNLOAD, MAX_LINE_BYTES  # noqa: E402

NDJSON = {"Content-Type": "application/x-ndjson"}
# Seconds a call may take.
TIMEOUT = 30


def ndjson(count: int) -> bytes:
    return b"".join(json.dumps(records.downloaded(i), separators=(",", ":")).encode() + b"\n" for i in range(count))


def summary(count: int = 0, active: int = 0, first: int = 0, last: int = 0, samples: int = 0) -> dict:
    return {"count": count, "activeCount": active, "firstId": first, "lastId": last, "sampleCount": samples}


class RecordsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        users = Path(cls.dir.name) / "users.json"
        users.write_text("[]")
        cls.server = subprocess.Popen(
            [sys.executable, "-m", "callbench_fastapi", "--port", "0", "--users", str(users)],
            stdout=subprocess.PIPE,
            text=True,
        )
        line = cls.server.stdout.readline() if cls.server.stdout else ""
        if not line.startswith("listening on "):
            cls.server.kill()
            raise RuntimeError(f"the server did not start: {line!r}")
        host, _, port = line.removeprefix("listening on ").strip().rpartition(":")
        cls.address = (host, int(port))

    @classmethod
    def tearDownClass(cls):
        cls.server.terminate()
        cls.server.wait(10)
        cls.dir.cleanup()

    def setUp(self):
        self.connection = http.client.HTTPConnection(*self.address, timeout=TIMEOUT)

    def tearDown(self):
        self.connection.close()

    def call(self, method: str, path: str, body: bytes | Iterable[bytes] | None = None, headers=None):
        """(status, headers, body) on this test's connection; an iterable body goes chunked."""
        chunked = body is not None and not isinstance(body, bytes)
        self.connection.request(method, path, body=body, headers=headers or {}, encode_chunked=chunked)
        response = self.connection.getresponse()
        return response.status, response.headers, response.read()

    def post(self, path: str, body: bytes | Iterable[bytes], headers=None) -> tuple[int, dict]:
        status, _, data = self.call("POST", path, body, headers)
        return status, json.loads(data)

    def test_batch_answers_the_summary(self):
        lines = [json.loads(line) for line in ndjson(1000).splitlines()]
        body = json.dumps({"records": lines}).encode()
        json_type = {"Content-Type": "application/json"}
        self.assertEqual(self.post("/records/batch", body, json_type), (200, summary(1000, 500, 1, 1000, 3000)))
        self.assertEqual(self.post("/records/batch", b'{"records": []}', json_type), (200, summary()))
        for bad in (
            b"{}",
            b'{"records": [{"kind": 9}]}',
            b'{"records": [{"id": "1"}]}',
            b'{"records": [{"score": NaN}]}',
        ):
            status, answer = self.post("/records/batch", bad, json_type)
            self.assertEqual((status, answer["error"]["code"]), (400, "INVALID_ARGUMENT"), bad)
        self.assertEqual(self.post("/records/batch", b'{"records": []}', NDJSON)[0], 415)

    def test_upload_reads_ndjson_with_or_without_chunks(self):
        body = ndjson(1000)
        expected = (200, summary(1000, 500, 1, 1000, 3000))
        self.assertEqual(self.post("/records/upload", body, NDJSON), expected)
        pieces = [body[i : i + 777] for i in range(0, len(body), 777)]
        self.assertEqual(self.post("/records/upload", iter(pieces), NDJSON), expected)
        with_charset = {"Content-Type": "application/x-ndjson; charset=utf-8"}
        self.assertEqual(
            self.post("/records/upload", gzip.compress(body), {**with_charset, "Content-Encoding": "gzip"}), expected
        )
        self.assertEqual(self.post("/records/upload", b"", NDJSON), (200, summary()))
        one = b'\n{"id": 5, "active": true, "samples": [1]}\n\n \r\n{"id": 6}'
        self.assertEqual(self.post("/records/upload", iter([one]), NDJSON), (200, summary(2, 1, 5, 6, 1)))

    def test_upload_refusals_keep_the_connection(self):
        for bad in (b'{"kind": 9}', b'{"id": "1"}', b'{"score": NaN}', b'{"score": 1e999}', b"[1,", b"null"):
            body = [b'{"id": 1}\n', bad + b"\n", b'{"id": 2}\n']
            status, answer = self.post("/records/upload", iter(body), NDJSON)
            self.assertEqual(status, 400, bad)
            self.assertTrue(answer["error"]["message"].startswith("line 2:"), answer)
        for content_type in ("application/json", "text/plain", ""):
            status, answer = self.post("/records/upload", ndjson(3), {"Content-Type": content_type})
            self.assertEqual((status, answer["error"]["code"]), (415, "UNSUPPORTED_MEDIA_TYPE"), content_type)
        # Still the same connection, still answering.
        self.assertEqual(self.post("/records/upload", ndjson(3), NDJSON), (200, summary(3, 2, 1, 3, 9)))

    def test_upload_limits_a_line_to_4_mib(self):
        line = b'{"name": "' + b"a" * (MAX_LINE_BYTES - 12) + b'"}'
        self.assertEqual(self.post("/records/upload", line + b"\n", NDJSON), (200, summary(1)))
        status, answer = self.post("/records/upload", iter([b'{"id": 1}\n', b" " + line]), NDJSON)
        self.assertEqual((status, answer["error"]["code"]), (413, "RESOURCE_EXHAUSTED"))

    def test_download_streams_count_lines(self):
        status, headers, body = self.call("GET", "/records?count=3")
        self.assertEqual(
            (status, headers["Content-Type"], headers["Transfer-Encoding"]), (200, "application/x-ndjson", "chunked")
        )
        self.assertEqual([json.loads(line) for line in body.splitlines()], [records.downloaded(i) for i in range(3)])
        self.assertTrue(body.endswith(b"\n"))
        self.assertEqual(self.call("GET", "/records?count=0")[::2], (200, b""))
        status, _, body = self.call("GET", f"/records?count={MAX_DOWNLOAD}")
        self.assertEqual((status, body), (200, ndjson(MAX_DOWNLOAD)))

    def test_download_wants_a_count_in_range(self):
        for query in (
            "",
            "?count=",
            "?count=abc",
            "?count=-1",
            f"?count={MAX_DOWNLOAD + 1}",
            "?count=1.0",
            "?count=+1",
        ):
            status, _, body = self.call("GET", f"/records{query}")
            self.assertEqual((status, json.loads(body)["error"]["code"]), (400, "INVALID_ARGUMENT"), query)
        self.assertEqual(self.call("POST", "/records", b"")[0], 405)


if __name__ == "__main__":
    unittest.main()
