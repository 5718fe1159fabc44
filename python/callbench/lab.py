"""`callbench lab HOST...` for the length of a `with` block: a network namespace per host on one bridge
(198.18.1.N), so several machines' processes (Ray nodes, a server) run on this one. Needs root."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path


class Lab:
    def __init__(self, cli: str, hosts: list[str]) -> None:
        self.cli, self.names = cli, hosts
        self.hosts: dict[str, tuple[str, str]] = {}
        self.proc: subprocess.Popen[str] | None = None

    def __enter__(self) -> Lab:
        self.proc = subprocess.Popen(
            [self.cli, "lab", *self.names],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
        assert self.proc.stdout is not None and self.proc.stderr is not None  # both PIPE
        try:
            for _ in self.names:
                line = self.proc.stdout.readline()
                if not line:
                    raise RuntimeError(f"callbench lab ended: {self.proc.stderr.read().strip()}")
                name, netns, address = line.split()
                self.hosts[name] = (netns, address)
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def netns(self, host: str) -> str:
        return self.hosts[host][0]

    def address(self, host: str) -> str:
        return self.hosts[host][1]

    def left_behind(self) -> list[str]:
        """The lab's namespaces that still exist."""
        return [ns for ns, _ in self.hosts.values() if Path("/run/netns", ns).exists()]

    def stop(self) -> None:
        """Ctrl-C to `callbench lab`: it removes every namespace it made."""
        proc, self.proc = self.proc, None
        if proc and proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
