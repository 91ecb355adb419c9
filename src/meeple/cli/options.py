"""Options more than one ``meeple`` command takes, defined once."""

from __future__ import annotations

import argparse

from meeple.games.scrabble.lexicon import DEFAULT_LEXICON

__all__ = ["add_lexicon_argument"]


def add_lexicon_argument(p: argparse.ArgumentParser, help: str) -> None:
    """``--lexicon``: a Scrabble word list by name or path, by default meeple serve's
    (``%(default)s`` in ``help`` names it)."""
    p.add_argument("--lexicon", default=DEFAULT_LEXICON, help=help)
