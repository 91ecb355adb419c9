"""The asyncio runtime of ``meeple serve``, in folders by role.

One command's path: a socket's bytes reach a listener in :mod:`.edge`, whose protocol
session parses them and whose handler (the connection's seat) makes a lobby call
(:mod:`.lobby`) or a room command; the command waits in the room's inbox
(:mod:`.rooms`), is appended to the room's action log (:mod:`.store`), then applied to
the engine (:mod:`meeple.games`); the room delivers each seat its view and publishes the
spectators' view on the feed (:mod:`.feed`), which the web (:mod:`meeple.web`) writes to
every viewer.

- :mod:`.edge`: listeners, sessions, one dialect per protocol.
- :mod:`.rooms`: one room per game, the CMPN402 referee included.
- :mod:`.lobby`: tables, names, server bots, contests.
- :mod:`.store`: the action log's journal, records and ratings (SQLite, PostgreSQL).
- :mod:`.app` (start every listener, shut down), :mod:`.config`, :mod:`.clock` (every
  timer on one injectable clock), :mod:`.feed` (rooms and lobby to viewers).

What crosses processes on a cluster (:mod:`meeple.node`, :mod:`meeple.bus`): the same
lobby calls and room commands as requests, each seat's deliveries and the spectators'
views as messages; the roles there reuse these modules unchanged.
"""
