"""Every error assocmem raises, as one tree rooted at `AssocmemError`.

Backend exceptions (sqlite3, psycopg) are translated at the store boundary to the
most specific class here, with the original kept as ``__cause__``; they never
reach a caller untranslated.

    AssocmemError
    ├── InvalidInput (also ValueError)         bad argument; ``field`` names it
    │   ├── EmptyText
    │   ├── TextTooLong
    │   ├── InvalidConcept
    │   ├── InvalidOutcome
    │   ├── InvalidTime
    │   ├── AliasClash                          an alias already names another entity
    │   └── SelfRatification                    a claim's author tried to ratify it
    ├── NotFound (also LookupError)
    │   ├── UnknownMemory                       an id the caller cannot see
    │   ├── UnknownEntity                       a name no readable entity answers to
    │   └── UnknownRead                         a read handle not kept in the caller's scope
    ├── AccessDenied                            identity or role may not do this
    │   ├── AuthenticationRequired              no valid credentials were presented
    │   ├── PathRefused                         a folder outside the allowed roots
    │   └── OperatorRequired                    operator declarations need the operator role
    ├── EmbedderError
    │   ├── EmbedderUnavailable                 extra not installed / model missing
    │   └── EmbedderMismatch                    store filled by another model or dimension
    ├── DependencyMissing (also ImportError)    an optional extra is needed
    └── StoreError
        ├── StoreBusy                           locked past the busy timeout
        ├── StoreCorrupt                        the file is not a valid store
        ├── SchemaTooNew                        written by a newer assocmem
        └── StoreUnavailable                    cannot open or reach the store
"""

from __future__ import annotations


class AssocmemError(Exception):
    """Base of every error assocmem raises."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidInput(AssocmemError, ValueError):
    """An argument is malformed; ``field`` names the offending argument."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class EmptyText(InvalidInput):
    """A memory's text is empty or only whitespace."""


class TextTooLong(InvalidInput):
    """A memory's text exceeds the documented size limit."""


class InvalidConcept(InvalidInput):
    """A concept is not a non-empty string, or there are too many."""


class InvalidOutcome(InvalidInput):
    """A feedback outcome is not a finite number in [-1, 1]."""


class InvalidTime(InvalidInput):
    """A timestamp is not absolute (timezone-aware) or cannot be parsed."""


class AliasClash(InvalidInput):
    """A declared alias already resolves to another entity in the same scope layer."""


class NotFound(AssocmemError, LookupError):
    """Something named by the caller does not exist in the caller's view."""


class UnknownMemory(NotFound):
    """A memory id is unknown or not readable by the caller."""

    def __init__(self, message: str, *, record_id: str | None = None) -> None:
        super().__init__(message)
        self.record_id = record_id


class UnknownEntity(NotFound):
    """No entity the caller can read answers to this name or alias."""


class UnknownRead(NotFound):
    """A read handle (`ReadResult.id`) that no read of the caller's scope kept: made
    elsewhere, forgotten with what it returned, or pruned (reads are kept a bounded
    number per scope)."""


class AccessDenied(AssocmemError):
    """The caller's identity or role may not perform this operation."""


class AuthenticationRequired(AccessDenied):
    """No valid API key was presented."""


class PathRefused(AccessDenied):
    """A folder this memory may not read or write (a served vault outside the
    operator's roots); ``field`` names the argument that gave it."""

    def __init__(self, message: str, *, field: str | None = "path") -> None:
        super().__init__(message)
        self.field = field


class OperatorRequired(AccessDenied):
    """Declaring as the operator, or removing what the operator declared, by a caller
    without the operator role (a served key lacking ``"operator"``); ``field`` names
    the argument that asked for it."""

    def __init__(self, message: str, *, field: str | None = "declared_by") -> None:
        super().__init__(message)
        self.field = field


class EmbedderError(AssocmemError):
    """Base of embedder problems."""


class EmbedderUnavailable(EmbedderError):
    """The embedder cannot be loaded (extra missing, model files absent)."""


class EmbedderMismatch(EmbedderError):
    """The store's vectors were made by another model or dimension."""


class DependencyMissing(AssocmemError, ImportError):
    """An optional dependency is needed; the message says which extra installs it."""


class StoreError(AssocmemError):
    """Base of storage problems."""


class StoreBusy(StoreError):
    """The store stayed locked by another writer past the busy timeout."""


class StoreCorrupt(StoreError):
    """The file is not a database, or fails its integrity check."""


class SchemaTooNew(StoreError):
    """The store was migrated by a newer assocmem than this one."""


class StoreUnavailable(StoreError):
    """The store cannot be opened or reached."""


# -- trust: attribution -------------------------------------


class SelfRatification(InvalidInput):
    """A claim's own author tried to ratify it; ``field`` is ``by_key``."""
