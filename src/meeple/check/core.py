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
  the ERRATA settles; not a failure;
- ``tolerated``: every expectation held, but only because the kit read past a quirk
  the ERRATA tolerates (NUL padding around Clarkson lines, a bare LF); not a failure.

**Every check stands alone.** What a check does to bring the target to the state it
tests (announce a name, start a game) is a *set-up step*: ``with ctx.setup(what,
section):``. A failure inside a step is the check's FAIL only when the step's section
is the check's own (the rule it exercises); otherwise the check **could not test**,
naming the step and the bytes that came back. A :class:`CheckFailed` carries those
bytes (``got``) and, when the kit recognised a transport fault (UTF-16, a wrong
delimiter...), the :class:`Fault`; a transport fault FAILs only the checks of the
framing rule it breaks (``Fault.sections``) and blocks the others. The report groups
failures by that first unexpected exchange (:func:`meeple.check.report.causes`).

:func:`run_checks` runs a list of checks one after the other and returns a
:class:`~meeple.check.report.Report`.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

__all__ = [
    "CannotTest",
    "Check",
    "CheckFailed",
    "Context",
    "Differs",
    "Fault",
    "Level",
    "NotApplicable",
    "Probe",
    "Result",
    "Status",
    "Step",
    "run_checks",
    "shared",
]

logger = logging.getLogger(__name__)

# A cleanup (closing connections, ending a game the check started) gets this long.
CLEANUP_TIMEOUT = 5.0
# A failure's transcript keeps at most this many bytes per direction per connection.
TRANSCRIPT_LIMIT = 2048
# A check still running after this long gets a progress line (and again each time).
PROGRESS_EVERY = 2.0


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
    TOLERATED = "tolerated"


@dataclass(frozen=True, slots=True)
class Fault:
    """A fault of the target's transport the kit recognised by name, with what to change.

    ``sections`` are the spec sections of the framing rule it breaks: a check of one of
    them FAILs on it, every other check it stops could not test. ``tolerated``: the
    ERRATA tolerates it (the kit read past it; never a failure)."""

    name: str  # "UTF-16 text (little-endian, with a BOM)"
    advice: str  # what to change, one sentence
    sections: tuple[str, ...] = ()
    tolerated: bool = False
    evidence: bytes = b""  # the bytes that show it
    stopped: bool = False  # the target stopped accepting or answering: the first cause
    # The target answered only once the kit nudged it (a line end after a silence): the
    # runner's probe then sends its nudge with its first words, not after a silence.
    nudged: bool = False


@dataclass(frozen=True, slots=True)
class Step:
    """A set-up step of a check: what the kit was doing and the spec section it relies on."""

    what: str  # "ANNOUNCE ckabcdan"
    section: str  # the spec's heading of the rule the step relies on ("ANNOUNCE")


class CheckFailed(Exception):
    """The target broke the rule; the message says how.

    ``got``: the unexpected bytes (the message that came instead, or b"" for nothing);
    ``fault``: a transport fault the kit recognised; ``step``: the set-up step it
    happened in (set by :meth:`Context.setup`)."""

    def __init__(
        self,
        message: str,
        *,
        got: bytes | None = None,
        fault: Fault | None = None,
        step: Step | None = None,
    ) -> None:
        super().__init__(message)
        self.got = got
        self.fault = fault
        self.step = step

    def renamed(self, prefix: str) -> CheckFailed:
        """The same failure, its message prefixed (a shared fixture's name)."""
        return CheckFailed(f"{prefix}: {self}", got=self.got, fault=self.fault, step=self.step)


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
    # Set-up steps' sections that are this check's own rule too, where the spec's heading
    # is coarser than its rules (meeple-web/1's "Playing": ``seated`` owns "create, sit").
    own: tuple[str, ...] = ()

    def exercises(self, section: str) -> bool:
        """Whether a failure in a step relying on ``section`` breaks this check's own rule."""
        return section == self.section or section in self.own


Scenario = Callable[["Context"], Awaitable[None]]
T = TypeVar("T")


def shared(
    name: str, factory: Callable[[Context], Awaitable[T]], timeout: float = 50.0
) -> Callable[[Context], Awaitable[T]]:
    """A scenario several checks use (a whole game), run once per kit run: the getter
    each check awaits (see :class:`Fixtures`). A failure inside one of the scenario's
    own set-up steps is judged as the step says; outside them it FAILs every check
    that uses the scenario."""

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
        own: tuple[str, ...] = (),
    ) -> Callable[[Scenario], Scenario]:
        def register(run: Scenario) -> Scenario:
            checks.append(Check(f"{prefix}.{id}", section, level, title, run, timeout, errata, own))
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
    step: Step | None = None  # the set-up step that failed (could not test), if any
    got: bytes | None = None  # the first unexpected bytes (b"": nothing came)
    fault: Fault | None = None  # the transport fault the kit recognised
    tolerated: tuple[Fault, ...] = ()  # quirks the kit read past (ERRATA tolerances)

    @property
    def blocked(self) -> bool:
        """Could not test because a set-up step or a transport fault failed."""
        return self.status is Status.COULD_NOT_TEST and (
            self.step is not None or self.fault is not None
        )

    def to_json(self) -> dict[str, Any]:
        extra: dict[str, Any] = {}
        if self.step is not None:
            extra["step"] = {"what": self.step.what, "section": self.step.section}
        if self.got is not None:
            extra["got"] = self.got.decode("latin-1")
        if self.fault is not None:
            extra["fault"] = {"name": self.fault.name, "advice": self.fault.advice}
        if self.tolerated:
            extra["tolerated"] = [{"name": f.name, "advice": f.advice} for f in self.tolerated]
        shown = self.status not in (Status.PASS, Status.TOLERATED, Status.NOT_APPLICABLE)
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
                for e in (self.transcript if shown else ())
            ],
            **extra,
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
        self.steps: list[Step] = []
        self.failed_step: Step | None = None  # the innermost step a failure left
        self.tolerated: dict[str, Fault] = {}  # by name: each quirk once

    @contextlib.contextmanager
    def setup(self, what: str, section: str) -> Iterator[None]:
        """A set-up step: a failure inside it is could-not-test unless ``section`` is the
        check's own rule (:meth:`Check.exercises`). Steps nest; the innermost counts."""
        step = Step(what, section)
        self.steps.append(step)
        try:
            yield
        except CheckFailed as e:
            if e.step is None:
                e.step = step
            raise
        except BaseException:  # a timeout cancelling the check inside the step
            if self.failed_step is None:
                self.failed_step = step
            raise
        finally:
            self.steps.pop()

    @property
    def in_setup(self) -> bool:
        return bool(self.steps)

    def tolerate(self, fault: Fault) -> None:
        """The kit read past a quirk the ERRATA tolerates: reported, never a failure."""
        self.tolerated.setdefault(fault.name, fault)

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
        self._done: dict[str, tuple[Any, BaseException | None, Context]] = {}

    async def get(
        self, ctx: Context, name: str, factory: Callable[[Context], Awaitable[Any]], timeout: float
    ) -> Any:
        if name not in self._done:
            sub = Context(self._target, self, wait=self._wait)
            try:
                value = await asyncio.wait_for(factory(sub), timeout)
                self._done[name] = (value, None, sub)
            except (TimeoutError, Exception) as e:
                self._done[name] = (None, e, sub)
            finally:
                for cleanup in reversed(sub.cleanups):
                    await _quietly(cleanup)
        value, error, sub = self._done[name]
        ctx.recorders.extend(r for r in sub.recorders if r not in ctx.recorders)
        for fault in sub.tolerated.values():
            ctx.tolerate(fault)
        if error is not None:
            if isinstance(error, CheckFailed):
                raise error.renamed(name)
            if isinstance(error, NotApplicable | CannotTest | Differs):
                raise type(error)(f"{name}: {error}")
            if isinstance(error, TimeoutError):
                raise CheckFailed(
                    f"{name}: the scenario did not finish within {timeout:g} s",
                    got=b"",
                    step=sub.failed_step or Step(name, name),
                )
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
    step: Step | None = None
    got: bytes | None = None
    fault: Fault | None = None
    try:
        await asyncio.wait_for(check.run(ctx), check.timeout)
        if ctx.decided == 0:
            status, detail = Status.COULD_NOT_TEST, "the scenario decided nothing"
        else:
            detail = "; ".join(ctx.notes)
            if ctx.tolerated:
                status = Status.TOLERATED
                detail = "; ".join(filter(None, [*ctx.tolerated, detail]))
    except CheckFailed as e:
        status, detail, step, got, fault = _verdict(check, e)
    except NotApplicable as e:
        status, detail = Status.NOT_APPLICABLE, str(e)
    except CannotTest as e:
        status, detail = Status.COULD_NOT_TEST, str(e)
    except Differs as e:
        status, detail = Status.DIFFERS, f"{e} (ERRATA, {check.errata or 'see docs'})"
    except TimeoutError:
        late = CheckFailed(
            f"the scenario did not finish within {check.timeout:g} s",
            got=b"",
            step=ctx.failed_step,
        )
        status, detail, step, got, fault = _verdict(check, late)
    except OSError as e:
        status, detail = Status.COULD_NOT_TEST, f"connection failed: {e}"
    except Exception as e:  # a bug in the kit: say so, never blame the target
        logger.exception("check %s broke", check.id)
        status, detail, kit_error = Status.COULD_NOT_TEST, f"the kit broke: {e!r}", True
    finally:
        for cleanup in reversed(ctx.cleanups):
            await _quietly(cleanup)
    transcript = tuple(r.exchange() for r in ctx.recorders)
    return Result(
        check,
        status,
        detail,
        time.monotonic() - started,
        transcript,
        kit_error,
        step,
        got,
        fault,
        tuple(ctx.tolerated.values()),
    )


def _verdict(
    check: Check, e: CheckFailed
) -> tuple[Status, str, Step | None, bytes | None, Fault | None]:
    """FAIL when the failure breaks the check's own rule; could not test when it happened
    in a set-up step of another rule, or is a transport fault of another section."""
    detail = str(e)
    if e.fault is not None and e.fault.sections and not e.fault.tolerated:
        if check.section in e.fault.sections:
            return Status.FAIL, detail, e.step, e.got, e.fault
        blocked = f"blocked by {e.fault.name}: {detail}"
        return Status.COULD_NOT_TEST, blocked, e.step, e.got, e.fault
    if e.step is not None and not check.exercises(e.step.section):
        detail = f"set-up step {e.step.what!r} ({e.step.section}) failed: {detail}"
        return Status.COULD_NOT_TEST, detail, e.step, e.got, e.fault
    return Status.FAIL, detail, e.step, e.got, e.fault


def _selects(pattern: str, check_id: str) -> bool:
    """``--only`` patterns: a whole id, its last part (``e001``), or either's prefix and ``*``."""
    if pattern.endswith("*"):
        prefix = pattern[:-1]
        return check_id.startswith(prefix) or check_id.rsplit(".", 1)[-1].startswith(prefix)
    return check_id == pattern or check_id.endswith("." + pattern)


@dataclass(frozen=True, slots=True)
class Probe:
    """How the runner asks whether the target still answers: connect to its host and
    port, write ``greeting`` (b"": a protocol whose server speaks first) and wait for any
    byte; if none comes, write ``nudge`` (if any) and wait once more. A kit's probe is
    what a new client does first (AM27 and Clarkson: nothing, the server speaks; Twente:
    ANNOUNCE; a WebSocket server: the opening handshake); the nudge is what a server
    that is quiet but alive would answer (a line end for one that reads lines, a command
    for one that never speaks first), so only a target that answers neither is silent.

    ``eager`` (:meth:`ask`): the nudge goes in the same write as the greeting, for a
    target known to answer only the nudge, so that no silence is waited out (issue 33:
    a probe after every check of a server that reads lines doubled each check's wait).
    It is not the default: a target that answers the greeting is asked just that, as a
    new client would (a server that reads one message per read may ignore more)."""

    greeting: bytes = b""
    nudge: bytes = b""

    async def __call__(self, target: Any, wait: float) -> str | None:
        """None while the target answers; else what it does instead ("refused": nothing
        accepts connections; "silent": it accepts, and sends nothing within ``wait``)."""
        how, _ = await self.ask(target, wait)
        return how

    async def ask(
        self, target: Any, wait: float, *, eager: bool = False
    ) -> tuple[str | None, bool]:
        """What :meth:`__call__` says, and whether the target answered only the nudge
        (then the next probe may be ``eager``)."""
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(target.host, target.port), wait
            )
        except (OSError, TimeoutError):
            return "refused", False
        nudged = False
        try:
            if eager and self.nudge:
                data = await self._say(reader, writer, self.greeting + self.nudge, wait)
                nudged = bool(data)
            else:
                data = await self._say(reader, writer, self.greeting, wait)
                if data is None and self.nudge:
                    data = await self._say(reader, writer, self.nudge, wait)
                    nudged = bool(data)
            if data is None:
                return "silent", False
        except TimeoutError:
            return "silent", False
        except OSError:
            return "refused", False
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(writer.wait_closed(), CLEANUP_TIMEOUT)
        # A connection closed at once, with nothing said: a server that is going away.
        return (None, nudged) if data else ("refused", False)

    @staticmethod
    async def _say(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, say: bytes, wait: float
    ) -> bytes | None:
        """Write ``say`` (if any); the first byte that comes (b"": closed), None: none."""
        if say:
            writer.write(say)
            await asyncio.wait_for(writer.drain(), wait)
        try:
            return await asyncio.wait_for(reader.read(1), wait)
        except TimeoutError:
            return None


_CONNECT = Step("connect", "connection")


def _stopped(check: Check, how: str, answered: bool, target: Any) -> Fault:
    """The one root cause of a target that stopped accepting or answering in ``check``."""
    short = check.id.rsplit(".", 1)[-1]
    alone = f"--only {short} alone shows what stopped it"
    where = f"{getattr(target, 'host', '?')}:{getattr(target, 'port', '?')}"
    if how == "refused":
        if not answered:
            name = f"nothing accepts connections at {where} (refused from check {check.id} on)"
            advice = "start the server, or check the address and port"
        else:
            name = f"the server stopped accepting connections during check {check.id}"
            advice = f"keep listening, or restart it per check (--fresh COMMAND); {alone}"
    elif not answered:
        name = f"the server accepts connections but never answers (from check {check.id} on)"
        advice = "answer a new client as the spec's first exchange says (check what is read)"
    else:
        name = f"the server stopped answering during check {check.id}"
        advice = f"keep answering new clients; {alone}"
    return Fault(name, advice, sections=(_CONNECT.section,), stopped=True)


def _blocked(check: Check, fault: Fault, seconds: float = 0.0) -> Result:
    return Result(
        check,
        Status.COULD_NOT_TEST,
        f"blocked by {fault.name}",
        seconds,
        step=_CONNECT,
        got=b"",
        fault=fault,
    )


def _suspect(result: Result) -> bool:
    """A result that a target gone away could explain (so the runner probes it)."""
    return (
        result.status in (Status.FAIL, Status.COULD_NOT_TEST)
        and not result.kit_error
        and not (result.fault is not None and result.fault.stopped)
    )


async def run_checks(
    checks: Sequence[Check],
    target: Any,
    *,
    wait: float = 3.0,
    only: Sequence[str] = (),
    progress: Callable[[Result], None] | None = None,
    waiting: Callable[[Check, float], None] | None = None,
    progress_every: float = PROGRESS_EVERY,
    probe: Probe | None = None,
) -> list[Result]:
    """Run ``checks`` (those ``only`` selects, if given: see :func:`_selects`) in order.

    ``progress`` hears each result; ``waiting`` hears of a check still running, every
    ``progress_every`` seconds (a whole game, a slow target), with its seconds.

    ``probe``: after a check that failed or could not test, the runner asks whether the
    target still answers (issue 31.8). If it refuses connections, or accepts and says
    nothing, that is one root cause, "the server stopped accepting connections during
    check X" (or "stopped answering"), a :class:`Fault` with ``stopped`` set: check X
    and every later one could not test, blocked by it. A target that refuses is asked
    again before each later check (if it listens again, the checks run again); one that
    accepts and stays silent is not (a hung server does not wake up by itself, and each
    probe would cost ``wait``). Once the target has answered only a nudge (a check's
    connection found it answers only after a line end, or a probe's greeting went
    unanswered and its nudge was), every later probe sends the nudge at once: a probe
    never waits out a silence the run already knows of."""
    fixtures = Fixtures(target, wait)
    results: list[Result] = []
    loop = asyncio.get_running_loop()
    stopped: Fault | None = None
    answered = False  # whether the target ever sent a byte in this run
    eager = False  # the target answers only the probe's nudge: send it with the greeting
    for check in checks:
        if only and not any(_selects(o, check.id) for o in only):
            continue
        if stopped is not None and probe is not None:
            if stopped.name.startswith(("the server stopped answering", "the server accepts")):
                still = True
            else:
                how, nudged = await probe.ask(target, wait, eager=eager)
                still, eager = how is not None, eager or nudged
            if still:
                result = _blocked(check, stopped)
                if progress is not None:
                    progress(result)
                results.append(result)
                continue
            stopped = None
        task = asyncio.ensure_future(run_check(check, target, fixtures, wait=wait))
        started = loop.time()
        while not task.done():
            await asyncio.wait({task}, timeout=progress_every)
            if not task.done() and waiting is not None:
                waiting(check, loop.time() - started)
        result = task.result()
        heard = any(e.received for e in result.transcript)
        eager = eager or (result.fault is not None and result.fault.nudged)
        if probe is not None and _suspect(result):
            how, nudged = await probe.ask(target, wait, eager=eager)
            eager = eager or nudged
            if how is not None:
                stopped = _stopped(check, how, answered or heard, target)
                result = _blocked(check, stopped, result.seconds)
        answered = answered or heard or result.status in (Status.PASS, Status.TOLERATED)
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
