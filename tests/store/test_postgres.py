"""The PostgreSQL store: migrations under concurrent starts, connection loss, lock
waits, pgvector and its fallback, and two servers over one database.

Everything the two backends share runs in the other modules on both; this module
holds what only PostgreSQL has.
"""

from __future__ import annotations

import multiprocessing
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest

pytest.importorskip("psycopg")

import psycopg  # noqa: E402

from assocmem import (
    Memory,
    SchemaTooNew,
    StoreBusy,
    StoreUnavailable,
    register_embedder,
    unregister_embedder,
)
from assocmem.adapters.client import Client  # noqa: E402
from assocmem.capabilities import migrations  # noqa: E402
from assocmem.links.wording import USES_COUNTED  # noqa: E402
from assocmem.store import postgres as pg_store  # noqa: E402
from assocmem.store.params import KEYED  # noqa: E402
from assocmem.testing import ToyEmbedder  # noqa: E402
from tests.conftest import fresh_database, raw_query  # noqa: E402


@pytest.fixture
def url(postgres_server: str) -> str:
    return fresh_database(postgres_server)


def _open_and_close(url: str, barrier: Any) -> None:
    barrier.wait()
    Memory(url, agent_id="ops").close()


@pytest.mark.slow
def test_servers_starting_together_migrate_once(url: str) -> None:
    context = multiprocessing.get_context("spawn")
    barrier = context.Manager().Barrier(4)
    with context.Pool(4) as pool:
        for job in [pool.apply_async(_open_and_close, (url, barrier)) for _ in range(4)]:
            job.get(timeout=120)
    names = raw_query(url, "SELECT name FROM schema_migrations ORDER BY name")
    assert [n for (n,) in names] == [name for name, _ in migrations("postgres")]


def test_a_database_from_a_newer_version_is_refused(url: str) -> None:
    Memory(url).close()
    raw_query(url, "INSERT INTO schema_migrations VALUES ('9999_future', '2030-01-01')")
    with pytest.raises(SchemaTooNew, match="9999_future"):
        Memory(url)


def test_text_link_times_from_before_0006_become_microseconds(url: str) -> None:
    with Memory(url, agent_id="ops") as mem:
        mem.write("Backoff fixed the flaky call.", concepts=["retry", "backoff"])
    raw_query(  # put the column back as 0006 found it
        url,
        "ALTER TABLE links ALTER COLUMN updated_at TYPE TEXT USING '2024-05-01T12:00:00.000001Z'",
    )
    raw_query(url, "DELETE FROM schema_migrations WHERE name = '0006_link_times_in_micros'")
    with Memory(url, agent_id="ops") as mem:
        (edge,) = mem.graph(["retry"]).edges
        assert (edge.count, edge.updated_at) == (1, "2024-05-01T12:00:00.000001Z")


def test_an_unreachable_server_is_reported_without_the_password() -> None:
    with pytest.raises(StoreUnavailable) as caught:
        Memory("postgresql://someone:hunter2@127.0.0.1:9/nowhere")
    assert "hunter2" not in str(caught.value)


def test_a_dropped_connection_is_reopened_between_transactions(url: str) -> None:
    with Memory(url, agent_id="ops") as mem:
        mem.write("before the restart", concepts=["restart"])
        dropped = mem._store._conn.raw  # type: ignore[attr-defined]
        raw_query(
            url,
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()",
        )
        assert mem.write("after the restart", concepts=["restart"]).stored
        assert dropped.closed and mem._store._conn.raw is not dropped  # type: ignore[attr-defined]
        assert {i.text for i in mem.read(concepts=["restart"]).items} == {
            "before the restart",
            "after the restart",
        }


def test_a_writer_locked_out_gets_store_busy(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pg_store, "LOCK_TIMEOUT", "200ms")
    mem = Memory(url, agent_id="ops")
    with psycopg.connect(url) as blocker:  # holds the writers' lock in an open transaction
        blocker.execute("SELECT pg_advisory_xact_lock(%s)", [pg_store.WRITE_LOCK])
        with pytest.raises(StoreBusy):
            mem.write("blocked", concepts=["x"])
        assert mem.read(concepts=["x"]).items == ()  # readers never wait for the writer
    assert mem.write("now it goes through", concepts=["x"]).stored
    assert mem.stats().memories == 1
    mem.close()


def test_concurrent_feedback_through_many_connections_is_exact(url: str) -> None:
    with Memory(url, agent_id="ops") as mem:
        target = mem.write("the fix", concepts=["fix"]).id or ""
    stores = [Memory(url, agent_id="ops") for _ in range(8)]
    try:
        with ThreadPoolExecutor(len(stores)) as pool:
            list(pool.map(lambda m: [m.feedback([target], 0.25, ["q"]) for _ in range(25)],
                          stores))  # fmt: skip
    finally:
        for memory in stores:
            memory.close()
    with Memory(url, agent_id="ops") as mem:
        (edge,) = [e for e in mem.graph(["q"]).edges if e.target == "fix"]
        assert edge.weight == pytest.approx(8 * 25 * 0.25)
        assert mem.stats().feedback == 200


@pytest.fixture
def toy() -> Any:
    register_embedder("toy", ToyEmbedder)
    yield
    unregister_embedder("toy")


def _semantic_hits(url: str) -> list[str]:
    with Memory(url, agent_id="ops", embedder="toy") as mem:
        mem.write("zebra stripes")
        mem.write("completely unrelated sentence here")
        result = mem.read("stripes zebra")
        assert result.arms["semantic"] is True
        return [i.text for i in result.items if "semantic" in i.sources]


@pytest.mark.usefixtures("toy")
def test_vectors_use_pgvector_hnsw_when_the_extension_exists(url: str) -> None:
    with Memory(url) as probe:
        if not probe._store.native_vectors:
            pytest.skip("this PostgreSQL server has no pgvector extension")
    assert _semantic_hits(url)[0] == "zebra stripes"
    indexes = raw_query(url, "SELECT indexdef FROM pg_indexes WHERE indexname = 'vectors_hnsw'")
    assert indexes and "hnsw" in indexes[0][0]


@pytest.mark.usefixtures("toy")
def test_without_pgvector_the_portable_index_answers(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pg_store.PostgresStore, "_enable_pgvector", lambda self: False)
    assert _semantic_hits(url)[0] == "zebra stripes"
    assert raw_query(url, "SELECT indexname FROM pg_indexes WHERE indexname = 'vectors_hnsw'") == []


@pytest.mark.usefixtures("toy")
def test_a_role_that_may_not_install_pgvector_gets_the_portable_index(url: str) -> None:
    role = "plain_" + uuid.uuid4().hex[:8]
    raw_query(url, f"CREATE ROLE {role} LOGIN")
    raw_query(url, f"GRANT ALL ON SCHEMA public TO {role}")
    as_role = urlunsplit(
        urlsplit(url)._replace(netloc=f"{role}@" + urlsplit(url).netloc.split("@")[-1])
    )
    with Memory(as_role) as probe:
        assert probe._store.native_vectors is False
    assert _semantic_hits(as_role)[0] == "zebra stripes"


def test_two_servers_over_one_database_count_exactly(url: str) -> None:
    pytest.importorskip("fastapi")
    from tests.adapters.server_kit import running_server

    writers, notes, ratings = 4, 30, 10
    with running_server(url, agent="ops") as first, running_server(url, agent="ops") as second:
        target = Client(first).write("the shared fix", concepts=["fix"]).id or ""

        def work(worker: int) -> list[str]:
            client = Client(first if worker % 2 == 0 else second)
            written = [
                client.write(f"w{worker} note {i}", concepts=["common", f"w{worker}"]).id or ""
                for i in range(notes)
            ]
            for _ in range(ratings):
                client.feedback([target], 0.5, query_concepts=["q"])
            return written

        with ThreadPoolExecutor(writers) as pool:
            written = [i for ids in pool.map(work, range(writers)) for i in ids]
        for server in (first, second):
            client = Client(server)
            stats = client.stats()
            assert stats.memories == 1 + writers * notes
            assert stats.feedback == writers * ratings
            edges = {(e.source, e.target): e for e in client.graph(["q"]).edges}
            assert edges[("q", "fix")].weight == pytest.approx(writers * ratings * 0.5)
            common = {(e.source, e.target): e for e in client.graph(["common"]).edges}
            for w in range(writers):
                assert common[("common", f"w{w}")].count == notes
        assert len(set(written)) == writers * notes
        assert {r.id for r in Client(second).get(written)} == set(written)
    # The servers really shared the PostgreSQL database, not a file of their own.
    assert raw_query(url, "SELECT count(*) FROM memories") == [(1 + writers * notes,)]


def _prepared(mem: Memory) -> list[str]:
    rows = mem._store._conn.raw.execute("SELECT statement FROM pg_prepared_statements")
    return [" ".join(sql.split()) for (sql,) in rows]


def test_reads_keep_plans_only_where_one_plan_serves_every_value(url: str) -> None:
    # psycopg prepares a statement once it has run a few times, and a prepared
    # statement may settle on one generic plan. A text search's best plan depends on
    # how common its terms are, and so does a walk's under a view with conditions (a
    # selective filter may start from memories): those are planned per call. Lookups
    # by key, the walk of links and the walk of an unfiltered view keep their plans.
    with Memory(url, agent_id="ops") as mem:
        mem.write_many([{"text": f"deploy {n} timed out behind the proxy"} for n in range(30)])
        for _ in range(8):
            mem.read("deploy proxy", k=5, where={"kind": "episodic"})
        filtered = _prepared(mem)
        for _ in range(8):
            mem.read("deploy proxy", k=5)
            mem.read(concepts=["deploy", "proxy"], k=5)
        prepared = _prepared(mem)
    walks = ("memory_concepts mc JOIN memories", "FROM links WHERE scope_id = l.layer")
    assert not [sql for sql in filtered if walks[0] in sql], filtered
    assert any(walks[1] in sql for sql in filtered), filtered  # links know no view
    assert not [sql for sql in prepared if "tsquery" in sql], prepared
    for walk in walks:
        assert any(walk in sql for sql in prepared), (walk, prepared)
    assert any(sql.startswith(KEYED.strip()) and "FROM memories WHERE seq IN" in sql
               for sql in prepared), prepared  # fmt: skip


def test_kept_walk_plans_read_no_more_of_a_hub_than_they_return(url: str) -> None:
    # The walks' kept (generic) plans serve a concept in every memory as they serve
    # a rare one: each reads a concept's newest postings and strongest links in
    # index order and stops at its LIMIT. Counted in the index statistics, under a
    # plan forced generic from the first call.
    with Memory(url, agent_id="ops") as mem:
        mem.write_many(
            [{"text": f"note {n}", "concepts": ["hub", f"c{n}", f"d{n % 50}"]} for n in range(1500)]
        )
        store = mem._store
        store._conn.raw.execute("ANALYZE")
        store._conn.raw.execute("SET plan_cache_mode = force_generic_plan")

        def tuples_read(index: str) -> int:
            raw = store._conn.raw
            raw.execute("SELECT pg_stat_force_next_flush()")
            raw.execute("SELECT pg_stat_clear_snapshot()")
            rows = raw.execute(
                "SELECT idx_tup_read FROM pg_stat_user_indexes WHERE indexrelname = %s",
                [index],
            ).fetchall()
            return int(rows[0][0])

        def scanned() -> list[tuple[int, ...]]:  # rows read by sequential scans
            tuples_read("links_by_a_weight")
            return store._conn.raw.execute(
                "SELECT seq_tup_read FROM pg_stat_user_tables"
                " WHERE relname IN ('memory_concepts', 'links') ORDER BY relname"
            ).fetchall()

        sequential = scanned()
        for _ in range(7):  # psycopg prepares on the sixth run; each call counted alike
            before = tuples_read("memory_concepts_pkey")
            found = mem.read(concepts=["hub"], k=5, hops=0)
            walked = tuples_read("memory_concepts_pkey") - before
            # the 32 newest of 1,500 postings (CANDIDATES_PER_CONCEPT), not all, and as
            # many again for the words the result shows (`wording.USES_COUNTED`)
            assert found.items and 32 + USES_COUNTED <= walked <= 40 + USES_COUNTED, walked
            before = tuples_read("links_by_a_weight") + tuples_read("links_by_b_weight")
            mem.read(concepts=["hub"], k=5)
            walked = tuples_read("links_by_a_weight") + tuples_read("links_by_b_weight") - before
            # "hub" has 1,550 links: the walk reads the 25 strongest per side at most
            assert 25 <= walked <= 50, walked
        assert scanned() == sequential
        assert any("newest.memory_seq" in sql for sql in _prepared(mem))
        assert any("s.other, s.weight" in sql for sql in _prepared(mem))


def _vacuum_counts(url: str) -> dict[str, int]:
    """Manual VACUUMs per walked table (autovacuum counts apart, in autovacuum_count)."""
    rows = raw_query(
        url,
        "SELECT relname, vacuum_count FROM pg_stat_user_tables"
        " WHERE relname IN ('memories', 'memory_concepts')",
    )
    return {name: int(count) for name, count in rows}


def _vacuum_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "assocmem-vacuum" and t.is_alive()]


def test_a_bulk_write_has_the_walked_tables_vacuumed_without_waiting_for_autovacuum(
    url: str,
) -> None:
    # Reads' walks answer from indexes alone only on pages VACUUM marked all-visible;
    # autovacuum would mark them a minute later. Past autovacuum's insert trigger
    # (1,000 rows on an empty table), the writer's process has them vacuumed itself,
    # and its close waits for that VACUUM: a bulk import that exits at once counts.
    with Memory(url, agent_id="ops") as mem:
        mem.write_many([{"text": f"bulk note {n} about the proxy"} for n in range(1200)])
    assert not _vacuum_threads()
    marked = raw_query(
        url,
        "SELECT relname, relallvisible FROM pg_class"
        " WHERE relname IN ('memories', 'memory_concepts') ORDER BY relname",
    )
    assert [name for name, pages in marked if pages > 0] == ["memories", "memory_concepts"]
    deadline = time.monotonic() + 30  # the vacuuming backend reports as it exits
    while _vacuum_counts(url) != {"memories": 1, "memory_concepts": 1}:
        assert time.monotonic() < deadline, _vacuum_counts(url)  # not autovacuum's
        time.sleep(0.1)
    with Memory(url, agent_id="ops") as mem:
        assert [r.record.text for r in mem.read("proxy", k=3).items]


def test_writes_below_the_insert_trigger_start_no_vacuum(url: str) -> None:
    with Memory(url, agent_id="ops") as mem:
        for n in range(30):
            mem.write(f"single note {n}")
        mem.write_many([{"text": f"batched note {n}"} for n in range(500)])
        assert not _vacuum_threads()
        assert _vacuum_counts(url) == {"memories": 0, "memory_concepts": 0}
