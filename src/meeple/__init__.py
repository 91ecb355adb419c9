"""meeple: one server for Scrabble, Santorini and Spectrangle over five wire protocols.

Layers, each depending only on those below it (see ARCHITECTURE in the docs):
``games`` (pure rules) → ``ai`` → ``protocols`` (sans-I/O) → ``server`` (asyncio) → ``cli``.
"""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"
