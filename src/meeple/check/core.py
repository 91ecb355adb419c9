"""The conformance kit's framework: checks, their results, the runner and the fixtures.

A :class:`Check` is data plus a small coroutine: the spec section it tests, whether the
spec says MUST or SHOULD there, a title, a timeout, and ``run(ctx)``. The coroutine
talks to the target through :class:`~meeple.check.wire.Peer` objects made by its
:class:`Context` (each one records every byte sent and received) and states what it
expects with :meth:`Context.expect` / :meth:`Context.fail`. Its result is one of
:class:`Status`:

- ``pass``: it returned normally *and* decided at least one expectation (a check that
  decided nothing could not test, it never passes by default);
- ``fail``: an expectation failed, or the target did not answer in time (every wait has
  a timeout); the result carries the bytes sent and received;
- ``not applicable``: the target's announced features make the rule moot;
- ``could not test``: the check could not get the target to the state it needs, or the
  kit itself broke; it says why;
- ``differs from meeple's reading``: the target follows the other reading of a point
  the ERRATA settles; not a failure.

:func:`run_checks` runs a list of checks one after the other and returns a
:class:`~meeple.check.report.Report`.
"""

from __future__ import annotations

import asyncio
import enum
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

__all__ = [
    "CannotTest",
    "Check",
    "CheckFailed",
    "Context",
    "Differs",
    "Level",
    "NotApplicable",
    "Result",
    "Status",
    "run_checks",
    "shared",
]

logger = logging.getLogger(__name__)

# A cleanup (closing connections, ending a game the check started) gets this long.
CLEANUP_TIMEOUT = 5.0
# A failure's transcript keeps at most this many bytes per direction per connection.
TRANSCRIPT_LIMIT = 2048


class Level(enum.Enum):
    """The RFC 2119 keyword the spec uses for the rule."""

    MUST = "MUST"
    SHOULD = "SHOULD"


class Status(enum.Enum):
    PASS = "pass"
    FAIL = "fail"
    NOT_APPLICABLE = "not applicable"
    COULD_NOT_TEST = "could not test"
    DIFFERS = "differs from meeple's reading"


class CheckFailed(Exception):
    """The target broke the rule; the message says how."""


class NotApplicable(Exception):
    """The rule does not apply to this target (say why)."""


class CannotTest(Exception):
    """The check could not decide (say why)."""


class Differs(Exception):
    """The target follows another reading of an unclear point than meeple's ERRATA."""


@dataclass(frozen=True, slots=True)
class Check:
    """One rule of one spec, checked by one scenario."""

    id: str  # "twente.server.e001"
    section: str  # the spec's own heading, e.g. "E001 - Name already taken" or "3.1 HELLO"
    level: Level
    title: str  # what the target must do, in one line
    run: Callable[[Context], Awaitable[None]]
    timeout: float = 10.0  # the whole scenario; each wait inside has its own, shorter one
    errata: str | None = None  # the ERRATA point whose reading this check follows


Scenario = Callable[["Context"], Awaitable[None]]
T = TypeVar("T")


def shared(
    name: str, factory: Callable[[Context], Awaitable[T]], timeout: float = 50.0
) -> Callable[[Context], Awaitable[T]]:
    """A scenario several checks use (a whole game), run once per kit run: the getter
    each check awaits (see :class:`Fixtures`)."""

    async def get(ctx: Context) -> T:
        value: T = await ctx.fixtures.get(ctx, name, factory, timeout)
        return value

    return get


def registry(prefix: str) -> tuple[list[Check], Callable[..., Callable[[Scenario], Scenario]]]:
    """A kit's list of checks and the decorator that adds a scenario to it, its id
    ``<prefix>.<id>`` (``twente.server``: ``twente.server.e001``)."""
    checks: list[Check] = []

    def check(
        id: str,
        section: str,
        level: Level,
        title: str,
        *,
        timeout: float = 10.0,
        errata: str | None = None,
    ) -> Callable[[Scenario], Scenario]:
        def register(run: Scenario) -> Scenario:
            checks.append(Check(f"{prefix}.{id}", section, level, title, run, timeout, errata))
            return run

        return register

    return checks, check


@dataclass(frozen=True, slots=True)
class Exchange:
    """What one connection sent and received during a check (truncated)."""

    label: str
    sent: bytes
    received: bytes


@dataclass(frozen=True, slots=True)
class Result:
    check: Check
    status: Status
    detail: str = ""
    seconds: float = 0.0
    transcript: tuple[Exchange, ...] = ()
    kit_error: bool = False  # the kit itself raised: a bug in meeple, never the target's

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.check.id,
            "section": self.check.section,
            "level": self.check.level.value,
            "title": self.check.title,
            "status": self.status.value,
            "detail": self.detail,
            "errata": self.check.errata,
            "seconds": round(self.seconds, 3),
            "transcript": [
                {
                    "connection": e.label,
                    "sent": e.sent.decode("latin-1"),
                    "received": e.received.decode("latin-1"),
                }
                for e in self.transcript
            ],
        }


class Recorder:
    """What a connection sent and received, kept for the report of a failure."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.sent = bytearray()
        self.received = bytearray()

    def exchange(self) -> Exchange:
        return Exchange(self.label, _tail(self.sent), _tail(self.received))


def _tail(data: bytearray) -> bytes:
    if len(data) <= TRANSCRIPT_LIMIT:
        return bytes(data)
    return b"[...]" + bytes(data[-TRANSCRIPT_LIMIT:])


class Context:
    """What a check's coroutine works with: the target, its recorders, its verdicts."""

    def __init__(self, target: Any, fixtures: Fixtures, *, wait: float) -> None:
        self.target = target
        self.fixtures = fixtures
        self.wait = wait  # default timeout of one wait for the target
        self.recorders: list[Recorder] = []
        self.decided = 0
        self.notes: list[str] = []
        self.cleanups: list[Callable[[], Awaitable[None]]] = []

    def recorder(self, label: str) -> Recorder:
        rec = Recorder(label)
        self.recorders.append(rec)
        return rec

    def expect(self, ok: bool, failure: str) -> None:
        """Decide one expectation: ``failure`` is the report's text if ``ok`` is false."""
        self.decided += 1
        if not ok:
            raise CheckFailed(failure)

    def fail(self, failure: str) -> None:
        self.decided += 1
        raise CheckFailed(failure)

    def passed(self, note: str = "") -> None:
        """Record a decided expectation that held (with an optional note for the report)."""
        self.decided += 1
        if note:
            self.notes.append(note)


class Fixtures:
    """Scenarios shared by several checks (a whole game, say), each run at most once.

    ``await fixtures.get(name, factory)`` runs ``factory(ctx)`` the first time in a
    context of its own and keeps its value or its exception; each later check gets the
    same. The fixture's transcript is attached to the checks that use it.
    """

    def __init__(self, target: Any, wait: float) -> None:
        self._target = target
        self._wait = wait
        self._done: dict[str, tuple[Any, BaseException | None, list[Recorder]]] = {}

    async def get(
        self, ctx: Context, name: str, factory: Callable[[Context], Awaitable[Any]], timeout: float
    ) -> Any:
        if name not in self._done:
            sub = Context(self._target, self, wait=self._wait)
            try:
                value = await asyncio.wait_for(factory(sub), timeout)
                self._done[name] = (value, None, sub.recorders)
            except (TimeoutError, Exception) as e:
                self._done[name] = (None, e, sub.recorders)
            finally:
                for cleanup in reversed(sub.cleanups):
                    await _quietly(cleanup)
        value, error, recorders = self._done[name]
        ctx.recorders.extend(r for r in recorders if r not in ctx.recorders)
        if error is not None:
            if isinstance(error, CheckFailed | NotApplicable | CannotTest | Differs):
                raise type(error)(f"{name}: {error}")
            if isinstance(error, TimeoutError):
                raise CheckFailed(f"{name}: the scenario did not finish within {timeout:g} s")
            raise CannotTest(f"{name}: the scenario broke: {error!r}")
        return value


async def _quietly(cleanup: Callable[[], Awaitable[None]]) -> None:
    try:
        await asyncio.wait_for(cleanup(), CLEANUP_TIMEOUT)
    except (TimeoutError, Exception):
        logger.debug("cleanup failed", exc_info=True)


async def run_check(check: Check, target: Any, fixtures: Fixtures, *, wait: float) -> Result:
    """Run one check to its result; never raises, never waits past ``check.timeout``."""
    ctx = Context(target, fixtures, wait=wait)
    started = time.monotonic()
    status, detail, kit_error = Status.PASS, "", False
    try:
        await asyncio.wait_for(check.run(ctx), check.timeout)
        if ctx.decided == 0:
            status, detail = Status.COULD_NOT_TEST, "the scenario decided nothing"
        else:
            detail = "; ".join(ctx.notes)
    except CheckFailed as e:
        status, detail = Status.FAIL, str(e)
    except NotApplicable as e:
        status, detail = Status.NOT_APPLICABLE, str(e)
    except CannotTest as e:
        status, detail = Status.COULD_NOT_TEST, str(e)
    except Differs as e:
        status, detail = Status.DIFFERS, f"{e} (ERRATA, {check.errata or 'see docs'})"
    except TimeoutError:
        status, detail = Status.FAIL, f"the scenario did not finish within {check.timeout:g} s"
    except OSError as e:
        status, detail = Status.COULD_NOT_TEST, f"connection failed: {e}"
    except Exception as e:  # a bug in the kit: say so, never blame the target
        logger.exception("check %s broke", check.id)
        status, detail, kit_error = Status.COULD_NOT_TEST, f"the kit broke: {e!r}", True
    finally:
        for cleanup in reversed(ctx.cleanups):
            await _quietly(cleanup)
    transcript = tuple(r.exchange() for r in ctx.recorders) if status is Status.FAIL else ()
    return Result(check, status, detail, time.monotonic() - started, transcript, kit_error)


def _selects(pattern: str, check_id: str) -> bool:
    """``--only`` patterns: a whole id, its last part (``e001``), or either's prefix and ``*``."""
    if pattern.endswith("*"):
        prefix = pattern[:-1]
        return check_id.startswith(prefix) or check_id.rsplit(".", 1)[-1].startswith(prefix)
    return check_id == pattern or check_id.endswith("." + pattern)


async def run_checks(
    checks: Sequence[Check],
    target: Any,
    *,
    wait: float = 3.0,
    only: Sequence[str] = (),
    progress: Callable[[Result], None] | None = None,
) -> list[Result]:
    """Run ``checks`` (those ``only`` selects, if given: see :func:`_selects`) in order."""
    fixtures = Fixtures(target, wait)
    results = []
    for check in checks:
        if only and not any(_selects(o, check.id) for o in only):
            continue
        result = await run_check(check, target, fixtures, wait=wait)
        if progress is not None:
            progress(result)
        results.append(result)
    return results


@dataclass(frozen=True, slots=True)
class Target:
    """Where the server under test listens, and what the kit knows to talk to it."""

    host: str
    port: int
    options: dict[str, Any] = field(default_factory=dict)
