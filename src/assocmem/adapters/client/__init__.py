"""The memory over HTTP: `Client` (blocking, thread-safe) and `AsyncClient` (asyncio),
each with `Memory`'s methods, arguments and result types, on one pool of kept-alive
httpx connections per client (the ``client`` extra)."""

from assocmem.adapters.client.aio import AsyncClient
from assocmem.adapters.client.sync import Client
from assocmem.adapters.client.wire import DEFAULT_TIMEOUT_S, MAX_BODY_BYTES, from_plain

__all__ = ["DEFAULT_TIMEOUT_S", "MAX_BODY_BYTES", "AsyncClient", "Client", "from_plain",
           "regenerate"]  # fmt: skip


def regenerate() -> None:
    """Rewrite both clients' generated methods from the registry."""
    from assocmem.adapters.client import generate

    generate.regenerate()
