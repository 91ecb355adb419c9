"""The embedded store: SQLite, one file, game records and checkpoints.

Schema changes are numbered migrations applied in order on open (the file's
``user_version`` says how far it is), so an old database upgrades itself.
Writes are small and rare (a game's end, a checkpoint per turn) and SQLite in WAL
mode commits them in well under a millisecond on local disk, so they run inline.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from meeple import ratings
from meeple.games import records
from meeple.games.records import FORMAT, RecordError

__all__ = [
    "SCHEMA_VERSION",
    "Account",
    "ActionLog",
    "GameRecord",
    "LogConflict",
    "LogEntry",
    "PlayerProfile",
    "PlayerRating",
    "RatingPoint",
    "Store",
    "open_store",
    "sqlite_path",
]

logger = logging.getLogger(__name__)

_MIGRATIONS: Sequence[str] = (
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
)

SCHEMA_VERSION = len(_MIGRATIONS)

_GAME_COLUMNS = (
    "id, game, variant, protocols, players, started_at, ended_at, end_reason, result, record, data"
)


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
        actions = [e.entry.get("action") for e in self.entries]
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
            if game is None or steps != len(self.entries):
                raise
        return game


class LogConflict(Exception):
    """A log write that does not fit the log as stored: a fenced append refused."""


class Store:
    """A SQLite database file (``:memory:`` for tests). Close it when done."""

    def __init__(self, path: str | Path, *, wall_clock: Callable[[], float] = time.time) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        # One connection shared by the event loop (reads) and the log's writer thread
        # (appends), one at a time under ``_lock``.
        self._lock = threading.RLock()
        self._batching = False
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._now = wall_clock
        self._migrate()

    def _migrate(self) -> None:
        (version,) = self._db.execute("PRAGMA user_version").fetchone()
        for number, script in enumerate(_MIGRATIONS[version:], start=version + 1):
            with self._transaction():
                for statement in filter(str.strip, script.split(";")):
                    self._db.execute(statement)
                self._db.execute(f"PRAGMA user_version = {number}")
            logger.info("store %s: schema migrated to version %d", self.path, number)

    def _transaction(self, *, immediate: bool = False) -> _Tx:
        if self._batching:
            # Inside a batch (:meth:`batch`): each write is a savepoint of its transaction.
            self._db.execute("SAVEPOINT write")
            return _Tx(self._db, savepoint=True)
        # IMMEDIATE takes the write lock up front: a transaction that reads, then writes
        # cannot then fail on another connection's lock (tests open a second Store).
        self._db.execute("BEGIN IMMEDIATE" if immediate else "BEGIN")
        return _Tx(self._db)

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        """Make the writes inside one transaction (the journal's group commit): each
        write is a savepoint, so one that is refused (LogConflict) takes back only
        itself; an error that escapes takes back the whole batch."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            self._batching = True
            try:
                yield
            except BaseException:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise
            else:
                self._db.execute("COMMIT")
            finally:
                self._batching = False

    def _query(self, sql: str, args: Sequence[Any] = ()) -> list[Any]:
        """All the rows of one statement, run under the lock (the writer thread shares
        the connection)."""
        with self._lock:
            return self._db.execute(sql, args).fetchall()

    @property
    def schema_version(self) -> int:
        return int(self._db.execute("PRAGMA user_version").fetchone()[0])

    def record_game(
        self,
        *,
        game: str,
        variant: str,
        protocols: Sequence[str],
        players: Sequence[str],
        started_at: float,
        end_reason: str,
        result: Mapping[str, Any],
        record: str,
        data: Mapping[str, Any] | None = None,
    ) -> int:
        """Store a finished game; returns its id. ``data`` is its JSON record.

        A finished game between named players (:func:`meeple.ratings.rated`) updates
        their ratings at ``game`` in the same transaction (see docs/server.md, Ratings).
        """
        with self._lock, self._transaction(immediate=True):
            return self._insert_game(
                game=game,
                variant=variant,
                protocols=protocols,
                players=players,
                started_at=started_at,
                end_reason=end_reason,
                result=result,
                record=record,
                data=data,
            )

    def _insert_game(
        self,
        *,
        game: str,
        variant: str,
        protocols: Sequence[str],
        players: Sequence[str],
        started_at: float,
        end_reason: str,
        result: Mapping[str, Any],
        record: str,
        data: Mapping[str, Any] | None = None,
    ) -> int:
        now = self._now()
        cur = self._db.execute(
            "INSERT INTO games (game, variant, protocols, players, started_at, ended_at,"
            " end_reason, result, record, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                game,
                variant,
                json.dumps(sorted(set(protocols))),
                json.dumps(list(players)),
                started_at,
                now,
                end_reason,
                json.dumps(result, sort_keys=True),
                record,
                None if data is None else json.dumps(data, separators=(",", ":")),
            ),
        )
        game_id = int(cur.lastrowid or 0)
        self._db.executemany(
            "INSERT INTO game_players (game_id, seat, player) VALUES (?, ?, ?)",
            [(game_id, seat, name) for seat, name in enumerate(players)],
        )
        if data is not None and list(data.get("players", ())) == list(players):
            self._rate(game, list(players), data, game_id, now)
        return game_id

    # --- action logs (docs/durability.md) -------------------------------------------

    def open_log(self, uid: str, game: str, genesis: Mapping[str, Any]) -> None:
        """Start the log of room ``uid`` with its genesis entry (sequence 0).

        Opening it again with the same genesis is a retry and does nothing; another
        genesis under the same uid is a :class:`LogConflict`.
        """
        text = _json(genesis)
        with self._lock, self._transaction(immediate=True):
            row = self._db.execute("SELECT genesis FROM room_logs WHERE uid = ?", (uid,)).fetchone()
            if row is not None:
                if json.loads(row[0]) != json.loads(text):
                    raise LogConflict(f"room {uid}: a log with another genesis exists")
                return
            self._db.execute(
                "INSERT INTO room_logs (uid, game, genesis, created_at, last_seq)"
                " VALUES (?, ?, ?, ?, 0)",
                (uid, game, text, self._now()),
            )

    def append_log(
        self, uid: str, seq: int, entry: Mapping[str, Any], *, at: float | None = None
    ) -> None:
        """Append ``entry`` as number ``seq`` of room ``uid``'s log (fenced).

        ``seq`` must be the last sequence plus one: an append that expects another
        state of the log is refused (:class:`LogConflict`), so two writers cannot
        interleave. The same entry at a sequence already written is a retry and does
        nothing (the pair uid and seq is the entry's message id).
        """
        text = json.dumps(entry, separators=(",", ":"))
        when = self._now() if at is None else at
        with self._lock, self._transaction(immediate=True):
            # The fence and the append in two statements: the log moves from seq - 1 to
            # seq only if it is open and at seq - 1 now.
            moved = self._db.execute(
                "UPDATE room_logs SET last_seq = ? WHERE uid = ? AND last_seq = ?"
                " AND game_id IS NULL",
                (seq, uid, seq - 1),
            ).rowcount
            if moved == 1:
                self._db.execute(
                    "INSERT INTO room_log_entries (uid, seq, at, entry) VALUES (?, ?, ?, ?)",
                    (uid, seq, when, text),
                )
                return
            row = self._db.execute(
                "SELECT last_seq, game_id FROM room_logs WHERE uid = ?", (uid,)
            ).fetchone()
            if row is None:
                raise LogConflict(f"room {uid}: no log")
            last, game_id = int(row[0]), row[1]
            if seq <= last:
                (old,) = self._db.execute(
                    "SELECT entry FROM room_log_entries WHERE uid = ? AND seq = ?", (uid, seq)
                ).fetchone()
                if json.loads(old) != json.loads(text):
                    raise LogConflict(f"room {uid}: entry {seq} is already another entry")
                return
            raise LogConflict(
                f"room {uid}: append {seq} after {last}"
                f"{' to a finished log' if game_id is not None else ''} refused"
            )

    def finish_log(self, uid: str, **game: Any) -> int:
        """Store the finished game of room ``uid`` and close its log, in one transaction.

        ``game`` are :meth:`record_game`'s arguments. A log already closed is a retry:
        the id of the game stored then is returned and nothing is stored twice.
        """
        with self._lock, self._transaction(immediate=True):
            row = self._db.execute("SELECT game_id FROM room_logs WHERE uid = ?", (uid,)).fetchone()
            if row is None:
                raise LogConflict(f"room {uid}: no log")
            if row[0] is not None:
                return int(row[0])
            game_id = self._insert_game(**game)
            self._db.execute(
                "UPDATE room_logs SET game_id = ?, end_reason = ? WHERE uid = ?",
                (game_id, game["end_reason"], uid),
            )
            return game_id

    def action_log(self, uid: str) -> ActionLog | None:
        """Room ``uid``'s whole log: genesis, entries in order, and how it ended."""
        with self._lock:
            row = self._db.execute(
                "SELECT uid, game, genesis, created_at, game_id, end_reason FROM room_logs"
                " WHERE uid = ?",
                (uid,),
            ).fetchone()
            if row is None:
                return None
            entries = tuple(
                LogEntry(seq, at, json.loads(entry))
                for seq, at, entry in self._db.execute(
                    "SELECT seq, at, entry FROM room_log_entries WHERE uid = ? ORDER BY seq",
                    (uid,),
                )
            )
        uid, game, genesis, created_at, game_id, end_reason = row
        return ActionLog(uid, game, json.loads(genesis), created_at, entries, game_id, end_reason)

    def open_logs(self, game: str | None = None) -> list[str]:
        """The uids of the rooms whose games have not ended, oldest first."""
        sql = "SELECT uid FROM room_logs WHERE game_id IS NULL"
        args: tuple[str, ...] = ()
        if game is not None:
            sql += " AND game = ?"
            args = (game,)
        with self._lock:
            return [r[0] for r in self._db.execute(sql + " ORDER BY created_at, uid", args)]

    def _rate(
        self, game: str, players: list[str], data: Mapping[str, Any], game_id: int, now: float
    ) -> None:
        if not ratings.rated(data):
            return
        before: list[ratings.Rating] = []
        counts: list[int] = []
        for name in players:
            row = self._db.execute(
                "SELECT rating, rd, volatility, games FROM ratings WHERE game = ? AND player = ?",
                (game, name),
            ).fetchone()
            before.append(ratings.Rating() if row is None else ratings.Rating(*row[:3]))
            counts.append(0 if row is None else int(row[3]))
        after = ratings.rate_game(data, before)
        for name, r, n in zip(players, after, counts, strict=True):
            values = (r.rating, r.rd, r.volatility, n + 1, now)
            self._db.execute(
                "INSERT INTO ratings (game, player, rating, rd, volatility, games, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (game, player) DO UPDATE SET"
                " rating = excluded.rating, rd = excluded.rd, volatility = excluded.volatility,"
                " games = excluded.games, updated_at = excluded.updated_at",
                (game, name, *values),
            )
            self._db.execute(
                "INSERT INTO rating_history (game, player, game_id, rating, rd, volatility,"
                " games, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (game, name, game_id, *values),
            )

    def leaderboard(self, game: str, limit: int = 100) -> list[PlayerRating]:
        """The players rated at ``game``, best first (rating, then the surer rating)."""
        rows = self._query(
            "SELECT game, player, rating, rd, volatility, games, updated_at FROM ratings"
            " WHERE game = ? ORDER BY rating DESC, rd ASC, player ASC LIMIT ?",
            (game, limit),
        )
        return [PlayerRating(*row) for row in rows]

    def player(self, name: str, *, limit: int = 20) -> PlayerProfile:
        """``name``'s rating at each game they are rated at, and their ``limit`` latest games."""
        rated = [
            PlayerRating(*row)
            for row in self._query(
                "SELECT game, player, rating, rd, volatility, games, updated_at FROM ratings"
                " WHERE player = ? ORDER BY game",
                (name,),
            )
        ]
        columns = ", ".join(f"g.{c.strip()}" for c in _GAME_COLUMNS.split(","))
        games = [
            _record(row)
            for row in self._query(
                f"SELECT DISTINCT {columns} FROM games AS g"
                " JOIN game_players AS p ON p.game_id = g.id WHERE p.player = ?"
                " ORDER BY g.ended_at DESC, g.id DESC LIMIT ?",
                (name, limit),
            )
        ]
        return PlayerProfile(name, tuple(rated), tuple(games))

    def rating_history(self, game: str, name: str) -> list[RatingPoint]:
        """``name``'s rating at ``game`` after each of their rated games, oldest first."""
        rows = self._query(
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
        return [_record(row) for row in self._query(sql, args)]

    def game(self, game_id: int) -> GameRecord | None:
        row = _first(self._query(f"SELECT {_GAME_COLUMNS} FROM games WHERE id = ?", (game_id,)))
        return None if row is None else _record(row)

    def game_by_uid(self, uid: str) -> GameRecord | None:
        """The game whose record carries this uid (its room's, its URL in the web pages)."""
        row = _first(
            self._query(
                f"SELECT {_GAME_COLUMNS} FROM games WHERE data IS NOT NULL AND json_valid(data)"
                " AND json_extract(data, '$.uid') = ? ORDER BY id DESC LIMIT 1",
                (uid,),
            )
        )
        return None if row is None else _record(row)

    def add_account(self, name: str, password_hash: bytes, salt: bytes, kdf: str) -> bool:
        """Reserve ``name``; False when it (or a name with the same casefold) already is."""
        try:
            self._query(
                "INSERT INTO accounts (name, folded, password_hash, salt, kdf, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (name, name.casefold(), password_hash, salt, kdf, self._now()),
            )
        except sqlite3.IntegrityError:
            return False
        return True

    def account(self, name: str) -> Account | None:
        """The account that reserves ``name`` (compared by casefold), if any."""
        row = _first(
            self._query(
                "SELECT name, password_hash, salt, kdf, created_at FROM accounts WHERE folded = ?",
                (name.casefold(),),
            )
        )
        return None if row is None else Account(*row)

    def save_checkpoint(self, key: str, state: Mapping[str, Any]) -> None:
        """Durably replace the checkpoint under ``key`` (a JSON-serialisable mapping)."""
        self._query(
            "INSERT INTO checkpoints (key, saved_at, state) VALUES (?, ?, ?)"
            " ON CONFLICT (key) DO UPDATE SET saved_at = excluded.saved_at,"
            " state = excluded.state",
            (key, self._now(), json.dumps(state, sort_keys=True)),
        )

    def load_checkpoint(self, key: str) -> dict[str, Any] | None:
        row = _first(self._query("SELECT state FROM checkpoints WHERE key = ?", (key,)))
        return None if row is None else dict(json.loads(row[0]))

    def delete_checkpoint(self, key: str) -> None:
        self._query("DELETE FROM checkpoints WHERE key = ?", (key,))

    def checkpoint_keys(self) -> list[str]:
        return [r[0] for r in self._query("SELECT key FROM checkpoints ORDER BY key")]

    def close(self) -> None:
        with self._lock:
            self._db.close()


class _Tx:
    def __init__(self, db: sqlite3.Connection, *, savepoint: bool = False) -> None:
        self._db = db
        self._savepoint = savepoint

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type: object, *_: object) -> None:
        if self._savepoint:
            if exc_type and self._db.in_transaction:
                self._db.execute("ROLLBACK TO write")
            if self._db.in_transaction:
                self._db.execute("RELEASE write")
            return
        if not exc_type:
            self._db.execute("COMMIT")
        elif self._db.in_transaction:
            # Some errors (SQLITE_FULL among them) have rolled the transaction back already.
            self._db.execute("ROLLBACK")


def sqlite_path(url: str | Path) -> str | None:
    """The SQLite file a ``--database`` value names (``:memory:`` included), None for
    another database."""
    text = str(url)
    if text.startswith("sqlite://"):
        return text.removeprefix("sqlite://").removeprefix("/") or ":memory:"
    return None if "://" in text else text


def open_store(url: str | Path, *, wall_clock: Callable[[], float] = time.time) -> Store:
    """The store a ``--database`` value names.

    ``sqlite:///var/meeple.sqlite3`` (or a bare path, or ``:memory:``) is the embedded
    SQLite file; ``postgresql://user@host:port/db`` is a PostgreSQL database
    (:mod:`meeple.server.pgstore`), with the same schema and the same methods.
    """
    text = str(url)
    if text.startswith(("postgresql://", "postgres://")):
        # psycopg is imported only for a PostgreSQL store.
        pgstore = importlib.import_module("meeple.server.pgstore")
        store: Store = pgstore.PgStore(text, wall_clock=wall_clock)
        return store
    # sqlite:///relative/or/absolute: the third slash starts the path (SQLAlchemy's
    # reading: sqlite:///var/x is relative, sqlite:////var/x absolute).
    path = sqlite_path(text)
    if path is None:
        raise ValueError(f"unknown database URL {text!r} (sqlite:///PATH or postgresql://...)")
    return Store(path, wall_clock=wall_clock)


def _first(rows: list[Any]) -> Any:
    return rows[0] if rows else None


def _json(value: Mapping[str, Any]) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


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
