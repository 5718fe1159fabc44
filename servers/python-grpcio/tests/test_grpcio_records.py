"""End-to-end tests of callbench.v1.Records on the running server (Upload, Converse, Download, health and
reflection), with grpcio's own client. Run with the server's venv, after its build:

    target/servers/python-grpcio/venv/bin/python -m unittest discover -s servers/python-grpcio/tests
"""

import queue
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

try:
    import grpc
    from google.protobuf import descriptor_pb2
    from grpc_health.v1 import health_pb2, health_pb2_grpc
    from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

    from callbench.v1 import echo_pb2, records_pb2, records_pb2_grpc
except ImportError as e:  # not the server's venv
    raise unittest.SkipTest(f"needs the python-grpcio venv (servers/_python-shared/build.py --protos): {e}") from e

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "_python-shared"))

from callbench_shared import records  # noqa: E402
from callbench_shared.limits import MAX_DOWNLOAD  # noqa: E402

# Seconds a call may take.
TIMEOUT = 30


class RecordsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        users = Path(cls.dir.name) / "users.json"
        users.write_text("[]")
        cls.server = subprocess.Popen(
            [sys.executable, "-m", "callbench_grpcio", "--port", "0", "--users", str(users)],
            stdout=subprocess.PIPE,
            text=True,
        )
        line = cls.server.stdout.readline() if cls.server.stdout else ""
        if not line.startswith("listening on "):
            cls.server.kill()
            raise RuntimeError(f"the server did not start: {line!r}")
        cls.channel = grpc.insecure_channel(line.removeprefix("listening on ").strip())
        cls.stub = records_pb2_grpc.RecordsStub(cls.channel)

    @classmethod
    def tearDownClass(cls):
        cls.channel.close()
        cls.server.terminate()
        cls.server.wait(10)
        cls.dir.cleanup()

    def record(self, i: int) -> echo_pb2.Record:
        return echo_pb2.Record(**records.downloaded(i))

    def test_upload_sums_up_every_record(self):
        summary = self.stub.Upload(iter([]), timeout=TIMEOUT)
        self.assertEqual(summary, records_pb2.UploadSummary())
        summary = self.stub.Upload(iter([echo_pb2.Record(id=7, active=True, samples=[1, 2])]), timeout=TIMEOUT)
        self.assertEqual(
            summary, records_pb2.UploadSummary(count=1, active_count=1, first_id=7, last_id=7, sample_count=2)
        )
        summary = self.stub.Upload((self.record(i) for i in range(1000)), timeout=TIMEOUT)
        self.assertEqual(
            summary,
            records_pb2.UploadSummary(count=1000, active_count=500, first_id=1, last_id=1000, sample_count=3000),
        )

    def test_upload_refuses_an_invalid_record(self):
        for bad in (echo_pb2.Record(id=2, kind=9), echo_pb2.Record(id=2, score=float("nan"))):
            with self.assertRaises(grpc.RpcError) as e:
                self.stub.Upload(iter([self.record(0), bad, self.record(1)]), timeout=TIMEOUT)
            self.assertEqual(e.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
            self.assertIn("record 1", e.exception.details())

    def test_converse_answers_each_message_before_the_next_is_sent(self):
        requests = queue.Queue()
        answers = self.stub.Converse(iter(requests.get, None), timeout=TIMEOUT)
        for i in range(5):
            message = echo_pb2.EchoMessage(records=[self.record(j) for j in range(i)])
            requests.put(message)
            self.assertEqual(next(answers), message)
        requests.put(None)  # half-close
        self.assertEqual(list(answers), [])
        self.assertEqual(answers.code(), grpc.StatusCode.OK)

    def test_converse_ends_at_an_invalid_message_after_the_answers_before_it(self):
        first = echo_pb2.EchoMessage(records=[self.record(0)])
        bad = echo_pb2.EchoMessage(records=[self.record(1), echo_pb2.Record(kind=9)])
        answers = self.stub.Converse(iter([first, first, bad, first]), timeout=TIMEOUT)
        self.assertEqual(next(answers), first)
        self.assertEqual(next(answers), first)
        with self.assertRaises(grpc.RpcError) as e:
            next(answers)
        self.assertEqual(e.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("records[1].kind", e.exception.details())

    def test_download_sends_count_records_by_the_rule(self):
        self.assertEqual(list(self.stub.Download(records_pb2.DownloadRequest(count=0), timeout=TIMEOUT)), [])
        got = list(self.stub.Download(records_pb2.DownloadRequest(count=3), timeout=TIMEOUT))
        self.assertEqual(got, [self.record(i) for i in range(3)])
        self.assertEqual(got[1].kind, echo_pb2.KIND_MEDIUM)
        got = list(self.stub.Download(records_pb2.DownloadRequest(count=2000), timeout=TIMEOUT))
        self.assertEqual(len(got), 2000)
        self.assertEqual(got[-1], self.record(1999))

    def test_download_refuses_a_count_out_of_range(self):
        for count in (-1, MAX_DOWNLOAD + 1, 2**63 - 1):
            with self.assertRaises(grpc.RpcError) as e:
                list(self.stub.Download(records_pb2.DownloadRequest(count=count), timeout=TIMEOUT))
            self.assertEqual(e.exception.code(), grpc.StatusCode.INVALID_ARGUMENT, count)

    def test_health_and_reflection_know_the_service(self):
        health = health_pb2_grpc.HealthStub(self.channel)
        answer = health.Check(health_pb2.HealthCheckRequest(service="callbench.v1.Records"), timeout=TIMEOUT)
        self.assertEqual(answer.status, health_pb2.HealthCheckResponse.SERVING)
        reflection = reflection_pb2_grpc.ServerReflectionStub(self.channel)
        asks = [
            reflection_pb2.ServerReflectionRequest(list_services=""),
            reflection_pb2.ServerReflectionRequest(file_containing_symbol="callbench.v1.Records.Upload"),
        ]
        listed, file = list(reflection.ServerReflectionInfo(iter(asks), timeout=TIMEOUT))
        self.assertIn("callbench.v1.Records", [s.name for s in listed.list_services_response.service])
        found = descriptor_pb2.FileDescriptorProto.FromString(file.file_descriptor_response.file_descriptor_proto[0])
        self.assertEqual(found.name, "callbench/v1/records.proto")


if __name__ == "__main__":
    unittest.main()
