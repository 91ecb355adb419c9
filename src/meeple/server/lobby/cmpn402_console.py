"""The CMPN402 console: one object the admin endpoint and the web page read and drive.

The listener puts it in ``Services.console`` (a typed field). Its
contract (kept stable for the web console, issue 12; extend only by adding keys):

- :meth:`snapshot` — everything the judge's window shows, JSON-safe except each
  board's ``"game"`` (the live engine game, for a server-side board view; never send
  it as it is: it holds the racks and the bag).
- :meth:`act` — the buttons: ``start``, ``pause``, ``resume``, ``stop``, ``swap``; in
  contest mode also ``abort`` and ``withdraw`` (``name=``). Raises :class:`ConsoleError`.
  On a cluster's edge the outcome is awaited (the contest's leader answers over the bus).
- :meth:`subscribe` — a callback after every change; returns the unsubscribe function.
- :meth:`file` — a game's message log or GCG on disk; :meth:`check_token` — the admin token.

:class:`SeriesConsole` drives today's two-agent referee; the contest's console is
:class:`meeple.server.lobby.contest.ContestConsole`. Both share :class:`Watchers`,
:func:`standings` and :func:`public`.
"""

from __future__ import annotations

import hmac
import logging
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from meeple.server.rooms.cmpn402 import Referee, RefereeError

__all__ = [
    "Console",
    "ConsoleBase",
    "ConsoleError",
    "SeriesConsole",
    "Watchers",
    "file_wanted",
    "public",
    "standings",
]

logger = logging.getLogger(__name__)

# A game id is a log file's stem: letters, digits, "_", ".", "-" (see FileGameLog).
_GAME_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,199}")
FILE_KINDS = ("log", "gcg")


class ConsoleError(ValueError):
    """An action the console cannot do now, or does not know; ``str()`` says why."""


class Console(Protocol):
    """What the admin endpoint and the web page need of a console (see the module doc)."""

    def snapshot(self) -> dict[str, Any]: ...

    def act(self, action: str, **params: str) -> str | Awaitable[str]:
        """An action's outcome: at once in ``meeple serve``; awaited on a cluster's edge,
        whose console asks the lobby's leader (:class:`meeple.node.contest.RemoteConsole`)."""
        ...

    def subscribe(self, callback: Callable[[], None]) -> Callable[[], None]: ...

    def file(self, game_id: str, kind: str) -> Path | Awaitable[bytes | None] | None:
        """A game's ``log`` or ``gcg``: a file in ``meeple serve``; on a cluster's edge
        the stored game's text, read from a store node (RemoteConsole.file)."""
        ...

    def check_token(self, token: str) -> bool: ...

    def running_games(self) -> list[str]:
        """The uids (log uids) of the referee games running now."""
        ...


class Watchers:
    """Callbacks told after each change; a failing one is logged, never propagated."""

    def __init__(self) -> None:
        self._callbacks: dict[int, Callable[[], None]] = {}
        self._next = 0

    def subscribe(self, callback: Callable[[], None]) -> Callable[[], None]:
        key = self._next
        self._next += 1
        self._callbacks[key] = callback

        def unsubscribe() -> None:
            self._callbacks.pop(key, None)

        return unsubscribe

    def notify(self) -> None:
        for callback in list(self._callbacks.values()):
            try:
                callback()
            except Exception:
                logger.exception("cmpn402 console: a subscriber failed")


def check_token(expected: str, token: str) -> bool:
    """Constant-time comparison of an offered admin token with the configured one."""
    return hmac.compare_digest(token.encode("utf-8", "replace"), expected.encode())


def file_wanted(game_id: str, kind: str) -> bool:
    """Whether a download request names a file a console may have: a ``log`` or ``gcg``
    of a game id of the allowed letters (no path, no quote, 200 characters at most)."""
    return kind in FILE_KINDS and _GAME_ID.fullmatch(game_id) is not None


def game_file(log_dir: Path | None, game_id: str, kind: str) -> Path | None:
    """The path of a game's ``log`` or ``gcg`` when it exists; None for any bad request."""
    if log_dir is None or not file_wanted(game_id, kind):
        return None
    path = log_dir / f"{game_id}.{kind}"
    return path if path.is_file() else None


def files(log_dir: Path | None, game_ids: Iterable[str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for game_id in game_ids:
        if not game_id or game_id in seen:
            continue
        seen.add(game_id)
        entry: dict[str, Any] = {"game_id": game_id}
        for kind in FILE_KINDS:
            entry[kind] = game_file(log_dir, game_id, kind) is not None
        out.append(entry)
    return out


def standings(
    names: Iterable[str],
    results: Iterable[Mapping[str, Any]],
    games_left: Mapping[str, int] | None = None,
) -> list[dict[str, Any]]:
    """Wins, draws, losses, points (own scores summed), spread, games left; best first.

    A result has ``players`` (two names), ``scores`` and ``winners``: one name is a
    win, both a draw, none a loss for both (a double forfeit). Results with a single
    player (a bye) count as that player's win. Ranked by wins (a draw is half), then
    spread, then points, then name; ``score`` is wins plus half the draws.
    """
    table: dict[str, dict[str, Any]] = {}

    def row(name: str) -> dict[str, Any]:
        if name not in table:
            table[name] = {
                "name": name, "wins": 0, "draws": 0, "losses": 0, "points": 0, "spread": 0,
                "games_left": 0, "score": 0.0,
            }  # fmt: skip
        return table[name]

    for name in names:
        row(name)
    for result in results:
        players: Sequence[str] = result["players"]
        scores: Sequence[int] = result["scores"]
        winners = set(result.get("winners", ()))
        for i, name in enumerate(players):
            r = row(name)
            r["points"] += scores[i]
            if len(players) == 2:
                r["spread"] += scores[i] - scores[1 - i]
            if name in winners and len(winners) == 1:
                r["wins"] += 1
            elif name in winners:
                r["draws"] += 1
            else:
                r["losses"] += 1
    for name, left in (games_left or {}).items():
        row(name)["games_left"] = left
    for r in table.values():
        r["score"] = r["wins"] + r["draws"] / 2
    return sorted(
        table.values(), key=lambda r: (-r["score"], -r["spread"], -r["points"], r["name"])
    )


def public(snapshot: Mapping[str, Any]) -> dict[str, Any]:
    """The snapshot without the live games: what may go over the wire as JSON."""
    out = dict(snapshot)
    out["boards"] = [{k: v for k, v in b.items() if k != "game"} for b in snapshot["boards"]]
    return out


def result_entry(result: Mapping[str, Any]) -> dict[str, Any]:
    """A referee's game result as the console's ``series.results`` lists it."""
    return {
        "game_id": result.get("game_id") or None,
        "players": list(result["players"]),
        "scores": list(result["scores"]),
        "winner": result.get("winner"),
        "reason": result["reason"],
    }


class ConsoleBase:
    """What every console does alike: its change callbacks, its games' files by game id
    and its admin token. A console adds its snapshot, actions and running games."""

    def __init__(self, *, token: str, log_dir: Path | None) -> None:
        self._token = token
        self._log_dir = log_dir
        self._watchers = Watchers()

    def subscribe(self, callback: Callable[[], None]) -> Callable[[], None]:
        return self._watchers.subscribe(callback)

    def file(self, game_id: str, kind: str) -> Path | None:
        return game_file(self._log_dir, game_id, kind)

    def check_token(self, token: str) -> bool:
        return check_token(self._token, token)


class SeriesConsole(ConsoleBase):
    """The console of today's two-agent referee (``mode`` "series")."""

    def __init__(self, referee: Referee, *, token: str, log_dir: Path | None) -> None:
        super().__init__(token=token, log_dir=log_dir)
        self.referee = referee
        self._game_ids: list[str] = []
        referee.on_change = self._changed

    def _changed(self) -> None:
        game_id = self.referee.game_id
        if self.referee.game is not None and game_id and game_id not in self._game_ids:
            self._game_ids.append(game_id)
        self._watchers.notify()

    # --- reading ----------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        referee = self.referee
        series = referee.series
        board = referee.board_view(1)
        agents: list[dict[str, Any]] = []
        for seat in referee.seats:
            if seat is None:
                continue
            agents.append(
                {
                    "name": seat.name or None,
                    "address": getattr(seat.link, "address", "?"),
                    "connected": True,
                    "board": 1 if board is not None and seat.name in board["players"] else None,
                }
            )
        results = [result_entry(r) for r in series.results]
        names: list[str] = [a["name"] for a in agents if a["name"]]
        for r in results:
            names += [n for n in r["players"] if n not in names]
        left = series.games - series.played
        ids = [r["game_id"] for r in results if r["game_id"]] + self._game_ids
        if board is not None:
            ids.append(board["game_id"])
        return {
            "mode": "series",
            "state": self._state(board is not None),
            "manual_start": referee.settings.manual_start,
            "agents": agents,
            "boards": [] if board is None else [board],
            "series": {"games": series.games, "played": series.played, "results": results},
            "standings": standings(names, series.results, dict.fromkeys(names, left)),
            "files": files(self._log_dir, ids),
        }

    def _state(self, running: bool) -> str:
        referee = self.referee
        status = referee.status()
        if status["paused"]:
            return "paused"
        if running:
            return "running"
        series = referee.series
        if status["waiting"]:
            return "waiting"  # for the agents, to resume
        if series.played and series.over:
            return "finished"
        if series.played:
            return "between-games"
        return "waiting"

    # --- the buttons --------------------------------------------------------------

    def act(self, action: str, **params: str) -> str:
        if action in ("abort", "withdraw"):
            raise ConsoleError(f"{action} is for contests (meeple serve --contest)")
        if params:
            raise ConsoleError(f"{action} takes no parameters")
        actions: dict[str, Callable[[], str]] = {
            "start": self.referee.start,
            "pause": self.referee.pause,
            "resume": self.referee.resume,
            "stop": self.referee.stop,
            "swap": self.referee.swap,
        }
        if action not in actions:
            raise ConsoleError(f"no action {action!r}")
        try:
            return actions[action]()
        except RefereeError as e:
            raise ConsoleError(str(e)) from None

    def running_games(self) -> list[str]:
        referee = self.referee
        return [referee.game_id] if referee.game is not None and referee.game_id else []
