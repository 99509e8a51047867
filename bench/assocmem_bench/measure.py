"""What every benchmark reports the same way: latency percentiles, memory use, the machine."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import resource
import socket
import sqlite3
import statistics
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from assocmem import Memory


def percentile(samples: Sequence[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def latency(samples_ms: Sequence[float], digits: int = 3) -> dict[str, float]:
    """p50, p95 and mean of latencies in milliseconds."""
    return {
        "p50_ms": round(percentile(samples_ms, 0.50), digits),
        "p95_ms": round(percentile(samples_ms, 0.95), digits),
        "mean_ms": round(statistics.fmean(samples_ms), digits),
    }


def rss_mb() -> float:
    """This process's resident memory now (Linux ``/proc``; 0.0 where it cannot be read)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            pages = int(statm.read().split()[1])
    except (OSError, IndexError, ValueError):
        return 0.0
    return round(pages * os.sysconf("SC_PAGE_SIZE") / 2**20, 1)


def peak_rss_mb() -> float:
    """The most resident memory this process has held (``ru_maxrss`` is in KiB on Linux)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


# Installed packages whose version can change a benchmark's figures: a model's
# runtime rounds its vectors its own way (an embedder's rankings, and the recall
# behind them, move with it), the vector libraries build their graphs theirs.
VERSIONED = (
    "assocmem", "numpy", "onnxruntime", "tokenizers", "sentence-transformers", "torch",
    "faiss-cpu", "usearch", "hnswlib",
)  # fmt: skip


def environment(**extra: Any) -> dict[str, Any]:
    """The machine a benchmark ran on, the versions of the installed packages of
    `VERSIONED`, plus what the benchmark adds (backend, model)."""
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "packages": installed(VERSIONED),
        **extra,
    }


def installed(names: Sequence[str]) -> dict[str, str]:
    """``{name: version}`` of those of ``names`` installed here."""
    found = {}
    for name in names:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return found


def free_port() -> int:
    """A port on 127.0.0.1 nothing listens on now, for a server a benchmark starts."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def sqlite_connection(mem: Memory) -> sqlite3.Connection:
    """The sqlite3 connection under a SQLite memory: the one its calls run on."""
    conn: Any = mem._store._conn
    return getattr(conn, "_conn", conn)  # type: ignore[no-any-return]
