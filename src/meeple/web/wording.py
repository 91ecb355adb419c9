"""The words the pages use for what the games store as codes (issue 24, "Wording").

One place for both the server's templates (the ``reason`` and ``lexicon`` filters)
and the pages' scripts (``static/js/wording.js`` holds the same table; a test checks
that they agree): an end reason reads "went out" everywhere, never went-out,
all_tiles_used or ALL_TILES_USED.
"""

from __future__ import annotations

import re

__all__ = ["END_REASONS", "LEXICON_NAMES", "lexicon_label", "reason_text"]

# Every end reason a record or a view may carry, in any of the spellings the
# protocols and the stores use, by its normalised key (lower case, "-" for _ and space).
END_REASONS: dict[str, str] = {
    "went-out": "went out",
    "all-tiles-used": "went out",
    "scoreless-turns": "six scoreless turns",
    "passes": "everyone passed",
    "time": "out of time",
    "timeout": "out of time",
    "admin": "stopped by the referee",
    "aborted": "aborted",
    "disconnect": "a player left",
    "resigned": "resigned",
    "win": "a player won",
    "finished": "finished",
    "abandoned": "abandoned",
    "halted": "stopped by the server",
}

# Registered lexicons (meeple.games.scrabble.lexicon.LEXICONS) as players know them.
LEXICON_NAMES: dict[str, str] = {
    "enable": "ENABLE",
    "wordnik": "Wordnik",
    "gcide": "GCIDE",
    "web2": "Webster's 2nd",
}


def reason_text(reason: str | None) -> str:
    """How an end reason reads: ``went-out``, ``ALL_TILES_USED`` → "went out"."""
    if not reason:
        return "—"
    key = re.sub(r"[\s_]+", "-", str(reason).strip().lower())
    return END_REASONS.get(key, key.replace("-", " "))


def lexicon_label(name: str | None) -> str:
    """A lexicon's name as the pages show it: ``enable`` → "ENABLE"; a file's name as is."""
    if not name:
        return "unknown"
    return LEXICON_NAMES.get(name, name)
