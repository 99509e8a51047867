"""Embedders: the protocol every vector model implements, and the registry that names them.

An embedder declares what it is in attributes (``model_id``, ``dims``,
``batch_size``, ``normalized``) and implements one method, ``embed_batch``;
batching and normalisation live in the base class. Embedders are found by name
through `register_embedder` or the ``assocmem.embedders`` entry-point group, so
a test's toy model and a user's plugin travel the same path as the built-ins.

Invariant: a vector returned by `Embedder.embed` is float32, ``dims`` wide and
L2-normalised, so cosine similarity is a dot product everywhere downstream.
Nothing here loads a model at import time or reaches the network unless the
caller chose the HTTP embedder.
"""

from __future__ import annotations

import abc
import inspect
from collections.abc import Callable, Sequence
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any

from assocmem.errors import EmbedderUnavailable, InvalidInput
from assocmem.optional import require_numpy

if TYPE_CHECKING:
    import numpy as np

ENTRY_POINT_GROUP = "assocmem.embedders"


class Embedder(abc.ABC):
    """Turns texts into vectors.

    Subclasses set the attributes and implement `embed_batch`:

    - ``model_id``: names the model *and* its settings; a store filled by one
      model id refuses another.
    - ``dims``: the vector width.
    - ``batch_size``: how many texts `embed_batch` receives at most.
    - ``normalized``: True when `embed_batch` already returns unit vectors.

    `for_store` lets a name stand for a family of forms (the default ``minilm``)
    and choose the one a store's vectors came from.
    """

    model_id: str
    dims: int
    batch_size: int = 32
    normalized: bool = False

    @abc.abstractmethod
    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for at most ``batch_size`` texts, shape ``(len(texts), dims)``."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit float32 vectors for any number of texts, embedded in batches."""
        numpy = require_numpy()
        if not texts:
            empty: np.ndarray = numpy.zeros((0, self.dims), dtype=numpy.float32)
            return empty
        parts = [
            numpy.asarray(self.embed_batch(texts[i : i + self.batch_size]), dtype=numpy.float32)
            for i in range(0, len(texts), self.batch_size)
        ]
        vectors = numpy.concatenate(parts)
        if vectors.shape != (len(texts), self.dims):
            raise EmbedderUnavailable(
                f"embedder {self.model_id!r} returned shape {vectors.shape}, "
                f"expected ({len(texts)}, {self.dims})"
            )
        if not self.normalized:
            norms = numpy.linalg.norm(vectors, axis=1, keepdims=True)
            vectors = vectors / numpy.maximum(norms, 1e-12)
        result: np.ndarray = vectors.astype(numpy.float32, copy=False)
        return result

    def embed_one(self, text: str) -> np.ndarray:
        """The unit vector of one text."""
        row: np.ndarray = self.embed([text])[0]
        return row

    def for_store(self, recorded: str | None) -> Embedder:
        """The embedder to run on a store whose vectors came from model ``recorded``
        (None: a store with no record yet). An embedder that stands for several forms
        of a model picks one here; any other is itself."""
        return self


EmbedderFactory = Callable[..., Embedder]
_REGISTRY: dict[str, EmbedderFactory] = {}
_plugins_loaded = False


def register_embedder(name: str, factory: EmbedderFactory) -> None:
    """Make ``factory`` available as ``name`` to `load_embedder` and ``Memory(embedder=name)``."""
    _REGISTRY[name] = factory


def unregister_embedder(name: str) -> None:
    """Remove a registered name (tests register fakes and remove them afterwards)."""
    _REGISTRY.pop(name, None)


def embedder_names() -> list[str]:
    """Every embedder name that can be loaded, sorted."""
    _load_plugins()
    return sorted(_REGISTRY)


def load_embedder(name: str, **options: Any) -> Embedder:
    """Build the embedder registered as ``name`` with ``options``.

    Required options left out (``openai`` needs its endpoint, model and width)
    are an `InvalidInput` naming them, not a bare ``TypeError``.
    """
    _load_plugins()
    if name not in _REGISTRY:
        raise InvalidInput(
            f"unknown embedder {name!r}; known: {', '.join(sorted(_REGISTRY))}", field="embedder"
        )
    factory = _REGISTRY[name]
    missing = _missing_options(factory, options)
    if missing:
        example = ", ".join(f"{option}=..." for option in missing)
        raise InvalidInput(
            f"embedder {name!r} needs {', '.join(missing)}: pass "
            f"Memory(embedder=load_embedder({name!r}, {example})), or from the command line "
            "and the server ASSOCMEM_EMBEDDER_URL, ASSOCMEM_EMBEDDER_MODEL and "
            "ASSOCMEM_EMBEDDER_DIMS",
            field="embedder",
        )
    return factory(**options)


def _missing_options(factory: EmbedderFactory, options: dict[str, Any]) -> list[str]:
    """The required options of ``factory`` that ``options`` lacks (none when unknowable)."""
    try:
        parameters = inspect.signature(factory).parameters.values()
    except ValueError:  # no signature to read: the factory itself will say
        return []
    named = (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [
        p.name
        for p in parameters
        if p.kind in named and p.default is inspect.Parameter.empty and p.name not in options
    ]


def _load_plugins() -> None:
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    for plugin in entry_points(group=ENTRY_POINT_GROUP):
        register_embedder(plugin.name, plugin.load())
