"""Reliability and security figures of the HTTP server, measured on 127.0.0.1.

- load: concurrent clients doing mixed write/read/feedback for a while: requests/s
  and p50/p95 latency; afterwards every acknowledged write must be in the store and
  each client's learned link weight must equal what its acknowledged feedback
  taught, replayed in order (0 lost); and the size of the SQLite WAL, sampled
  through the load (max) and once it ends (end), beside the database file;
- crash: the same load, the server killed with SIGKILL mid-run and restarted:
  every acknowledged write present and ``PRAGMA integrity_check`` ok;
- fuzz: schemathesis against the served OpenAPI schema, a bounded number of cases
  per operation, counting server errors (5xx).

Each client writes with its own agent key, so the weights it taught can be checked
exactly: every feedback call moves the link between the client's query concept
and its own concept, by a share only the client's own calls decide.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assocmem import AssocmemError, Memory, StoreUnavailable
from assocmem.adapters.client import Client
from assocmem.adapters.server.keys import add_key
from assocmem.progress import bar as progress_bar

from .measure import environment, free_port, latency


@dataclass
class Worker:
    """One client's acknowledged work and latencies."""

    number: int
    key: str
    written: list[str] = field(default_factory=list)
    rated: list[str] = field(default_factory=list)  # acknowledged feedback, in order
    # Feedback sent but never answered (the server died or refused mid-call): it may or
    # may not have committed, so the weight may count each one or not.
    unanswered: list[tuple[int, str]] = field(default_factory=list)  # (place in rated, id)
    latencies: list[float] = field(default_factory=list)
    errors: int = 0


def _serve(db: str, keys: str, port: int) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        [sys.executable, "-m", "assocmem", "--db", db, "serve", "--port", str(port),
         "--keys", keys],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=1):
                return process
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("server did not start")


def _work(url: str, worker: Worker, stop: threading.Event) -> None:
    client = Client(url, worker.key, timeout=30)
    n = worker.number
    step = 0
    while not stop.is_set():
        step += 1
        start = time.perf_counter()
        try:
            if step % 10 < 5 or not worker.written:
                concepts = [f"own{n}", "shared", f"topic{step % 10}"]
                result = client.write(f"worker {n} note {step}", concepts=concepts)
                if result.id:
                    worker.written.append(result.id)
            elif step % 10 < 8:
                client.read(f"worker {n} note topic{step % 10}", k=5)
            else:
                try:
                    client.feedback([worker.written[-1]], 1.0, query_concepts=[f"q{n}"])
                except StoreUnavailable:
                    worker.unanswered.append((len(worker.rated), worker.written[-1]))
                    raise
                worker.rated.append(worker.written[-1])
        except AssocmemError:
            worker.errors += 1
            time.sleep(0.05)  # the server is down or refusing: do not spin
            continue
        worker.latencies.append((time.perf_counter() - start) * 1000)


def _load(url: str, workers: list[Worker], seconds: float) -> float:
    stop = threading.Event()
    threads = [threading.Thread(target=_work, args=(url, w, stop)) for w in workers]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    time.sleep(seconds)
    stop.set()
    for thread in threads:
        thread.join()
    return time.perf_counter() - start


def taught_weight(rated: list[str]) -> float:
    """The weight the link from a client's query concept to its own concept must have
    after these ratings (outcome 1 each, in order): each moves it by the rated note's
    share of what the query concept was taught so far (see `assocmem.links.lessons`)."""
    weight, taught, lessons = 0.0, 0, dict[str, int]()
    for memory_id in rated:
        taught += 1
        lessons[memory_id] = lessons.get(memory_id, 0) + 1
        weight += lessons[memory_id] / taught
    return weight


def _verify(db: str, workers: list[Worker]) -> dict[str, int]:
    """Acknowledged writes missing, and clients whose learned weight is off."""
    missing = wrong = 0
    for worker in workers:
        with Memory(db, agent_id=f"agent{worker.number}") as mem:
            stored = {r.id for r in mem.export()}
            missing += len(set(worker.written) - stored)
            edges = {(e.source, e.target): e for e in mem.graph([f"q{worker.number}"]).edges}
            edge = edges.get((f"q{worker.number}", f"own{worker.number}"))
            weight = edge.weight if edge else 0.0
            # Exactly the acknowledged ratings, or those with one unanswered call that
            # committed before its answer was lost, at the place it was sent.
            rated = worker.rated
            allowed = [taught_weight(rated)] + [
                taught_weight([*rated[:at], memory_id, *rated[at:]])
                for at, memory_id in worker.unanswered
            ]
            wrong += all(abs(weight - w) > 1e-9 for w in allowed)
    unanswered = sum(len(w.unanswered) for w in workers)
    return {
        "acknowledged_writes_missing": missing,
        "clients_with_wrong_weight": wrong,
        "feedback_unanswered": unanswered,
    }


def _size_mb(path: str) -> float:
    try:
        return os.stat(path).st_size / 1e6
    except OSError:
        return 0.0


def _sample_wal(db: str, stop: threading.Event, peak: list[float]) -> None:
    """Keep the largest size of ``db``'s WAL seen until ``stop`` in ``peak[0]``."""
    while not stop.wait(0.05):
        peak[0] = max(peak[0], _size_mb(db + "-wal"))


def load_test(folder: Path, clients: int, seconds: float) -> dict[str, Any]:
    db, keys, port = str(folder / "load.db"), str(folder / "keys.json"), free_port()
    workers = [Worker(n, add_key(keys, f"agent{n}")[1]) for n in range(clients)]
    server = _serve(db, keys, port)
    peak, sampled = [0.0], threading.Event()
    sampler = threading.Thread(target=_sample_wal, args=(db, sampled, peak))
    sampler.start()
    try:
        elapsed = _load(f"http://127.0.0.1:{port}", workers, seconds)
        time.sleep(1.0)  # the server's last commits and checkpoints settle
    finally:
        sampled.set()
        sampler.join()
        wal_end, db_end = _size_mb(db + "-wal"), _size_mb(db)
        server.terminate()
        server.wait(timeout=30)
    latencies = [ms for w in workers for ms in w.latencies]
    return {
        "clients": clients,
        "seconds": round(elapsed, 1),
        "requests": len(latencies),
        "requests_per_s": round(len(latencies) / elapsed, 1),
        **latency(latencies, digits=2),
        "errors": sum(w.errors for w in workers),
        "writes_acknowledged": sum(len(w.written) for w in workers),
        "feedback_acknowledged": sum(len(w.rated) for w in workers),
        "wal_max_mb": round(max(peak[0], wal_end), 2),
        "wal_end_mb": round(wal_end, 2),
        "db_mb": round(db_end, 2),
        **_verify(db, workers),
    }


def crash_test(folder: Path, clients: int, seconds: float) -> dict[str, Any]:
    db, keys, port = str(folder / "crash.db"), str(folder / "crash-keys.json"), free_port()
    workers = [Worker(n, add_key(keys, f"agent{n}")[1]) for n in range(clients)]
    server = _serve(db, keys, port)
    killer = threading.Timer(seconds / 2, lambda: os.kill(server.pid, signal.SIGKILL))
    killer.start()
    _load(f"http://127.0.0.1:{port}", workers, seconds)
    killer.join()
    server.wait(timeout=30)
    restarted = _serve(db, keys, port)
    try:
        verified = _verify(db, workers)
    finally:
        restarted.terminate()
        restarted.wait(timeout=30)
    with sqlite3.connect(db) as conn:
        integrity = conn.execute("PRAGMA integrity_check").fetchone()[0]
    return {
        "killed_after_s": seconds / 2,
        "writes_acknowledged": sum(len(w.written) for w in workers),
        "feedback_acknowledged": sum(len(w.rated) for w in workers),
        "requests_failed_by_the_kill": sum(w.errors for w in workers),
        "integrity_check": integrity,
        **verified,
    }


def fuzz_test(folder: Path, examples: int) -> dict[str, Any]:
    db, keys, port = str(folder / "fuzz.db"), str(folder / "fuzz-keys.json"), free_port()
    _, key = add_key(keys, "fuzzer")
    server = _serve(db, keys, port)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "schemathesis.cli", "run",
             f"http://127.0.0.1:{port}/openapi.json", "--checks", "not_a_server_error",
             "--max-examples", str(examples), "-H", f"Authorization: Bearer {key}",
             "--workers", "1", "--phases", "examples,coverage,fuzzing"],
            capture_output=True, text=True, timeout=3600, cwd=folder,  # its cache stays there
        )  # fmt: skip
        alive = server.poll() is None
    finally:
        server.terminate()
        server.wait(timeout=30)
    output = done.stdout + done.stderr
    return {
        "max_examples_per_operation": examples,
        "exit_code": done.returncode,
        "server_errors_5xx": _count(r"(\d+)\s+failures?", output) if done.returncode else 0,
        "cases": _count(r"(\d+) generated", output),
        "server_still_running": alive,
        "summary": output.strip().splitlines()[-12:],
    }


def _count(pattern: str, text: str) -> int:
    found = re.findall(pattern, text)
    return sum(int(n) for n in found)


def run(out: str, *, clients: int = 8, seconds: float = 60.0, examples: int = 50) -> dict[str, Any]:
    """All three measurements; writes the JSON report to ``out``."""
    with (
        tempfile.TemporaryDirectory(prefix="assocmem-server-bench-") as folder,
        progress_bar(3, desc="server bench", unit="part") as bar,
    ):
        report = {"benchmark": "server", "environment": environment(sqlite=sqlite3.sqlite_version)}
        report["load"] = load_test(Path(folder), clients, seconds)
        bar.update(1)
        report["crash"] = crash_test(Path(folder), clients, min(seconds, 20.0))
        bar.update(1)
        report["fuzz"] = fuzz_test(Path(folder), examples)
        bar.update(1)
    Path(out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return report
