"""Hybrid recall: each arm alone, the folds, filters, cues and the embedder guard."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from assocmem import EmbedderMismatch, InvalidInput, Memory
from assocmem.capabilities import open_store
from assocmem.recall.profiles import CONVERSATION, GENERAL
from assocmem.store import records
from assocmem.testing import ToyEmbedder
from assocmem.types import Scope
from assocmem.vectors.embedders import load_embedder, register_embedder, unregister_embedder
from assocmem.vectors.space import VectorSpace, embedding_text
from tests.conftest import Target, raw_query

pytest.importorskip("numpy")


@pytest.fixture(autouse=True)
def toy_embedder() -> Iterator[None]:
    """The toy model, registered and removed through the real plugin path."""
    register_embedder("toy", ToyEmbedder)
    yield
    unregister_embedder("toy")


@pytest.fixture
def mem(store_target: Target) -> Iterator[Memory]:
    with Memory(store_target("recall"), agent_id="ops", embedder="toy") as memory:
        yield memory


def sources_of(result: object) -> dict[str, str]:
    return {item.text: item.source for item in result.items}  # type: ignore[attr-defined]


def test_lexical_arm_ranks_by_bm25_with_stemming(store_target: Target) -> None:
    with Memory(store_target("lex"), agent_id="ops") as mem:
        mem.write("The runners were running a marathon in the rain.")
        mem.write("Rain again today, a lot of rain, rain all day.")
        mem.write("Quarterly revenue grew by four percent.")
        result = mem.read("Who ran marathons?")
        assert result.arms["lexical"] and not result.arms["semantic"]
        assert result.items[0].text.startswith("The runners")
        assert "lexical" in result.items[0].sources
        assert all("revenue" not in i.text for i in result.items)


def test_full_text_index_is_written_in_the_same_transaction(store_target: Target) -> None:
    path = store_target("fts")
    with Memory(path, agent_id="ops") as mem:
        mem.write_many([{"text": f"note number {i} about zebras"} for i in range(20)])
    if path.startswith("postgresql://"):  # a generated column: indexed with the row itself
        fts = "SELECT COUNT(*) FROM memories WHERE fts @@ to_tsquery('english', 'zebra')"
    else:
        fts = "SELECT COUNT(*) FROM memories_fts WHERE memories_fts MATCH 'zebra'"
    assert raw_query(path, fts) == [(20,)]
    with pytest.raises(Exception, match="immutable"):
        raw_query(path, "UPDATE memories SET text = 'changed'")


def test_semantic_arm_finds_meaning_without_shared_stems(mem: Memory) -> None:
    # The toy model hashes whole words, so "zebra stripes" and "stripes zebra"
    # embed identically while sharing no lexical stem with the query's filler.
    mem.write("zebra stripes")
    mem.write("completely unrelated sentence here")
    result = mem.read("stripes zebra")
    assert result.arms["semantic"] is True
    assert result.items[0].text == "zebra stripes"
    assert result.items[0].sources.get("semantic") == 1


def test_episodic_arm_matches_the_exact_text(mem: Memory) -> None:
    mem.write("Deploy failed: exit code 137 on worker-3")
    mem.write("Deploy failed again on worker-4 with a different code")
    result = mem.read("deploy failed:   EXIT code 137 on worker-3")
    assert result.items[0].source == "episodic"
    assert result.items[0].sources["episodic"] == 1


def test_without_an_embedder_everything_but_the_vector_arms_runs(store_target: Target) -> None:
    with Memory(store_target("plain"), agent_id="ops") as mem:
        mem.write("The backup job timed out at midnight.")
        result = mem.read("backup timed out")
        assert result.arms == {
            "episodic": True, "lexical": True, "semantic": False, "concept_scoped": True,
            "learned": True, "precedent": False, "hebbian_retrieval": True, "thread": True,
            "lexical_expansion": True, "semantic_expansion": False,
        }  # fmt: skip
        assert result.items[0].text.startswith("The backup")


def test_writes_embed_in_batches(store_target: Target) -> None:
    model = ToyEmbedder()
    with Memory(store_target("batch"), agent_id="ops", embedder=model) as mem:
        mem.write_many([{"text": f"memory {i}"} for i in range(40)])
    assert model.calls == [16, 16, 8]


def test_store_refuses_a_second_vector_space(store_target: Target) -> None:
    path = store_target("space")
    Memory(path, agent_id="ops", embedder="toy").close()
    with pytest.raises(EmbedderMismatch, match="toy-hash-64"):
        Memory(path, agent_id="ops", embedder=ToyEmbedder(dims=32))
    with pytest.raises(EmbedderMismatch):
        Memory(path, agent_id="ops", embedder=ToyEmbedder(variant="other"))
    Memory(path, agent_id="ops").close()  # no embedder: fine, the vector arm is off


def test_memories_written_without_an_embedder_are_embedded_later(store_target: Target) -> None:
    path = store_target("later")
    with Memory(path, agent_id="ops") as mem:
        mem.write("zebra stripes")
    with Memory(path, agent_id="ops", embedder="toy") as mem:
        assert mem.read("stripes zebra").items[0].sources.get("semantic") == 1


@pytest.mark.parametrize(
    ("text", "author", "embedded"),
    [
        ("Ana: zebra stripes", "Ana", "zebra stripes"),
        ("  ana :zebra stripes", "Ana", "zebra stripes"),  # spacing and case as written
        ("A.J.: zebra stripes", "A.J.", "zebra stripes"),  # the name is matched literally
        ("Bo: zebra stripes", "Ana", "Bo: zebra stripes"),  # someone else's label stays
        ("Anabel: zebra stripes", "Ana", "Anabel: zebra stripes"),
        ("Zebra stripes, said Ana: all of them", "Ana", "Zebra stripes, said Ana: all of them"),
        ("Ana:", "Ana", "Ana:"),  # nothing but the label: kept whole
        ("Ana: zebra stripes", None, "Ana: zebra stripes"),
    ],
)
def test_a_memory_is_embedded_without_its_authors_label(
    text: str, author: str | None, embedded: str
) -> None:
    assert embedding_text(text, author, CONVERSATION) == embedded
    assert embedding_text(text, author, GENERAL) == text  # the general profile keeps it


def _labelled_pair(mem: Memory) -> None:
    # Same words, one label each; only Ana's label names its memory's author.
    mem.write_many([{"text": "Bo: zebra stripes"}, {"text": "Ana: zebra stripes", "author": "Ana"}])


def _semantic_ranks(mem: Memory) -> dict[str, int]:
    return {i.text: i.sources.get("semantic", 0) for i in mem.read("zebra stripes").items}


def test_the_vector_holds_what_was_said_not_who_said_it(store_target: Target) -> None:
    conversation = {"agent_id": "ops", "embedder": "toy", "profile": "conversation"}
    with Memory(store_target("label"), **conversation) as mem:
        _labelled_pair(mem)
        assert _semantic_ranks(mem) == {"Ana: zebra stripes": 1, "Bo: zebra stripes": 2}
    path = store_target("label-later")  # vectors filled in later follow the same rule
    with Memory(path, agent_id="ops") as mem:
        _labelled_pair(mem)
    with Memory(path, **conversation) as mem:
        assert _semantic_ranks(mem) == {"Ana: zebra stripes": 1, "Bo: zebra stripes": 2}


def test_the_general_profile_embeds_the_text_as_written(store_target: Target) -> None:
    with Memory(store_target("as-written"), agent_id="ops", embedder="toy") as mem:
        _labelled_pair(mem)
        # both vectors carry a name besides the words: equally near, older first
        assert _semantic_ranks(mem) == {"Bo: zebra stripes": 1, "Ana: zebra stripes": 2}
        # a read under the conversation profile ranks by its rules, not by other vectors
        ranks = {i.text: i.sources.get("semantic", 0)
                 for i in mem.read("zebra stripes", profile="conversation").items}  # fmt: skip
        assert ranks == {"Bo: zebra stripes": 1, "Ana: zebra stripes": 2}


def test_unknown_embedder_name_is_an_input_error(store_target: Target) -> None:
    with pytest.raises(InvalidInput, match="unknown embedder"):
        Memory(store_target("x"), embedder="no-such-model")
    assert load_embedder("toy").dims == 64


def test_decay_prefers_the_fresher_of_equal_matches(mem: Memory) -> None:
    mem.write("Cache node c1 restarted", observed_at="2024-01-01T00:00:00Z")
    mem.write("Cache node c1 restarted!", observed_at="2024-03-01T00:00:00Z")
    result = mem.read("cache node restarted", as_of="2024-03-02T00:00:00Z")
    assert result.items[0].text.endswith("!")
    old = result.items[1].parts
    assert old["decay"] == pytest.approx(0.9, abs=0.001)  # faded: keeps 90%


def test_semantic_kinds_fade_slower_than_episodic(mem: Memory) -> None:
    mem.write("The API limit is 100 calls", kind="episodic", observed_at="2024-01-01T00:00:00Z")
    mem.write("The API limit is 100 calls.", kind="semantic", observed_at="2024-01-01T00:00:00Z")
    result = mem.read("API limit", as_of="2024-02-01T00:00:00Z")
    assert result.items[0].record.kind == "semantic"


def test_reading_restarts_the_clock_only_inside_the_window(store_target: Target) -> None:
    path = store_target("clock")
    with Memory(path, agent_id="ops") as mem:
        fresh = mem.write("fresh note about kettles", observed_at="2024-01-10T00:00:00Z")
        stale = mem.write("stale note about kettles", observed_at="2023-01-01T00:00:00Z")
        mem.read("kettles", as_of="2024-01-12T00:00:00Z")
        assert mem.get([fresh.id or ""])[0].accessed_at == "2024-01-12T00:00:00.000000Z"
        assert mem.get([stale.id or ""])[0].accessed_at is None


def test_a_reads_clocks_are_its_own_at_once_and_stored_by_its_next_write(
    store_target: Target,
) -> None:
    """A read restarts clocks without writing: its own connection reads them at once,
    another once the reader's next write transaction stores them, or its close."""
    path = store_target("lazy-clocks")
    with Memory(path, agent_id="ops") as reader, Memory(path, agent_id="ops") as other:
        note = reader.write("the kettle tripped the fuse", observed_at="2024-01-10T00:00:00Z")
        aside = reader.write("the kettle needs descaling", observed_at="2024-01-10T00:00:00Z")
        reader.read("kettle fuse", k=1, as_of="2024-01-12T00:00:00Z")
        again = reader.read("kettle fuse", k=1, as_of="2024-01-13T00:00:00Z")
        # The second read ranked with the clock the first restarted, and moved it again.
        assert again.items[0].record.accessed_at == "2024-01-12T00:00:00.000000Z"
        assert reader.get([note.id or ""])[0].accessed_at == "2024-01-13T00:00:00.000000Z"
        assert other.get([note.id or ""])[0].accessed_at is None
        reader.write("an unrelated note about the garden")
        assert other.get([note.id or ""])[0].accessed_at == "2024-01-13T00:00:00.000000Z"
        descaling = reader.read("descaling", k=1, as_of="2024-01-14T00:00:00Z")
        assert [i.id for i in descaling.items] == [aside.id]
        assert other.get([aside.id or ""])[0].accessed_at is None
    with Memory(path, agent_id="ops") as later:  # the reader's close stored it
        assert later.get([aside.id or ""])[0].accessed_at == "2024-01-14T00:00:00.000000Z"


def test_restarted_clocks_past_the_queue_bound_are_stored_at_once(
    store_target: Target, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(records, "CLOCKS_QUEUED_MAX", 1)
    path = store_target("clock-bound")
    with Memory(path, agent_id="ops") as reader, Memory(path, agent_id="ops") as other:
        notes = [
            reader.write(f"kettle note {n}", observed_at="2024-01-10T00:00:00Z") for n in range(3)
        ]
        assert len(reader.read("kettle note", k=3, as_of="2024-01-12T00:00:00Z").items) == 3
        clocks = [r.accessed_at for r in other.get([n.id or "" for n in notes])]
        assert clocks == ["2024-01-12T00:00:00.000000Z"] * 3


def test_value_and_valence_fold_into_the_score(mem: Memory) -> None:
    low = mem.write("printer jam in room four", value=0)
    high = mem.write("printer jam in room four.", value=10)
    result = mem.read("printer jam")
    scores = {i.id: i for i in result.items}
    assert scores[high.id].parts["value"] > 1 > scores[low.id].parts["value"]  # type: ignore[index]
    assert result.items[0].id == high.id


def test_a_memory_that_only_asks_ranks_below_one_that_states(mem: Memory) -> None:
    # The question is the shorter text, so BM25 alone would rank it first.
    asked = mem.write("Which printer jams in room four?")
    stated = mem.write("The printer in room four jams on thick paper, says facilities.")
    full_width = mem.write("Does the printer in room four still jam？")
    result = mem.read("printer jams room four", k=3, profile="conversation")
    parts = {i.id: i.parts for i in result.items}
    assert parts[asked.id]["question"] == pytest.approx(0.9)  # type: ignore[index]
    assert parts[full_width.id]["question"] == pytest.approx(0.9)  # type: ignore[index]
    assert parts[stated.id]["question"] == 1.0  # type: ignore[index]
    assert result.items[0].id == stated.id
    assert result.items[0].sources["lexical"] == 2
    # the general profile has no question fold: a question is ranked like any text
    general = mem.read("printer jams room four", k=3)
    assert all("question" not in i.parts for i in general.items)


def test_where_filters_columns_and_meta_before_ranking(mem: Memory) -> None:
    mem.write("alpha release notes", tags=["release"], meta={"env": "prod", "n": 3})
    mem.write("alpha release draft", tags=["draft"], meta={"env": "dev", "n": 7})
    mem.write("alpha release archive", meta={"env": "prod", "labels": ["old", "x"]})
    texts = lambda **w: {i.text for i in mem.read("alpha release", where=w).items}  # noqa: E731
    assert texts(env="prod") == {"alpha release notes", "alpha release archive"}
    assert texts(n={"$gte": 5}) == {"alpha release draft"}
    assert texts(n={"$gt": 3, "$lte": 7}) == {"alpha release draft"}
    assert texts(n={"$lt": 5}) == {"alpha release notes"}
    assert texts(env={"$in": ["dev"]}) == {"alpha release draft"}
    assert texts(env={"$nin": ["dev"]}) == {"alpha release notes", "alpha release archive"}
    assert texts(env={"$ne": "prod"}) == {"alpha release draft"}
    assert texts(tags={"$contains": "release"}) == {"alpha release notes"}
    assert texts(labels={"$contains": "old"}) == {"alpha release archive"}
    assert texts(env={"$contains": "ro"}) == {"alpha release notes", "alpha release archive"}
    assert texts(kind="episodic", env=["dev", "prod"], n={"$ne": None}) == {
        "alpha release notes", "alpha release draft",
    }  # fmt: skip


@pytest.mark.parametrize(
    "where",
    [
        {"source": "x' OR '1'='1"},
        {"env": {"$in": ["prod') OR 1=1 --"]}},
        {"meta.x') OR 1=1 --": 1},
        {"meta.text; DROP TABLE memories": "a"},
    ],
)
def test_where_keys_and_values_never_reach_sql_as_code(mem: Memory, where: dict) -> None:  # type: ignore[type-arg]
    mem.write("alpha release notes", meta={"env": "prod"})
    assert mem.read("alpha release", where=where).items == ()
    assert mem.stats().memories == 1


@pytest.mark.parametrize(
    "where",
    [{"n": {"$regex": "x"}}, {"n": {}}, {'bad"key': 1}, {"n": {"$in": "notalist"}},
     {"n": {"$gt": None}}, {"n": {"$eq": [1, 2]}}, {}],
)  # fmt: skip
def test_bad_where_is_an_input_error(mem: Memory, where: dict) -> None:  # type: ignore[type-arg]
    with pytest.raises(InvalidInput) as caught:
        mem.read("x", where=where)
    assert caught.value.field == "where"


def test_prefer_boosts_compose_as_a_capped_product(mem: Memory) -> None:
    plain = mem.write("disk usage report for db-1", meta={"team": "a"})
    preferred = mem.write("disk usage report for db-2", meta={"team": "b", "tier": 1})
    one = mem.read("disk usage report", prefer={"team": "b"}, prefer_trust=0.5)
    assert one.items[0].id == preferred.id
    assert one.items[0].parts["prefer"] == pytest.approx(1.5)
    both = mem.read("disk usage report", prefer=[({"team": "b"}, 1.0), ({"tier": 1}, 1.0)])
    assert both.items[0].parts["prefer"] == pytest.approx(2.0)  # 2 × 2, capped at 2
    uncapped = mem.read(
        "disk usage report", prefer=[({"team": "b"}, 1.0), ({"tier": 1}, 1.0)], prefer_max_boost=5
    )
    assert uncapped.items[0].parts["prefer"] == pytest.approx(4.0)
    assert {i.id: i.parts["prefer"] for i in uncapped.items}[plain.id] == 1.0
    with pytest.raises(InvalidInput):
        mem.read("x", prefer=[({"team": "b"}, 1.0)], prefer_trust=0.3)
    with pytest.raises(InvalidInput):
        mem.read("x", prefer={"team": "b"}, prefer_max_boost=0.5)


def test_kinds_limit_what_is_read(mem: Memory) -> None:
    mem.write("restart the pod with kubectl", kind="procedural")
    mem.write("restart the pod happened at noon", kind="episodic")
    assert {i.record.kind for i in mem.read("restart pod", kinds=["procedural"]).items} == {
        "procedural"
    }
    with pytest.raises(InvalidInput):
        mem.read("restart pod", kinds=["dreams"])


def test_a_named_author_is_a_preference_not_a_search_term(mem: Memory) -> None:
    mem.write("Alice: the garden needs water", author="Alice")
    mem.write("Bob: the garden needs water too", author="Bob")
    mem.write("Alice: my cat sleeps all day", author="Alice")
    result = mem.read("What did Bob say about the garden?")
    assert result.items[0].record.author == "Bob"
    assert result.items[0].parts["prefer"] == pytest.approx(1.5)
    # "Alice" is no lexical term: her unrelated note is not pulled in by the name.
    assert "Alice: my cat sleeps all day" not in [
        i.text for i in mem.read("Alice garden").items[:2]
    ]


def test_a_named_date_prefers_memories_observed_then(mem: Memory) -> None:
    mem.write("We shipped the new invoice page", observed_at="2023-05-10T12:00:00Z")
    mem.write("We shipped the new invoice page!", observed_at="2023-09-20T12:00:00Z")
    result = mem.read("What did we ship on 10 May, 2023?")
    assert result.items[0].record.observed_at.startswith("2023-05-10")


def test_a_reply_is_found_through_the_turn_that_prompted_it(mem: Memory) -> None:
    turns = [
        ("Carol", "Morning! How was the weekend?"),
        ("Dave", "How long have you been married?"),
        ("Carol", "Five years already, time flies!"),
        ("Dave", "Nice, congrats."),
    ]
    mem.write_many([{"text": f"{a}: {t}", "author": a, "thread": "s1"} for a, t in turns])
    mem.write_many(
        [{"text": f"Carol: unrelated chatter {i}", "author": "Carol", "thread": "s2"}
         for i in range(20)]
    )  # fmt: skip
    top = [i.text for i in mem.read("How long has Carol been married?", k=3).items]
    assert "Carol: Five years already, time flies!" in top


def test_read_validation(mem: Memory) -> None:
    with pytest.raises(InvalidInput):
        mem.read("x", explain="yes")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        mem.read("x", as_of="yesterday")
    mem.write("the kettle boiled over", concepts=["kettle"])
    bare = mem.read("kettle", explain=False)
    assert bare.items and all(i.parts == {} and i.sources == {} for i in bare.items)
    assert mem.read("kettle").items[0].parts  # explained by default


def test_evidence_finds_a_verified_fact_far_below_the_plain_read(tmp_path: Path) -> None:
    # The gates are conditions of the view every arm reads, not a cut of the plain
    # ranking: a verified fact that hundreds of chatty notes outrank is still found.
    with Memory(str(tmp_path / "deep.db"), agent_id="ops") as mem:
        mem.write_many([{"text": f"kettle limit kettle limit, note {i}"} for i in range(300)])
        day = "2024-01-01T00:00:00Z"
        fact = mem.write("the kettle's limit is two litres, per the manual", kind="semantic",
                         source="manual", observed_at=day, verified_at=day)  # fmt: skip
        plain = [i.id for i in mem.read("kettle limit", k=100).items]
        assert fact.id not in plain
        result = mem.read("kettle limit", k=5, mode="evidence")
        assert [i.id for i in result.items] == [fact.id]
        assert len(result.gates["not_semantic"]) == 5  # the best plain matches, refused


def test_an_evidence_read_embeds_once_and_touches_only_what_it_returns(
    store_target: Target,
) -> None:
    model = ToyEmbedder()
    with Memory(store_target("evidence"), agent_id="ops", embedder=model) as mem:
        day = "2024-01-01T00:00:00Z"
        fact = mem.write("the kettle limit is two litres", kind="semantic", source="manual",
                         observed_at=day, verified_at=day)  # fmt: skip
        note = mem.write("kettle limit looked low today", observed_at="2024-01-10T00:00:00Z")
        model.calls.clear()
        result = mem.read("kettle limit", mode="evidence", as_of="2024-01-12T00:00:00Z")
        assert [i.id for i in result.items] == [fact.id]
        assert result.gates == {"not_semantic": [note.id]}  # the best plain match, refused
        assert model.calls == [1]  # one question vector
        touched = {r.id: r.accessed_at for r in mem.get([fact.id or "", note.id or ""])}
        assert touched[fact.id] == "2024-01-12T00:00:00.000000Z"
        assert touched[note.id] is None  # refused, not returned


def test_a_vector_space_reads_through_the_store_each_read_uses(store_target: Target) -> None:
    path = store_target("two-connections")
    writer, reader = open_store(path), open_store(path)
    try:
        space = VectorSpace.checked(writer, ToyEmbedder())
        scope = Scope(agent_id="ops")
        Memory.attached(writer, scope, space).write("zebra stripes")
        writer.close()  # the space keeps no connection: the reader's own store serves it
        result = Memory.attached(reader, scope, space).read("zebra stripes")
        assert result.items[0].sources.get("semantic") == 1
    finally:
        writer.close()
        reader.close()


def test_equal_scores_rank_in_write_order_not_by_the_ids_random_tail(tmp_path: Path) -> None:
    from assocmem.recall import pipeline
    from assocmem.recall.request import read_request

    db = str(tmp_path / "ties.db")
    with Memory(db, agent_id="ops") as mem:
        # One batch writes them within a few milliseconds: ids of one millisecond are
        # ordered by their random tails, not by when they were written.
        mem.write_many([{"text": f"retry note {n}"} for n in range(40)])
        seqs = dict(raw_query(db, "SELECT id, seq FROM memories"))
        by_id = sorted(seqs)
        # Two memories whose ids sort against their write order.
        older, newer = next(
            (seqs[b], seqs[a]) for a, b in zip(by_id, by_id[1:], strict=False) if seqs[a] > seqs[b]
        )
        request = read_request(Scope(agent_id="ops"), "retry", as_of="2030-01-01T00:00:00Z")
        pool = [(key, 1.0) for key in (newer, older)]
        scored = pipeline._scored(mem._store, pool, {}, request, "2030-01-01T00:00:00Z")
    assert [entry.key for entry in scored] == [older, newer]
