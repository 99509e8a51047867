"""How strongly age and importance should move a ranking: ``assocmem bench folds``.

The plain product ranks by relevance × value, decayed by a per-kind half-life.
assocmem folds both in with bounds (`recall.fusion`: a fully faded memory keeps 90%
of its score, value 3 lifts it by 19%). This bench measures what the bounds cost and buy on LoCoMo
conversations, read as an agent in the conversation would read them: at the moment
after its last session, so each turn has its real age (a read at today's date finds
every turn fully faded, and age would change nothing).

Each conversation is indexed once. Two kinds of importance are marked with value 3:
*informed* (every evidence turn of a random half of the questions: a caller that
marked what mattered) and *noise* (a random tenth of all turns: a caller whose marks
say nothing about the question). Every question is then read under each variant in
turn (`VARIANTS`: decay weight, value exponent), all on the same store, so whatever
one read changes (the access clock) falls on every variant alike. Reported per
variant: recall@10 of all questions, of those with an informed mark on their evidence,
of those with no mark on any evidence turn (marks elsewhere can only cost them: an
evidence turn often answers several questions, so a question left unmarked may still
share a marked turn), and of those whose evidence lies in the oldest and newest third
of the conversation's time span.
"""

from __future__ import annotations

import json
import random
import statistics
from collections.abc import Sequence
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

from assocmem.progress import bar as progress_bar
from assocmem.recall import pipeline as recall
from assocmem.recall import profiles
from assocmem.recall import request as requests
from assocmem.vectors.embedders import load_embedder

from .locomo import Conversation, index_assocmem, load, step
from .measure import environment
from .stores import open_stores

K = 10
IMPORTANT = 3.0  # the value a marked turn gets
NOISE_SHARE = 0.1  # of all turns, marked at random
DECAY, VALUE = profiles.GENERAL.decay_weight, profiles.GENERAL.value_exponent
# (decay weight, value exponent): neither fold; each alone, at the default strength,
# stronger, and as the plain product (weight 1, exponent 1); both at the
# default; both as the product.
VARIANTS: dict[str, tuple[float, float]] = {
    "no folds": (0.0, 0.0),
    f"decay {DECAY} (default) alone": (DECAY, 0.0),
    "decay 0.3 alone": (0.3, 0.0),
    "decay 1 (product) alone": (1.0, 0.0),
    f"value {VALUE} (default) alone": (0.0, VALUE),
    "value 0.5 alone": (0.0, 0.5),
    "value 1 (product) alone": (0.0, 1.0),
    "default (both bounded)": (DECAY, VALUE),
    "seed product (both)": (1.0, 1.0),
}
SUBSETS = ("all", "evidence marked", "nothing of it marked", "oldest third", "newest third")


def _subsets(conversation: Conversation, informed: set[str], valued: set[str]) -> list[set[str]]:
    """For each question, the subsets it belongs to: whether an informed mark fell on
    its evidence, or no mark at all (so marks elsewhere can only cost it)."""
    when = {t.dia_id: t.when for t in conversation.turns}
    first, last = min(when.values()), max(when.values())
    third = (last - first) / 3
    found = []
    for question in conversation.questions:
        times = [when[d] for d in question.evidence if d in when]
        subsets = {"all"}
        if informed & set(question.evidence):
            subsets.add("evidence marked")
        elif not valued & set(question.evidence):
            subsets.add("nothing of it marked")
        if times and max(times) <= first + third:
            subsets.add("oldest third")
        elif times and min(times) >= last - third:
            subsets.add("newest third")
        found.append(subsets)
    return found


def run(
    data: str,
    out: str,
    *,
    embedder_name: str | None = None,
    conversations: Sequence[str] | None = None,
    seed: int = 0,
    db: str = "sqlite",
) -> dict[str, Any]:
    """Every variant on every question; writes the JSON report to ``out``."""
    loaded = [c for c in load(data, conversations) if c.questions]
    embedder = load_embedder(embedder_name) if embedder_name else None
    hits: dict[str, dict[str, list[float]]] = {v: {s: [] for s in SUBSETS} for v in VARIANTS}
    total = sum(len(c.questions) for c in loaded)
    rng = random.Random(seed)
    with open_stores(db) as stores, progress_bar(total, desc="folds", unit="q") as progress:
        for conversation in loaded:
            mem, dia_of = index_assocmem(
                conversation, stores.new(conversation.sample_id), embedder, "general"
            )
            id_of = {dia: memory_id for memory_id, dia in dia_of.items()}
            marked = set(rng.sample(range(len(conversation.questions)),
                                    len(conversation.questions) // 2))  # fmt: skip
            important = {d for n in marked for d in conversation.questions[n].evidence}
            noise = rng.sample(sorted(id_of), max(1, int(NOISE_SHARE * len(id_of))))
            for dia in sorted(important | set(noise)):
                if dia in id_of:
                    mem.update(id_of[dia], value=IMPORTANT)
            as_of = max(t.when for t in conversation.turns) + timedelta(days=1)
            valued = important | set(noise)
            for question, subsets in zip(
                conversation.questions, _subsets(conversation, important, valued), strict=True
            ):
                wanted = set(question.evidence)
                base = requests.read_request(
                    mem.scope, question.text, k=K, as_of=as_of, profile="general"
                )
                for variant, (weight, exponent) in VARIANTS.items():
                    profile = replace(profiles.GENERAL, decay_weight=weight,
                                      value_exponent=exponent)  # fmt: skip
                    result = recall.read(mem._store, replace(base, profile=profile), mem._space)
                    found = {dia_of[item.id] for item in result.items}
                    share = len(found & wanted) / len(wanted) if wanted else 0.0
                    for subset in subsets:
                        hits[variant][subset].append(share)
                step(progress, conversation.sample_id)
            mem.close()
    figures = {
        variant: {
            subset: {f"recall@{K}": round(statistics.fmean(v), 4) if v else None, "n": len(v)}
            for subset, v in by_subset.items()
        }
        for variant, by_subset in hits.items()
    }
    report = {
        "benchmark": "folds",
        "environment": environment(embedder=embedder_name or "none"),
        "workload": {"data": Path(data).name, "conversations": [c.sample_id for c in loaded],
                     "k": K, "important_value": IMPORTANT, "noise_share": NOISE_SHARE,
                     "seed": seed, "profile": "general", "as_of": "a day after the last session"},
        "variants": {name: {"decay_weight": w, "value_exponent": e}
                     for name, (w, e) in VARIANTS.items()},
        "recall": figures,
    }  # fmt: skip
    Path(out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return report
