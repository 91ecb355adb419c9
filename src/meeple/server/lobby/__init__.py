"""The lobby: who plays whom, before a room exists.

- :mod:`.tables`: tables of waiting players for every game and protocol, start rules,
  variants, rejoin tokens, and the rooms the tables become.
- :mod:`.names`: player names, unique across the server and every protocol.
- :mod:`.bots`: server-side bots, seats that play with meeple's AIs.
- :mod:`.contest`, :mod:`.cmpn402_console`: the CMPN402 referee's contests (schedule,
  standings) and the console the admin endpoint and the web page drive.

On a cluster the tables live on the lobby's leader (:mod:`meeple.node.lobby`).
"""
