"""One system's run of the peers workload, in a process of its own: a script run by path.

``python peer_run.py SYSTEM WORKLOAD FOLDER OUT`` opens a fresh store of SYSTEM in
FOLDER, writes every text of the WORKLOAD file with one call each, runs its queries,
closes the store and writes the figures to OUT as JSON. ``python peer_run.py
--probe SYSTEM`` prints whether SYSTEM is importable here, and its version.

It needs only the standard library and the system under test, so a peer whose
requirements clash with assocmem's (cpersona pins mcp<2) runs under the interpreter
of its own virtual environment. Each system is used through its public API as its
README shows it, with no model fetched at run time and no network.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import importlib.util
import json
import os
import resource
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

AGENT = "bench"


class Assocmem:
    """One SQLite file in WAL mode; text only, concepts extracted by assocmem."""

    module = "assocmem"

    def __init__(self, folder: Path, workload: dict[str, Any]) -> None:
        from assocmem import Memory

        self.memory = Memory(
            str(folder / "assocmem.db"), agent_id=AGENT, embedder=workload.get("embedder")
        )

    def write(self, text: str) -> None:
        self.memory.write(text)

    def query(self, text: str, k: int) -> int:
        return len(self.memory.read(text, k=k).items)

    def close(self) -> None:
        self.memory.close()


class Cpersona:
    """Its MCP tools ``store`` and ``recall``, awaited in-process as its server dispatches
    them, over one SQLite file; no embedding server, so recall is FTS5 plus keywords."""

    module = "cpersona"

    def __init__(self, folder: Path, workload: dict[str, Any]) -> None:
        # cpersona reads its settings from the environment when imported.
        os.environ.update(
            CPERSONA_DB_PATH=str(folder / "cpersona.db"),
            CPERSONA_EMBEDDING_MODE="none",
            CPERSONA_UPDATE_CHECK="false",  # its startup asks PyPI for a newer release
        )
        from cpersona import database, server

        self.database = database
        self.tools = server.registry._handlers  # what an MCP tools/call dispatches to
        self.loop = asyncio.new_event_loop()
        self.loop.run_until_complete(database.init_db())

    async def write(self, text: str) -> None:
        result = await self.tools["store"]({"agent_id": AGENT, "content": text})
        if result.get("ok") is False:
            raise RuntimeError(f"store refused: {result}")

    async def query(self, text: str, k: int) -> int:
        result = await self.tools["recall"]({"agent_id": AGENT, "query": text, "limit": k})
        return len(result.get("messages") or [])

    def close(self) -> None:
        self.loop.run_until_complete(self.database.close_db())
        self.loop.close()


class Inspeximus:
    """``Inspeximus(path)``: a SQLite file; no embedder, so recall is lexical overlap."""

    module = "inspeximus"

    def __init__(self, folder: Path, workload: dict[str, Any]) -> None:
        from inspeximus import Inspeximus as Store

        self.store = Store(str(folder / "memory.db"))

    def write(self, text: str) -> None:
        self.store.remember(text)

    def query(self, text: str, k: int) -> int:
        return len(self.store.recall(text, k=k))

    def close(self) -> None:
        close = getattr(self.store, "close", None)
        if close is not None:
            close()


class Hebbmem:
    """``HebbMem(encoder="hash")``: an in-memory graph, saved to one SQLite file on close
    (``save``); its writes are not on disk until then."""

    module = "hebbmem"

    def __init__(self, folder: Path, workload: dict[str, Any]) -> None:
        from hebbmem import HebbMem

        self.path = folder / "memory.hebb"
        self.memory = HebbMem(encoder="hash")  # "auto" would fetch a model from the hub

    def write(self, text: str) -> None:
        self.memory.store(text)

    def query(self, text: str, k: int) -> int:
        return len(self.memory.recall(text, top_k=k))

    def close(self) -> None:
        self.memory.save(self.path)


class Mem0:
    """``Memory.from_config``: local Qdrant on disk, the packaged all-MiniLM-L6-v2 through
    its HuggingFace embedder, ``add(..., infer=False)`` so no LLM is called."""

    module = "mem0"

    def __init__(self, folder: Path, workload: dict[str, Any]) -> None:
        os.environ["MEM0_DIR"] = str(folder / "mem0-home")  # else ~/.mem0
        os.environ["MEM0_TELEMETRY"] = "false"
        from mem0 import Memory

        self.memory = Memory.from_config(
            {
                "vector_store": {
                    "provider": "qdrant",
                    "config": {
                        "collection_name": AGENT,
                        "path": str(folder / "qdrant"),
                        "on_disk": True,
                        "embedding_model_dims": 384,
                    },
                },
                "embedder": {
                    "provider": "huggingface",
                    "config": {
                        "model": workload["model_dir"],
                        "model_kwargs": {"local_files_only": True},
                    },
                },
                # Required to construct; never called, as every add passes infer=False.
                "llm": {"provider": "openai", "config": {"api_key": "not-used"}},
                "history_db_path": str(folder / "history.db"),
            }
        )

    def write(self, text: str) -> None:
        self.memory.add(text, user_id=AGENT, infer=False)

    def query(self, text: str, k: int) -> int:
        # threshold 0: return k like every other system, not only the close ones
        found = self.memory.search(text, top_k=k, filters={"user_id": AGENT}, threshold=0.0)
        return len(found.get("results", []))

    def close(self) -> None:
        self.memory.close()


# Each system by the name of its distribution on PyPI.
SYSTEMS: dict[str, Any] = {
    "assocmem": Assocmem,
    "cpersona": Cpersona,
    "inspeximus": Inspeximus,
    "hebbmem": Hebbmem,
    "mem0ai": Mem0,
}


def probe(system: str) -> dict[str, Any]:
    """Whether ``system`` can be imported by this interpreter, without importing it."""
    if importlib.util.find_spec(SYSTEMS[system].module) is None:
        return {"available": False}
    return {"available": True, "version": importlib.metadata.version(system)}


def run(system: str, workload: dict[str, Any], folder: Path) -> dict[str, Any]:
    """Open, write every text, run every query, close: the figures of one run."""
    if workload.get("torch_threads"):
        import torch

        torch.set_num_threads(workload["torch_threads"])
    start = time.perf_counter()
    store = SYSTEMS[system](folder, workload)
    opened = time.perf_counter() - start
    writes, _ = _timed(store, store.write, [(text,) for text in workload["texts"]])
    k = workload["k"]
    asked = [(q, k) for q in workload["queries"]]
    queries, returned = _timed(store, store.query, asked, workload.get("query_budget_s"))
    start = time.perf_counter()
    store.close()
    closed = time.perf_counter() - start
    return {
        "open_s": round(opened, 3),
        "write_s": writes,
        "query_ms": [round(s * 1000, 4) for s in queries],
        "returned": returned,
        "close_s": round(closed, 3),
        "disk_bytes": sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()),
        "rss_peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def _timed(
    store: Any,
    call: Callable[..., Any],
    calls: list[tuple[Any, ...]],
    budget_s: float | None = None,
) -> tuple[list[float], list[Any]]:
    """Each call's seconds and answer, stopping once the calls have taken ``budget_s``;
    a coroutine ``call`` is awaited inside one coroutine on the store's event loop, so
    no call pays for entering the loop."""
    seconds: list[float] = []
    answers: list[Any] = []
    left = iter(calls if budget_s is None else _within(calls, seconds, budget_s))

    async def each_async() -> None:
        for args in left:
            start = time.perf_counter()
            answers.append(await call(*args))
            seconds.append(time.perf_counter() - start)

    if asyncio.iscoroutinefunction(call):
        store.loop.run_until_complete(each_async())
        return seconds, answers
    for args in left:
        start = time.perf_counter()
        answers.append(call(*args))
        seconds.append(time.perf_counter() - start)
    return seconds, answers


def _within(
    calls: list[tuple[Any, ...]], seconds: list[float], budget_s: float
) -> Iterator[tuple[Any, ...]]:
    for args in calls:
        if sum(seconds) > budget_s:
            return
        yield args


def main(argv: list[str]) -> int:
    if argv[:1] == ["--probe"]:
        print(json.dumps(probe(argv[1])))
        return 0
    system, workload, folder, out = argv
    figures = run(system, json.loads(Path(workload).read_text(encoding="utf-8")), Path(folder))
    Path(out).write_text(json.dumps(figures), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
