"""The AM27 Santorini protocol (``santorini-am27.md`` read with ERRATA), sans-I/O.

- :mod:`.framing`: JSON lines, and the Java object stream the group's server writes;
- :mod:`.messages`: the double-JSON envelope and every message as a frozen dataclass;
- :mod:`.session`: the server-side and client-side state machines, and the heartbeat;
- :mod:`.events`: what the sessions hand up besides messages (rejections, the end).

The server layer makes a :class:`ServerSession` per connection, feeds it bytes with
``receive_data`` and writes what ``send`` returns. See ``docs/protocols/santorini.md``.
"""

from __future__ import annotations

from meeple.protocols.santorini import events, framing, messages, session
from meeple.protocols.santorini.events import *  # noqa: F403
from meeple.protocols.santorini.framing import *  # noqa: F403
from meeple.protocols.santorini.messages import *  # noqa: F403
from meeple.protocols.santorini.session import *  # noqa: F403

__all__ = [*events.__all__, *framing.__all__, *messages.__all__, *session.__all__]
