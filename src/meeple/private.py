"""Private directories and files: what meeple writes is readable by its own user only,
whatever the umask (issue 30.5; docs/durability.md, "File modes").

The SQLite database and its ``-wal`` and ``-shm`` files hold the bag orders of running
games and the accounts' password hashes; the CMPN402 referee's per-game logs hold both
agents' racks; a cluster's ``cluster.json`` holds the database's URL with its password
and the CMPN402 admin token. Each is created through this module:

- :func:`private_dir`: a directory made ``0700``, with every missing parent (a directory
  that exists already is left as its owner made it: it may be ``/tmp`` or a home);
- :func:`private_file`: a file made ``0600`` (created empty if missing; an existing one
  meeple wrote before is narrowed to ``0600``);
- :func:`write_private`: write such a file (``private_file(p).open("a")`` appends).

SQLite creates its ``-wal`` and ``-shm`` files with the database file's mode, so a
database made by :func:`private_file` first keeps all three private.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["DIR_MODE", "FILE_MODE", "private_dir", "private_file", "write_private"]

#: A private directory: its owner reads, writes and enters it; nobody else.
DIR_MODE = 0o700
#: A private file: its owner reads and writes it; nobody else.
FILE_MODE = 0o600


def private_dir(path: str | Path) -> Path:
    """``path`` as a directory: the ones missing (parents included) are created ``0700``
    whatever the umask; one that exists keeps its mode. Returns ``path``."""
    path = Path(path)
    missing: list[Path] = []
    for candidate in (path, *path.parents):
        if candidate.exists():
            break
        missing.append(candidate)
    for directory in reversed(missing):
        try:
            directory.mkdir(mode=DIR_MODE)
        except FileExistsError:
            continue  # made meanwhile by another process: its mode is its maker's
        # mkdir's mode passes through the umask, which could only narrow 0700; chmod
        # states it anyway.
        os.chmod(directory, DIR_MODE)
    return path


def private_file(path: str | Path) -> Path:
    """``path`` as a file of mode ``0600`` (created empty when missing, its directory by
    :func:`private_dir`); returns ``path``."""
    path = Path(path)
    private_dir(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)
    finally:
        os.close(fd)
    return path


def write_private(path: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path``, a file of mode ``0600``; nobody else can read
    it at any moment, not even while it is written."""
    private_file(path)
    Path(path).write_text(text, encoding="utf-8")
