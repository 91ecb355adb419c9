"""The journal: every room's action log written off the event loop, in order, with retries.

Rooms never touch the store themselves. They hand the journal the writes of their log
(open with the genesis, append one entry per accepted action, finish with the stored
game) and await them: the writes run one at a time, in the order they were asked for,
in one writer thread, so the event loop never waits on a disk or a database
(docs/durability.md).

When a write fails for a reason that may pass (a full disk, a database that is down or
restarting), the journal does not lose it: the write stays at the head of its queue and
is tried again, with a growing pause, until it goes through. Meanwhile the rooms go on
from memory — each caller is told its write is *deferred* rather than made to wait —
and everything still queued is written, in order, once the store is back. The journal
says so once per change of state (the log, and :attr:`Journal.health` for the lobby's
and the console's banner). A queue that grows past ``max_backlog`` writes is
*overflowing*: the callbacks in ``on_overflow`` are told (the lobby stops the rooms
whose entries cannot be kept, each in its protocol's words).

A write the store refuses for good (:class:`~meeple.server.store.database.LogConflict`: a fenced
append that does not fit the log) is not retried: the caller gets the error.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from meeple.server.metrics import METRICS, Sample
from meeple.server.store.database import LogConflict, Store, open_store

if TYPE_CHECKING:
    from meeple.server.app import Services

__all__ = [
    "DEFAULT_BACKLOG",
    "Health",
    "Journal",
    "Written",
    "journal_samples",
    "report_dropped",
    "server_journal",
    "server_store",
    "trouble_words",
]

logger = logging.getLogger(__name__)

DEFAULT_BACKLOG = 10_000  # queued writes before the journal overflows
_FIRST_RETRY = 0.05  # seconds; doubled after each failure up to _LAST_RETRY
_LAST_RETRY = 2.0
MAX_BATCH = 256  # writes in one group commit
# Seconds a room waits for a write before it goes on without it (a database that hangs).
WRITE_TIMEOUT = 2.0


class Health(enum.Enum):
    """How the journal's writes fare (shown on the lobby and the console when not OK)."""

    OK = "ok"
    RETRYING = "retrying"  # writes fail and are kept in memory, in order, and retried
    OVERFLOWING = "overflowing"  # more are kept than ``max_backlog``: games are stopped
    CLOSED = "closed"


def trouble_words(
    health: Health, *, stopping: float | None, waiting: bool, backlog: int, kept: int
) -> str | None:
    """What every page's banner says of writes that fail; None: all is written.

    ``stopping``: the seconds a stop waits for the database (0: until it is back), or
    None while not stopping; ``waiting``: writes are still to be made; ``backlog``: the
    game updates a stop waits for; ``kept``: those kept in memory now. Public text: what
    went wrong in detail is in the log. Serve's journal and the one-process node's
    write-behind (:mod:`meeple.node.writebehind`) say the same."""
    if stopping is not None and waiting:
        bound = f"up to {stopping:g} s" if stopping else "until it is back"
        return (
            "The server is stopping. The database is not taking writes: it waits "
            f"{bound} for it to take {backlog} game updates before it stops."
        )
    if health is Health.RETRYING:
        return (
            "The database is not taking writes. Games go on; "
            f"{kept} game updates are kept in memory and written when it is back."
        )
    if health is Health.OVERFLOWING:
        return (
            "The database has not taken writes for too long: games whose moves could "
            "not be stored were stopped. They are stored when it is back."
        )
    return None


class Written(enum.Enum):
    """What became of one write when its caller was let go."""

    DURABLE = "durable"  # in the store
    DEFERRED = "deferred"  # kept in memory and retried; the store is failing


@dataclass(slots=True)
class _Job:
    call: Callable[[], Any] | None  # the write (None: an append, see ``append``)
    what: str
    loop: asyncio.AbstractEventLoop | None
    future: asyncio.Future[Any] | None
    # An append's ``(uid, seq, entries, at)``: a group commit writes its appends together
    # (``Store.append_batch``); alone, :meth:`write` makes it.
    append: tuple[str, int, Sequence[Mapping[str, Any]], float] | None = None
    done: bool = False  # in the store, or refused by it for good: not the close's to drop

    def write(self, store: Any) -> object:
        """Make this write on its own."""
        if self.append is None:
            assert self.call is not None
            return self.call()
        uid, seq, entries, at = self.append
        if len(entries) == 1:
            return store.append_log(uid, seq, entries[0], at=at)
        return store.append_logs(uid, seq, entries, at=at)

    @property
    def name(self) -> str:
        """What the log calls this write (an append's name is made only when needed)."""
        if self.append is None:
            return self.what
        uid, seq, entries, _ = self.append
        last = seq + len(entries) - 1
        return f"append {uid}#{seq}" + (f"-{last}" if last != seq else "")


class Journal:
    """One writer thread over a :class:`~meeple.server.store.database.Store`; see the module doc."""

    def __init__(
        self,
        store: Store,
        *,
        max_backlog: int = DEFAULT_BACKLOG,
        write_timeout: float = WRITE_TIMEOUT,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.store = store
        self.max_backlog = max_backlog
        self.write_timeout = write_timeout
        self.health = Health.OK
        self.last_error = ""
        # Told of every change of health, on the event loop (the web's banners).
        self.on_health: list[Callable[[Health], None]] = []
        self.on_overflow: list[Callable[[], None]] = []
        self._sleep = sleep
        self._jobs: queue.Queue[list[_Job] | None] = queue.Queue()
        self._staged: list[_Job] = []  # asked for in this turn of the loop
        self._pending = 0  # jobs queued or running
        self._count_lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        # The loop's futures of writes under way, and since when the writer has been on
        # its current batch (None: idle): the watchdog's view of a stuck store.
        self._waiting: set[asyncio.Future[Any]] = set()
        self._watchdog: asyncio.TimerHandle | None = None
        self._busy_since: float | None = None
        # The batch the writer is on (its names are what a close drops if it never goes
        # through), and the stop's wait for the store (issue 30.7: the banner says it).
        self._current: list[_Job] = []
        self._stopping: float | None = None  # the wait's bound in seconds (0: none)
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="meeple-journal", daemon=True)
        self._thread.start()

    # --- the room's side ---------------------------------------------------------------

    # Each returns a future the room awaits (or not): the write is queued at once, in
    # the order of the calls, whether or not anyone awaits it.

    def open(self, uid: str, game: str, genesis: Mapping[str, Any]) -> asyncio.Future[Written]:
        return self.submit(lambda: self.store.open_log(uid, game, genesis), f"open {uid}")

    def append(
        self, uid: str, seq: int, entry: Mapping[str, Any], at: float
    ) -> asyncio.Future[Written]:
        return self._ask(_Job(None, "", None, None, (uid, seq, (entry,), at)))

    def append_many(
        self, uid: str, seq: int, entries: Sequence[Mapping[str, Any]], at: float
    ) -> asyncio.Future[Written]:
        """Entries ``seq``, ``seq + 1``, … in one write: all of them or none."""
        return self._ask(_Job(None, "", None, None, (uid, seq, entries, at)))

    def finish(self, uid: str, game: Mapping[str, Any]) -> asyncio.Future[Written]:
        """Store the finished game and close the log (once, however often retried)."""
        return self.submit(lambda: self.store.finish_log(uid, **game), f"finish {uid}")

    def submit(self, call: Callable[[], Any], what: str) -> asyncio.Future[Written]:
        """Queue ``call`` (a store write; retried while it fails) behind every write
        queued before it; the future says when it is taken (:class:`Written`), or raises
        the store's refusal (:class:`~meeple.server.store.database.LogConflict`). Called on the
        event loop."""
        return self._ask(_Job(call, what, None, None))

    def _ask(self, job: _Job) -> asyncio.Future[Written]:
        loop = asyncio.get_running_loop()
        self._loop = loop
        future: asyncio.Future[Written] = loop.create_future()
        if self.health is not Health.OK:
            # The store is failing: keep the write in order and let the room go on.
            # (What was staged before goes first; the backlog's bound is checked now.)
            future.set_result(Written.DEFERRED)
            self._flush()
            self._put([job])
            return future
        job.loop, job.future = loop, future
        self._waiting.add(future)
        self._watch(loop)
        self._stage(job, loop)
        return future

    def trouble(self) -> str | None:
        """What the lobby's and the console's banner says while writes fail; None: OK."""
        return trouble_words(
            self.health,
            stopping=self._stopping,
            waiting=bool(self.backlog),
            backlog=self.backlog,
            kept=self._pending,
        )

    @property
    def backlog(self) -> int:
        """Writes queued and not yet in the store."""
        return self._pending + len(self._staged)

    async def drain(self, timeout: float | None = None) -> bool:
        """Wait until every queued write is in the store (True), or ``timeout`` passes."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._stage(_Job(lambda: None, "drain", loop, future), loop)
        try:
            await asyncio.wait_for(asyncio.shield(future), timeout)
        except TimeoutError:
            return False
        return True

    def stopping(self, bound: float) -> None:
        """The server stops and waits up to ``bound`` seconds (0: no bound) for the store
        (:meth:`trouble` says so on the banners)."""
        self._stopping = bound

    def unwritten(self) -> list[str]:
        """The writes not in the store, in order (``append g-1#4-6``, ``finish g-1``)."""
        with self._jobs.mutex:
            queued = [job for jobs in self._jobs.queue if jobs is not None for job in jobs]
        jobs = [*self._current, *queued, *self._staged]
        return [job.name for job in jobs if not job.done and job.what != "drain"]

    def close(self, timeout: float = 5.0) -> list[str]:
        """Write what is queued (for at most ``timeout`` seconds), then stop the thread.

        The writes still not in the store then are dropped: each is named in the log
        (issue 30.7: nothing is lost silently), and returned."""
        if self._closed:
            return []
        self._closed = True
        self._flush()
        self._jobs.put(None)
        self._thread.join(timeout)
        dropped: list[str] = []
        if self._thread.is_alive():
            dropped = self.unwritten()
            report_dropped(dropped, self.last_error)
        self._set_health(Health.CLOSED, "")
        return dropped

    # --- internals -------------------------------------------------------------------------

    def _stage(self, job: _Job, loop: asyncio.AbstractEventLoop) -> None:
        """Hand ``job`` to the writer with every other write asked for in this turn of
        the event loop: one wake-up of the writer thread for all of them."""
        self._staged.append(job)
        if len(self._staged) == 1:
            loop.call_soon(self._flush)

    def _flush(self) -> None:
        jobs, self._staged = self._staged, []
        if jobs:
            self._put(jobs)

    def _watch(self, loop: asyncio.AbstractEventLoop) -> None:
        """Look again in ``write_timeout`` seconds whether the writer is stuck on a write
        (one timer for all the waiting writes, not one per write)."""
        if self._watchdog is None:
            self._watchdog = loop.call_later(self.write_timeout, self._check_stuck)

    def _check_stuck(self) -> None:
        self._watchdog = None
        since = self._busy_since
        if since is not None and time.monotonic() - since >= self.write_timeout:
            # A database that does not answer (frozen, a network gone quiet) fails no
            # write: the rooms go on as if it had, and the writes stay queued, in order,
            # until the store answers.
            self._set_health(Health.RETRYING, f"no answer in {self.write_timeout:g} s")
            waiting, self._waiting = self._waiting, set()
            for future in waiting:
                if not future.done():
                    future.set_result(Written.DEFERRED)
        if self._waiting and self._loop is not None and not self._loop.is_closed():
            self._watch(self._loop)

    def _put(self, jobs: list[_Job]) -> None:
        with self._count_lock:
            self._pending += len(jobs)
            pending = self._pending
        self._jobs.put(jobs)
        if pending > self.max_backlog and self.health in (Health.RETRYING, Health.OVERFLOWING):
            # Told once as a change of health; the callbacks run for every batch past
            # the bound, so a game that began writing since is stopped too.
            self._set_health(Health.OVERFLOWING, self.last_error)
            for callback in self.on_overflow:
                try:
                    callback()
                except Exception:
                    logger.exception("journal: an overflow callback failed")

    def _run(self) -> None:
        closing = False
        while not closing:
            jobs = self._jobs.get()
            if jobs is None:
                return
            # Group commit: what queued up meanwhile goes into the same transaction.
            batch = list(jobs)
            while len(batch) < MAX_BATCH:
                try:
                    more = self._jobs.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    closing = True
                    break
                batch.extend(more)
            self._busy_since = time.monotonic()
            self._current = batch
            began = time.perf_counter()
            try:
                for start in range(0, len(batch), MAX_BATCH):
                    self._write_batch(batch[start : start + MAX_BATCH])
                METRICS.log_written(time.perf_counter() - began, len(batch))
            finally:
                self._busy_since = None
                self._current = []
            with self._count_lock:
                self._pending -= len(batch)
                pending = self._pending
            if pending == 0 and self.health in (Health.RETRYING, Health.OVERFLOWING):
                self._from_thread(self._set_health, Health.OK, "")

    def _write_batch(self, batch: list[_Job]) -> None:
        """Write ``batch`` in one transaction where the store can; one by one (with
        retries) where it cannot or the transaction failed.

        In the transaction, the appends that follow one another in the batch go to the
        store together (``Store.append_batch``: a few statements for all of them); the
        other writes (a log's opening, a finished game) one at a time, in their place. If
        a fence of those appends does not hold, the transaction is taken back and every
        write of the batch is made on its own, which tells each append's caller why."""
        together = getattr(self.store, "batch", None)
        if together is not None and len(batch) > 1:
            appends = getattr(self.store, "append_batch", None)
            answers: list[object] = []
            try:
                with together():
                    run: list[tuple[str, int, Sequence[Mapping[str, Any]], float]] = []
                    for job in batch:
                        if appends is not None and job.append is not None:
                            run.append(job.append)
                            answers.append(Written.DURABLE)
                            continue
                        if run:
                            assert appends is not None
                            appends(run)
                            run = []
                        try:
                            job.write(self.store)
                        except LogConflict as e:
                            logger.error("journal: %s refused: %s", job.name, e)
                            answers.append(e)
                        else:
                            answers.append(Written.DURABLE)
                    if run:
                        assert appends is not None
                        appends(run)
            except Exception:
                pass  # taken back whole: each write is tried again on its own below
            else:
                for job in batch:
                    job.done = True
                self._resolve_all(list(zip(batch, answers, strict=True)))
                return
        for job in batch:
            self._write(job)

    def _write(self, job: _Job) -> None:
        pause = _FIRST_RETRY
        told = False
        while True:
            try:
                job.write(self.store)
            except LogConflict as e:
                logger.error("journal: %s refused: %s", job.name, e)
                job.done = True
                self._resolve_all([(job, e)])
                return
            except Exception as e:
                # A full disk, a database down: keep the write, let its caller go on.
                METRICS.log_retry()
                if not told:
                    told = True
                    self._from_thread(self._set_health, Health.RETRYING, f"{job.name}: {e}")
                    self._resolve_all([(job, Written.DEFERRED)])
                self._sleep(pause)
                pause = min(pause * 2, _LAST_RETRY)
                continue
            job.done = True
            self._resolve_all([(job, Written.DURABLE)])
            return

    def _resolve_all(self, answered: list[tuple[_Job, object]]) -> None:
        """Answer the callers of these jobs, with one wake-up of each loop."""
        by_loop: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[Any], object]]] = {}
        for job, value in answered:
            future, loop = job.future, job.loop
            if future is None or loop is None:
                continue
            job.future = None  # a retried write answers its caller once
            by_loop.setdefault(loop, []).append((future, value))
        for loop, answers in by_loop.items():
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits any more
                loop.call_soon_threadsafe(self._settle_all, answers)

    def _settle_all(self, answers: list[tuple[asyncio.Future[Any], object]]) -> None:
        for future, value in answers:
            self._waiting.discard(future)
            if future.done():  # deferred by the watchdog meanwhile, or cancelled
                continue
            if isinstance(value, BaseException):
                future.set_exception(value)
            else:
                future.set_result(value)

    def _from_thread(self, fn: Callable[..., None], *args: Any) -> None:
        loop = self._loop
        if loop is None or loop.is_closed():
            fn(*args)
            return
        try:
            loop.call_soon_threadsafe(fn, *args)
        except RuntimeError:
            fn(*args)

    def _set_health(self, health: Health, error: str) -> None:
        if health is self.health:
            return
        before, self.health, self.last_error = self.health, health, error
        if health is Health.OK:
            logger.warning("journal: the store takes writes again (was %s)", before.value)
        elif health is not Health.CLOSED:
            logger.error(
                "journal: %s; %d writes kept in memory (%s)", health.value, self._pending, error
            )
        for callback in self.on_health:
            try:
                callback(health)
            except Exception:
                logger.exception("journal: a health callback failed")


def report_dropped(names: list[str], error: str) -> None:
    """Log the writes a stop dropped (``names``), one line per game, and why."""
    logger.error(
        "journal: the store did not take %d writes; stopped without them (%s)",
        len(names),
        error or "no answer",
    )
    for line in _dropped_lines(names):
        logger.error("journal: dropped %s", line)


def _dropped_lines(names: list[str]) -> list[str]:
    """``names`` of dropped writes, one line per game: ``g-1: append #4-6, finish``
    (writes that name no game, one line each)."""
    by_game: dict[str, list[str]] = {}
    for name in names:
        verb, _, rest = name.partition(" ")
        uid, hash_, seq = rest.partition("#")
        if not uid:
            by_game.setdefault(name, [])
            continue
        by_game.setdefault(uid, []).append(f"{verb} #{seq}" if hash_ else verb)
    return [f"{uid}: {', '.join(what)}" if what else uid for uid, what in by_game.items()]


def server_store(services: Services) -> Store:
    """The server's one store, opened from ``--database`` on first use."""
    if services.store is None:
        services.store = open_store(services.config.database)
    return services.store


def server_journal(services: Services) -> Journal:
    """The server's one journal over its store (closed with the server's resources)."""
    if services.journal is None:
        services.journal = Journal(server_store(services), max_backlog=services.config.log_backlog)
    journal = services.journal
    METRICS.watch(journal, journal_samples)
    return journal


def journal_samples(journal: Journal) -> list[Sample]:
    """The journal's gauges at a scrape (:mod:`meeple.server.metrics`): its queue and
    the store's state. A closed journal says nothing: it belongs to no running server,
    and the writes it dropped (logged at its close) are no queue that will drain."""
    if journal.health is Health.CLOSED:
        return []
    samples: list[Sample] = [("meeple_journal_queue", (), float(journal.backlog))]
    samples.extend(("meeple_store_state", (h.value,), float(h is journal.health)) for h in Health)
    return samples
