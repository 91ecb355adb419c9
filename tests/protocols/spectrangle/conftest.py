"""Fixtures for the Spectrangle protocol tests: the reference transcript, parsed."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

TRANSCRIPT = Path("/work/shared/transcripts/spectrangle-3p-game.log")


@dataclass(frozen=True)
class TranscriptLine:
    """One line of the logged conversation: connection, direction and text."""

    connection: int
    outgoing: bool  # True for client to server
    text: str


def read_transcript(path: Path = TRANSCRIPT) -> list[TranscriptLine]:
    """Every protocol line of the log, in log order (a chunk may hold several lines)."""
    lines: list[TranscriptLine] = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        parts = raw.split(" ", 3)
        if len(parts) < 4 or parts[2] not in ("C>S", "S>C"):
            continue
        data = ast.literal_eval(parts[3])
        assert isinstance(data, bytes)
        for text in data.decode("utf-8").split("\n")[:-1]:
            lines.append(TranscriptLine(int(parts[1]), parts[2] == "C>S", text))
    return lines


@pytest.fixture(scope="session")
def transcript() -> list[TranscriptLine]:
    if not TRANSCRIPT.exists():
        pytest.skip("the shared transcript is not available")
    return read_transcript()


@pytest.fixture(scope="session")
def server_lines_to_p1(transcript: list[TranscriptLine]) -> list[str]:
    """What the server sent to p1 (connection 1): every broadcast of the game, in order."""
    return [t.text for t in transcript if t.connection == 1 and not t.outgoing]
