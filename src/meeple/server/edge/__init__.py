"""The edge: sockets, sessions and one dialect per protocol.

A listener (:mod:`.tcp` for the TCP protocols, :mod:`.cmpn402` for the WebSocket one)
accepts connections; each connection's handler speaks its protocol through the
sans-I/O session in :mod:`meeple.protocols` and is also its *seat*: it turns requests
into lobby calls and room commands, and the room's deliveries into its protocol's
messages. Nothing here owns a game. In ``meeple serve`` the lobby and the rooms are in
the same process; on a cluster edge (:mod:`meeple.node.edge`) the same handlers talk to
an ``EdgeLobby`` and ``RemoteRoom`` over the bus.

- :mod:`.tcp`: listeners and connections for every TCP protocol (framing, idle
  watchdog, write limits); :mod:`.limits`: connections per address, message budgets.
- :mod:`.twente`, :mod:`.clarkson`: the Scrabble dialects over TCP.
- :mod:`.cmpn402`: the referee's WebSocket listener, heartbeat, admin endpoint.
- :mod:`.santorini`: the AM27 dialect; :mod:`.spectrangle`: the Spectrangle 1.4 dialect.
"""
