"""meeple's own browser protocol: JSON over WebSocket, sans-I/O (docs/protocols/web.md).

- :mod:`.messages`: every message as a frozen dataclass; :func:`decode` with a size limit;
- :mod:`.session`: the server-side state machine (:data:`TRANSITIONS`, one table);
- :mod:`.errors`: the error codes and the exception tree.

The web listener makes a :class:`ServerSession` per WebSocket, feeds it each text
message with ``receive`` and sends what ``send`` returns.
"""

from __future__ import annotations

from meeple.protocols.web import delta, errors, messages, session
from meeple.protocols.web.delta import *  # noqa: F403
from meeple.protocols.web.errors import *  # noqa: F403
from meeple.protocols.web.messages import *  # noqa: F403
from meeple.protocols.web.session import *  # noqa: F403

__all__ = [*delta.__all__, *errors.__all__, *messages.__all__, *session.__all__]
