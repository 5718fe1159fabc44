#!/usr/bin/env python3
"""Fills the local fuzz corpora (fuzz/corpus/TARGET/, git-ignored) with what real servers send: starts each named
reference server (`callbench serve NAME --no-build`), sends it the contract's requests (the test
vectors) over HTTP/1.1, h2c or gRPC as the server speaks, records the raw bytes it answers, and
writes each capture in the input format of the targets that decode it (see fuzz/README.md).
`scripts/fuzz --minimise` then takes those that reach new edges into the committed seeds (fuzz/seeds/TARGET/).

    python3 fuzz/capture.py [--callbench target/release/callbench] NAME...

Only loopback; every server it starts is stopped, also on failure and Ctrl-C.
"""

import argparse
import base64
import hashlib
import json
import os
import re
import socket
import struct
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "fuzz" / "corpus"  # the local corpus, not the committed seeds
VECTORS = ROOT / "contract" / "vectors"
GRPC_SERVERS = ("tonic", "grpc", "grpcio", "grpcjs")


def contract_methods():
    """The contract's methods as `callbench.v1.Service/Method`, sorted by full name as the
    contract_json target numbers them."""
    names = []
    for proto in (ROOT / "contract" / "proto" / "callbench" / "v1").glob("*.proto"):
        service = None
        for line in proto.read_text().splitlines():
            if m := re.match(r"service (\w+)", line):
                service = m.group(1)
            elif (m := re.match(r"\s+rpc (\w+)", line)) and service:
                names.append(f"callbench.v1.{service}/{m.group(1)}")
    return sorted(names, key=lambda n: n.replace("/", "."))


def save(target, data):
    """Writes one input, named by its hash as libFuzzer names them."""
    folder = CORPUS / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / hashlib.sha1(data).hexdigest()).write_bytes(data)


def body_of(spec):
    if spec is None:
        return b""
    if "json" in spec:
        return json.dumps(spec["json"]).encode()
    if "text" in spec:
        return spec["text"].encode()
    if "base64" in spec:
        return base64.b64decode(spec["base64"])
    return b""  # a generated fill (the oversized body): too big for a seed


def vectors():
    for path in sorted(VECTORS.glob("*.json")):
        yield from json.loads(path.read_text())["vectors"]


def exchange(port, request, timeout=3.0):
    """Sends `request`, half-closes, and reads until the server closes (or goes quiet)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(request)
        s.shutdown(socket.SHUT_WR)
        got = b""
        try:
            while chunk := s.recv(65536):
                got += chunk
        except (TimeoutError, ConnectionResetError):
            pass
        return got


def http1_request(method, path, headers, body, gzip):
    lines = [f"{method} {path} HTTP/1.1", "host: 127.0.0.1"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    if body or method in ("PUT", "POST"):
        if not any(k.lower() == "content-type" for k in headers):
            lines.append("content-type: application/json")
        lines.append(f"content-length: {len(body)}")
    if gzip:
        lines.append("accept-encoding: gzip")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def capture_http1(port):
    rest = [v["rest"] for v in vectors() if "rest" in v]
    for gzip in (False, True):
        for r in rest:
            body = body_of(r.get("body"))
            if r.get("body") and not body:
                continue
            request = http1_request(r["method"], r["path"], r.get("headers", {}), body, gzip)
            # Two of the same request on one connection: pipelined answers, the second closing.
            answer = exchange(port, request * 2)
            if answer:
                flags = 2 if gzip else 0
                save("http1_answers", bytes([flags, 0]) + answer)
                save("http1_answers", bytes([flags, 7]) + answer)
                for chunked in re.findall(rb"\r\n\r\n([0-9a-fA-F]+\r\n.*?\r\n0\r\n\r\n)", answer, re.S):
                    save("chunked", bytes([0]) + chunked)
                # The body of the first answer, as a chunked body cut in 3 (the framing the real
                # answers here seldom use, around a real body).
                head_end = answer.find(b"\r\n\r\n")
                length = re.search(rb"content-length: *(\d+)", answer[:head_end], re.I)
                if length:
                    data = answer[head_end + 4 : head_end + 4 + int(length.group(1))]
                    third = max(1, len(data) // 3)
                    parts = [data[i : i + third] for i in range(0, len(data), third)]
                    chunked = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in parts) + b"0\r\n\r\n"
                    save("chunked", bytes([5]) + chunked)
                    if answer.find(b"{") > 0:
                        save("http1_answers", bytes([2, 0]) + answer[:head_end] + b"\r\n\r\n" + data)


def hpack_literal(name, value):
    """A literal field without indexing, no Huffman (RFC 7541 §6.2.2)."""

    def string(s):
        return hpack_int(len(s), 7, 0) + s

    return b"\x00" + string(name) + string(value)


def hpack_int(n, prefix, first):
    limit = (1 << prefix) - 1
    if n < limit:
        return bytes([first | n])
    out = [first | limit]
    n -= limit
    while n >= 128:
        out.append(n % 128 + 128)
        n //= 128
    out.append(n)
    return bytes(out)


def frame(kind, flags, stream, payload):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def read_frames(data):
    at = 0
    while at + 9 <= len(data):
        length = int.from_bytes(data[at : at + 3], "big")
        kind, flags = data[at + 3], data[at + 4]
        stream = int.from_bytes(data[at + 5 : at + 9], "big") & 0x7FFFFFFF
        yield kind, flags, stream, data[at + 9 : at + 9 + length]
        at += 9 + length


def h2_capture(port, calls):
    """The server's bytes for `calls` ([(headers, body)]) on streams 1, 3, 5... of one h2c
    connection, read until every stream ended."""
    out = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0, b"")
    for i, (headers, body) in enumerate(calls):
        block = b"".join(hpack_literal(n.encode(), v.encode()) for n, v in headers)
        stream = 1 + 2 * i
        out += frame(1, 0x4 | (0 if body else 0x1), stream, block)
        if body:
            out += frame(0, 0x1, stream, body)
    got = b""
    with socket.create_connection(("127.0.0.1", port), timeout=3.0) as s:
        s.sendall(out + frame(4, 0x1, 0, b""))
        ended = set()
        try:
            while len(ended) < len(calls) and (chunk := s.recv(65536)):
                got += chunk
                ended = {st for k, f, st, _ in read_frames(got) if k in (0, 1) and f & 0x1} | {
                    st for k, _, st, _ in read_frames(got) if k == 3
                }
        except (TimeoutError, ConnectionResetError):
            pass
    return got


def varint(n):
    n &= (1 << 64) - 1
    out = b""
    while n >= 128:
        out += bytes([n % 128 + 128])
        n //= 128
    return out + bytes([n])


def grpc_message(request):
    """The protobuf bytes of a vector's gRPC request where they are simple to write here: given
    as base64, or auth's {id, password}; None for the others."""
    if "base64" in request:
        return base64.b64decode(request["base64"])
    fields = request.get("json", {})
    if set(fields) <= {"id", "password"}:
        out = b""
        if fields.get("id"):
            out += b"\x08" + varint(int(fields["id"]))
        if fields.get("password"):
            pw = fields["password"].encode()
            out += b"\x12" + varint(len(pw)) + pw
        return out
    if not fields:
        return b""
    return None


def capture_grpc(port):
    calls = []
    for v in vectors():
        g = v.get("grpc")
        if not g or (message := grpc_message(g.get("request", {}))) is None:
            continue
        headers = [
            (":method", "POST"),
            (":scheme", "http"),
            (":authority", f"127.0.0.1:{port}"),
            (":path", "/" + g["method"]),
            ("content-type", g.get("content_type", "application/grpc")),
            ("te", "trailers"),
        ]
        calls.append((headers, b"\0" + struct.pack(">I", len(message)) + message))
    methods = contract_methods()
    for i in range(0, len(calls), 3):
        batch = calls[i : i + 3]
        got = h2_capture(port, batch)
        if not got:
            continue
        save_h2(got, grpc=True)
        # Each answer's message, for the method that was called on its stream.
        for kind, _, stream, payload in read_frames(got):
            method = batch[(stream - 1) // 2][0][3][1].strip("/") if stream and (stream - 1) // 2 < len(batch) else None
            if kind == 0 and len(payload) > 5 and method in methods:
                save("contract_json", bytes([0x80 | methods.index(method)]) + payload[5:])


def capture_h2c_rest(port):
    calls = []
    for v in vectors():
        r = v.get("rest")
        body = body_of(r.get("body")) if r else b""
        if not r or (r.get("body") and not body):
            continue
        headers = [
            (":method", r["method"]),
            (":scheme", "http"),
            (":authority", f"127.0.0.1:{port}"),
            (":path", r["path"]),
            ("content-type", "application/json"),
            ("accept-encoding", "gzip"),
        ]
        calls.append((headers, body))
    for i in range(0, len(calls), 3):
        got = h2_capture(port, calls[i : i + 3])
        if got:
            save_h2(got, grpc=False)


def save_h2(got, grpc):
    save("h2_connection", bytes([0]) + got)
    save("h2_connection", bytes([13]) + got)
    blocks = b""
    for kind, _, _, payload in read_frames(got):
        if kind == 1 and len(payload) < 256:
            blocks += bytes([len(payload)]) + payload
    if blocks:
        save("hpack_decode", blocks)
    data = b"".join(p for k, _, _, p in read_frames(got) if k == 0)
    if grpc and data:
        save("grpc_messages", bytes([0x80]) + data)
        save("grpc_messages", bytes([0x83]) + data)


def serve(callbench, name):
    proc = subprocess.Popen(
        [callbench, "serve", name, "--no-build"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    for line in proc.stderr:
        if m := re.search(r"ready at \w+://[^:]+:(\d+)", line):
            return proc, int(m.group(1))
    proc.wait()
    sys.exit(f"capture: {name} did not start")


def seed_texts():
    """The suites and the docs' load commands: the starting points of the text parsers."""
    for suite in sorted((ROOT / "suites").glob("*.toml")):
        save("suite_toml", suite.read_bytes())
    docs = [ROOT / "README.md", *sorted((ROOT / "docs/src").rglob("*.md"))]
    for line in re.findall(r"callbench load ([^`\n]+)", "\n".join(p.read_text() for p in docs)):
        save("load_flags", "\0".join(line.split()).encode())
    methods = contract_methods()
    for v in vectors():
        g = v.get("grpc")
        if g and "json" in g.get("request", {}) and g["method"] in methods:
            save("contract_json", bytes([methods.index(g["method"])]) + json.dumps(g["request"]["json"]).encode())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--callbench", default=str(ROOT / "target" / "release" / "callbench"))
    parser.add_argument("servers", nargs="*")
    args = parser.parse_args()
    seed_texts()
    for name in args.servers:
        proc, port = serve(args.callbench, name)
        try:
            kind = name.split("+")[0].rsplit("-", 1)[-1]
            if kind in GRPC_SERVERS:
                capture_grpc(port)
            else:
                capture_http1(port)
                if name.startswith("rust-"):
                    capture_h2c_rest(port)
        finally:
            os.killpg(proc.pid, 15)
            proc.wait()
        print(f"capture: {name} done", file=sys.stderr)
    for target in sorted(CORPUS.iterdir()):
        print(f"{target.name}: {len(list(target.iterdir()))} inputs", file=sys.stderr)


if __name__ == "__main__":
    main()
