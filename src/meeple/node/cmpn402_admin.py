"""The CMPN402 referee's admin on a cluster edge: ``/admin/…`` on the edge's CMPN402
port (docs/protocols/cmpn402.md, "Admin" and "On a cluster").

The referee's games run on the rooms nodes, one room each (:mod:`meeple.node.cmpn402`);
an edge learns which from the nodes' heartbeats (``<ns>.node.<name>``: each lists the
rooms it owns) and asks each room's owner over the bus (``<ns>.room.<uid>.cmd.<edge>``, a
:class:`~meeple.node.wire.Admin`), as a seat's command goes:

- ``GET /admin/status``: every running referee game, each answered by its owner (the
  board, scores, clocks, whose turn, its agents and whether each is connected, whether
  it waits for one, whether it is paused, the owner node);
- ``POST /admin/stop|pause|resume?game=<uid>``: the referee's own button, applied in the
  room's inbox and logged before the answer (:meth:`~meeple.node.cmpn402.RefereeRoom.admin`);
  with one game running, ``game`` may be left out. A game whose owner died is asked
  again until a node has taken it over (``admin_act_for`` of
  :class:`~meeple.server.config.ClusterConfig`).

The token, the paths, the methods and the answers' statuses are ``meeple serve``'s
(:func:`~meeple.server.edge.cmpn402.admin_gate`); edges check it (they are trusted
with the rooms' commands already: every move comes through them).
"""

from __future__ import annotations

import asyncio
import contextlib
import http
import logging
import re
import time
from typing import Any

from meeple.bus import schema
from meeple.bus.base import Bus, BusClosed, BusError, NoResponder, Subscription
from meeple.bus.subjects import Namespace
from meeple.node import wire
from meeple.node.ask import NoAnswer, ask
from meeple.node.cmpn402 import ADMIN_ACTIONS, GAME
from meeple.server.config import ClusterConfig
from meeple.server.lobby.cmpn402_console import ConsoleError, check_token

__all__ = ["ELSEWHERE", "ClusterAdmin"]

logger = logging.getLogger(__name__)

# ``meeple serve``'s admin paths that are not a cluster's.
ELSEWHERE = {
    "standings": "no contest runs on this cluster (the nodes' [cmpn402.contest] table)",
    "start": "no manual start without a series or a contest (games start when two agents "
    "sit; [cmpn402] manual_start or games N makes a series)",
    "swap": "no series runs on this cluster (the nodes' [cmpn402] games N or manual_start)",
    "abort": "contest mode only (the nodes' [cmpn402.contest] table)",
    "withdraw": "contest mode only (the nodes' [cmpn402.contest] table)",
}
_UID = re.compile(r"[A-Za-z0-9_-]{1,128}")  # a room uid: one subject token


class AdminError(Exception):
    """An admin request answered with an error: its HTTP status and why."""

    def __init__(self, status: http.HTTPStatus, why: str) -> None:
        super().__init__(why)
        self.status = status


class ClusterAdmin:
    """The referee's games on the cluster, as an edge's admin endpoint sees and drives
    them; see the module doc."""

    def __init__(
        self, bus: Bus, ns: Namespace, token: str, *, timing: ClusterConfig | None = None
    ) -> None:
        self.bus = bus
        self.timing = timing or ClusterConfig()
        self.ns = ns
        self._token = token
        self._beats: dict[str, tuple[float, frozenset[str]]] = {}  # node -> its referee rooms
        self._last: dict[str, tuple[str, float]] = {}  # room -> its last owner heard, when
        self._sub: Subscription | None = None

    async def start(self) -> None:
        self._sub = await self.bus.subscribe(self.ns.nodes, self._heard)

    async def stop(self) -> None:
        if self._sub is not None:
            with contextlib.suppress(BusError):
                await self._sub.close()

    def check_token(self, token: str) -> bool:
        return check_token(self._token, token)

    async def _heard(self, subject: str, payload: bytes) -> None:
        beat = schema.decode(payload, schema.Beat)  # refused by the bus if not
        node = beat.name
        rooms = frozenset(r.uid for r in beat.rooms if r.game == GAME)
        now = time.monotonic()
        self._beats[node] = (now, rooms)
        for uid in rooms:
            self._last[uid] = (node, now)
        for uid, (_owner, at) in list(self._last.items()):
            if now - at > self.timing.admin_moving_for:
                del self._last[uid]

    def running(self) -> dict[str, str]:
        """The referee games running now (in a heartbeat heard lately): uid -> owner."""
        now = time.monotonic()
        return {
            uid: node
            for node, (at, rooms) in sorted(self._beats.items())
            if now - at <= self.timing.node_silence
            for uid in sorted(rooms)
        }

    def _moving(self, uid: str) -> bool:
        """Game ``uid`` was running lately on a node that fell silent: it is being taken
        over (or its owner is only late)."""
        last = self._last.get(uid)
        if last is None:
            return False
        beat = self._beats.get(last[0])
        return beat is None or time.monotonic() - beat[0] > self.timing.node_silence

    def only_game(self) -> str:
        """The one referee game an action without ``?game=`` means: one running, or being
        taken over (its owner's beats stopped or are only late); :class:`AdminError` if
        there is none or more than one."""
        games = sorted(set(self.running()) | {u for u in self._last if self._moving(u)})
        if len(games) != 1:
            why = "no game runs" if not games else f"{len(games)} games run"
            raise AdminError(http.HTTPStatus.CONFLICT, f"{why}: say which, ?game=<uid>")
        return games[0]

    # --- the requests ------------------------------------------------------------------

    async def status(self, *, pictures: bool = False) -> dict[str, Any]:
        """``GET /admin/status``'s body (docs/protocols/cmpn402.md, "On a cluster");
        with ``pictures`` each board keeps its room's spectator view (``spectator``: the
        contest console's board picture, meeple.node.contest.RemoteConsole)."""
        running = self.running()
        asked = await asyncio.gather(
            *(self._ask(uid, "status", self.timing.admin_status_wait) for uid in running)
        )
        boards: list[dict[str, Any]] = []
        unanswered: list[dict[str, Any]] = []
        for (uid, owner), answer in zip(running.items(), asked, strict=True):
            view = None if answer is None else answer.get("view")
            if answer is None or not isinstance(view, dict):
                unanswered.append({"uid": uid, "owner": owner})
            elif not view.get("over"):
                board = {**view, "owner": answer.get("owner", owner)}
                if not pictures:
                    board.pop("spectator", None)
                boards.append(board)
        for i, board in enumerate(boards, 1):
            board["board"] = i
        agents = [
            {**agent, "board": board["board"], "game": board["uid"]}
            for board in boards
            for agent in board.get("agents", ())
        ]
        state = "running" if boards else "idle"
        return {
            "status": {
                "mode": "cluster",
                "state": state,
                "agents": agents,
                "boards": boards,
                "unanswered": unanswered,
            }
        }

    async def act(self, action: str, params: dict[str, str]) -> dict[str, Any]:
        """``POST /admin/<action>[?game=<uid>]``: the owner's answer (``result``, the
        game's view with its owner) and the status after it; :class:`AdminError`."""
        if action not in ADMIN_ACTIONS:
            raise AdminError(http.HTTPStatus.NOT_FOUND, f"no admin action {action!r}")
        if set(params) - {"game"}:
            raise AdminError(http.HTTPStatus.CONFLICT, f"{action} takes game=<uid> only")
        uid = params.get("game")
        running = self.running()
        if uid is None:
            uid = self.only_game()
        elif not _UID.fullmatch(uid) or (uid not in running and not self._moving(uid)):
            raise AdminError(http.HTTPStatus.NOT_FOUND, f"no running game {uid[:64]!r}")
        answer = await self._ask(
            uid, action, self.timing.admin_act_wait, again_for=self.timing.admin_act_for
        )
        if answer is None and uid not in self.running() and not self._moving(uid):
            # Its owner, alive, does not list it any more: it ended meanwhile.
            raise AdminError(http.HTTPStatus.NOT_FOUND, f"no running game {uid}")
        if answer is None:
            raise AdminError(
                http.HTTPStatus.SERVICE_UNAVAILABLE,
                f"no node answers for game {uid} now (see /admin/status)",
            )
        view = answer.get("view")
        game = {**view, "owner": answer.get("owner")} if isinstance(view, dict) else None
        if game is not None:
            game.pop("spectator", None)  # the board picture is the console's (status)
        if "error" in answer:
            status = http.HTTPStatus.CONFLICT
            if not answer.get("refused") and "no admin" in str(answer["error"]):
                status = http.HTTPStatus.NOT_FOUND
            raise AdminError(status, str(answer["error"]))
        logger.info("cmpn402 admin: %s %s: %s", action, uid, answer.get("result"))
        return {"result": answer.get("result"), "game": game, **(await self.status())}

    async def _ask(
        self, uid: str, action: str, timeout: float, *, again_for: float = 0.0
    ) -> dict[str, Any] | None:
        """Room ``uid``'s owner's answer to ``action``; None if nobody answers (asked
        again for ``again_for`` seconds while nobody serves the room: a takeover)."""
        subject = self.ns.room_command(uid)
        payload = wire.dumps(wire.Admin(action, self._token))

        def again(error: BusError) -> bool:
            if isinstance(error, NoResponder):
                # Nobody serves the room: asked again while it is being taken over (its
                # owner fell silent, or still lists it), not once its owner dropped it.
                return uid in self.running() or self._moving(uid)
            # A timeout (the owner died with the request: an action may have been
            # applied, so it is not asked again) or the owner lost the room (asked
            # again: it was not applied there).
            return "moved to another node" in str(error)

        try:
            reply = await ask(
                self.bus,
                subject,
                payload,
                self.timing,
                wait=timeout,
                patience=again_for,
                again=again,
            )
        except (BusClosed, NoAnswer):
            return None
        except BusError as e:
            logger.warning("cmpn402 admin: %s %s: %s", action, uid, e)
            return None
        try:
            found = schema.decode(reply, schema.AdminAnswer)
        except wire.WireError as e:
            logger.warning("cmpn402 admin: %s %s: the owner's answer: %s", action, uid, e)
            return None
        answer: dict[str, Any] = {
            "owner": found.owner,
            "view": found.view,
            "result": found.result,
            "refused": found.refused,
        }
        if found.error is not None:
            answer["error"] = found.error
        return answer


def params_or_error(query: str) -> dict[str, str]:
    """The action's parameters (``meeple serve``'s parsing); :class:`AdminError` 409."""
    from meeple.server.edge.cmpn402 import admin_params

    try:
        return admin_params(query)
    except ConsoleError as e:
        raise AdminError(http.HTTPStatus.CONFLICT, str(e)) from None
