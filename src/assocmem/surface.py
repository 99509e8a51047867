"""The public surface every adapter serves: the `Memory` methods, in one list.

Invariant: the HTTP server, the Python client and the tests that keep them equal
all read this list, so a method added to `Memory` and named here is served,
called and checked everywhere at once. ``True`` marks methods that write.
"""

from __future__ import annotations

REMOTE_METHODS: dict[str, bool] = {
    "write": True,
    "write_many": True,
    "read": False,
    "get": False,
    "export": False,
    "feedback": True,
    "graph": False,
    "stats": False,
    "soft_read": False,
    "declare": True,
    "retract": True,
    "delete_entity": True,
    "traverse": False,
    "reconstruct": False,
    "resolve": False,
    "forget": True,
    "archive": True,
    "restore": True,
    "protect": True,
    "history": False,
    "contradictions": False,
    "end_task": True,
    "retain": True,
}
