"""Rooms: one actor per running game, owning the engine and the seats.

A room drains one inbox of seat commands; each command is logged (the action log,
:mod:`meeple.server.store.journal` in ``meeple serve``, a JetStream stream on a
cluster) before the engine applies it, and each result is delivered to the seats
(their own view) and published on the feed (the spectators' view). A room never sees
a socket: its seats are the edge's handlers, server bots, browsers, or on a cluster
``RemoteSeat``s on another node.

- :mod:`.room`: the actor, the write-ahead log, seats, rejoin, clocks.
- :mod:`.scrabble`, :mod:`.santorini`, :mod:`.spectrangle`: one room per game, with its
  commands and deliveries and how it is rebuilt from its log.
- :mod:`.cmpn402`: the CMPN402 referee (two agents, clocks, challenges, a log per game).
- :mod:`.timecontrol`: the tables' clocks; :mod:`.recovery`: every unfinished room
  replayed from its log at start.
"""
