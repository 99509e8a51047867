"""Write receipts and verify_attribution: the chain, relabels, signatures, concurrency."""

from __future__ import annotations

import json
import multiprocessing
import sqlite3
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from assocmem import InvalidInput, Memory
from assocmem.trust import receipts
from tests.conftest import Target, raw_query

KEY = bytes(range(32))
WHEN = "2026-01-01T00:00:00+00:00"


def tamper(target: str, sql: str) -> None:
    """An out-of-band edit of the database, committed (as an attacker's would be)."""
    if target.startswith("postgresql://"):
        raw_query(target, sql)
        return
    conn = sqlite3.connect(target)
    try:
        conn.execute(sql)
        conn.commit()
    finally:
        conn.close()


def _write_three(mem: Memory) -> list[str]:
    return [
        mem.write("the cache holds ten entries", source="https://docs.example.com/cache").id or "",
        mem.write("retries back off twice", source="forum.example.net", observed_at=WHEN).id or "",
        mem.write("the deploy runs at noon", source="Wikipedia").id or "",
    ]


def test_receipts_are_off_by_default(store_target: Target) -> None:
    db = store_target()
    with Memory(db) as mem:
        _write_three(mem)
        report = mem.verify_attribution()
    assert raw_query(db, "SELECT COUNT(*) FROM trust_receipts") == [(0,)]
    assert report.chain_intact and report.receipts == 0 and report.unreceipted == 3


def test_an_intact_chain_and_a_relabel_are_told_apart(store_target: Target) -> None:
    db = store_target()
    with Memory(db, receipts=True) as mem:
        ids = _write_three(mem)
        duplicate = mem.write(
            "retries back off twice", source="forum.example.net", observed_at=WHEN
        )
        clean = mem.verify_attribution()
        assert clean.ok and clean.receipts == 3 and clean.unreceipted == 0
        assert not duplicate.stored  # a refused duplicate adds no receipt
        # An out-of-band edit of the source is loud, whichever column it touches.
        tamper(db, f"UPDATE memories SET source = 'evil.org' WHERE id = '{ids[0]}'")
        tamper(db, f"UPDATE memories SET source_canonical = 'evil' WHERE id = '{ids[1]}'")
        report = mem.verify_attribution()
    assert report.chain_intact
    assert [m.id for m in report.mismatches] == ids[:2]
    assert report.mismatches[0].committed != report.mismatches[0].current


def test_editing_a_past_receipt_breaks_the_chain(store_target: Target) -> None:
    db = store_target()
    with Memory(db, receipts=True) as mem:
        _write_three(mem)
        tamper(db, "UPDATE trust_receipts SET sources = '[\"evil\"]' WHERE position = 2")
        report = mem.verify_attribution()
    assert not report.chain_intact and report.broken_at == 2
    assert report.broken_reason == "its hash does not match its contents"


def _recompute(db: str, public_key: str | None = None) -> None:
    """What an attacker who can rewrite the store does: relabel, and rebuild the chain."""
    rows = raw_query(
        db, "SELECT position, memory_id, text_sha256, sources FROM trust_receipts ORDER BY position"
    )
    prev = receipts.GENESIS
    for position, memory_id, text_sha, sources in rows:
        committed = ["evil"] if position == 1 else json.loads(sources)
        digest = receipts.link_hash(position, memory_id, text_sha, committed, prev, public_key)
        # Without the private key, the best an attacker can put is a made-up signature.
        signed = f"'{public_key}', signature = '{'00' * 64}'" if public_key else "NULL"
        tamper(
            db,
            f"UPDATE trust_receipts SET sources = '{json.dumps(committed)}', prev_hash = '{prev}',"
            f" hash = '{digest}', public_key = {signed}{'' if public_key else ', signature = NULL'}"
            f" WHERE position = {position}",
        )
        prev = digest
    tamper(db, "UPDATE memories SET source = 'evil', source_canonical = 'evil'"
              f" WHERE id = '{rows[0][1]}'")  # fmt: skip


def test_a_recomputed_chain_passes_unsigned_and_fails_signed(store_target: Target) -> None:
    plain, signed = store_target("plain"), store_target("signed")
    with Memory(plain, receipts=True) as mem:
        _write_three(mem)
    _recompute(plain)
    with Memory(plain) as mem:
        assert mem.verify_attribution().ok  # the documented limit of an unsigned chain

    key = Ed25519PrivateKey.from_private_bytes(KEY)
    with Memory(signed, receipt_key=key) as mem:
        _write_three(mem)
        assert mem.verify_attribution().ok
        public = receipts.public_hex(key)
        assert mem.verify_attribution().signed_by == public
    _recompute(signed)
    with Memory(signed, receipt_key=KEY.hex()) as mem:
        report = mem.verify_attribution()
    assert not report.chain_intact and report.broken_at == 1
    assert report.broken_reason == "not signed by the expected key"
    # A chain recomputed under the right public key fails on the signatures.
    _recompute(signed, public)
    with Memory(signed) as mem:
        report = mem.verify_attribution(public_key=public)
    assert report.broken_at == 1 and report.broken_reason == "bad signature"


def test_a_bad_receipt_key_names_the_field(tmp_path: Any) -> None:
    with pytest.raises(InvalidInput) as caught:
        Memory(str(tmp_path / "k.db"), receipt_key="not a key")
    assert caught.value.field == "receipt_key"
    with pytest.raises(InvalidInput) as caught:
        Memory(str(tmp_path / "k.db"), receipts="yes")  # type: ignore[arg-type]
    assert caught.value.field == "receipts"


WORKERS, WRITES = 3, 15


def _writer(db: str, worker: int, barrier: Any) -> None:
    with Memory(db, agent_id="team", receipt_key=KEY) as mem:
        barrier.wait()
        for i in range(WRITES):
            mem.write(f"worker {worker} note {i}", source=f"w{worker}.example.org")
        mem.write_many([{"text": f"batch {worker} {i}", "source": "b.example"} for i in range(3)])


@pytest.mark.slow
def test_concurrent_writers_form_one_valid_chain(store_target: Target) -> None:
    db = store_target("shared")
    Memory(db, agent_id="team").close()
    context = multiprocessing.get_context("spawn")
    barrier = context.Manager().Barrier(WORKERS)
    with context.Pool(WORKERS) as pool:
        jobs = [pool.apply_async(_writer, (db, w, barrier)) for w in range(WORKERS)]
        for job in jobs:
            job.get(timeout=300)
    with Memory(db, agent_id="team", receipt_key=KEY) as mem:
        report = mem.verify_attribution()
    assert report.ok and report.receipts == WORKERS * (WRITES + 3)
    assert report.unreceipted == 0


def test_a_taint_strip_is_loud_and_a_slash_is_not(store_target: Target) -> None:
    db = store_target()
    with Memory(db, receipts=True) as mem:
        parent = mem.write("the origin", source="origin.example.org").id or ""
        summary = mem.write("a summary", derived_from=[parent]).id or ""
        again = mem.write("a summary of the summary", derived_from=[summary]).id or ""
        mem.slash([parent], scope="source")  # forfeits standing, relabels nothing
        assert mem.verify_attribution().ok
        tamper(db, "DELETE FROM trust_taint WHERE memory_seq ="
               f" (SELECT seq FROM memories WHERE id = '{again}')")  # fmt: skip
        report = mem.verify_attribution()
    assert [(m.id, m.committed, m.current) for m in report.mismatches] == [
        (again, ("example.org",), ())
    ]


def test_a_tenant_sees_only_its_own_receipts(store_target: Target) -> None:
    db = store_target()
    with Memory(db, agent_id="alice", receipts=True) as alice:
        _write_three(alice)
    with Memory(db, agent_id="bob", receipts=True) as bob:
        bob.write("bob's own note", source="bob.example")
        report = bob.verify_attribution()
    assert report.ok and (report.receipts, report.unreceipted) == (1, 0)


def test_a_server_writes_signed_receipts_and_counts_verified_keys(tmp_path: Any) -> None:
    from assocmem import Client
    from tests.adapters.server_kit import running_server

    key_file = tmp_path / "receipt.key"
    key_file.write_text(KEY.hex(), encoding="ascii")
    db = str(tmp_path / "served.db")
    flags = ("--receipts", "--strict-corroboration", "--receipt-key-file", str(key_file))
    with running_server(db, *flags) as url:
        client = Client(url)
        first = client.write("the cache holds ten entries", source="docs.example.com").id
        client.write_many([{"text": "retries back off twice", "source": "forum.example.net"}])
        public = receipts.public_hex(Ed25519PrivateKey.from_private_bytes(KEY))
        report = client.verify_attribution(public_key=public)
        assert report.chain_intact and report.receipts == 2 and report.signed_by == public
        assert client.influence_gate_report().strict
    with running_server(db) as url:  # served plainly, the same store
        client = Client(url)
        client.write("the deploy runs at noon", source="Wikipedia")
        report = client.verify_attribution(public_key=public)
        assert report.chain_intact and report.receipts == 2 and report.unreceipted == 1
        assert not client.influence_gate_report().strict
    with Memory(db) as mem:
        assert mem.get([first or ""])[0].text == "the cache holds ten entries"


def test_config_reads_trust_flags_from_the_environment(tmp_path: Any) -> None:
    from assocmem.config import Config

    key_file = tmp_path / "k"
    key_file.write_text(KEY.hex() + "\n", encoding="ascii")
    environ = {"ASSOCMEM_RECEIPTS": "yes", "ASSOCMEM_STRICT_CORROBORATION": "0",
               "ASSOCMEM_RECEIPT_KEY_FILE": str(key_file)}  # fmt: skip
    config = Config.load(None, environ)
    assert config.receipts and not config.strict_corroboration
    assert config.read_receipt_key() == KEY.hex()
    with pytest.raises(InvalidInput) as caught:
        Config.load(None, {"ASSOCMEM_RECEIPTS": "maybe"})
    assert caught.value.field == "receipts"
    missing = Config.load(None, {"ASSOCMEM_RECEIPT_KEY_FILE": str(tmp_path / "missing")})
    with pytest.raises(InvalidInput) as caught:
        missing.read_receipt_key()
    assert caught.value.field == "receipt_key_file"
