"""GCG, the game record format of Quackle, Macondo and cross-tables.com: export and a reader.

:func:`to_gcg` writes a :class:`~meeple.games.scrabble.game.Game` as GCG; :func:`parse_gcg`
reads GCG text back into :class:`GcgRecord` (pragmas and typed event lines) — enough to
check an export, list the moves of a record or rebuild the board
(:meth:`GcgRecord.board`). It does not replay a GCG into a :class:`Game` (a GCG holds
no bag order); replay a game from its :class:`~meeple.games.scrabble.game.GameRecord`.

What meeple writes (one line per event, the GCG event forms):

- ``#character-encoding UTF-8`` first, then ``#player1 nick Full Name`` … (one per
  seat, nicknames made unique and free of spaces), ``#title``, ``#id``, ``#lexicon``
  when known;
- a play: ``>Nick: RACK 8D WORD +score total`` — RACK is the rack held before the
  move, sorted with ``?`` last; WORD is the whole main word, blanks in lower case, and
  letters already on the board written as the letters (Macondo's choice;
  ``play_through="."`` writes ``.`` for them instead, which GCG also allows);
- an exchange ``>Nick: RACK -ABC +0 total``, a pass ``>Nick: RACK - +0 total``; a turn
  lost to a wrong double challenge is written as a pass, as Macondo does;
- a withdrawn phony ``>Nick: RACK -- -score total``; a wrong-challenge bonus
  ``>Nick: RACK (challenge) +5 total`` (RACK: the rack before the challenged play);
- the end: ``>Nick: (RACKS) +N total`` for the player who went out (all other racks,
  meeple's rule: no doubling), and ``>Nick: RACK (RACK) -N total`` for every other player
  left holding tiles — after going out, and after the scoreless-turns end;
- an end from outside the rules (time, admin stop, disconnect, Clarkson's two passes)
  has no GCG event form: it is written as a ``#note`` on the last event.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from meeple.games.scrabble.bag import sort_tiles
from meeple.games.scrabble.board import STANDARD_LAYOUT, Board, Layout, parse_gcg_position
from meeple.games.scrabble.errors import NotationError
from meeple.games.scrabble.game import (
    ChallengeFailed,
    EndReason,
    Exchanged,
    Game,
    GameEnded,
    GameResult,
    Passed,
    PlayMade,
    PlayWithdrawn,
    TimePenalized,
    TurnLost,
)

__all__ = [
    "MAX_GCG_SIZE",
    "GcgEvent",
    "GcgEventKind",
    "GcgRecord",
    "gcg_nicknames",
    "parse_gcg",
    "to_gcg",
]

MAX_GCG_SIZE = 1_000_000


def gcg_nicknames(players: Sequence[str]) -> tuple[str, ...]:
    """GCG nicknames for the seats: no whitespace, unique (a seat number added on a clash)."""
    nicks: list[str] = []
    for i, name in enumerate(players):
        nick = re.sub(r"\s+", "_", name.strip()) or f"player{i + 1}"
        nick = nick.replace(":", "_")
        if nick in nicks:
            nick = f"{nick}_{i + 1}"
        nicks.append(nick)
    return tuple(nicks)


def to_gcg(
    game: Game,
    *,
    title: str | None = None,
    game_id: tuple[str, str] | None = None,
    lexicon: str | None = None,
    play_through: str | None = None,
) -> str:
    """The game so far as GCG text (``\\n`` line ends, a final newline).

    ``game_id`` is ``(authority, id)`` for ``#id``; ``lexicon`` defaults to the
    variant's lexicon name; ``play_through="."`` writes played-through letters as ``.``.
    """
    nicks = gcg_nicknames(game.players)
    lines = ["#character-encoding UTF-8"]
    for i, (nick, name) in enumerate(zip(nicks, game.players, strict=True)):
        lines.append(f"#player{i + 1} {nick} {name.strip() or nick}")
    if title:
        lines.append(f"#title {title}")
    if game_id:
        lines.append(f"#id {game_id[0]} {game_id[1]}")
    lexicon = lexicon or game.variant.lexicon
    if lexicon:
        lines.append(f"#lexicon {lexicon}")

    def line(player: int, body: str) -> str:
        return f">{nicks[player]}: {body}"

    for event in game.events:
        if isinstance(event, PlayMade):
            word = event.move.word
            if play_through is not None:
                new = {(t.x, t.y) for t in event.move.tiles}
                dx, dy = event.move.direction.step
                word = "".join(
                    c if (event.move.x + dx * i, event.move.y + dy * i) in new else play_through
                    for i, c in enumerate(word)
                )
            body = f"{sort_tiles(event.rack)} {event.move.position} {word}"
            lines.append(line(event.player, f"{body} +{event.score} {event.total}"))
        elif isinstance(event, PlayWithdrawn):
            rack = sort_tiles(event.rack)
            lines.append(line(event.player, f"{rack} -- -{event.score} {event.total}"))
        elif isinstance(event, ChallengeFailed) and event.bonus:
            rack = sort_tiles(event.rack)
            lines.append(line(event.player, f"{rack} (challenge) +{event.bonus} {event.total}"))
        elif isinstance(event, Exchanged):
            rack = sort_tiles(event.rack)
            lines.append(line(event.player, f"{rack} -{sort_tiles(event.tiles)} +0 {event.total}"))
        elif isinstance(event, Passed | TurnLost):
            lines.append(line(event.player, f"{sort_tiles(event.rack)} - +0 {event.total}"))
        elif isinstance(event, GameEnded):
            lines += _end_lines(event.result, nicks, line)
        elif isinstance(event, TimePenalized):
            rack = sort_tiles(event.result.racks[event.player])
            lines.append(line(event.player, f"{rack} (time) -{event.points} {event.total}"))
    return "\n".join(lines) + "\n"


def _end_lines(
    result: GameResult, nicks: Sequence[str], line: Callable[[int, str], str]
) -> list[str]:
    racks = [sort_tiles(r) for r in result.racks]
    lines: list[str] = []
    if result.reason is EndReason.WENT_OUT:
        assert result.player is not None
        out = result.player
        others = sort_tiles("".join(r for i, r in enumerate(racks) if i != out))
        if others:  # a lone player going out has nobody's tiles to count
            lines.append(line(out, f"({others}) +{result.adjustments[out]} {result.scores[out]}"))
    if result.reason in (EndReason.WENT_OUT, EndReason.SCORELESS_TURNS):
        for i, rack in enumerate(racks):
            if rack and i != result.player:
                penalty = -result.adjustments[i]
                lines.append(line(i, f"{rack} ({rack}) -{penalty} {result.scores[i]}"))
    if result.reason not in (EndReason.WENT_OUT, EndReason.SCORELESS_TURNS):
        who = f" ({nicks[result.player]})" if result.player is not None else ""
        lines.append(f"#note game ended: {result.reason.value}{who}")
    return lines


# ---------------------------------------------------------------------------- reading


class GcgEventKind:
    """The kinds of GCG event line (plain strings, as GCG names them)."""

    PLAY = "play"
    EXCHANGE = "exchange"
    PASS = "pass"
    PHONY_WITHDRAWN = "phony-withdrawn"
    CHALLENGE_BONUS = "challenge-bonus"
    END_RACK_POINTS = "end-rack-points"
    END_RACK_PENALTY = "end-rack-penalty"
    TIME_PENALTY = "time-penalty"


@dataclass(frozen=True, slots=True)
class GcgEvent:
    """One ``>`` line of a GCG file. ``score`` is signed (penalties negative)."""

    nick: str
    kind: str
    rack: str
    score: int
    total: int
    position: str = ""
    word: str = ""
    tiles: str = ""  # exchanged tiles, or the rack counted at the end
    note: str = ""


@dataclass(frozen=True, slots=True)
class GcgRecord:
    """A parsed GCG file: players as ``(nick, full name)``, other pragmas, and events."""

    players: tuple[tuple[str, str], ...]
    pragmas: tuple[tuple[str, str], ...]
    events: tuple[GcgEvent, ...]

    def pragma(self, name: str) -> str | None:
        return next((v for k, v in self.pragmas if k == name), None)

    def board(self, layout: Layout = STANDARD_LAYOUT) -> Board:
        """The board at the end of the record: every play laid, withdrawn phonies taken off.

        Raises NotationError for a play that does not fit the board it meets (a clash,
        a ``.`` over an empty square, a word off the board). No rule is checked.
        """
        board = Board(layout)
        last: list[tuple[int, int]] = []
        for e in self.events:
            if e.kind == GcgEventKind.PLAY:
                last = _lay(board, e)
            elif e.kind == GcgEventKind.PHONY_WITHDRAWN:
                for x, y in last:
                    board.remove(x, y)
                last = []
        return board

    def final_scores(self) -> dict[str, int]:
        """Each nickname's last cumulative score (0 if they never moved)."""
        scores = {nick: 0 for nick, _ in self.players}
        for e in self.events:
            scores[e.nick] = e.total
        return scores


_NICK = r">(?P<nick>[^\s:]+):\s+"
_TOTAL = r"\s+(?P<total>-?\d+)\s*$"
_EVENT_FORMS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(_NICK + body + _TOTAL))
    for kind, body in (
        (GcgEventKind.CHALLENGE_BONUS, r"(?P<rack>\S*)\s+\(challenge\)\s+(?P<score>\+\d+)"),
        (GcgEventKind.TIME_PENALTY, r"(?P<rack>\S*)\s+\(time\)\s+(?P<score>-\d+)"),
        (GcgEventKind.END_RACK_POINTS, r"(?P<rack>)\((?P<tiles>\S+)\)\s+(?P<score>\+\d+)"),
        (
            GcgEventKind.END_RACK_PENALTY,
            r"(?P<rack>\S+)\s+\((?P<tiles>\S+)\)\s+(?P<score>-\d+)",
        ),
        (GcgEventKind.PHONY_WITHDRAWN, r"(?P<rack>\S+)\s+--\s+(?P<score>-\d+)"),
        (GcgEventKind.PASS, r"(?P<rack>\S*)\s+-\s+(?P<score>\+0)"),
        (GcgEventKind.EXCHANGE, r"(?P<rack>\S+)\s+-(?P<tiles>\S+)\s+(?P<score>\+0)"),
        (
            GcgEventKind.PLAY,
            r"(?P<rack>\S+)\s+(?P<position>\d+[A-Za-z]|[A-Za-z]\d+)\s+"
            r"(?P<word>[A-Za-z.]+)\s+(?P<score>[+-]\d+)",
        ),
    )
)
_PRAGMA = re.compile(r"#(?P<name>[\w-]+)\s*(?P<value>.*)$")


def parse_gcg(text: str, *, max_size: int = MAX_GCG_SIZE) -> GcgRecord:
    """Read GCG text; raise NotationError for a line that is no GCG form, or too much text."""
    if len(text) > max_size:
        raise NotationError(f"GCG text over {max_size} characters")
    players: list[tuple[str, str]] = []
    pragmas: list[tuple[str, str]] = []
    events: list[GcgEvent] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            m = _PRAGMA.match(line)
            if m is None:
                raise NotationError(f"line {number}: not a pragma: {raw!r}")
            name, value = m["name"], m["value"].strip()
            if re.fullmatch(r"player\d+", name):
                nick, _, full = value.partition(" ")
                players.append((nick, full.strip() or nick))
            elif name == "note" and events:
                last = events[-1]
                note = f"{last.note}\n{value}" if last.note else value
                events[-1] = _replace_note(last, note)
            else:
                pragmas.append((name, value))
            continue
        events.append(_parse_event(line, number))
    return GcgRecord(tuple(players), tuple(pragmas), tuple(events))


def _replace_note(event: GcgEvent, note: str) -> GcgEvent:
    return GcgEvent(
        event.nick,
        event.kind,
        event.rack,
        event.score,
        event.total,
        event.position,
        event.word,
        event.tiles,
        note,
    )


def _lay(board: Board, event: GcgEvent) -> list[tuple[int, int]]:
    """Put a play line's new tiles on ``board``; return their squares."""
    x, y, direction = parse_gcg_position(event.position, board.size)
    dx, dy = direction.step
    placed: list[tuple[int, int]] = []
    for i, c in enumerate(event.word):
        sx, sy = x + dx * i, y + dy * i
        if not board.on_board(sx, sy):
            raise NotationError(f"{event.position} {event.word} runs off the board")
        there = board.tile(sx, sy)
        if c == ".":
            if there is None:
                raise NotationError(f"{event.position} {event.word}: '.' over an empty square")
        elif there is None:
            board.place(sx, sy, c)
            placed.append((sx, sy))
        elif there.upper() != c.upper():
            raise NotationError(f"{event.position} {event.word}: {c} clashes with {there}")
    return placed


def _parse_event(line: str, number: int) -> GcgEvent:
    for kind, pattern in _EVENT_FORMS:
        m = pattern.match(line)
        if m is None:
            continue
        groups = m.groupdict()
        return GcgEvent(
            nick=groups["nick"],
            kind=kind,
            rack=groups.get("rack") or "",
            score=int(groups["score"]),
            total=int(groups["total"]),
            position=groups.get("position") or "",
            word=groups.get("word") or "",
            tiles=groups.get("tiles") or "",
        )
    raise NotationError(f"line {number}: not a GCG event: {line!r}")
