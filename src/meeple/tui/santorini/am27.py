"""Santorini over AM27 for the terminal app: :class:`~meeple.clients.santorini.SantoriniClient`
turned into :mod:`~meeple.tui.santorini.events`.

The client library reads either framing, pings every half second and tracks the board;
what the adapter adds:

- the lobby step: wait for ``SERVERSTATE``, then ``REGISTER`` (A) with the table size
  and ``options.gods`` (``meeple play santorini --gods``);
- AM27 folded into whole views: ``PLAYERSMESSAGE`` seats the players (and starts a
  fresh board), every ``UPDATE``'s ``boardUpdate`` is applied to the view and its
  reachable/buildable maps and flags replace the last ones;
- ``GODLISTMESSAGE`` and ``PLAYERSMESSAGE`` as prompts when the player must answer
  (``god NAME``, ``starter NAME``), INFO as sentences (:data:`REFUSALS`), ``ENDGAME``
  as :class:`~meeple.tui.santorini.events.GameOver`;
- picks turned into ``WORKERINIT`` (the first worker placed is ``M``, the second
  ``F``), ``MOVE``, ``BUILD`` (with no level given: the lowest level the server offers
  for that cell), ``PASS``, ``UNDO``, ``LOSE``, ``GODINIT``, ``CHOSESTARTER``; a
  command the session may not send in its state is a
  :class:`~meeple.tui.connection.MoveError`, not bytes;
- a server that goes away as :class:`~meeple.tui.santorini.events.ConnectionLost`.

Decision: after ``ENDGAME`` the connection stays (AM27 lets it register again) but
the app has no "play again" yet, so the adapter ends the event stream there.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import replace

from meeple.clients.santorini import SantoriniClient, SantoriniClientError
from meeple.clients.watch import NoAnswer
from meeple.protocols.santorini import messages
from meeple.protocols.santorini.messages import Cell as WireCell
from meeple.protocols.santorini.messages import ChooseStarter as ChooseStarterMessage
from meeple.protocols.santorini.session import LocalProtocolError
from meeple.tui.connection import (
    HANDSHAKE_TIMEOUT,
    ConnectFailed,
    ConnectOptions,
    MoveError,
    StatusFeed,
)
from meeple.tui.santorini import events as ui
from meeple.tui.santorini.view import SIZE, Cell, SantoriniView, Square, Worker

__all__ = ["REFUSALS", "Am27Connection", "connect", "refusal_text"]

REFUSALS: dict[str, str] = {
    "NICKNAME": "that name is taken or not allowed (1-32 printable characters); "
    "choose another with --name",
    "WAIT": "not now: it is not your turn, or the game is not at that step",
    "OCCUPIED": "that cell already holds a worker",
    "INVALID": "the rules do not allow that: pick one of your workers, then a marked cell",
    "MALFORMED": "the server could not read that command",
}


def refusal_text(code: str) -> str:
    """``OCCUPIED: that cell already holds a worker``; an unknown code as it came."""
    return f"{code}: {REFUSALS.get(code, 'refused by the server')}"


def _square(cell: WireCell) -> Square:
    return (cell.row, cell.column)


def _wire(square: Square) -> WireCell:
    row, column = square
    return WireCell(row, column)


def _cell(state: messages.CellState) -> Cell:
    worker = Worker(state.owner, state.sex or "M") if state.owner else None
    return Cell.from_level_list(state.levels, worker)


def _lost(error: Exception) -> str:
    """Why the connection ended, for the player."""
    if isinstance(error, SantoriniClientError):
        return "the server closed the connection"
    if isinstance(error, NoAnswer):
        return str(error)
    return f"connection lost: {error}"


class Am27Connection:
    """One AM27 seat as the Santorini app sees it (a :class:`~meeple.tui.connection.Connection`)."""

    def __init__(self, client: SantoriniClient, name: str) -> None:
        self.client = client
        # What the client says about the server goes to the status line (issue 31).
        self._status = StatusFeed()
        client.say = self._status.say
        self.view = SantoriniView(me=name)
        self._closed = False

    @property
    def name(self) -> str:
        return self.view.me

    async def events(self) -> AsyncIterator[ui.SantoriniEvent]:
        errors = (SantoriniClientError, NoAnswer, OSError, asyncio.IncompleteReadError)
        got = self._status.relay(self.client.receive, errors, self._events_of, _lost)
        async with contextlib.aclosing(got):
            async for event in got:
                yield event

    async def _events_of(self, message: messages.ServerMessage) -> list[ui.SantoriniEvent]:
        """The app's events for ``message``; after a refused name (its first event) or
        the game's end, the connection is closed and that is the end."""
        events = self._translate(message)
        if events and isinstance(message, messages.Info) and message.information == "NICKNAME":
            await self.close()
            return [events[0], ui.ConnectionLost("the server refused the name")]
        if any(isinstance(event, ui.GameOver) for event in events):
            await self.close()
            return [*events, ui.ConnectionLost("the game is over")]
        return events

    def _translate(self, message: messages.ServerMessage) -> list[ui.SantoriniEvent]:
        me = self.name
        if isinstance(message, messages.GodList):
            self.view = SantoriniView(me=me)
            names = ", ".join(g.name for g in message.gods)
            if message.player == me:
                cards = [ui.Notice(f"  {g.name}: {g.description}") for g in message.gods]
                return [ui.Prompt(f"Your pick of the gods (god NAME): {names}"), *cards]
            return [ui.Notice(f"{message.player} is choosing a god among {names}")]
        if isinstance(message, messages.Players):
            seats = tuple(name for name, _ in message.players)
            self.view = SantoriniView(me=me, players=seats, gods=dict(message.players))
            out: list[ui.SantoriniEvent] = [
                ui.ViewChanged(self.view),
                ui.Notice("Players: " + ", ".join(f"{n} ({g})" for n, g in message.players)),
            ]
            if message.player == me:
                others = ", ".join(s for s in seats if s != me)
                out.append(
                    ui.Prompt(f"You are the challenger: who starts? starter {me} or {others}")
                )
            else:
                out.append(ui.Notice(f"{message.player} chooses who starts"))
            return out
        if isinstance(message, messages.Update):
            before, actor = self.view, self.view.active
            view = self._apply(message)
            return [*self._changes(before, view, actor), ui.ViewChanged(view)]
        if isinstance(message, messages.Info):
            return [ui.Refused(refusal_text(message.information))]
        if isinstance(message, messages.EndGame):
            if message.is_winner:
                self.view = replace(self.view, winner=message.player, active=None)
                text = "You win!" if message.player == me else f"{message.player} wins"
                return [ui.ViewChanged(self.view), ui.GameOver(message.player, text)]
            who = "you" if message.player == me else message.player
            return [ui.GameOver(None, f"The game ended: {who} left or lost")]
        if isinstance(message, messages.ServerState):
            return []
        return []

    def _apply(self, update: messages.Update) -> SantoriniView:
        view = self.view.with_cells((_square(c), _cell(s)) for c, s in update.board)
        self.view = replace(
            view,
            active=update.player,
            reachable={_square(w): frozenset(map(_square, cs)) for w, cs in update.reachable},
            buildable={
                _square(w): {_square(c): tuple(levels) for c, levels in options}
                for w, options in update.buildable
            },
            can_place_worker=update.can_place_worker,
            can_pass=update.can_pass,
            can_undo=update.can_undo,
        )
        return self.view

    @staticmethod
    def _changes(
        before: SantoriniView, after: SantoriniView, actor: str | None
    ) -> list[ui.SantoriniEvent]:
        """Log lines for what an UPDATE changed: workers placed or moved, blocks built."""
        lines: list[ui.SantoriniEvent] = []
        for index, (old, new) in enumerate(zip(before.cells, after.cells, strict=True)):
            row, column = divmod(index, SIZE)
            if new.worker is not None and new.worker != old.worker:
                placed = not any(c.worker == new.worker for c in before.cells)
                verb = "placed a worker on" if placed else "moved to"
                lines.append(ui.Notice(f"{new.worker.owner} {verb} {row} {column}"))
            built = (new.height, new.dome) > (old.height, old.dome)
            if built and actor is not None:
                what = "a dome" if new.dome and not old.dome else f"level {new.height}"
                lines.append(ui.Notice(f"{actor} built {what} on {row} {column}"))
            if (new.height, new.dome) < (old.height, old.dome):
                lines.append(
                    ui.Notice(f"{actor or 'a player'} took back a build on {row} {column}")
                )
        return lines

    def _message(self, move: ui.SantoriniMove) -> messages.ClientMessage:
        me = self.name
        if isinstance(move, ui.PlaceWorker):
            mine = [c.worker.sex for c in self.view.cells if c.worker and c.worker.owner == me]
            return messages.WorkerInit(me, _wire(move.cell), "F" if "M" in mine else "M")
        if isinstance(move, ui.MoveWorker):
            return messages.Move(me, _wire(move.source), _wire(move.destination))
        if isinstance(move, ui.BuildOn):
            level = move.level
            if level is None:
                offered = self.view.buildable.get(move.source, {}).get(move.destination, ())
                cell = self.view.cell(*move.destination)
                level = min(offered) if offered else (4 if cell.height >= 3 else cell.height + 1)
            if not 1 <= level <= 4:
                raise MoveError("a level is 1-3, or 4 for a dome")
            return messages.Build(me, _wire(move.source), _wire(move.destination), level)
        if isinstance(move, ui.PassTurn):
            return messages.Pass(me)
        if isinstance(move, ui.UndoStep):
            return messages.Undo(me, move.all)
        if isinstance(move, ui.Concede):
            return messages.Lose(me)
        if isinstance(move, ui.ChooseGod):
            return messages.GodInit(me, move.name)
        return ChooseStarterMessage(me, move.name)

    async def send(self, move: ui.SantoriniMove) -> None:
        if self._closed:
            raise MoveError("not connected")
        try:
            await self.client.send(self._message(move))
        except LocalProtocolError as e:
            raise MoveError(f"that cannot be sent now ({e})") from None
        except (OSError, ValueError) as e:
            raise MoveError(f"could not send: {e}") from None

    async def close(self) -> None:
        if not self._closed:
            self._closed = True
            await self.client.close()


async def connect(options: ConnectOptions) -> Am27Connection:
    """Connect, wait for SERVERSTATE and REGISTER (A) ``options.players`` and ``options.gods``."""
    if options.players not in (2, 3):
        raise ConnectFailed("Santorini is played by 2 or 3 players")
    try:
        client = await SantoriniClient.connect(options.host, options.port)
    except OSError as e:
        raise ConnectFailed(f"cannot connect to {options.host}:{options.port}: {e}") from None
    try:
        first = await asyncio.wait_for(client.receive(), HANDSHAKE_TIMEOUT)
        if not isinstance(first, messages.ServerState):
            raise ConnectFailed(f"not an AM27 server (it sent {first.TYPE.value} first)")
        await client.register(options.name, options.players, options.gods)
    except (SantoriniClientError, OSError, TimeoutError) as e:
        await client.close()
        raise ConnectFailed(f"no AM27 greeting from {options.host}:{options.port}: {e}") from None
    except ConnectFailed:
        await client.close()
        raise
    return Am27Connection(client, options.name)
