"""The words the pages use for what the games store as codes (issue 24, "Wording").

One table for both the server's templates (the ``reason`` and ``lexicon`` filters)
and the pages' scripts: ``static/js/wording.json``, which this module and
``static/js/wording.js`` both read. An end reason reads "went out" everywhere, never
went-out, all_tiles_used or ALL_TILES_USED.

``end_reasons`` holds every end reason a record or a view may carry, in any of the
spellings the protocols and the stores use, by its normalised key (lower case, "-" for
_ and space); ``lexicon_names`` the registered lexicons
(:data:`meeple.games.scrabble.lexicon.LEXICONS`) as players know them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

__all__ = ["END_REASONS", "LEXICON_NAMES", "TABLE", "lexicon_label", "reason_text"]

TABLE = Path(__file__).resolve().parent / "static" / "js" / "wording.json"
_MAX_TABLE = 64 * 1024  # the table is about 1 KB; more is not ours


def _load(path: Path) -> tuple[dict[str, str], dict[str, str]]:
    """The two maps of the table at ``path``; ValueError if it is not two maps of strings."""
    with path.open("rb") as f:
        raw = f.read(_MAX_TABLE + 1)
    if len(raw) > _MAX_TABLE:
        raise ValueError(f"{path}: over {_MAX_TABLE} bytes")
    table = json.loads(raw)
    maps: list[dict[str, str]] = []
    for key in ("end_reasons", "lexicon_names"):
        entries = table.get(key) if isinstance(table, dict) else None
        if not isinstance(entries, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in entries.items()
        ):
            raise ValueError(f"{path}: {key} is not a map of strings")
        maps.append(dict(entries))
    return maps[0], maps[1]


END_REASONS, LEXICON_NAMES = _load(TABLE)


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
