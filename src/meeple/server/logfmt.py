"""``--log-format json``: one JSON object per log line (issue 35).

Each line has ``time`` (ISO 8601, UTC), ``level``, ``logger`` and ``message``, then the
context the line's logger carries where it applies: ``conn`` (a connection's id, from
:class:`~meeple.server.edge.tcp.ConnectionLog`), ``room`` (a room's id, from the room's
logger), ``uid``, ``seat`` and ``protocol`` (given as ``extra=`` by the code that
knows them), and ``exception`` (the traceback) when there is one. The text format
stays the default.
"""

from __future__ import annotations

import datetime
import json
import logging

__all__ = ["CONTEXT", "FORMATS", "JsonFormatter", "configure"]

FORMATS = ("text", "json")
# Record attributes copied into a JSON line when a logger or ``extra=`` set them.
CONTEXT = ("conn", "room", "uid", "seat", "protocol")
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class JsonFormatter(logging.Formatter):
    """A record as one line of JSON (see the module doc)."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "time": datetime.datetime.fromtimestamp(record.created, datetime.UTC).isoformat(
                timespec="milliseconds"
            ),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key in CONTEXT:
            value = record.__dict__.get(key)
            if value is not None:
                line[key] = value if isinstance(value, int | float | bool) else str(value)
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            line["exception"] = record.exc_text
        if record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        # ASCII only: no character of a message (U+2028, NEL) can split the line.
        return json.dumps(line)


def configure(level: str, fmt: str = "text") -> None:
    """The root logger's handler on stderr, in ``fmt`` (one of :data:`FORMATS`)."""
    if fmt == "json":
        handler = logging.StreamHandler()
        handler.setFormatter(JsonFormatter())
        logging.basicConfig(level=level.upper(), handlers=[handler], force=True)
    else:
        logging.basicConfig(level=level.upper(), format=TEXT_FORMAT)
