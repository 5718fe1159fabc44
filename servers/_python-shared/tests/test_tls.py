"""Unit tests of --tls's certificate (stdlib only): python3 -m unittest discover -s servers/_python-shared/tests"""

import contextlib
import hashlib
import io
import os
import ssl
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from callbench_shared import tls  # noqa: E402


def handshake(pem: tls.Pem, server_name: str, version: ssl.TLSVersion) -> str:
    """A TLS handshake in memory: a client trusting only this certificate, checking `server_name`; the version."""
    with tls.PemFiles(pem) as files:
        server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        server.load_cert_chain(files.cert, files.key)
    client = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    client.load_verify_locations(cadata=pem.cert.decode())
    client.minimum_version = client.maximum_version = version
    bios = [ssl.MemoryBIO() for _ in range(4)]  # client in/out, server in/out
    c = client.wrap_bio(bios[0], bios[1], server_hostname=server_name)
    s = server.wrap_bio(bios[2], bios[3], server_side=True)
    for _ in range(10):
        done = True
        for conn in (c, s):
            try:
                conn.do_handshake()
            except ssl.SSLWantReadError:
                done = False
        bios[2].write(bios[1].read())
        bios[0].write(bios[3].read())
        if done:
            negotiated = c.version()
            assert negotiated is not None  # None only before the handshake
            return negotiated
    raise AssertionError("handshake did not finish")


class SelfSignedTest(unittest.TestCase):
    def setUp(self) -> None:
        with contextlib.redirect_stderr(io.StringIO()) as err:
            self.pem = tls.self_signed()
        self.stderr = err.getvalue()

    def test_valid_for_the_loopback_names_in_tls_1_2_and_1_3(self) -> None:
        for name in tls.NAMES:
            self.assertEqual(handshake(self.pem, name, ssl.TLSVersion.TLSv1_3), "TLSv1.3")
        self.assertEqual(handshake(self.pem, "localhost", ssl.TLSVersion.TLSv1_2), "TLSv1.2")
        with self.assertRaises(ssl.SSLCertVerificationError):
            handshake(self.pem, "example.com", ssl.TLSVersion.TLSv1_3)

    def test_fingerprint_on_stderr(self) -> None:
        der = ssl.PEM_cert_to_DER_cert(self.pem.cert.decode())
        digest = hashlib.sha256(der).hexdigest().upper()
        self.assertIn(":".join(digest[i : i + 2] for i in range(0, 64, 2)), self.stderr)

    def test_files_are_private_and_removed(self) -> None:
        with tls.PemFiles(self.pem) as files:
            self.assertEqual(os.stat(files.key).st_mode & 0o777, 0o600)
            self.assertEqual(os.stat(files.dir).st_mode & 0o777, 0o700)
        self.assertFalse(os.path.exists(files.dir))


if __name__ == "__main__":
    unittest.main()
