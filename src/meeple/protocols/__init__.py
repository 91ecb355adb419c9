"""Sans-I/O wire protocols: bytes in, typed messages out, and back; no sockets, tasks or clocks."""
