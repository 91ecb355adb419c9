"""The Twente Scrabble protocol (``scrabble-twente-v2.md``), sans-I/O.

- :mod:`.framing`: bytes ⇄ frames (US between fields, RS after each message);
- :mod:`.messages`: every command as a frozen dataclass with ``encode``/``decode``;
- :mod:`.session`: the server-side and client-side state machines;
- :mod:`.events`: what the sessions hand to the layer above (requests, rejections);
- :mod:`.errors`: error codes E001–E015, the exception tree, engine-error mapping.

The server layer makes a :class:`ServerSession` per connection, feeds it bytes with
``receive_data`` and writes what ``send`` returns. See ``docs/protocols/twente.md``.
"""

from __future__ import annotations

from meeple.protocols.twente import errors, events, framing, messages, session
from meeple.protocols.twente.errors import *  # noqa: F403
from meeple.protocols.twente.events import *  # noqa: F403
from meeple.protocols.twente.framing import *  # noqa: F403
from meeple.protocols.twente.messages import *  # noqa: F403
from meeple.protocols.twente.session import *  # noqa: F403

__all__ = [*errors.__all__, *events.__all__, *framing.__all__, *messages.__all__, *session.__all__]
