"""A LangChain retriever over a memory (the ``langchain`` extra).

`AssocmemRetriever` reads with `read` and gives each item as a `Document`: its text,
its memory id as the document id, and in its metadata the arm that found it, a
one-line why, its score and the read's handle (``read_id``), so an application
that used a document can rate it: ``memory.feedback([doc.id], 1.0, read=doc.metadata
["read_id"])``. The memory is a `Memory` or a `Client`: anything with their `read`.
"""

from __future__ import annotations

from typing import Any

from assocmem.errors import DependencyMissing

try:
    from langchain_core.callbacks import CallbackManagerForRetrieverRun
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    needed = "the LangChain retriever needs `pip install assocmem[langchain]`"
    raise DependencyMissing(needed) from exc


class AssocmemRetriever(BaseRetriever):
    """Documents a memory's `read` returns for a query, best first.

    ``k`` is how many (LangChain's ``k``, also given per call: ``invoke(query, k=3)``);
    ``where`` a hard filter and ``read_options`` any other `read` argument, both
    passed as they are.
    """

    memory: Any
    k: int = 4
    where: dict[str, Any] | None = None
    read_options: dict[str, Any] = {}

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, k: int | None = None
    ) -> list[Document]:
        result = self.memory.read(
            query, k=self.k if k is None else k, where=self.where, **self.read_options
        )
        return [
            Document(
                id=item.id,
                page_content=item.text,
                metadata={
                    "id": item.id,
                    "source": item.source,
                    "why": item.why,
                    "score": item.score,
                    "read_id": result.id,
                    "kind": item.record.kind,
                    "observed_at": item.record.observed_at,
                    "tags": list(item.record.tags),
                },
            )  # fmt: skip
            for item in result.items
        ]
