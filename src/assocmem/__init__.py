"""assocmem: long-term associative memory for AI agents.

Memories are found by words, by meaning, by declared relations and by links the
memory learned from the outcomes of earlier answers; every result says which
path brought it back. One SQLite file by default.
"""

from .embedders import (
    Embedder,
    embedder_names,
    load_embedder,
    register_embedder,
    unregister_embedder,
)
from .errors import (
    AccessDenied,
    AssocmemError,
    DependencyMissing,
    EmbedderError,
    EmbedderMismatch,
    EmbedderUnavailable,
    EmptyText,
    InvalidConcept,
    InvalidInput,
    InvalidOutcome,
    InvalidTime,
    NotFound,
    SchemaTooNew,
    StoreBusy,
    StoreCorrupt,
    StoreError,
    StoreUnavailable,
    TextTooLong,
    UnknownMemory,
)
from .memory import Memory
from .types import (
    Edge,
    FeedbackResult,
    Graph,
    Item,
    ReadResult,
    Record,
    Scope,
    SoftRead,
    Stats,
    Via,
    WriteResult,
)

__version__ = "0.1.0"

__all__ = [
    "AccessDenied",
    "AssocmemError",
    "DependencyMissing",
    "Edge",
    "Embedder",
    "EmbedderError",
    "EmbedderMismatch",
    "EmbedderUnavailable",
    "EmptyText",
    "FeedbackResult",
    "Graph",
    "InvalidConcept",
    "InvalidInput",
    "InvalidOutcome",
    "InvalidTime",
    "Item",
    "Memory",
    "NotFound",
    "ReadResult",
    "Record",
    "SchemaTooNew",
    "Scope",
    "SoftRead",
    "Stats",
    "StoreBusy",
    "StoreCorrupt",
    "StoreError",
    "StoreUnavailable",
    "TextTooLong",
    "UnknownMemory",
    "Via",
    "WriteResult",
    "embedder_names",
    "load_embedder",
    "register_embedder",
    "unregister_embedder",
]
