"""The store: finished games, ratings, accounts, checkpoints and rooms' action logs.

Two homes with one schema and one set of methods: a SQLite file, the embedded default
(:class:`Store`), and a PostgreSQL database (:class:`meeple.server.store.postgres.PgStore`);
:func:`open_store` picks one from a ``--database`` URL. What differs between them is a
:class:`Backend` (connections, transactions, each migration's DDL, a few pieces of SQL);
the queries, the fenced log, the ratings update and rows to dataclasses are written
once, here.

Schema changes are numbered migrations applied in order on open (``schema_version``
says how far a database is: SQLite's ``user_version``, a table in PostgreSQL), so an
old database upgrades itself. Writes are small (a log entry per action, a game at its
end, a checkpoint per turn); SQLite in WAL mode commits them in well under a
millisecond on local disk. Log writes run in the journal's thread, the rest inline.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import functools
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, NotRequired, Protocol, TypedDict, TypeVar, Unpack

from meeple import ratings
from meeple.games import records
from meeple.games.records import FORMAT, RecordError
from meeple.private import private_file

T = TypeVar("T")

__all__ = [
    "OUTCOMES",
    "SCHEMA_VERSION",
    "Account",
    "ActionLog",
    "Backend",
    "BatchRefused",
    "Cursor",
    "DatabaseClaim",
    "DatabaseInUse",
    "FinishedGame",
    "GameRecord",
    "LogConflict",
    "LogEntry",
    "Migration",
    "PlayerProfile",
    "PlayerRating",
    "RatingPoint",
    "SqliteBackend",
    "Store",
    "StoreUnavailable",
    "Transaction",
    "open_store",
    "outcomes",
    "sqlite_path",
    "stored",
]

logger = logging.getLogger(__name__)

#: A migration: its SQL script, or the script then a named step in Python run in the same
#: transaction (:data:`_STEPS`: what SQL alone cannot say the same way on both backends).
Migration = str | tuple[str, str]

_MIGRATIONS: Sequence[Migration] = (
    # 1: finished games, and checkpoints to resume games after a disconnect or restart.
    """
    CREATE TABLE games (
        id INTEGER PRIMARY KEY,
        game TEXT NOT NULL,
        variant TEXT NOT NULL,
        protocols TEXT NOT NULL,
        players TEXT NOT NULL,
        started_at REAL NOT NULL,
        ended_at REAL NOT NULL,
        end_reason TEXT NOT NULL,
        result TEXT NOT NULL,
        record TEXT NOT NULL
    );
    CREATE INDEX games_ended ON games (ended_at);
    CREATE TABLE checkpoints (
        key TEXT PRIMARY KEY,
        saved_at REAL NOT NULL,
        state TEXT NOT NULL
    );
    """,
    # 2: the game's JSON record (meeple.games.records), NULL for games stored before it;
    # the web lists one game's finished games, newest first.
    """
    ALTER TABLE games ADD COLUMN data TEXT NULL;
    CREATE INDEX games_game_ended ON games (game, ended_at);
    """,
    # 3: ratings per (game, player) with one history row per rated game, and who sat
    # where in every game (filled from the games already stored) to list a player's games.
    """
    CREATE TABLE game_players (
        game_id INTEGER NOT NULL REFERENCES games (id),
        seat INTEGER NOT NULL,
        player TEXT NOT NULL,
        PRIMARY KEY (game_id, seat)
    );
    CREATE INDEX game_players_player ON game_players (player, game_id);
    INSERT INTO game_players (game_id, seat, player)
        SELECT games.id, CAST(p.key AS INTEGER), p.value FROM games, json_each(games.players) AS p;
    CREATE TABLE ratings (
        game TEXT NOT NULL,
        player TEXT NOT NULL,
        rating REAL NOT NULL,
        rd REAL NOT NULL,
        volatility REAL NOT NULL,
        games INTEGER NOT NULL,
        updated_at REAL NOT NULL,
        PRIMARY KEY (game, player)
    );
    CREATE INDEX ratings_leaderboard ON ratings (game, rating);
    CREATE TABLE rating_history (
        id INTEGER PRIMARY KEY,
        game TEXT NOT NULL,
        player TEXT NOT NULL,
        game_id INTEGER NOT NULL REFERENCES games (id),
        rating REAL NOT NULL,
        rd REAL NOT NULL,
        volatility REAL NOT NULL,
        games INTEGER NOT NULL,
        updated_at REAL NOT NULL
    );
    CREATE INDEX rating_history_player ON rating_history (game, player, id);
    """,
    # 4: names reserved from the web (meeple.web.accounts): the hash is scrypt's, with its
    # own salt and cost; ``folded`` is the name's casefold, unique, so "Ann" guards "ann".
    """
    CREATE TABLE accounts (
        name TEXT NOT NULL,
        folded TEXT PRIMARY KEY,
        password_hash BLOB NOT NULL,
        salt BLOB NOT NULL,
        kdf TEXT NOT NULL,
        created_at REAL NOT NULL
    )
    """,
    # 5: every room is a log (docs/durability.md): its genesis, then one entry per
    # accepted action. ``game_id`` is set, in the transaction that stores the finished
    # game, when the room ends; a log without one is a game to recover at start-up.
    """
    CREATE TABLE room_logs (
        uid TEXT PRIMARY KEY,
        game TEXT NOT NULL,
        genesis TEXT NOT NULL,
        created_at REAL NOT NULL,
        last_seq INTEGER NOT NULL,
        game_id INTEGER NULL REFERENCES games (id),
        end_reason TEXT NULL
    );
    CREATE INDEX room_logs_open ON room_logs (created_at) WHERE game_id IS NULL;
    CREATE TABLE room_log_entries (
        uid TEXT NOT NULL REFERENCES room_logs (uid),
        seq INTEGER NOT NULL,
        at REAL NOT NULL,
        entry TEXT NOT NULL,
        PRIMARY KEY (uid, seq)
    )
    """,
    # 6: browsers signed in to an account on a cluster's edges (meeple.node.accounts):
    # a session by the SHA-256 of its cookie (never the cookie), so a browser balanced
    # across edges stays signed in and a sign-out on one edge holds on every edge.
    """
    CREATE TABLE account_sessions (
        id_hash TEXT PRIMARY KEY,
        folded TEXT NOT NULL REFERENCES accounts (folded),
        csrf TEXT NOT NULL,
        created_at REAL NOT NULL
    );
    CREATE INDEX account_sessions_age ON account_sessions (created_at)
    """,
    # 7: how each game ended for each seat (``game_players.outcome``: won, lost, drawn,
    # aborted, resigned) and for the game (``games.outcome``: won, drawn, aborted,
    # resigned), filled from the games already stored; the /games search's indexes; and
    # each replay's analysis, computed once and kept (issue 34).
    (
        """
    ALTER TABLE games ADD COLUMN outcome TEXT NULL;
    ALTER TABLE game_players ADD COLUMN outcome TEXT NULL;
    CREATE INDEX games_outcome ON games (outcome, id);
    CREATE INDEX games_game_id ON games (game, id);
    CREATE INDEX game_players_outcome ON game_players (player, outcome, game_id);
    CREATE TABLE game_analyses (
        uid TEXT NOT NULL,
        version INTEGER NOT NULL,
        analysis TEXT NOT NULL,
        created_at REAL NOT NULL,
        PRIMARY KEY (uid, version)
    )
    """,
        "fill outcomes",
    ),
    # 8: a game found by its record's uid through an index (a replay page, a cluster's
    # "stored once" check at each game's end) rather than by reading every game's JSON:
    # 119 ms a look-up at 20,000 games, 0.02 ms with it. Same guard as the look-up's
    # (``uid_matches``): a record that is not JSON is left out, not an error.
    """
    CREATE INDEX games_uid ON games (json_extract(data, '$.uid'))
        WHERE data IS NOT NULL AND json_valid(data)
    """,
)

SCHEMA_VERSION = len(_MIGRATIONS)

_GAME_COLUMNS = (
    "id, game, variant, protocols, players, started_at, ended_at, end_reason, result, record, data"
)


class FinishedGame(TypedDict):
    """A finished game as :meth:`Store.record_game` takes it (keyword arguments): one row
    of ``games``, with a seat row per player. ``data`` is its JSON record (None or
    missing: a game without one, as stored before records)."""

    game: str
    variant: str
    protocols: Sequence[str]
    players: Sequence[str]
    started_at: float
    end_reason: str
    result: Mapping[str, Any]
    record: str
    data: NotRequired[Mapping[str, Any] | None]


@dataclass(frozen=True, slots=True)
class GameRecord:
    """A finished game as stored: who played, how it ended, and its records.

    ``record`` is text: GCG for Scrabble (the web offers it as a download); before
    schema 2, Python reprs or ad-hoc JSON for the other games. ``data`` is the versioned
    JSON record (:mod:`meeple.games.records`) that replays the game, None for games
    stored before schema 2; ``replayable`` says whether there is one this code reads.
    """

    id: int
    game: str
    variant: str
    protocols: tuple[str, ...]
    players: tuple[str, ...]
    started_at: float
    ended_at: float
    end_reason: str
    result: Mapping[str, Any]
    record: str
    data: dict[str, Any] | None = None

    @property
    def replayable(self) -> bool:
        return (
            self.data is not None
            and self.data.get("format") == FORMAT
            and self.data.get("version") == 1
        )


@dataclass(frozen=True, slots=True)
class PlayerRating:
    """A player's current Glicko-2 rating at one game, after ``games`` rated games."""

    game: str
    player: str
    rating: float
    rd: float
    volatility: float
    games: int
    updated_at: float


@dataclass(frozen=True, slots=True)
class RatingPoint:
    """A player's rating right after the stored game ``game_id``."""

    game_id: int
    rating: float
    rd: float
    volatility: float
    games: int
    updated_at: float


@dataclass(frozen=True, slots=True)
class PlayerProfile:
    """What the store knows of a name: its rating per game and its latest games."""

    name: str
    ratings: tuple[PlayerRating, ...]
    games: tuple[GameRecord, ...]


@dataclass(frozen=True, slots=True)
class Account:
    """A name reserved from the web: its scrypt hash, salt and cost (``kdf``)."""

    name: str
    password_hash: bytes
    salt: bytes
    kdf: str
    created_at: float


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One accepted action of a room: ``seq`` from 1, the wall-clock time, the entry."""

    seq: int
    at: float
    entry: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ActionLog:
    """A room's log as stored: the genesis (sequence 0) and every entry after it.

    ``game_id`` is the stored game once the room ended (``end_reason`` says how);
    None while the game runs, or when it was cut off by a crash.
    """

    uid: str
    game: str
    genesis: dict[str, Any]
    created_at: float
    entries: tuple[LogEntry, ...]
    game_id: int | None
    end_reason: str | None

    @property
    def finished(self) -> bool:
        return self.game_id is not None

    def record(self) -> dict[str, Any]:
        """The game's record so far (``meeple.games.records``): the genesis's header
        with the logged actions; ``result`` stays None (the replay finds it)."""
        header = self.genesis.get("record")
        if not isinstance(header, Mapping):
            raise RecordError(f"room {self.uid}: the genesis has no record header")
        # An entry without an action (the referee's times at a disconnect) is no step.
        actions = [a for e in self.entries if (a := e.entry.get("action")) is not None]
        return {**header, "actions": actions, "result": None}

    def replay(self, **kw: Any) -> Any:
        """The engine game after the last logged action (``kw``: the game's replay
        arguments, e.g. Scrabble's ``lexicon``). Raises RecordError for a log that
        does not replay."""
        record = self.record()
        game, steps = None, 0
        try:
            for step in records.replay(record, **kw):
                game, steps = step.game, step.index
        except RecordError:
            # Every action replayed and only the result differs: the log's record has no
            # result (it is the finished game's, kept apart) while its actions ended the
            # game — e.g. the process died before the finished game was stored.
            if game is None or steps != len(record["actions"]):
                raise
        return game


class LogConflict(Exception):
    """A log write that does not fit the log as stored: a fenced append refused."""


# --- what differs between the databases ----------------------------------------------------


class Cursor(Protocol):
    """The result of one statement (sqlite3's and psycopg's cursors are both one)."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


class Transaction(Protocol):
    """The statements of one write transaction, written with ``?`` placeholders."""

    def execute(self, sql: str, args: Sequence[Any] = (), /) -> Cursor: ...

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]], /) -> None: ...

    def insert(self, sql: str, args: Sequence[Any], /) -> int:
        """Run an INSERT into a table keyed by ``id``; the new row's id."""
        ...

    def lock(self, name: str, /) -> None:
        """Hold the lock ``name`` until the transaction ends, so that transactions that
        read, then write the same rows (a game's ratings) run one after the other."""
        ...


# The fence of an append: the log moves from ``seq - 1`` to ``seq`` only if that is where it
# stands and it is open (parameters: seq, uid, seq - 1).
_FENCE = "UPDATE room_logs SET last_seq = ? WHERE uid = ? AND last_seq = ? AND game_id IS NULL"
_INSERT_ENTRY = "INSERT INTO room_log_entries (uid, seq, at, entry) VALUES (?, ?, ?, ?)"
# One log's run of entries in a batch: its uid, the first entry's sequence, and each
# entry as ``(at, JSON text)``.
_Run = tuple[str, int, Sequence[tuple[float, str]]]


# A batch's statements come in a few sizes, so that sqlite3 prepares each once and keeps
# it (its statement cache holds 128): a batch of 100 rows is 64 + 32 + 4.
_CHUNK_SIZES = (64, 32, 16, 8, 4, 2, 1)


def _chunks(count: int) -> Iterator[tuple[int, int]]:
    """``(start, size)`` of the statements that write ``count`` rows, sizes from
    :data:`_CHUNK_SIZES`, largest first."""
    start = 0
    for size in _CHUNK_SIZES:
        while count - start >= size:
            yield start, size
            start += size


@functools.cache
def _fences(count: int) -> str:
    """The fence of ``count`` logs in one UPDATE (parameters: last, uid, before, ...)."""
    values = ", ".join(["(?, ?, ?)"] * count)
    return (
        f"UPDATE room_logs SET last_seq = fence.column1 FROM (VALUES {values}) AS fence"
        " WHERE room_logs.uid = fence.column2 AND room_logs.last_seq = fence.column3"
        " AND room_logs.game_id IS NULL"
    )


@functools.cache
def _entries(count: int) -> str:
    """``count`` log entries in one INSERT (parameters: uid, seq, at, entry, ...)."""
    values = ", ".join(["(?, ?, ?, ?)"] * count)
    return f"INSERT INTO room_log_entries (uid, seq, at, entry) VALUES {values}"


class BatchRefused(Exception):
    """A batch of appends in which a fence did not hold: take it back, write one by one."""


class Backend(abc.ABC):
    """A store's database: its connections, its migrations and the few pieces of SQL that
    differ. :class:`Store` holds one and does everything else the same way for all.

    ``migrations`` are numbered from 1 in the same order for every backend (schema
    version N means the same tables and columns everywhere); their DDL may differ.
    """

    #: One SQL script per schema version, the first first.
    migrations: ClassVar[Sequence[Migration]]
    #: A condition on ``games``: its JSON record's ``uid`` equals the one parameter.
    uid_matches: ClassVar[str]
    #: Where the data lives, for the log (never a password).
    where: str

    @property
    @abc.abstractmethod
    def schema_version(self) -> int:
        """How many migrations this database has had."""

    @abc.abstractmethod
    def read(self, sql: str, args: Sequence[Any] = ()) -> list[Any]:
        """All the rows of one query, committed data only."""

    @abc.abstractmethod
    def transaction(self) -> AbstractContextManager[Transaction]:
        """One write transaction: committed when the block ends, rolled back on an error."""

    @abc.abstractmethod
    def close(self) -> None: ...

    def batch(self) -> AbstractContextManager[None]:
        """The writes inside as one transaction where the backend can (the journal's
        group commit); here, each write stays its own transaction. Every log write is
        idempotent on retry, so a batch that fails part-way is safe to write again."""
        return contextlib.nullcontext()

    def append(self, uid: str, seq: int, at: float, entry: str) -> bool:
        """Write entry ``seq`` of log ``uid`` if the log stands at ``seq - 1`` and is open
        (the fence), in one transaction; whether it did. A backend may do it in fewer
        round trips, with the same effect."""
        with self.transaction() as tx:
            if not tx.execute(_FENCE, (seq, uid, seq - 1)).rowcount:
                return False
            tx.execute(_INSERT_ENTRY, (uid, seq, at, entry))
            return True

    def append_run(self, uid: str, seq: int, rows: Sequence[tuple[float, str]]) -> bool:
        """Write entries ``seq``, ``seq + 1``, … (each ``(at, entry)``) of log ``uid`` in
        one transaction, fenced as :meth:`append`: all of them or none; whether it did."""
        last = seq + len(rows) - 1
        with self.transaction() as tx:
            if not tx.execute(_FENCE, (last, uid, seq - 1)).rowcount:
                return False
            tx.executemany(
                _INSERT_ENTRY, [(uid, seq + i, at, entry) for i, (at, entry) in enumerate(rows)]
            )
            return True

    def append_batch(self, runs: Sequence[_Run]) -> None:
        """Write several logs' runs of entries (each ``(uid, seq, rows)``, ``rows`` as in
        :meth:`append_run`) inside the journal's :meth:`batch`, each fenced as
        :meth:`append`; raise :class:`BatchRefused` if any fence does not hold, so that the
        caller takes the batch back and writes its appends one by one (where each is told
        why). Here, one after the other; a backend may do it in fewer statements."""
        for uid, seq, rows in runs:
            written = (
                self.append(uid, seq, *rows[0])
                if len(rows) == 1
                else self.append_run(uid, seq, rows)
            )
            if not written:
                raise BatchRefused(f"room {uid}: append {seq} refused")

    @abc.abstractmethod
    def _version(self, tx: Transaction) -> int:
        """The schema version, read in the migration's transaction, which it serialises
        with any other process that migrates the same database at the same time."""

    @abc.abstractmethod
    def _set_version(self, tx: Transaction, version: int) -> None: ...

    def _statements(self, script: str) -> list[str]:
        """A migration's statements as the driver runs them: sqlite3 one at a time."""
        return [statement for statement in script.split(";") if statement.strip()]

    def migrate(self) -> None:
        """Apply the migrations this database has not had, each in its own transaction."""
        while True:
            with self.transaction() as tx:
                version = self._version(tx)
                if version >= len(self.migrations):
                    return
                step = self.migrations[version]
                script, named = (step, None) if isinstance(step, str) else step
                for statement in self._statements(script):
                    tx.execute(statement)
                if named is not None:
                    _STEPS[named](tx)
                self._set_version(tx, version + 1)
            logger.info("store %s: schema migrated to version %d", self.where, version + 1)


class SqliteBackend(Backend):
    """One SQLite file in WAL mode (``:memory:`` for tests).

    One connection is shared by the event loop (reads) and the journal's writer thread
    (log writes), one call at a time under a lock: SQLite runs one writer at a time
    anyway, and a call takes well under a millisecond. Write transactions are
    ``BEGIN IMMEDIATE``: they take the file's write lock up front, so a transaction that
    reads, then writes cannot then fail on another connection's lock (another process,
    or a second :class:`Store` on the same file), and they run one after the other.
    """

    migrations = _MIGRATIONS
    uid_matches = "data IS NOT NULL AND json_valid(data) AND json_extract(data, '$.uid') = ?"

    def __init__(self, path: str) -> None:
        self.where = path
        if path != ":memory:":
            # Bag orders and password hashes: the file is made 0600 before SQLite opens
            # it, and SQLite gives its -wal and -shm files the same mode (issue 30.5).
            private_file(path)
            for left in (f"{path}-wal", f"{path}-shm"):  # from a meeple before 0600
                if Path(left).exists():
                    private_file(left)
        self._lock = threading.RLock()
        self._batching = False
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        # NORMAL in WAL mode: a commit survives the process dying (not a power cut before
        # the next checkpoint), and costs no fsync.
        self._db.execute("PRAGMA synchronous=NORMAL")

    @property
    def schema_version(self) -> int:
        return int(self.read("PRAGMA user_version")[0][0])

    def read(self, sql: str, args: Sequence[Any] = ()) -> list[Any]:
        with self._lock:
            return self._db.execute(sql, args).fetchall()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Transaction]:
        with self._lock:
            if self._batching:
                # Inside a batch: the batch's transaction. A log write that is refused
                # (LogConflict) has changed nothing when it says so (its first statement,
                # the fence or an INSERT ... DO NOTHING, decided); any other error takes
                # back the whole batch, which the journal then writes one by one.
                yield _SqliteTransaction(self._db)
                return
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield _SqliteTransaction(self._db)
                self._db.execute("COMMIT")
            except BaseException:
                # A failed COMMIT (a busy or full disk) leaves the transaction open, unless
                # SQLite rolled it back itself.
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        """The writes inside in one transaction: one commit (one WAL write) for them all."""
        with self._lock:
            if self._batching:
                yield
                return
            self._db.execute("BEGIN IMMEDIATE")
            self._batching = True
            try:
                yield
                self._db.execute("COMMIT")
            except BaseException:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise
            finally:
                self._batching = False

    def append_batch(self, runs: Sequence[_Run]) -> None:
        """The batch's fences in one statement and its entries in another (a few, for a
        long batch): each statement is one call into SQLite from the writer thread, and
        each call gives up the interpreter's lock and must win it back from the event
        loop (a thread switch each time), so a call per append, or ``executemany``'s step
        per row, cost the loop more than the writes. A log's fence matches at most one row
        (``uid`` is its key), so the fences all held exactly when as many rows changed as
        there are logs; a log's runs in one batch are one fence when they follow one
        another (a room whose last write is not taken yet writes no more), or else the
        runs go one by one."""
        if sqlite3.sqlite_version_info < (3, 33):  # no UPDATE ... FROM before 3.33
            super().append_batch(runs)
            return
        fences: dict[str, list[int]] = {}  # uid: [the sequence before, the last]
        entries: list[Any] = []
        for uid, seq, rows in runs:
            fence = fences.get(uid)
            if fence is None:
                fences[uid] = [seq - 1, seq + len(rows) - 1]
            elif fence[1] == seq - 1:
                fence[1] = seq + len(rows) - 1
            else:
                raise BatchRefused(f"room {uid}: appends {fence[1]} and {seq} do not follow")
            for i, (at, entry) in enumerate(rows):
                entries += (uid, seq + i, at, entry)
        with self._lock:
            if not self._batching:
                # Outside a batch: one transaction of its own.
                with self.batch():
                    self.append_batch(runs)
                return
            changed = 0
            args: list[Any] = []
            for uid, (before, last) in fences.items():
                args += (last, uid, before)
            for start, size in _chunks(len(fences)):
                changed += self._db.execute(
                    _fences(size), args[3 * start : 3 * (start + size)]
                ).rowcount
            if changed != len(fences):
                raise BatchRefused(f"{len(fences)} logs: a fence did not hold")
            for start, size in _chunks(len(entries) // 4):
                self._db.execute(_entries(size), entries[4 * start : 4 * (start + size)])

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _version(self, tx: Transaction) -> int:
        return int(tx.execute("PRAGMA user_version").fetchone()[0])

    def _set_version(self, tx: Transaction, version: int) -> None:
        tx.execute(f"PRAGMA user_version = {int(version)}")


class _SqliteTransaction:
    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def execute(self, sql: str, args: Sequence[Any] = (), /) -> Cursor:
        return self._db.execute(sql, args)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]], /) -> None:
        self._db.executemany(sql, rows)

    def insert(self, sql: str, args: Sequence[Any], /) -> int:
        return int(self._db.execute(sql, args).lastrowid or 0)

    def lock(self, name: str, /) -> None:
        """Nothing to do: write transactions run one at a time (``BEGIN IMMEDIATE``)."""


# --- the store ----------------------------------------------------------------------------


class Store:
    """Finished games, ratings, accounts, checkpoints and rooms' action logs.

    ``Store(path)`` is a SQLite database file (``:memory:`` for tests);
    :class:`~meeple.server.store.postgres.PgStore` is the same store in PostgreSQL, and
    :func:`open_store` picks one from a ``--database`` value. Both may be called from the
    event loop and from the journal's writer thread at the same time. Close it when done.
    """

    def __init__(self, path: str | Path, *, wall_clock: Callable[[], float] = time.time) -> None:
        self._setup(SqliteBackend(str(path)), wall_clock)

    def _setup(self, backend: Backend, wall_clock: Callable[[], float]) -> None:
        """Use ``backend`` and bring its schema up to date (each constructor calls this)."""
        self.path = backend.where
        self._db = backend
        self._now = wall_clock
        backend.migrate()

    @property
    def schema_version(self) -> int:
        return self._db.schema_version

    def batch(self) -> AbstractContextManager[None]:
        """Make the writes inside one transaction where the database can (the journal's
        group commit: one commit for what queued up meanwhile)."""
        return self._db.batch()

    def ping(self) -> None:
        """One write transaction that changes nothing: raises if the database cannot take
        a write now (readiness, :class:`meeple.server.ops.StoreProbe`)."""
        with self._db.transaction() as tx:
            tx.execute("SELECT 1")

    def record_game(self, **game: Unpack[FinishedGame]) -> int:
        """Store a finished game; returns its id. ``data`` is its JSON record.

        A finished game between named players (:func:`meeple.ratings.rated`) updates
        their ratings at ``game`` in the same transaction (see docs/server.md, Ratings).
        """
        with self._db.transaction() as tx:
            return self._insert_game(tx, **game)

    def record_game_once(self, uid: str, **game: Unpack[FinishedGame]) -> int:
        """Store the finished game of room ``uid`` unless a game with that uid (in its
        record) is stored already; the stored game's id either way. The look-up and the
        insert are one transaction, so two writers of one room's end (a takeover) store
        it once."""
        with self._db.transaction() as tx:
            tx.lock(f"game-uid:{uid}")
            row = tx.execute(
                f"SELECT id FROM games WHERE {self._db.uid_matches} ORDER BY id DESC LIMIT 1",
                (uid,),
            ).fetchone()
            if row is not None:
                return int(row[0])
            return self._insert_game(tx, **game)

    def _insert_game(self, tx: Transaction, **game: Unpack[FinishedGame]) -> int:
        players, end_reason, result = game["players"], game["end_reason"], game["result"]
        data = game.get("data")
        now = self._now()
        overall, seats = outcomes(players, end_reason, result, data)
        game_id = tx.insert(
            "INSERT INTO games (game, variant, protocols, players, started_at, ended_at,"
            " end_reason, result, record, data, outcome) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                game["game"],
                game["variant"],
                json.dumps(sorted(set(game["protocols"]))),
                json.dumps(list(players)),
                game["started_at"],
                now,
                end_reason,
                json.dumps(result, sort_keys=True),
                game["record"],
                None if data is None else json.dumps(data, separators=(",", ":")),
                overall,
            ),
        )
        tx.executemany(
            "INSERT INTO game_players (game_id, seat, player, outcome) VALUES (?, ?, ?, ?)",
            [(game_id, seat, name, seats[seat]) for seat, name in enumerate(players)],
        )
        if data is not None and list(data.get("players", ())) == list(players):
            self._rate(tx, game["game"], list(players), data, game_id, now)
        return game_id

    # --- action logs (docs/durability.md) -------------------------------------------
    #
    # Each write is one transaction whose first statement decides: an INSERT that does
    # nothing on a conflict, or an UPDATE whose condition is the fence. In PostgreSQL that
    # statement also locks the log's row, so a second writer of the same log waits for
    # the first to commit, then evaluates its condition against the committed row (READ
    # COMMITTED, PostgreSQL manual 13.2.1) and finds the log moved on; in SQLite the
    # write transactions run one at a time. Either way one of two writers wins and the
    # other is told why it lost: a :class:`LogConflict`, or nothing for a retry.

    def open_log(self, uid: str, game: str, genesis: Mapping[str, Any]) -> None:
        """Start the log of room ``uid`` with its genesis entry (sequence 0).

        Opening it again with the same genesis is a retry and does nothing; another
        genesis under the same uid is a :class:`LogConflict`.
        """
        text = _json(genesis)
        with self._db.transaction() as tx:
            if tx.execute(
                "INSERT INTO room_logs (uid, game, genesis, created_at, last_seq)"
                " VALUES (?, ?, ?, ?, 0) ON CONFLICT (uid) DO NOTHING",
                (uid, game, text, self._now()),
            ).rowcount:
                return
            (old,) = tx.execute("SELECT genesis FROM room_logs WHERE uid = ?", (uid,)).fetchone()
            if json.loads(old) != json.loads(text):
                raise LogConflict(f"room {uid}: a log with another genesis exists")

    def append_log(
        self, uid: str, seq: int, entry: Mapping[str, Any], *, at: float | None = None
    ) -> None:
        """Append ``entry`` as number ``seq`` of room ``uid``'s log (fenced).

        ``seq`` must be the last sequence plus one: an append that expects another
        state of the log is refused (:class:`LogConflict`), so two writers cannot
        interleave. The same entry at a sequence already written is a retry and does
        nothing (the pair uid and seq is the entry's message id).
        """
        self.append_logs(uid, seq, [entry], at=at)

    def append_logs(
        self, uid: str, seq: int, entries: Sequence[Mapping[str, Any]], *, at: float | None = None
    ) -> None:
        """Append ``entries`` as numbers ``seq``, ``seq + 1``, … of room ``uid``'s log in
        one transaction: all of them or none (a step whose entries belong together, such
        as a play and its verdict, is never half in the log). Fenced and retried as
        :meth:`append_log`."""
        texts = [_json(entry) for entry in entries]
        if not texts:
            return
        when = self._now() if at is None else at
        if len(texts) == 1:
            written = self._db.append(uid, seq, when, texts[0])
        else:
            written = self._db.append_run(uid, seq, [(when, text) for text in texts])
        if written:
            return
        # Refused: say why, unless it is a retry of entries already written. A log only
        # grows (and closes), so what is read now still says why the append was refused.
        row = _first(self._db.read("SELECT last_seq FROM room_logs WHERE uid = ?", (uid,)))
        if row is None:
            raise LogConflict(f"room {uid}: no log")
        last, end = int(row[0]), seq + len(texts) - 1
        if seq >= 1 and end <= last:
            old = self._db.read(
                "SELECT entry FROM room_log_entries WHERE uid = ? AND seq BETWEEN ? AND ?"
                " ORDER BY seq",
                (uid, seq, end),
            )
            if [json.loads(o) for (o,) in old] != [json.loads(t) for t in texts]:
                raise LogConflict(f"room {uid}: entry {seq} is already another entry")
            return
        raise LogConflict(f"room {uid}: append {seq} after {last} refused")

    def append_batch(
        self, appends: Sequence[tuple[str, int, Sequence[Mapping[str, Any]], float]]
    ) -> None:
        """Several :meth:`append_logs` (each ``(uid, seq, entries, at)``) inside
        :meth:`batch` (the journal's group commit), in fewer statements where the database
        can. Raises :class:`BatchRefused` when a fence does not hold, whatever the reason
        (a retry, another writer): the caller takes the batch back and writes each append
        on its own, which says which one and why."""
        self._db.append_batch(
            [
                (uid, seq, [(at, _json(entry)) for entry in entries])
                for uid, seq, entries, at in appends
            ]
        )

    def finish_log(self, uid: str, **game: Any) -> int:
        """Store the finished game of room ``uid`` and close its log, in one transaction.

        ``game`` are :meth:`record_game`'s arguments. A log already closed is a retry:
        the id of the game stored then is returned and nothing is stored twice.
        """
        with self._db.transaction() as tx:
            # Claim the open log first (the fence); a closed one says which game it stored.
            if not tx.execute(
                "UPDATE room_logs SET end_reason = ? WHERE uid = ? AND game_id IS NULL",
                (game["end_reason"], uid),
            ).rowcount:
                row = tx.execute("SELECT game_id FROM room_logs WHERE uid = ?", (uid,)).fetchone()
                if row is None or row[0] is None:
                    raise LogConflict(f"room {uid}: no log")
                return int(row[0])
            game_id = self._insert_game(tx, **game)
            tx.execute("UPDATE room_logs SET game_id = ? WHERE uid = ?", (game_id, uid))
            return game_id

    def action_log(self, uid: str) -> ActionLog | None:
        """Room ``uid``'s whole log: genesis, entries in order, and how it ended."""
        row = _first(
            self._db.read(
                "SELECT uid, game, genesis, created_at, game_id, end_reason FROM room_logs"
                " WHERE uid = ?",
                (uid,),
            )
        )
        if row is None:
            return None
        entries = tuple(
            LogEntry(seq, at, json.loads(entry))
            for seq, at, entry in self._db.read(
                "SELECT seq, at, entry FROM room_log_entries WHERE uid = ? ORDER BY seq", (uid,)
            )
        )
        uid, game, genesis, created_at, game_id, end_reason = row
        return ActionLog(uid, game, json.loads(genesis), created_at, entries, game_id, end_reason)

    def hand_over_log(self, uid: str) -> bool:
        """Drop room ``uid``'s open log, once its copy is safe elsewhere: the one-process
        node's backplane file took it over (``meeple.node.logfile.import_store_logs``,
        the upgrade from ``meeple serve --runtime server``). A finished log stays (its
        game is stored here); whether an open one was dropped."""
        with self._db.transaction() as tx:
            if not tx.execute(
                "SELECT uid FROM room_logs WHERE uid = ? AND game_id IS NULL", (uid,)
            ).fetchone():
                return False
            tx.execute("DELETE FROM room_log_entries WHERE uid = ?", (uid,))
            tx.execute("DELETE FROM room_logs WHERE uid = ? AND game_id IS NULL", (uid,))
            return True

    def open_logs(self, game: str | None = None) -> list[str]:
        """The uids of the rooms whose games have not ended, oldest first."""
        sql = "SELECT uid FROM room_logs WHERE game_id IS NULL"
        args: tuple[str, ...] = ()
        if game is not None:
            sql += " AND game = ?"
            args = (game,)
        return [r[0] for r in self._db.read(sql + " ORDER BY created_at, uid", args)]

    def _rate(
        self,
        tx: Transaction,
        game: str,
        players: list[str],
        data: Mapping[str, Any],
        game_id: int,
        now: float,
    ) -> None:
        if not ratings.rated(data):
            return
        # Two games of the same kind that end at once must not both start from the
        # ratings before either (the second would undo the first).
        tx.lock(f"ratings:{game}")
        before: list[ratings.Rating] = []
        counts: list[int] = []
        for name in players:
            row = tx.execute(
                "SELECT rating, rd, volatility, games FROM ratings WHERE game = ? AND player = ?",
                (game, name),
            ).fetchone()
            before.append(ratings.Rating() if row is None else ratings.Rating(*row[:3]))
            counts.append(0 if row is None else int(row[3]))
        after = ratings.rate_game(data, before)
        for name, r, n in zip(players, after, counts, strict=True):
            values = (r.rating, r.rd, r.volatility, n + 1, now)
            tx.execute(
                "INSERT INTO ratings (game, player, rating, rd, volatility, games, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (game, player) DO UPDATE SET"
                " rating = excluded.rating, rd = excluded.rd, volatility = excluded.volatility,"
                " games = excluded.games, updated_at = excluded.updated_at",
                (game, name, *values),
            )
            tx.execute(
                "INSERT INTO rating_history (game, player, game_id, rating, rd, volatility,"
                " games, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (game, name, game_id, *values),
            )

    def leaderboard(self, game: str, limit: int = 100) -> list[PlayerRating]:
        """The players rated at ``game``, best first (rating, then the surer rating)."""
        rows = self._db.read(
            "SELECT game, player, rating, rd, volatility, games, updated_at FROM ratings"
            " WHERE game = ? ORDER BY rating DESC, rd ASC, player ASC LIMIT ?",
            (game, limit),
        )
        return [PlayerRating(*row) for row in rows]

    def player(self, name: str, *, limit: int = 20) -> PlayerProfile:
        """``name``'s rating at each game they are rated at, and their ``limit`` latest games."""
        rated = [
            PlayerRating(*row)
            for row in self._db.read(
                "SELECT game, player, rating, rd, volatility, games, updated_at FROM ratings"
                " WHERE player = ? ORDER BY game",
                (name,),
            )
        ]
        columns = ", ".join(f"g.{c.strip()}" for c in _GAME_COLUMNS.split(","))
        games = [
            _record(row)
            for row in self._db.read(
                f"SELECT DISTINCT {columns} FROM games AS g"
                " JOIN game_players AS p ON p.game_id = g.id WHERE p.player = ?"
                " ORDER BY g.ended_at DESC, g.id DESC LIMIT ?",
                (name, limit),
            )
        ]
        return PlayerProfile(name, tuple(rated), tuple(games))

    def rating_history(self, game: str, name: str) -> list[RatingPoint]:
        """``name``'s rating at ``game`` after each of their rated games, oldest first."""
        rows = self._db.read(
            "SELECT game_id, rating, rd, volatility, games, updated_at FROM rating_history"
            " WHERE game = ? AND player = ? ORDER BY id",
            (game, name),
        )
        return [RatingPoint(*row) for row in rows]

    def games(self, *, game: str | None = None, limit: int = 100) -> list[GameRecord]:
        """The most recently finished games, newest first."""
        sql = f"SELECT {_GAME_COLUMNS} FROM games"
        args: list[Any] = []
        if game is not None:
            sql += " WHERE game = ?"
            args.append(game)
        sql += " ORDER BY ended_at DESC, id DESC LIMIT ?"
        args.append(limit)
        return [_record(row) for row in self._db.read(sql, args)]

    def search_games(
        self,
        *,
        game: str | None = None,
        player: str | None = None,
        result: str | None = None,
        ended_from: float | None = None,
        ended_to: float | None = None,
        before: int | None = None,
        limit: int = 50,
    ) -> list[GameRecord]:
        """Finished games, newest first (by number), of ``game`` and with ``player``
        among their players, when given, numbered below ``before`` (the next page's
        cursor: the last number of this one).

        ``result`` is one of :data:`OUTCOMES`: with a player, how the game ended for
        them ("lost" includes their resignations); without one, how it ended ("won" and
        "lost" are the games someone won, "resigned" those someone resigned). The game
        ended at or after ``ended_from`` and before ``ended_to`` (Unix times) when given.
        """
        return [_record(row) for row in self._db.read(*_search_sql(
            game=game, player=player, result=result, ended_from=ended_from,
            ended_to=ended_to, before=before, limit=limit,
        ))]  # fmt: skip

    def analysis(self, uid: str, version: int) -> dict[str, Any] | None:
        """The analysis kept for the game ``uid`` at analysis ``version``, if any."""
        row = _first(
            self._db.read(
                "SELECT analysis FROM game_analyses WHERE uid = ? AND version = ?", (uid, version)
            )
        )
        if row is None:
            return None
        value = json.loads(row[0])
        return value if isinstance(value, dict) else None

    def keep_analysis(self, uid: str, version: int, analysis: Mapping[str, Any]) -> None:
        """Keep the analysis of the game ``uid`` at ``version`` (the first one kept stays:
        the same code computes the same analysis of the same record)."""
        with self._db.transaction() as tx:
            tx.execute(
                "INSERT INTO game_analyses (uid, version, analysis, created_at)"
                " VALUES (?, ?, ?, ?) ON CONFLICT (uid, version) DO NOTHING",
                (uid, version, json.dumps(analysis, separators=(",", ":")), self._now()),
            )

    def game(self, game_id: int) -> GameRecord | None:
        row = _first(self._db.read(f"SELECT {_GAME_COLUMNS} FROM games WHERE id = ?", (game_id,)))
        return None if row is None else _record(row)

    def game_by_uid(self, uid: str) -> GameRecord | None:
        """The game whose record carries this uid (its room's, its URL in the web pages)."""
        row = _first(
            self._db.read(
                f"SELECT {_GAME_COLUMNS} FROM games WHERE {self._db.uid_matches}"
                " ORDER BY id DESC LIMIT 1",
                (uid,),
            )
        )
        return None if row is None else _record(row)

    def add_account(self, name: str, password_hash: bytes, salt: bytes, kdf: str) -> bool:
        """Reserve ``name``; False when it (or a name with the same casefold) already is."""
        with self._db.transaction() as tx:
            return bool(
                tx.execute(
                    "INSERT INTO accounts (name, folded, password_hash, salt, kdf, created_at)"
                    " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (folded) DO NOTHING",
                    (name, name.casefold(), password_hash, salt, kdf, self._now()),
                ).rowcount
            )

    def reserved_names(self) -> list[str]:
        """The casefold of every reserved name (``meeple serve`` keeps them in memory:
        :class:`meeple.server.lobby.names.StoreReservations`)."""
        return [row[0] for row in self._db.read("SELECT folded FROM accounts", ())]

    def account(self, name: str) -> Account | None:
        """The account that reserves ``name`` (compared by casefold), if any."""
        row = _first(
            self._db.read(
                "SELECT name, password_hash, salt, kdf, created_at FROM accounts WHERE folded = ?",
                (name.casefold(),),
            )
        )
        return None if row is None else Account(*row)

    def add_session(self, id_hash: str, name: str, csrf: str, *, older_than: float) -> None:
        """Sign a browser in as the account ``name``: its session's hash and CSRF token;
        sessions created before ``older_than`` (a wall-clock time) are dropped."""
        with self._db.transaction() as tx:
            tx.execute("DELETE FROM account_sessions WHERE created_at < ?", (older_than,))
            tx.execute(
                "INSERT INTO account_sessions (id_hash, folded, csrf, created_at)"
                " VALUES (?, ?, ?, ?)",
                (id_hash, name.casefold(), csrf, self._now()),
            )

    def session(self, id_hash: str, *, older_than: float) -> tuple[str, str] | None:
        """The account name (as reserved) and CSRF token of a session created at or
        after ``older_than``, if any."""
        row = _first(
            self._db.read(
                "SELECT a.name, s.csrf FROM account_sessions s JOIN accounts a"
                " ON a.folded = s.folded WHERE s.id_hash = ? AND s.created_at >= ?",
                (id_hash, older_than),
            )
        )
        return None if row is None else (str(row[0]), str(row[1]))

    def drop_session(self, id_hash: str) -> None:
        with self._db.transaction() as tx:
            tx.execute("DELETE FROM account_sessions WHERE id_hash = ?", (id_hash,))

    def save_checkpoint(self, key: str, state: Mapping[str, Any]) -> None:
        """Durably replace the checkpoint under ``key`` (a JSON-serialisable mapping)."""
        with self._db.transaction() as tx:
            tx.execute(
                "INSERT INTO checkpoints (key, saved_at, state) VALUES (?, ?, ?)"
                " ON CONFLICT (key) DO UPDATE SET saved_at = excluded.saved_at,"
                " state = excluded.state",
                (key, self._now(), json.dumps(state, sort_keys=True)),
            )

    def load_checkpoint(self, key: str) -> dict[str, Any] | None:
        row = _first(self._db.read("SELECT state FROM checkpoints WHERE key = ?", (key,)))
        return None if row is None else dict(json.loads(row[0]))

    def delete_checkpoint(self, key: str) -> None:
        with self._db.transaction() as tx:
            tx.execute("DELETE FROM checkpoints WHERE key = ?", (key,))

    def checkpoint_keys(self) -> list[str]:
        return [r[0] for r in self._db.read("SELECT key FROM checkpoints ORDER BY key")]

    def close(self) -> None:
        self._db.close()


def sqlite_path(url: str | Path) -> str | None:
    """The SQLite file a ``--database`` value names (``:memory:`` included), None for
    another database."""
    text = str(url)
    if text.startswith("sqlite://"):
        return text.removeprefix("sqlite://").removeprefix("/") or ":memory:"
    return None if "://" in text else text


class DatabaseInUse(RuntimeError):
    """Another ``meeple serve`` runs on this database."""


class DatabaseClaim:
    """This process's claim to run the games of one database, held until :meth:`close`.

    A second ``meeple serve`` started on the same database (a second terminal, a service
    started twice) would replay the first one's open logs and end its games as if it had
    died. The claim stops it before it reads anything: an exclusive ``flock`` on a file
    beside the SQLite file (the kernel drops it when the process dies, however it dies),
    or a PostgreSQL advisory lock held by a session of its own (dropped with the session).
    """

    def __init__(self, url: str | Path) -> None:
        self._file: Any = None
        self._session: Any = None
        path = sqlite_path(url)
        if path == ":memory:":
            return
        if path is not None:
            import fcntl

            lock = Path(f"{path}.serve-lock")
            handle = private_file(lock).open("a")
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.close()
                raise DatabaseInUse(
                    f"another meeple serve is running on {path} (it holds {lock})"
                ) from None
            self._file = handle
            return
        import psycopg

        session = psycopg.connect(str(url), autocommit=True)
        row = session.execute("SELECT pg_try_advisory_lock(hashtext('meeple serve'))").fetchone()
        if row is None or not row[0]:
            session.close()
            raise DatabaseInUse("another meeple serve is running on this PostgreSQL database")
        self._session = session

    def close(self) -> None:
        if self._file is not None:
            self._file.close()  # the flock goes with the file
            self._file = None
        if self._session is not None:
            self._session.close()
            self._session = None


def open_store(url: str | Path, *, wall_clock: Callable[[], float] = time.time) -> Store:
    """The store a ``--database`` value names.

    ``sqlite:///var/meeple.sqlite3`` (or a bare path, or ``:memory:``) is the embedded
    SQLite file; ``postgresql://user@host:port/db`` is a PostgreSQL database
    (:mod:`meeple.server.store.postgres`), with the same schema and the same methods.
    """
    text = str(url)
    if text.startswith(("postgresql://", "postgres://")):
        # psycopg is imported only for a PostgreSQL store.
        from meeple.server.store.postgres import PgStore

        return PgStore(text, wall_clock=wall_clock)
    # sqlite:///relative/or/absolute: the third slash starts the path (SQLAlchemy's
    # reading: sqlite:///var/x is relative, sqlite:////var/x absolute).
    path = sqlite_path(text)
    if path is None:
        raise ValueError(f"unknown database URL {text!r} (sqlite:///PATH or postgresql://...)")
    return Store(path, wall_clock=wall_clock)


def _first(rows: list[Any]) -> Any:
    return rows[0] if rows else None


class StoreUnavailable(Exception):
    """A read of the store failed or got no answer in time (a database that is down,
    hangs, or has no connection to spare); ``__cause__`` says what happened."""


READ_TIMEOUT = 5.0  # seconds a page waits for a read of the store
# Reads made from the event loop run in threads of their own, at most this many at a
# time. A stuck query is not interrupted (it ends when the database answers or the
# connection dies): it ties up its daemon thread, never the loop, asyncio's default
# executor, or the process's exit.
MAX_READERS = 8
_readers = threading.BoundedSemaphore(MAX_READERS)


async def stored(call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """A read of the store from the event loop, made in a reader thread: a database that
    is slow or does not answer holds up the page that asked (for at most
    :data:`READ_TIMEOUT` seconds, then :class:`StoreUnavailable`), never the loop, and so
    never every listener."""
    loop = asyncio.get_running_loop()
    answer: asyncio.Future[T] = loop.create_future()

    def settle(value: Any, error: BaseException | None) -> None:
        if answer.done():
            return
        if error is not None:
            answer.set_exception(error)
        else:
            answer.set_result(value)

    def read() -> None:
        try:
            value, error = call(*args, **kwargs), None
        except Exception as e:
            value, error = None, e
        finally:
            _readers.release()
        with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits
            loop.call_soon_threadsafe(settle, value, error)

    if not _readers.acquire(blocking=False):
        raise StoreUnavailable(f"{MAX_READERS} reads of the database are waiting for it")
    try:
        threading.Thread(target=read, name="meeple-store-read", daemon=True).start()
    except BaseException:
        _readers.release()
        raise
    try:
        return await asyncio.wait_for(asyncio.shield(answer), READ_TIMEOUT)
    except TimeoutError:
        raise StoreUnavailable(f"the database did not answer in {READ_TIMEOUT:g} s") from None
    except Exception as e:
        raise StoreUnavailable(f"a read of the database failed: {e}") from e


_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"))
# The C encoder behind it, made once: ``json.dumps`` with arguments builds an encoder, and
# ``encode`` a C encoder, on every call (a third of an append's CPU in the journal's
# thread). Without circular-reference checks (no marker dict): the values are records
# built by the rooms, plain trees. Where the C encoder is missing, the encoder as it is.
_C_ENCODE = getattr(json.encoder, "c_make_encoder", None)
if _C_ENCODE is not None:
    _C_ENCODE = _C_ENCODE(
        None,
        _ENCODER.default,
        json.encoder.encode_basestring_ascii,
        None,
        ":",
        ",",
        True,
        False,
        True,
    )


def _json(value: Mapping[str, Any]) -> str:
    """A log's JSON text: keys sorted, no spaces (what ``json.dumps(value, sort_keys=True,
    separators=(",", ":"))`` writes)."""
    if _C_ENCODE is None:
        return _ENCODER.encode(value)
    return "".join(_C_ENCODE(value, 0))


def _record(row: tuple[Any, ...]) -> GameRecord:
    (gid, game, variant, protocols, players, started, ended, reason, result, record, data) = row
    return GameRecord(
        id=gid,
        game=game,
        variant=variant,
        protocols=tuple(json.loads(protocols)),
        players=tuple(json.loads(players)),
        started_at=started,
        ended_at=ended,
        end_reason=reason,
        result=json.loads(result),
        record=record,
        data=None if data is None else json.loads(data),
    )


#: The results ``/games`` filters by (:meth:`Store.search_games`).
OUTCOMES = ("won", "lost", "drawn", "aborted", "resigned")

# Seat outcomes each result filter takes, with a player; game outcomes, without one.
_SEAT_FILTER = {
    "won": ("won",),
    "lost": ("lost", "resigned"),
    "drawn": ("drawn",),
    "aborted": ("aborted",),
    "resigned": ("resigned",),
}
_GAME_FILTER = {
    "won": ("won", "resigned"),
    "lost": ("won", "resigned"),
    "drawn": ("drawn",),
    "aborted": ("aborted",),
    "resigned": ("resigned",),
}


def _search_sql(
    *,
    game: str | None,
    player: str | None,
    result: str | None,
    ended_from: float | None,
    ended_to: float | None,
    before: int | None,
    limit: int,
) -> tuple[str, list[Any]]:
    """:meth:`Store.search_games`' query and its parameters (the tests explain it)."""
    if result is not None and result not in OUTCOMES:
        raise ValueError(f"no such result: {result!r}")
    where: list[str] = []
    args: list[Any] = []
    columns = ", ".join(f"g.{c.strip()}" for c in _GAME_COLUMNS.split(","))
    sql = f"SELECT {columns} FROM games AS g"
    if player is not None:
        sql += " JOIN game_players AS p ON p.game_id = g.id"
        where.append("p.player = ?")
        args.append(player)
        if result is not None:
            chosen = _SEAT_FILTER[result]
            where.append(f"p.outcome IN ({', '.join('?' * len(chosen))})")
            args += chosen
    elif result is not None:
        chosen = _GAME_FILTER[result]
        where.append(f"g.outcome IN ({', '.join('?' * len(chosen))})")
        args += chosen
    if game is not None:
        where.append("g.game = ?")
        args.append(game)
    if ended_from is not None:
        where.append("g.ended_at >= ?")
        args.append(ended_from)
    if ended_to is not None:
        where.append("g.ended_at < ?")
        args.append(ended_to)
    if before is not None:
        where.append("g.id < ?")
        args.append(before)
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY g.id DESC LIMIT ?"
    args.append(limit)
    return sql, args


def outcomes(
    players: Sequence[str],
    end_reason: str,
    result: Mapping[str, Any] | None,
    data: Mapping[str, Any] | None,
) -> tuple[str, list[str]]:
    """How a finished game ended, as a whole (won, drawn, aborted, resigned) and for
    each seat (won, lost, drawn, aborted, resigned), from its JSON record's ``result``
    (seats) or, for games stored without one, the stored result (names).

    Aborted games, and games that ended with nobody winning because the server
    stopped, are aborted for everyone; a game everyone or nobody won is drawn; the
    seat that resigned has "resigned" (a loss) and the game too.
    """
    n = len(players)
    res = data.get("result") if isinstance(data, Mapping) else None
    res = res if isinstance(res, Mapping) else None
    reason = str(res.get("reason")) if res is not None else end_reason
    winners: set[int] = set()
    if res is not None and isinstance(res.get("winners"), list):
        winners = {w for w in res["winners"] if isinstance(w, int) and 0 <= w < n}
    elif isinstance(result, Mapping):
        named = result.get("winners")
        if not isinstance(named, list):
            named = [result.get("winner")]
        winners = {i for i, p in enumerate(players) if p in named}
    if "aborted" in (reason, end_reason) or (
        not winners and end_reason in ("server-restart", "store-unavailable")
    ):
        return "aborted", ["aborted"] * n
    resigner = None
    if "resigned" in (reason, end_reason):
        who = res.get("player") if res is not None else None
        if isinstance(who, int) and 0 <= who < n:
            resigner = who
        elif n == 2 and len(winners) == 1:
            resigner = 1 - next(iter(winners))
    if len(winners) in (0, n):
        seats = ["drawn"] * n
        overall = "drawn"
    else:
        seats = ["won" if i in winners else "lost" for i in range(n)]
        overall = "won"
    if resigner is not None:
        seats[resigner] = "resigned"
        overall = "resigned"
    return overall, seats


def _fill_outcomes(tx: Transaction) -> None:
    """Schema 7's step: the outcomes of the games stored before it."""
    rows = tx.execute(
        "SELECT id, players, end_reason, result, data FROM games WHERE outcome IS NULL"
    ).fetchall()
    for gid, players, end_reason, result, data in rows:
        try:
            names = json.loads(players)
            stored = json.loads(result)
            record = None if data is None else json.loads(data)
        except ValueError:
            continue
        if not isinstance(names, list):
            continue
        overall, seats = outcomes(
            [str(p) for p in names],
            str(end_reason),
            stored if isinstance(stored, Mapping) else None,
            record if isinstance(record, Mapping) else None,
        )
        tx.execute("UPDATE games SET outcome = ? WHERE id = ?", (overall, gid))
        tx.executemany(
            "UPDATE game_players SET outcome = ? WHERE game_id = ? AND seat = ?",
            [(outcome, gid, seat) for seat, outcome in enumerate(seats)],
        )


_STEPS: Mapping[str, Callable[[Transaction], None]] = {"fill outcomes": _fill_outcomes}
