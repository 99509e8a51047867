"""How fast agents reach one served memory through each client: ``assocmem bench clients``.

Two workloads on one store on 127.0.0.1: ``mixed``, ``clients`` concurrent callers each
doing three text reads (k = 5) to one write, where the server's work dominates; and
``get``, one caller fetching one memory by id again and again, where what a call costs
besides the server's work shows. Each runs through:

- ``urllib``: a `Client` whose transport opens a connection per call with the standard
  library, as `Client` did before it kept connections alive (the baseline);
- ``client``: `Client`, one per thread (kept-alive httpx connections);
- ``async``: `AsyncClient`, one per task, every task on one event loop;
- ``mcp``: the MCP SDK's client, one session per task, to ``assocmem mcp --transport
  http`` on the same store, calling the ``read`` and ``write`` tools.

Each transport runs each workload for ``seconds`` per round, in turn, for ``rounds``
rounds (so a slow spell of the machine, or the store growing by the writes, falls on
every transport alike). Reported per workload and transport: calls per second, p50/p95
latency per call, errors; and each one's throughput, p50 and p95 against ``urllib``
measured in the same run.
"""

from __future__ import annotations

import asyncio
import json
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from assocmem import AsyncClient, Client, Memory, StoreUnavailable
from assocmem.adapters.client import wire
from assocmem.progress import bar as progress_bar

from .corpus import Corpus
from .measure import environment, free_port, latency

TRANSPORTS = ("urllib", "client", "async", "mcp")
WORKLOADS = ("mixed", "get")
AGENT = "bench"
NOTES = 2_000  # in the store before the first call
READS_PER_WRITE = 3


class UrllibClient(Client):
    """`Client` with the transport it had before: a new connection per call (stdlib)."""

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        body = wire.request_body(name, self._scope, arguments)
        request = urllib.request.Request(
            f"{self.url}/v1/{name}", data=body, method="POST", headers=wire.headers(None)
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as exc:
            raise wire.error_from(exc.code, exc.read()) from None
        except OSError as exc:
            raise StoreUnavailable(f"cannot reach {self.url}: {exc}") from exc


class Tally:
    """One transport's calls: latencies in milliseconds, errors, time spent."""

    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.errors = 0
        self.seconds = 0.0
        self.lock = threading.Lock()

    def timed(self, started: float, ok: bool) -> None:
        with self.lock:
            if ok:
                self.latencies.append((time.perf_counter() - started) * 1000)
            else:
                self.errors += 1

    def summary(self) -> dict[str, Any]:
        calls = len(self.latencies)
        return {
            "calls": calls,
            "errors": self.errors,
            "calls_per_s": round(calls / self.seconds, 1) if self.seconds else 0.0,
            **(latency(self.latencies) if calls else {}),
        }


Steps = Callable[[int], Iterator[tuple[str, dict[str, Any]]]]  # caller number -> its calls


def mixed(queries: list[str]) -> Steps:
    """Each caller's calls, endlessly: three reads, then a write."""

    def steps(number: int) -> Iterator[tuple[str, dict[str, Any]]]:
        rng = random.Random(number)
        step = 0
        while True:
            step += 1
            if step % (READS_PER_WRITE + 1):
                yield "read", {"query": rng.choice(queries), "k": 5}
            else:
                yield "write", {"text": f"caller {number} note {step}: {rng.choice(queries)}"}

    return steps


def gets(memory_id: str) -> Steps:
    """Each caller's calls, endlessly: a get of one memory."""

    def steps(number: int) -> Iterator[tuple[str, dict[str, Any]]]:
        while True:
            yield "get", {"ids": [memory_id]}

    return steps


def _threaded(make: Callable[[], Client], clients: int, steps: Steps, seconds: float,
              tally: Tally) -> None:  # fmt: skip
    stop = threading.Event()

    def work(number: int) -> None:
        with make() as client:
            for name, arguments in steps(number):
                if stop.is_set():
                    return
                started = time.perf_counter()
                try:
                    getattr(client, name)(**arguments)
                except Exception:  # counted; the run goes on
                    tally.timed(started, False)
                else:
                    tally.timed(started, True)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(clients)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    time.sleep(seconds)
    stop.set()
    for thread in threads:
        thread.join()
    tally.seconds += time.perf_counter() - started


Session = Callable[[int, Steps, Callable[[], bool]], Any]


async def _tasks(session: Session, clients: int, steps: Steps, seconds: float,
                 tally: Tally) -> None:  # fmt: skip
    deadline = time.perf_counter() + seconds
    started = time.perf_counter()
    await asyncio.gather(*(session(n, steps, lambda: time.perf_counter() >= deadline)
                           for n in range(clients)))  # fmt: skip
    tally.seconds += time.perf_counter() - started


def _async_session(url: str, tally: Tally) -> Session:
    async def session(number: int, steps: Steps, done: Callable[[], bool]) -> None:
        async with AsyncClient(url, agent_id=AGENT) as client:
            for name, arguments in steps(number):
                if done():
                    return
                started = time.perf_counter()
                try:
                    await getattr(client, name)(**arguments)
                except Exception:
                    tally.timed(started, False)
                else:
                    tally.timed(started, True)

    return session


def _mcp_session(url: str, tally: Tally) -> Session:
    from mcp.client import Client as McpClient

    async def session(number: int, steps: Steps, done: Callable[[], bool]) -> None:
        async with McpClient(url) as client:
            for name, arguments in steps(number):
                if done():
                    return
                started = time.perf_counter()
                try:
                    result = await client.call_tool(name, arguments)
                except Exception:
                    tally.timed(started, False)
                else:
                    tally.timed(started, not result.is_error)

    return session


@contextmanager
def _process(command: list[str], ready: Callable[[], bool]) -> Iterator[None]:
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not ready():
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{' '.join(command)} did not start")
            time.sleep(0.1)
        yield
    finally:
        process.terminate()
        process.wait(timeout=30)


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1):
            return True
    except OSError:
        return False


def _listens(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def _filled(db: str, seed: int) -> tuple[list[str], str]:
    """Fill the store; the text queries the callers draw from (two corpus words each),
    and the id the ``get`` workload fetches."""
    corpus = Corpus(random.Random(seed), size=5_000)
    with Memory(db, agent_id=AGENT) as mem:
        written = mem.write_many([corpus.memory(i) for i in range(NOTES)])
    return [" ".join(corpus.draw(2)) for _ in range(200)], str(written[0].id)


def _turn(transport: str, url: str, mcp_url: str, callers: int, steps: Steps, seconds: float,
          tally: Tally) -> None:  # fmt: skip
    if transport == "urllib":
        _threaded(lambda: UrllibClient(url, agent_id=AGENT), callers, steps, seconds, tally)
    elif transport == "client":
        _threaded(lambda: Client(url, agent_id=AGENT), callers, steps, seconds, tally)
    elif transport == "async":
        asyncio.run(_tasks(_async_session(url, tally), callers, steps, seconds, tally))
    else:
        asyncio.run(_tasks(_mcp_session(mcp_url, tally), callers, steps, seconds, tally))


def _against(base: dict[str, Any], other: dict[str, Any]) -> dict[str, float]:
    return {
        "throughput": round(other["calls_per_s"] / base["calls_per_s"], 2),
        "p50": round(other["p50_ms"] / base["p50_ms"], 2),
        "p95": round(other["p95_ms"] / base["p95_ms"], 2),
    }


def run(
    out: str, *, clients: int = 8, seconds: float = 10.0, rounds: int = 3, seed: int = 0
) -> dict[str, Any]:
    """Every workload through every transport, ``rounds`` turns of ``seconds`` each;
    writes the JSON report to ``out``."""
    tallies = {(w, t): Tally() for w in WORKLOADS for t in TRANSPORTS}
    with tempfile.TemporaryDirectory(prefix="assocmem-clients-bench-") as folder:
        db = str(Path(folder) / "clients.db")
        queries, first_id = _filled(db, seed)
        workloads = {"mixed": (clients, mixed(queries)), "get": (1, gets(first_id))}
        api_port, mcp_port = free_port(), free_port()
        url, mcp_url = f"http://127.0.0.1:{api_port}", f"http://127.0.0.1:{mcp_port}/mcp"
        serve = [sys.executable, "-m", "assocmem", "--db", db, "serve", "--port", str(api_port)]
        mcp = [sys.executable, "-m", "assocmem", "--db", db, "--agent", AGENT, "mcp",
               "--transport", "http", "--port", str(mcp_port)]  # fmt: skip
        turns = rounds * len(WORKLOADS) * len(TRANSPORTS)
        with (
            _process(serve, lambda: _answers(f"{url}/readyz")),
            _process(mcp, lambda: _listens(mcp_port)),
            progress_bar(turns, desc="clients bench", unit="turn") as bar,
        ):
            for _ in range(rounds):
                for (workload, transport), tally in tallies.items():
                    callers, steps = workloads[workload]
                    _turn(transport, url, mcp_url, callers, steps, seconds, tally)
                    bar.update(1)
    figures = {w: {t: tallies[w, t].summary() for t in TRANSPORTS} for w in WORKLOADS}
    report = {
        "benchmark": "clients",
        "environment": environment(),
        "workload": {"clients": clients, "seconds_per_turn": seconds, "rounds": rounds,
                     "notes": NOTES, "reads_per_write": READS_PER_WRITE, "seed": seed},
        "transports": figures,
        "against_urllib": {
            w: {t: _against(f["urllib"], f[t]) for t in TRANSPORTS[1:]
                if f[t]["calls"] and f["urllib"]["calls"]}
            for w, f in figures.items()
        },
    }  # fmt: skip
    Path(out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return report
