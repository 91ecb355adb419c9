"""The human-readable texts of meeple's OK and NOK replies, and the engine-error mapping.

The RFC's only error reply is ``NOK <description>`` (§3.4), so the description is all a
client (and its human) learns. Every text the sessions and the Clarkson dialect send
lives here, so they read alike; :func:`nok_for` turns a Scrabble engine error into the
NOK that explains it, e.g. ``NOK word not in dictionary: XYZ``.
"""

from __future__ import annotations

from collections.abc import Callable

from meeple.games.scrabble import errors as rules
from meeple.protocols.clarkson.messages import VERSION, Nok

__all__ = [
    "ALREADY_GREETED",
    "ALREADY_READY",
    "ALREADY_STARTED",
    "EXCHANGE_OK",
    "GAME_IS_OVER",
    "GOODBYE_BEFORE_HELLO",
    "GREETING",
    "LINE_TOO_LONG",
    "NAME_IN_GAME",
    "NAME_TAKEN",
    "NOT_STARTED",
    "NOT_YOUR_TURN",
    "NO_NAME_NOW",
    "PASS_OK",
    "READY_OK",
    "TURN_OK",
    "UNRECOGNIZED",
    "UNSUPPORTED_VERSION",
    "describe",
    "nok_for",
]

# OK texts (§3.3 leaves them free; these follow the RFC's §4.1 example conversation).
GREETING = "Please send a username, otherwise you will be known as {name}"
READY_OK = "when everyone is ready the game will start"
TURN_OK = "Turn Successful"
EXCHANGE_OK = "tiles exchanged"
PASS_OK = "turn passed"

# NOK texts for breaches of the protocol.
TOO_FAST = "too many commands: slow down"  # the server's rate limit (docs/server.md)
UNRECOGNIZED = "unrecognized command"  # §3.4's own wording
UNSUPPORTED_VERSION = f"Unsupported version! This server speaks {VERSION} (1.0 and 1.0.x accepted)"
ALREADY_GREETED = "HELLO was already exchanged"
NOT_STARTED = "the game has not started yet: send READY"
ALREADY_STARTED = "the game has already started"
NOT_YOUR_TURN = "cannot do that when it's not your turn"
GAME_IS_OVER = "the game is over: send QUIT"
LINE_TOO_LONG = "line too long: at most {limit} bytes"
NAME_TAKEN = "name already taken"
NO_NAME_NOW = "no name can be given now: try again later"
NAME_IN_GAME = "names cannot change during a game"
ALREADY_READY = "already ready: the game starts when everyone is ready"
GOODBYE_BEFORE_HELLO = "HELLO must come first"

_RULE_TEXTS: dict[type[rules.ScrabbleError], Callable[[rules.ScrabbleError], str]] = {}


def _text(
    kind: type[rules.ScrabbleError],
) -> Callable[[Callable[[rules.ScrabbleError], str]], Callable[[rules.ScrabbleError], str]]:
    def register(
        describe: Callable[[rules.ScrabbleError], str],
    ) -> Callable[[rules.ScrabbleError], str]:
        _RULE_TEXTS[kind] = describe
        return describe

    return register


@_text(rules.WordsNotInLexicon)
def _words(error: rules.ScrabbleError) -> str:
    assert isinstance(error, rules.WordsNotInLexicon)
    words = ", ".join(error.words)
    return f"{'word' if len(error.words) == 1 else 'words'} not in dictionary: {words}"


@_text(rules.SquareOccupied)
def _occupied(error: rules.ScrabbleError) -> str:
    assert isinstance(error, rules.SquareOccupied)
    return f"cannot place a tile on ({error.x},{error.y}): {error}"


@_text(rules.TilesNotOnRack)
def _not_on_rack(error: rules.ScrabbleError) -> str:
    assert isinstance(error, rules.TilesNotOnRack)
    return f"tiles not in your hand: {error.missing}"


@_text(rules.ExchangeNotAllowed)
def _exchange(error: rules.ScrabbleError) -> str:
    assert isinstance(error, rules.ExchangeNotAllowed)
    return f"cannot exchange: only {error.in_bag} tiles left in the bag"


def _fixed(text: str) -> Callable[[rules.ScrabbleError], str]:
    return lambda error: text


_RULE_TEXTS.update(
    {
        rules.OffBoard: _fixed("tile off the board: x and y run from 0 to 14"),
        rules.NotInLine: _fixed("tiles must all be in one row or one column"),
        rules.Gap: _fixed("tiles must form one word without gaps"),
        rules.NotConnected: _fixed("word must connect to a word on the board"),
        rules.NotThroughCentre: _fixed("the first word must cover the centre square (7,7)"),
        rules.NoWordFormed: _fixed("a play must form a word of two letters or more"),
        rules.EmptyPlay: _fixed("no tiles given"),
        # Clarkson has no blanks (§4); only reachable through a misconfigured variant.
        rules.BlankWithoutLetter: _fixed("this game has no blank tiles"),
        rules.NotYourTurn: _fixed(NOT_YOUR_TURN),
        rules.GameIsOver: _fixed(GAME_IS_OVER),
        # The RFC has no challenge; a Clarkson room plays words checked on PLACE.
        rules.ChallengeError: _fixed("there are no challenges in this protocol"),
        rules.AwaitingChallenge: _fixed("the last play awaits a challenge; wait"),
        rules.NotationError: lambda error: f"not a move: {error}",
    }
)


def describe(error: rules.ScrabbleError) -> str:
    """The NOK description for an engine error: the most specific rule that matches."""
    for kind in type(error).__mro__:
        text = _RULE_TEXTS.get(kind)
        if text is not None:
            return _one_line(text(error))
    return _one_line(str(error) or "move not allowed")


def nok_for(error: rules.ScrabbleError) -> Nok:
    """The NOK to send when the room refuses a client's move with ``error``."""
    return Nok(describe(error))


def _one_line(text: str) -> str:
    # An engine message must never break the line framing (§2) or end in blanks.
    return " ".join(text.replace("\x00", " ").split())
