"""The CMPN402 Scrabble contest protocol (``scrabble-cmpn402-websocket.md``), sans-I/O.

- :mod:`.tiles`: Tile-Format-1 and -2 ⇄ meeple tile characters;
- :mod:`.messages`: the eleven message types, both directions, byte for byte;
- :mod:`.session`: the server and client state machines, transitions as data;
- :mod:`.errors`: the exception tree and what the server answers to each error.

WebSocket itself (RFC 6455) is the server layer's business (the ``websockets``
library); here one WebSocket binary message is one ``bytes``. See
``docs/protocols/cmpn402.md``.
"""

from __future__ import annotations

from meeple.protocols.cmpn402 import errors, messages, session
from meeple.protocols.cmpn402.errors import *  # noqa: F403
from meeple.protocols.cmpn402.messages import *  # noqa: F403
from meeple.protocols.cmpn402.session import *  # noqa: F403

__all__ = [*errors.__all__, *messages.__all__, *session.__all__]
