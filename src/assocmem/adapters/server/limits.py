"""The bounds the server holds its clients to, with the reason for each default.

Invariant: standard library only, so the CLI shows these defaults in ``serve --help``
without the ``server`` extra; `gate` and `connections` enforce them.
"""

from __future__ import annotations

# Requests larger than this are refused (413) before they are parsed: a batch of
# the largest memories a single call should carry, not a way to fill the disk.
MAX_BODY_BYTES = 8 * 1024 * 1024
# A refused body is still read (and dropped) up to this much, so the client has finished
# sending and reads the answer rather than a reset connection; past it, it is cut off.
DRAIN_BYTES = 4 * MAX_BODY_BYTES
# The whole body must arrive within this many seconds of its head: `MAX_BODY_BYTES` at
# about 1 Mbit/s, a slow uplink; a client slower than that holds a connection, not a call.
BODY_TIMEOUT = 60.0
# Any real client writes a request head at once; this covers many round trips of a slow
# link, and bounds how long a client that trickles its head holds a connection.
HEADER_TIMEOUT = 10.0
# uvicorn's own default: a client reuses a connection within moments or not at all.
KEEP_ALIVE_TIMEOUT = 5
# Connections served at once: many agents each keeping a connection open between calls,
# while the store runs one writer and a few readers; idle ones are shed first at the bound.
MAX_CONNECTIONS = 1000
