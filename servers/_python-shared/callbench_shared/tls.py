"""`--tls`: a fresh self-signed certificate at every start, as the Rust and Go servers make theirs.

An ECDSA P-256 key and a certificate for localhost, 127.0.0.1 and ::1 (the names the Rust and Go servers'
certificates carry), made by the openssl command line: Python's ssl module can serve a certificate but not make
one, and one subprocess at start-up keeps the servers free of another pinned package. The framework serves it
with its own TLS (uvicorn: Python's ssl module; grpcio: grpc core's BoringSSL), TLS 1.2 and 1.3.
"""

import hashlib
import os
import shutil
import ssl
import subprocess
import sys
import tempfile
from dataclasses import dataclass

from . import serving

NAMES = ("localhost", "127.0.0.1", "::1")


@dataclass(frozen=True)
class Pem:
    cert: bytes
    key: bytes


def self_signed() -> Pem:
    """Makes the key and certificate and prints the certificate's SHA-256 fingerprint on stderr."""
    if shutil.which("openssl") is None:
        serving.fail("--tls needs the openssl command (apt-get install openssl)")
    alt_names = ",".join(f"IP:{n}" if n[0].isdigit() or ":" in n else f"DNS:{n}" for n in NAMES)
    with tempfile.TemporaryDirectory(prefix="callbench-tls-") as tmp:
        cert_path, key_path = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
        made = subprocess.run(
            [
                "openssl",
                "req",
                "-x509",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:prime256v1",
                "-nodes",
                "-keyout",
                key_path,
                "-out",
                cert_path,
                "-days",
                "3650",
                "-subj",
                "/O=callbench (self-signed)/CN=localhost",
                "-addext",
                f"subjectAltName={alt_names}",
                "-addext",
                "extendedKeyUsage=serverAuth",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if made.returncode != 0:
            last = (made.stderr.strip().splitlines() or ["openssl failed"])[-1]
            serving.fail(f"cannot make a certificate: {last}")
        with open(cert_path, "rb") as c, open(key_path, "rb") as k:
            pem = Pem(c.read(), k.read())
    der = ssl.PEM_cert_to_DER_cert(pem.cert.decode())
    digest = hashlib.sha256(der).hexdigest().upper()
    fingerprint = ":".join(digest[i : i + 2] for i in range(0, len(digest), 2))
    print(
        f"tls: self-signed certificate for {', '.join(NAMES)}, SHA-256 fingerprint {fingerprint}",
        file=sys.stderr,
        flush=True,
    )
    return pem


class PemFiles:
    """The certificate and key as files in a private temporary directory, for a framework that loads them by
    path (uvicorn, in every worker process); removed when the block ends."""

    def __init__(self, pem: Pem) -> None:
        self.pem = pem

    def __enter__(self) -> "PemFiles":
        self.dir = tempfile.mkdtemp(prefix="callbench-tls-")  # mode 0700
        self.cert, self.key = os.path.join(self.dir, "cert.pem"), os.path.join(self.dir, "key.pem")
        for path, data in ((self.cert, self.pem.cert), (self.key, self.pem.key)):
            with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as f:
                f.write(data)
        return self

    def __exit__(self, *exc) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)
