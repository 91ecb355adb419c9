"""`meeple serve` as a user runs it: a real process, real sockets, SIGTERM to stop."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from meeple.games.scrabble.lexicon import Lexicon


def _start(tmp_path: Path, *extra: str) -> tuple[subprocess.Popen[str], int]:
    """Start the server with every port 0; return it and the Twente port from its log."""
    args = [sys.executable, "-m", "meeple", "serve", "--database", str(tmp_path / "db.sqlite3")]
    for name in ("twente", "clarkson", "cmpn402", "santorini", "spectrangle", "web"):
        args += [f"--{name}-port", "0"]
    proc = subprocess.Popen(
        [*args, *extra], stderr=subprocess.PIPE, text=True, env=dict(os.environ)
    )
    assert proc.stderr is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        match = re.search(r"twente listening on 127\.0\.0\.1:(\d+)", line)
        if match:
            return proc, int(match.group(1))
        assert line or proc.poll() is None, "server exited early"
    proc.kill()
    proc.wait(10)
    raise AssertionError("the server did not start listening")


@pytest.mark.parametrize("runtime", ["server", "node"])
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_serve_answers_then_shuts_down_cleanly_on_signal(
    tmp_path: Path, gcide: Lexicon, sig: signal.Signals, runtime: str
) -> None:
    """The server answers a Twente ANNOUNCE, and on SIGTERM/SIGINT says goodbye and exits 0
    (either runtime: ``--runtime node`` is one node with every role, issue 32.2)."""
    proc, port = _start(tmp_path, "--runtime", runtime)
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
            conn.sendall(b"ANNOUNCE\x1fAlice\x1e")
            assert conn.recv(100).startswith(b"WELCOME\x1fAlice")
            proc.send_signal(sig)
            assert proc.wait(timeout=15) == 0
            assert conn.recv(100) == b""  # closed by the server
        assert proc.stderr is not None
        assert "shutting down" in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)  # reaped: a Popen collected while running warns (issue 33)
        if proc.stderr is not None:
            proc.stderr.close()


def test_bad_config_is_one_line_and_exit_code_2(tmp_path: Path) -> None:
    """A config error is reported in one line, no traceback."""
    bad = tmp_path / "bad.toml"
    bad.write_text("idle_timeout = -5\n")
    out = subprocess.run(
        [sys.executable, "-m", "meeple", "serve", "--config", str(bad)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert out.returncode == 2
    assert out.stderr.strip() == "meeple serve: idle_timeout must be positive"


def test_a_second_node_runtime_on_the_same_database_is_refused(
    tmp_path: Path, gcide: Lexicon
) -> None:
    """``--runtime node`` twice on one database: the second says so in one line and exits
    1 before it reads a log (the first one's games are not taken from it)."""
    proc, _ = _start(tmp_path, "--runtime", "node")
    try:
        args = [sys.executable, "-m", "meeple", "serve", "--database", str(tmp_path / "db.sqlite3")]
        for name in ("twente", "clarkson", "cmpn402", "santorini", "spectrangle", "web"):
            args += [f"--{name}-port", "0"]
        out = subprocess.run(
            [*args, "--runtime", "node"], capture_output=True, text=True, timeout=60, check=False
        )
        assert out.returncode == 1, out.stderr
        assert (
            out.stderr.strip()
            .splitlines()[-1]
            .startswith("meeple serve: another meeple serve is running on")
        ), out.stderr
    finally:
        proc.terminate()
        assert proc.wait(timeout=30) == 0
        if proc.stderr is not None:
            proc.stderr.close()
