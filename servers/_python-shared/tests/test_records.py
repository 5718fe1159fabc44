"""Unit tests of the records workload and the NDJSON upload reader (stdlib only):
python3 -m unittest discover -s servers/_python-shared/tests"""

import json
import sys
import unittest
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from callbench_shared import records  # noqa: E402
from callbench_shared.errors import ErrorKind, WorkloadError  # noqa: E402
from callbench_shared.limits import MAX_DOWNLOAD, MAX_LINE_BYTES, MAX_UPLOAD_BYTES  # noqa: E402
from callbench_shared.records import UploadSummary  # noqa: E402
from callbench_shared.upload import Upload  # noqa: E402

DEFAULTS = {"id": 0, "name": "", "score": 0.0, "active": False, "kind": "KIND_UNSPECIFIED", "location": None}


def parse(line: bytes) -> SimpleNamespace:
    """A record from a JSON line, as a server's parser gives it (ValueError when it is not one)."""
    value = json.loads(line)
    if not isinstance(value, dict) or not isinstance(value.get("id", 0), int):
        raise ValueError("not a Record object")
    fields = {**DEFAULTS, "tags": [], "samples": [], **value}
    if fields["kind"] not in ("KIND_UNSPECIFIED", "KIND_SMALL", "KIND_MEDIUM", "KIND_LARGE"):
        raise ValueError(f"unknown kind {fields['kind']!r}")
    if fields["location"] is not None:
        fields["location"] = SimpleNamespace(**fields["location"])
    return SimpleNamespace(**fields)


def record(i: int) -> SimpleNamespace:
    return parse(json.dumps(records.downloaded(i)).encode())


def ndjson(count: int) -> bytes:
    return b"".join(json.dumps(records.downloaded(i), separators=(",", ":")).encode() + b"\n" for i in range(count))


def upload(body: bytes, size: int) -> tuple[UploadSummary | WorkloadError, bool]:
    """The upload of `body` cut into chunks of `size` bytes: its summary or error, and whether it stopped early."""
    reader = Upload(parse)
    for start in range(0, len(body), max(size, 1)):
        if not reader.push(body[start : start + size]):
            break
    try:
        return reader.finish(), reader.stopped
    except WorkloadError as e:
        return e, reader.stopped


class SummaryTest(unittest.TestCase):
    def test_a_summary_counts_and_remembers_the_ends(self):
        summary = UploadSummary.of(record(i) for i in range(5))
        self.assertEqual(summary, UploadSummary(count=5, active_count=3, first_id=1, last_id=5, sample_count=15))
        self.assertEqual(
            UploadSummary.of([]).fields(),
            {"count": 0, "active_count": 0, "first_id": 0, "last_id": 0, "sample_count": 0},
        )

    def test_an_invalid_record_is_refused_with_its_index(self):
        bad = record(0)
        bad.score = float("inf")
        with self.assertRaises(WorkloadError) as e:
            UploadSummary.of([record(1), bad])
        self.assertIs(e.exception.kind, ErrorKind.INVALID_ARGUMENT)
        self.assertIn("record 1", e.exception.message)
        unknown = record(0)
        unknown.kind = 9  # a protobuf record's open enum
        with self.assertRaises(WorkloadError):
            UploadSummary.of([unknown])


class DownloadTest(unittest.TestCase):
    def test_downloads_follow_the_contracts_rule(self):
        self.assertEqual(
            json.dumps(records.downloaded(3), separators=(",", ":")),
            '{"id":4,"name":"record-000003","score":1.5,"active":false,"kind":"KIND_SMALL",'
            '"location":{"city":"Springfield","latitude":39.78,"longitude":-89.65},'
            '"tags":["alpha","beta"],"samples":[3,4,5]}',
        )
        self.assertEqual([records.downloaded(i)["kind"] for i in range(3)], ["KIND_SMALL", "KIND_MEDIUM", "KIND_LARGE"])
        self.assertEqual(records.downloaded(1_000_000)["name"], "record-1000000")

    def test_count_is_in_range(self):
        self.assertEqual(records.download_count(MAX_DOWNLOAD), MAX_DOWNLOAD)
        self.assertEqual(records.download_count(0), 0)
        for bad in (-1, MAX_DOWNLOAD + 1, 2**63 - 1):
            with self.assertRaises(WorkloadError):
                records.download_count(bad)

    def test_count_param_is_a_required_decimal_integer_in_range(self):
        for value, count in (("3", 3), ("0", 0), ("100000", 100_000), ("007", 7), ("-0", 0)):
            self.assertEqual(records.count_param(value), count, value)
        bad = [None, "", "-1", "100001", "+3", "3.0", "1e3", "abc", "-", " 3", "3 ", "1_0", "٣", "9" * 5000]
        for value in bad:
            with self.assertRaises(WorkloadError, msg=repr(value)) as e:
                records.count_param(value)
            self.assertIs(e.exception.kind, ErrorKind.INVALID_ARGUMENT)


class UploadTest(unittest.TestCase):
    def test_sums_up_the_lines_however_the_body_is_cut(self):
        body = ndjson(50)
        expected = UploadSummary.of(record(i) for i in range(50))
        for size in (1, 2, 7, 100, 4096, len(body)):
            self.assertEqual(upload(body, size), (expected, False), f"chunks of {size}")

    def test_the_last_line_may_lack_its_newline_and_blank_lines_are_skipped(self):
        body = b'\n{"id": 4, "active": true, "samples": [1]}\n \r\n\n{"id": 9}'
        self.assertEqual(
            upload(body, 3)[0], UploadSummary(count=2, active_count=1, first_id=4, last_id=9, sample_count=1)
        )
        self.assertEqual(upload(b"", 1)[0], UploadSummary())
        self.assertEqual(upload(b"\n\n", 1)[0], UploadSummary())
        self.assertEqual(upload(b'{"id": 1}\r\n{"id": 2}\r\n', 4)[0].count, 2)

    def test_an_invalid_line_is_400_and_the_rest_is_still_read(self):
        for bad in (b'{"kind": "KIND_HUGE"}', b'{"id": "1"}', b"not json", b'{"id": 1', b"[1,", b'{"score": 1e999}'):
            body = b'{"id": 1}\n' + bad + b'\n{"id": 2}\n'
            error, early = upload(body, 5)
            self.assertIsInstance(error, WorkloadError, bad)
            assert isinstance(error, WorkloadError)
            self.assertIs(error.kind, ErrorKind.INVALID_ARGUMENT, bad)
            self.assertTrue(error.message.startswith("line 2:"), error.message)
            self.assertFalse(early)

    def test_errors_name_their_line_blank_ones_counted_however_the_body_is_cut(self):
        body = b'{"id": 1}\n\n \n{"id": 2}\r\n\nbad\n{"id": 3}'
        for size in (1, 2, 3, 5, 8, len(body)):
            error = upload(body, size)[0]
            assert isinstance(error, WorkloadError)
            self.assertTrue(error.message.startswith("line 6: not a record"), (size, error.message))
        error = upload(b'{"id": 1}\n\n{"score": 1e999}', 4)[0]
        assert isinstance(error, WorkloadError)
        self.assertEqual(error.message, "line 3: record 1: numbers must be finite")

    def test_a_line_over_4_mib_is_413_at_once(self):
        body = b'{"name": "' + b"a" * (MAX_LINE_BYTES - 12) + b'"}'
        self.assertEqual(len(body), MAX_LINE_BYTES)
        self.assertEqual(upload(body, 65536)[0].count, 1, "exactly 4 MiB passes")
        self.assertEqual(upload(body + b"\n", 65536)[0].count, 1, "and its newline is not counted")
        over = body[:1] + b" " + body[1:]
        for sent in (over, over + b"\n", b'{"id": 1}\n' + over):
            error, early = upload(sent, 65536)
            self.assertIsInstance(error, WorkloadError)
            assert isinstance(error, WorkloadError)
            self.assertIs(error.kind, ErrorKind.RESOURCE_EXHAUSTED)
            self.assertTrue(early)

    def test_an_upload_over_64_mib_is_413_even_after_a_bad_line(self):
        line = ndjson(1)
        reader = Upload(parse)
        self.assertTrue(reader.push(b"bad\n"))
        sent = 4
        while reader.push(line):
            sent += len(line)
            self.assertLessEqual(sent, MAX_UPLOAD_BYTES)
        self.assertGreater(sent + len(line), MAX_UPLOAD_BYTES)
        self.assertTrue(reader.stopped)
        # The bad line came first: it is the answer.
        with self.assertRaises(WorkloadError) as e:
            reader.finish()
        self.assertIs(e.exception.kind, ErrorKind.INVALID_ARGUMENT)

        reader = Upload(parse)
        blank = b"\n" * (1 << 20)
        pushes = 0
        while reader.push(blank):
            pushes += 1
        self.assertEqual(pushes, 64)
        with self.assertRaises(WorkloadError) as e:
            reader.finish()
        self.assertIs(e.exception.kind, ErrorKind.RESOURCE_EXHAUSTED)


if __name__ == "__main__":
    unittest.main()
