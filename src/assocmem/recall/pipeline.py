"""Recall: the stages of a read, run in order in this one place.

1. filter: the read's `View` (scope layers, status, kinds, ``where``) is part of
   every store query below, so nothing outside it is ever scored;
2. arms: each returns its own ranking: lexical (BM25), semantic (vectors),
   episodic (exact fingerprint), concept_scoped, learned (memories outcomes
   taught the question's concepts), hebbian_retrieval, and thread (neighbours of
   the best hits in their session);
3. fusion: weighted Reciprocal Rank Fusion of the rankings, each arm's votes
   cast once (the arms seeded by the best fused candidates, thread neighbours
   and the feedback expansions, add theirs to the same fusion);
4. ranking: the fused score times bounded folds for value, per-kind decay,
   valence, question form (under a profile that folds it: a memory that ends
   asking states nothing of what it asks) and the soft ``prefer`` cues;
5. gates (evidence mode only): stated once in `evidence`, they join the view's
   conditions, so every arm reads only what passes them and a verified fact far
   below the plain ranking is still found; the question's best plain matches
   that fail a gate are reported by gate;
6. explanation: each item names the arm that ranked it best, every arm that
   found it with its rank, its score parts, and the links that reached it.

The read's `profiles.Profile` supplies its corpus-specific rules (question words,
telling lag, question fold, thread shares). Every stage runs once, in one
snapshot of the store the read was given, the vector arm included.

Invariant: the same store state and request give the same items in the same order.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, NamedTuple, Protocol

from assocmem.errors import InvalidInput
from assocmem.links import hebbian, lessons, meanings, precedents, wording
from assocmem.order import best_first
from assocmem.recall import cues, filters, fusion, provenance, weighing
from assocmem.recall.cues import QueryCues, feedback_terms, read_question
from assocmem.recall.fusion import Fusion
from assocmem.recall.profiles import GENERAL, Profile
from assocmem.schema import Condition, Cue, content_hash
from assocmem.store import RankFields, Store, View
from assocmem.store.rows import AskedRead, new_id
from assocmem.text import times
from assocmem.types import Item, ReadResult, Record, Scope, Via
from assocmem.vectors.space import SearchedVectors, VectorSpace

if TYPE_CHECKING:
    import numpy as np

# Each arm hands fusion its best max(50, 5·k) candidates. Below that depth an RRF
# vote (≤ 1/(60 + 50)) cannot lift an item past one the arms agree on, and a
# shallow cut keeps fusion cheap when a hub concept reaches thousands of memories.
FUSION_DEPTH_MIN = 50
FUSION_DEPTH_PER_K = 5
# The thread arm looks at the neighbours of this many best fused candidates, one
# position either side: the turn before a hit often asks what the hit answers.
THREAD_SEEDS = 10
# How many of the best lexical matches are measured for word coverage before the
# rest: a match that holds half the question's words is near the top of BM25's list.
WORDS_FIRST = 10
# Pseudo-relevance feedback (Rocchio; RM3 in Abdul-Jaleel et al., TREC 2004) reads
# the best few fused memories for words they share. Memories are short, so three
# of them: more would pull in the topic's neighbours rather than the topic.
FEEDBACK_DOCS = 3
# A word found in more than a tenth of the store says little about where to look
# (BM25 gives it an IDF under ln 10, against 6-9 for words that name a topic), and
# ranking its long posting list is the costliest thing a search does: as an
# expansion term it is skipped.
FEEDBACK_MAX_SHARE = 0.1
# A question word found in half the store or more has a BM25 IDF of zero or less
# (Robertson and Spärck Jones): it cannot rank anything. In stores big enough for
# its posting list to cost real time it is left out of the lexical query.
COMMON_SHARE = 0.5
COMMON_MIN_MATCHES = 1000

ARMS: tuple[str, ...] = fusion.ARM_ORDER
# The arms whose votes are what outcomes taught, not matches of the question.
TAUGHT_ARMS = ("learned", "precedent")


class ReadStore(
    hebbian.Neighbours,
    hebbian.ConceptPostings,
    lessons.LessonReads,
    precedents.RatedReads,
    meanings.TaughtWords,
    wording.Worded,
    filters.FieldProbe,
    SearchedVectors,
    Store,
    Protocol,
):
    """What a read asks of its store: the arms' queries (text, concepts, links,
    lessons, precedents, vectors, threads), the gates its store's parts declare, and the
    read kept as a handle."""

    def carried(self, scope: Scope, concept_ids: Sequence[int]) -> set[int]: ...

    def thread_adjacency(
        self, view: View, seqs: Sequence[int]
    ) -> dict[int, tuple[int | None, int | None]]: ...

    def checked_sources(self, scope: Scope) -> list[str]: ...

    def record_read(self, scope: Scope, read: AskedRead, returned: Sequence[int]) -> None: ...


@dataclass(frozen=True)
class ReadRequest:
    """A validated read."""

    query: str | None
    concepts: tuple[str, ...]
    concepts_given: bool
    k: int
    hops: int
    threshold: float
    view: View
    cues: tuple[Cue, ...] = ()
    max_boost: float = filters.DEFAULT_PREFER_MAX_BOOST
    explain: bool = True
    as_of: str | None = None
    # Extra lexical terms, given only by reconstructive recall (declared aliases of
    # entities the question names); a plain read never has any.
    extra_terms: tuple[str, ...] = ()
    mode: str = "recall"
    profile: Profile = GENERAL
    # only memories that earned standing (trust/standing.py), and how origins count.
    influence_only: bool = False
    strict: bool = False


def read(store: ReadStore, request: ReadRequest, space: VectorSpace | None) -> ReadResult:
    """Run every stage once for ``request``, in one snapshot of ``store``.

    In evidence mode the gates are hard conditions of the view, so every arm looks
    only at memories that pass them and a deep verified fact is still found; the
    result names, for the question's best k plain matches, the first gate each failed.
    """
    evidence_mode = request.mode == "evidence"
    # One channel, when asked: words alone (no embedder is consulted), or meaning alone.
    meaning_only = request.mode == "semantic"
    if request.mode == "lexical":
        space = None
    elif meaning_only and space is None:
        raise InvalidInput(
            "mode 'semantic' reads by meaning and needs an embedder attached to the memory"
            " (embedder=..., or --embedder on the command line)",
            field="mode",
        )
    plain_view = request.view
    checked: tuple[str, ...] = ()  # the sources named as checked here (evidence mode)
    if evidence_mode:
        as_of = request.as_of or times.now()
        checked = tuple(store.checked_sources(plain_view.scope))
        gates = tuple(provenance.gate_conditions(as_of, checked).values())
        gated = replace(plain_view, conditions=(*plain_view.conditions, *gates))
        request = replace(request, as_of=as_of, view=gated)
    depth = max(FUSION_DEPTH_MIN, FUSION_DEPTH_PER_K * request.k)
    view, profile = request.view, request.profile
    with store.snapshot():
        filters.check_fields(store, plain_view, request.cues)
        question = (
            read_question(request.query, store.authors(view.scope), profile)
            if request.query is not None
            else None
        )
        query_concepts = request.concepts
        if request.query is not None and not request.concepts_given:
            query_concepts += _compounds(store, view, request.query, query_concepts)
        query_ids = list(store.concept_ids(query_concepts).values())
        expansion = hebbian.expand(
            store, view.scope, query_ids, threshold=request.threshold, hops=request.hops
        )
        concept_scoped, associative = [], []
        if not meaning_only:  # the concept arms, which meaning alone does not run
            concept_scoped = _concept_arm(store, view, query_ids)[:depth]
            associative = hebbian.associative_hits(store, view, expansion, concept_scoped, depth)
        probe = space.embed_query(question.probe) if space and question else None
        rankings = {
            "concept_scoped": concept_scoped,
            "hebbian_retrieval": [seq for seq, _, _ in associative],
        }
        shares: dict[str, dict[int, float]] = {}
        background = 0.0
        # Precedents speak for what the question's words leave open: a question
        # whose words one memory holds whole was asked in words this store knows,
        # and its lessons carry what those words were taught.
        left_open = 1.0
        if question is not None:
            arms, words, spread, background = _question_arms(
                store, view, request, question, space, probe, depth, concept_scoped
            )
            rankings = {**arms, **rankings}
            shares = _word_shares(words, spread, rankings, not request.concepts_given)
            left_open = 1.0 - words.best
        learned: list[lessons.LearnedHit] = []
        reading: meanings.Reading | None = None
        if meaning_only:
            rankings, shares = {"semantic": rankings.get("semantic", [])}, {}
        else:
            if space is not None and question is not None and probe is not None:
                reading = meanings.reading(
                    store, view, space.embedder.model_id, space.embedder.embed, question.terms,
                    question.probe, lambda stems: _spelled(store, view.scope, stems),
                )  # fmt: skip
            if reading is not None:  # both arms' lessons in one statement (kept for the read)
                wanted = sorted({*query_ids, *reading.concept_ids})
                store.concept_lessons(view.scope, wanted, lessons.LESSONS_PER_CONCEPT)
            learned = lessons.learned_hits(store, view, query_ids, len(set(query_concepts)))
            rankings["learned"] = [hit.seq for hit in learned[:depth]]
        voters = learned[:depth]
        precedent: list[precedents.PrecedentHit] = []
        meant: list[meanings.MeaningHit] = []
        asked_by: dict[str, tuple[str, ...]] = {}
        by_meaning: dict[int, float] = {}
        if space is not None and probe is not None and not meaning_only:  # needs an embedder
            model_id = space.embedder.model_id
            precedent, asked_by = precedents.hits(store, view, model_id, probe, background)
            meant = meanings.hits(store, view, reading) if reading is not None else []
            # What outcomes taught, reached by meaning: earlier questions that meant this
            # one (precedents) and taught words its words mean (meanings), one arm.
            by_meaning = {hit.seq: hit.confidence for hit in meant}
            for hit in precedent:
                by_meaning[hit.seq] = max(by_meaning.get(hit.seq, 0.0), hit.confidence)
            surest = best_first(by_meaning, higher_keys_first=True)
            rankings["precedent"] = surest[:depth]
        votes = Fusion(
            weights=fusion.arm_weights(request.concepts_given),
            confidence={
                "learned": {hit.seq: hit.confidence for hit in voters},
                "precedent": {
                    seq: by_meaning[seq] * left_open for seq in rankings.get("precedent", [])
                },
                **shares,
            },
        )
        votes.add({arm: keys for arm, keys in rankings.items() if arm not in TAUGHT_ARMS})
        # The later arms widen the question by what its best matches share
        # (pseudo-relevance feedback), so they start from the arms that matched the
        # question itself. A memory lessons or precedents vote for is a guess at the
        # answer, not a match of the question: seeded from a wrong guess, the widened
        # searches would follow its words and push more of its topic into the read.
        # Only a question's words are widened: a read by concepts alone ranks no seeds.
        seeds = votes.leaders(depth) if question is not None and not meaning_only else []
        votes.add({arm: rankings[arm] for arm in TAUGHT_ARMS if arm in rankings})
        if seeds and question is not None:
            later = _later_arms(store, view, question, space, probe, seeds, depth)
            rankings["thread"], caps = _thread_arm(store, view, seeds, profile, depth)
            rankings.update(later)
            # Their votes join the same fusion; the widened word search is as decisive
            # as the words it widens.
            widened = {"lexical_expansion": dict.fromkeys(later["lexical_expansion"], words.arm)}
            votes.add(
                {"thread": rankings["thread"], **later}, confidence=widened, caps={"thread": caps}
            )
        candidates = votes.leaders(depth)  # the fusion's best `depth`
        cues = [*request.cues, *(_question_cues(question) if question else [])]
        boosts = _boosts(store, request, cues, [seq for seq, _ in candidates])
        # One moment for the whole read: its decay, its expiries and the clocks it restarts.
        moment = request.as_of or times.now()
        scored = _scored(store, candidates, boosts, request, moment)
        if request.influence_only:  # gated before the cut, so k fills from the rest
            earned = _influence(store, view.scope, [e.key for e in scored], request.strict)
            scored = [entry for entry in scored if entry.key in earned]
        best = [entry.key for entry in scored[: request.k]]
        reaches = {seq: r for seq, _, r in associative}
        taught = {hit.seq: hit for hit in learned}
        recalled = {hit.seq: hit for hit in precedent}
        stood = {hit.seq: hit for hit in meant}
        concept_ids = {c for seq in best for r in reaches.get(seq, []) for c in r.path}
        concept_ids |= {lesson.concept_id for seq in best if seq in taught
                        for lesson in taught[seq].lessons}  # fmt: skip
        concept_ids |= {s.concept_id for seq in best if seq in stood
                        for _, s in stood[seq].stand_ins[: meanings.SHOWN]}  # fmt: skip
        # Shown as the scope wrote them (`wording`), every concept of the result at once.
        stems = store.concept_names(sorted(concept_ids | set(expansion.reached)))
        earlier = [c for concepts in asked_by.values() for c in concepts]
        said = wording.shown(store, view.scope, stems, [*query_concepts, *earlier])
        names = {i: said[stem] for i, stem in stems.items()}
        asked_by = {handle: tuple(said[c] for c in cs) for handle, cs in asked_by.items()}
        vias = {
            seq: _explain(
                reaches.get(seq, []), taught.get(seq), names,
                (recalled[seq], asked_by) if seq in recalled else None,
                stood.get(seq),
            )
            for seq in best
        } if request.explain else {}  # fmt: skip
        ranked = _items(store, scored[: request.k], votes, vias, request, moment)
        refused = (
            _refused(store, plain_view, request, question, query_ids, checked)
            if evidence_mode
            else {}
        )
        refused_ids = {s: r.id for s, r in store.records_by_seq(list(refused)).items()}
    _touch(store, ranked, moment)
    read_id = new_id()
    model: str | None = None
    vector: bytes | None = None
    if space is not None and probe is not None:  # its meaning, for precedents
        model, vector = space.embedder.model_id, probe.astype("float32").tobytes()
    asked = AskedRead(read_id, tuple(query_concepts), model, vector)
    store.record_read(request.view.scope, asked, [seq for seq, _ in ranked])
    result = ReadResult(
        items=tuple(item for _, item in ranked),
        query_concepts=tuple(said[c] for c in query_concepts),
        expanded_concepts={
            names[r.concept_id]: r.weight
            for r in sorted(
                expansion.reached.values(), key=lambda r: (-r.weight, names[r.concept_id])
            )
        },
        arms={arm: arm in rankings for arm in ARMS},
        mode=request.mode,
        id=read_id,
        bounds={
            "expansion_capped": int(expansion.capped),
            "expanded_concepts_cut": expansion.cut,
        },
    )
    if not evidence_mode:
        return result
    report = provenance.gate_report([(refused_ids[seq], gate) for seq, gate in refused.items()])
    return replace(result, mode="evidence", gates=report)


def _refused(
    store: ReadStore,
    view: View,
    request: ReadRequest,
    question: QueryCues | None,
    query_ids: Sequence[int],
    checked: Sequence[str],
) -> dict[int, str]:
    """What the gates kept out, for the report: the question's best k plain matches
    (lexical, else by concept) that fail a gate, with the first gate each fails."""
    if question is not None:
        terms = _informative(store, view, [*question.terms, *request.extra_terms])
        plain = [seq for seq, _ in store.lexical(view, terms, request.k)]
    else:
        plain = _concept_arm(store, view, query_ids)[: request.k]
    return _gates(store, view, plain, request.as_of, checked)


def _later_arms(
    store: ReadStore,
    view: View,
    question: QueryCues,
    space: VectorSpace | None,
    probe: np.ndarray | None,
    fused: list[tuple[int, float]],
    depth: int,
) -> dict[str, list[int]]:
    """The arms seeded by the best fused candidates beside their thread neighbours:
    the lexical and semantic searches again, widened by what the best few share."""
    best = [seq for seq, _ in fused[:FEEDBACK_DOCS]]
    rankings = {"lexical_expansion": _lexical_expansion(store, view, question, best, depth)}
    if space is not None and probe is not None:
        vector = space.feedback_probe(store, probe, best)
        rankings["semantic_expansion"] = [s for s, _ in space.search(store, view, vector, depth)]
    return rankings


def _gates(
    store: ReadStore, view: View, seqs: Sequence[int], as_of: str | None, checked: Sequence[str]
) -> dict[int, str]:
    """The first evidence gate each of these visible memories fails (absent: it passes)."""
    failed: dict[int, str] = {}
    left = list(seqs)
    for gate, condition in provenance.gate_conditions(as_of or times.now(), checked).items():
        if not left:
            break
        passing = store.visible(replace(view, conditions=(*view.conditions, condition)), left)
        failed.update((seq, gate) for seq in left if seq not in passing)
        left = [seq for seq in left if seq in passing]
    return failed


def _compounds(
    store: ReadStore, view: View, question: str, concepts: Sequence[str]
) -> tuple[str, ...]:
    """Concepts the question spells as two words ("time out" for ``timeout``) that
    the reader's memories carry."""
    candidates = [c for c in cues.compounds(question) if c not in concepts]
    known = store.concept_ids(candidates) if candidates else {}
    carried = store.carried(view.scope, list(known.values())) if known else set()
    return tuple(name for name, concept in known.items() if concept in carried)


def _question_arms(
    store: ReadStore,
    view: View,
    request: ReadRequest,
    question: QueryCues,
    space: VectorSpace | None,
    probe: np.ndarray | None,
    depth: int,
    concept_scoped: Sequence[int],
) -> tuple[dict[str, list[int]], weighing.WordEvidence, dict[int, float], float]:
    """The arms a question text runs (exact fingerprint, lexical and semantic); what
    the words have to go on (`weighing.WordEvidence`, over the lexical hits and, for
    concepts pulled from the words, the concept arm's); the lexical ranking's
    coverage spread along threads as its scores were; and the semantic arm's median
    similarity (0 without one), the background precedents must stand above."""
    fingerprint = content_hash(request.query or "")
    rankings = {"episodic": store.fingerprint_matches(view, fingerprint, depth)}
    terms = _informative(store, view, [*question.terms, *request.extra_terms])
    lexical = dict(store.lexical(view, terms, depth))
    profile = request.profile
    rankings["lexical"], adjacency = _thread_ranked(store, view, lexical, lambda seqs: {}, profile)
    background = 0.0
    if space is not None and probe is not None:
        nearest = dict(space.search(store, view, probe, depth))
        background = statistics.median(nearest.values()) if nearest else 0.0
        rankings["semantic"], _ = _thread_ranked(
            store, view, nearest, lambda seqs: space.similarities(store, probe, seqs), profile
        )
    more = concept_scoped if not request.concepts_given else ()
    words = _word_evidence(store, view, terms, lexical, more)
    spread = weighing.spread(
        words.coverage, adjacency, forward=profile.thread_forward, backward=profile.thread_backward
    )
    return rankings, words, spread, background


def _word_shares(
    words: weighing.WordEvidence,
    spread: dict[int, float],
    rankings: dict[str, list[int]],
    own_words: bool,
) -> dict[str, dict[int, float]]:
    """The share of its vote each word arm's memory casts (`weighing`): the lexical
    arm's by its thread-spread coverage; where the read's concepts come from its own
    words, the concept arm's by coverage and the learned-link arm's as a whole."""
    shares = {"lexical": words.votes(rankings.get("lexical", []), spread)}
    if own_words:
        shares["concept_scoped"] = words.votes(rankings["concept_scoped"])
        shares["hebbian_retrieval"] = dict.fromkeys(rankings["hebbian_retrieval"], words.arm)
    return shares


def _word_evidence(
    store: ReadStore,
    view: View,
    terms: Sequence[str],
    lexical: dict[int, float],
    more: Sequence[int],
) -> weighing.WordEvidence:
    """What the words have to go on (`weighing.WordEvidence`): the best lexical matches
    are measured first, and when one of them decides the question every word vote is
    full, so the rest (the other matches, ``more``) need no measuring."""
    if not terms or not (lexical or more):
        return weighing.WordEvidence({})
    size = store.size(view.scope)
    measure = weighing.Coverage(terms, store.match_counts(view.scope, terms, size), size)
    best = best_first(lexical, WORDS_FIRST)
    coverage = _coverage(store, measure, best)
    if not weighing.WordEvidence(coverage).decisive:
        rest = [seq for seq in (*lexical, *more) if seq not in coverage]
        coverage.update(_coverage(store, measure, rest))
    return weighing.WordEvidence(coverage)


def _coverage(
    store: ReadStore, measure: weighing.Coverage, seqs: Sequence[int]
) -> dict[int, float]:
    """Each memory's share of the question's word information."""
    fields = store.rank_fields(list(dict.fromkeys(seqs))) if seqs else {}
    return {seq: measure.of(row.text) for seq, row in fields.items()}


def _question_cues(question: QueryCues) -> list[Cue]:
    """Soft preferences a question implies: the authors and the dates it names."""
    by_author = [
        Cue((Condition("author", "$eq", name, False),), trust, label="author")
        for name, trust in question.authors
    ]
    by_time = [
        Cue(
            (
                Condition("observed_at", "$gte", period.start, False),
                Condition("observed_at", "$lt", period.end, False),
            ),
            period.trust,
            label="time",
        )
        for period in question.periods
    ]
    return by_author + by_time


def _thread_ranked(
    store: ReadStore,
    view: View,
    scores: dict[int, float],
    score_more: Callable[[list[int]], dict[int, float]],
    profile: Profile,
) -> tuple[list[int], dict[int, tuple[int | None, int | None]]]:
    """An arm's hits and their thread neighbours, ranked by thread-smoothed score
    (with the profile's shares forward and backward); and the thread adjacency of
    the memories ranked.

    ``score_more`` gives the arm's score for neighbours it did not return
    (the semantic arm can; the lexical arm's unmatched memories score nothing).
    """
    if not scores:
        return [], {}
    adjacency = store.thread_adjacency(view, list(scores))
    neighbours = {n for pair in adjacency.values() for n in pair if n is not None} - set(scores)
    if neighbours:
        adjacency.update(store.thread_adjacency(view, sorted(neighbours)))
        scores = {**scores, **score_more(sorted(neighbours))}
    smoothed = fusion.smooth_along_threads(
        scores, adjacency, forward=profile.thread_forward, backward=profile.thread_backward
    )
    return best_first(smoothed), adjacency


def _concept_arm(store: ReadStore, view: View, query_ids: Sequence[int]) -> list[int]:
    """Memories carrying a query concept: most concepts matched first, then newest."""
    carriers = store.memories_with_concepts(
        view, query_ids, per_concept=hebbian.CANDIDATES_PER_CONCEPT
    )
    matches = Counter(seq for concept in query_ids for seq in carriers.get(concept, ()))
    return best_first(matches, higher_keys_first=True)


def _lexical_expansion(
    store: ReadStore, view: View, question: QueryCues, best: list[int], depth: int
) -> list[int]:
    """Lexical search again, the question's terms joined by words its best hits share."""
    top = store.records_by_seq(best)
    extra = feedback_terms([r.text for r in top.values()], question)
    if extra:
        cap = max(1, int(FEEDBACK_MAX_SHARE * store.size(view.scope)))
        counts = store.match_counts(view.scope, extra, cap)
        extra = [term for term in extra if counts[term] < cap]
    if not extra:
        return []
    return [seq for seq, _ in store.lexical(view, [*question.terms, *extra], depth)]


def _informative(store: ReadStore, view: View, terms: Sequence[str]) -> list[str]:
    """The terms worth a lexical search: all of them, unless the reader's layers are
    large and hold a term in half their memories or more (then that term is dropped,
    never all). Counted over what the reader can read, so no tenant's writes change
    another's terms."""
    size = store.size(view.scope)
    cap = int(COMMON_SHARE * size)
    if cap < COMMON_MIN_MATCHES or not terms:
        return list(terms)
    counts = store.match_counts(view.scope, terms, cap)
    kept = [term for term in terms if counts[term] < cap]
    return kept or [min(terms, key=lambda term: (counts[term], term))]


def _thread_arm(
    store: ReadStore, view: View, fused: list[tuple[int, float]], profile: Profile, depth: int
) -> tuple[list[int], dict[int, float]]:
    """Thread neighbours of the best candidates, in the order of the hit they border;
    and each one's cap: the profile's share of that hit's fused score (forward for
    the memory after it, backward for the one before), so a neighbour is supported
    by its hit's evidence and never by more of it."""
    seeds = fused[:THREAD_SEEDS]
    adjacency = store.thread_adjacency(view, [seq for seq, _ in seeds])
    ranked: dict[int, None] = {}
    caps: dict[int, float] = {}
    for seed, score in seeds:
        before, after = adjacency.get(seed, (None, None))
        sides = ((before, profile.thread_backward), (after, profile.thread_forward))
        for neighbour, share in sides:
            if neighbour is None or neighbour == seed:
                continue
            ranked.setdefault(neighbour)
            caps[neighbour] = max(caps.get(neighbour, 0.0), share * score)
    order = list(ranked)[:depth]
    return order, {seq: caps[seq] for seq in order}


def _boosts(
    store: ReadStore, request: ReadRequest, cues: Sequence[Cue], pool: Sequence[int]
) -> dict[int, float]:
    """Each pooled memory's capped product of the cue boosts it earns."""
    earned: dict[int, list[float]] = {}
    for cue in cues:
        matched = store.visible(replace(request.view, conditions=cue.conditions), pool)
        for seq in matched:
            earned.setdefault(seq, []).append(cue.trust)
    return {seq: filters.boost(trusts, request.max_boost) for seq, trusts in earned.items()}


class _Scored(NamedTuple):
    """A candidate's final score and its folds; ties break on its key (write order)."""

    score: float
    key: int
    folds: dict[str, float]


def _influence(store: ReadStore, scope: Scope, seqs: Sequence[int], strict: bool) -> set[int]:
    """Those of ``seqs`` every part's influence gate lets drive an action."""
    passed = set(seqs)
    for gate in store.hooks("influence"):
        passed &= gate(store, scope, seqs, strict)
    return passed


def _derived_folds(
    store: ReadStore, view: View, derived: Sequence[int]
) -> dict[int, dict[str, float]]:
    """The folds the parts put on these derived candidates' scores (seq -> fold -> factor)."""
    records = store.records_by_seq(derived)
    folds: dict[int, dict[str, float]] = {}
    for gate in store.hooks("derived_folds"):
        for seq, found in gate(store, view, records).items():
            folds.setdefault(seq, {}).update(found)
    return folds


def _scored(
    store: ReadStore,
    pool: Sequence[tuple[int, float]],
    boosts: dict[int, float],
    request: ReadRequest,
    moment: str,
) -> list[_Scored]:
    """Fold value, decay, valence, question form (where the profile folds it),
    preference and provenance demotion into the fused scores of ``pool`` (``(seq,
    fused score)``) as of ``moment``; best first."""
    as_of = times.to_datetime(moment)
    fields = store.rank_fields([seq for seq, _ in pool])
    derived = [seq for seq, row in fields.items() if row.derived]
    demoted = _derived_folds(store, request.view, derived) if derived else {}
    profile = request.profile
    value_exponent, decay_weight = profile.value_exponent, profile.decay_weight
    question_fold = profile.question_fold
    scored = []
    for seq, fused in pool:
        row = fields.get(seq)
        if row is None:
            continue
        folds = {
            "value": fusion.value_factor(row.value, value_exponent),
            "decay": fusion.decay_factor(
                fusion.decay(row.kind, _age_days(row, as_of)), decay_weight
            ),
            "valence": fusion.valence_factor(row.valence),
        }
        if question_fold:
            folds["question"] = fusion.question_factor(fusion.question_share(row.text))
        folds["prefer"] = boosts.get(seq, 1.0)
        if seq in demoted:
            folds.update(demoted[seq])  # a part's gate on derivations
        score = fused
        for factor in folds.values():
            score *= factor
        scored.append(_Scored(score, seq, folds))
    # Ties go to the older memory by write order: an id's random tail would order two
    # memories written in one millisecond differently from one store to its rebuild.
    scored.sort(key=lambda entry: (-entry.score, entry.key))
    return scored


def _items(
    store: ReadStore,
    best: Sequence[_Scored],
    votes: Fusion[int],
    vias: Mapping[int, tuple[Via, ...]],
    request: ReadRequest,
    moment: str,
) -> list[tuple[int, Item]]:
    """The returned items, in order, with their records (expired or not as of
    ``moment``); explained, each names the votes that ranked it, its score parts and
    what brought it (``vias``)."""
    records = store.records_by_seq([entry.key for entry in best])
    for mark in store.hooks("mark"):
        records = dict(mark(store, records))
    items = []
    for entry in best:
        record = records[entry.key]
        fused = votes.fused(entry.key)
        item = Item(
            record=record,
            score=entry.score,
            source=fused.source,
            sources=fused.ranks if request.explain else {},
            via=vias.get(entry.key, ()),
            parts={**fused.parts, **entry.folds} if request.explain else {},
            expired=provenance.expired(record.recheck_by, moment),
        )
        items.append((entry.key, item))
    return items


def _age_days(row: RankFields | Record, as_of: datetime) -> float:
    """Days since the memory's clock last started: observed, or last read in its window."""
    started = max(row.observed_at, row.accessed_at or "")
    return (as_of - times.to_datetime(started)).total_seconds() / 86_400


def _touch(store: ReadStore, ranked: Sequence[tuple[int, Item]], moment: str) -> None:
    """Restart, at ``moment``, the decay clock of returned memories still inside their
    kind's window."""
    as_of = times.to_datetime(moment)
    fresh = [
        item.record.id
        for _, item in ranked
        if fusion.resets_clock(item.record.kind, _age_days(item.record, as_of))
    ]
    if fresh:
        store.touch(fresh, moment)


def _explain(
    reaches: Sequence[hebbian.Reach],
    taught: lessons.LearnedHit | None,
    names: dict[int, str],
    precedent: tuple[precedents.PrecedentHit, dict[str, tuple[str, ...]]] | None = None,
    meant: meanings.MeaningHit | None = None,
) -> tuple[Via, ...]:
    """What brought an item: lessons, then learned links, then the earlier reads
    (precedents, with their concepts) that voted for it, then the taught words the
    question's words mean."""
    learned = lessons.via(taught, names) if taught is not None else ()
    recalled = precedents.via(*precedent) if precedent is not None else ()
    stood = meanings.via(meant, names) if meant is not None else ()
    return learned + hebbian.via(reaches, names) + recalled + stood


def _spelled(store: ReadStore, scope: Scope, stems: Mapping[int, str]) -> dict[int, str]:
    """Each concept id's stem spelled as the scope writes it (`wording`)."""
    said = wording.shown(store, scope, stems)
    return {concept_id: said[stem] for concept_id, stem in stems.items()}
