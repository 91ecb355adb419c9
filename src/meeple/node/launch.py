"""Starting ``meeple node`` processes and reading their ready line (``meeple cluster up``,
the cluster tests and ``benchmarks/cluster.py`` start theirs this way)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from meeple.private import private_file

__all__ = ["NodeProcess", "start_node"]


@dataclass
class NodeProcess:
    """A running node: its name, roles, process and listeners (``protocol -> port``)."""

    name: str
    roles: tuple[str, ...]
    proc: subprocess.Popen[str]
    log: Path
    listeners: dict[str, int] = field(default_factory=dict)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def kill(self) -> None:
        """SIGKILL: no lease released, no goodbye (a crash)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        self._close()

    def _close(self) -> None:
        if self.proc.stdout is not None:
            self.proc.stdout.close()

    def stop(self, timeout: float = 15.0) -> None:
        """SIGTERM and wait (a clean stop: leases released); SIGKILL if it hangs."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
        self._close()


def start_node(
    name: str,
    roles: Collection[str],
    nats_url: str,
    *,
    user: str | None,
    password: str | None,
    log_dir: Path,
    namespace: str = "meeple",
    database: str | None = None,
    twente_port: int = 0,
    clarkson_port: int = 0,
    santorini_port: int = 0,
    spectrangle_port: int = 0,
    cmpn402_port: int = 0,
    lease: int = 2,
    extra_env: Mapping[str, str] | None = None,
    extra_args: Sequence[str] = (),
    timeout: float = 60.0,
) -> NodeProcess:
    """Start ``meeple node`` and wait for its ready line (its stderr goes to
    ``log_dir/<name>.log``); RuntimeError if it exits or is not ready in ``timeout``."""
    log = log_dir / f"{name}.log"
    command = [
        sys.executable,
        "-m",
        "meeple",
        "node",
        *("--roles", ",".join(roles), "--nats", nats_url, "--namespace", namespace),
        *("--name", name, "--twente-port", str(twente_port), "--lease", str(lease)),
        *("--clarkson-port", str(clarkson_port)),
        *("--santorini-port", str(santorini_port), "--spectrangle-port", str(spectrangle_port)),
        *("--cmpn402-port", str(cmpn402_port)),
    ]
    command += list(extra_args)
    if user is not None:
        command += ["--nats-user", user]
    if database is not None:
        command += ["--database", database]
    env = {**os.environ, **(extra_env or {})}
    if password is not None:
        env["MEEPLE_NATS_PASSWORD"] = password
    with private_file(log).open("ab") as err:
        proc = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=err,
            stdin=subprocess.DEVNULL,
            env=env,
            text=True,
            start_new_session=True,
        )
    line: list[str] = []
    reader = threading.Thread(
        target=lambda: line.append(proc.stdout.readline() if proc.stdout else "")
    )
    reader.start()
    reader.join(timeout)
    ready = line[0].strip() if line else ""
    if not ready.startswith(f"node {name} ready"):
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
        tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
        raise RuntimeError(f"node {name} did not start ({ready!r}):\n{tail}")
    node = NodeProcess(name, tuple(roles), proc, log)
    for part in ready.split():
        key, eq, value = part.partition("=")
        if eq and ":" in value and key not in ("roles", "pid"):
            node.listeners[key] = int(value.rsplit(":", 1)[1])
    return node
