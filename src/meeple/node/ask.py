"""One way for a node to ask another until an owner answers (issue 32.4).

A room's owner, the lobby's leader or a names node may be away for a moment: killed
and being replaced (a lease's TTL, then a claim), or handing over. Every request a
node makes that must reach *some* owner goes through :func:`ask`, with one rule for
asking again and giving up, its timings in :class:`~meeple.server.config.ClusterConfig`:

- each request waits ``ask_wait`` seconds for its answer;
- no responder, a timeout, or an answer ``busy`` (:data:`~meeple.bus.schema.BUSY`: an
  owner that cannot take it now: a leader that just lost the lobby, a room still
  applying) is asked again after ``ask_pause`` seconds (a ``busy`` at once), and so is
  any error ``again`` says is passing (a room "moved to another node");
- after ``patience`` seconds (``ask_patience`` unless told) of that, or as soon as
  ``going()`` is false (the seat's game ended, the agent left), it gives up:
  :class:`NoAnswer`, a :class:`~meeple.bus.base.BusError` that says how many times it
  asked and the last reason;
- any other error (the owner's handler refused the request: :class:`RemoteError`; the
  bus closed: :class:`BusClosed`) is the caller's at once: asking again would not
  change it.

A request that changes an owner's state is asked again with the same payload (a
command keeps its number: the owner applies it once), or with ``payload(attempt)``
when the owner must know it is an ask again (the leader's :class:`OpenRoom`). The
pauses are taken on the node's clock (:class:`meeple.server.clock.Clock`), so a test
drives them with a virtual one.
"""

from __future__ import annotations

from collections.abc import Callable

from meeple.bus.base import Bus, BusClosed, BusError, BusTimeout, NoResponder, Payload
from meeple.bus.schema import BUSY
from meeple.server.clock import Clock, SystemClock
from meeple.server.config import ClusterConfig

__all__ = ["BUSY", "NoAnswer", "ask", "passing"]

_SYSTEM = SystemClock()


class NoAnswer(BusError):
    """Nobody answered within the patience (or the asker stopped caring)."""

    def __init__(self, subject: str, asked: int, last: BusError | None) -> None:
        why = "busy" if last is None else f"{type(last).__name__}: {last}"
        super().__init__(f"{subject}: no answer after {asked} asks ({why})")
        self.subject = subject
        self.asked = asked
        self.last = last


def passing(error: BusError) -> bool:
    """The errors :func:`ask` always asks again after: nobody serves the subject now, or
    the answer did not come in time."""
    return isinstance(error, NoResponder | BusTimeout)


async def ask(
    bus: Bus,
    subject: str,
    payload: Payload | Callable[[int], Payload],
    timing: ClusterConfig,
    *,
    patience: float | None = None,
    wait: float | None = None,
    pause: float | None = None,
    forever: bool = False,
    going: Callable[[], bool] = lambda: True,
    again: Callable[[BusError], bool] = passing,
    clock: Clock = _SYSTEM,
) -> bytes:
    """The first answer to ``payload`` on ``subject`` that is not ``busy`` (module doc).

    ``payload``: the bytes, or a function of the attempt (0 first). ``patience``: how
    long to ask in all (default ``timing.ask_patience``); ``forever``: until ``going()``
    is false, however long. ``wait``: one request's wait (default ``timing.ask_wait``);
    ``pause``: the pause before asking again (default ``timing.ask_pause``).
    ``again``: which errors are asked again (default: no responder, a timeout).
    Raises :class:`NoAnswer` when it gives up, :class:`BusClosed` when the bus is
    closed, and any other error at once.
    """
    until = clock.now() + (timing.ask_patience if patience is None else patience)
    one = timing.ask_wait if wait is None else wait
    rest = timing.ask_pause if pause is None else pause
    last: BusError | None = None
    attempt = 0
    while going():
        body = payload(attempt) if callable(payload) else payload
        attempt += 1
        try:
            answer = await bus.request(subject, body, timeout=one)
        except BusClosed:
            raise
        except BusError as e:
            if not again(e):
                raise
            last = e
        else:
            if answer != BUSY:
                return answer
            last = None
            if forever or clock.now() < until:
                continue  # the owner is there, only busy: at once
        if not forever and clock.now() >= until:
            break
        await clock.sleep(rest)
    raise NoAnswer(subject, attempt, last)
