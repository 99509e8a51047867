"""What a question says, read deterministically: lexical terms and named authors.

Invariants: pure functions of the question, the author names in scope and the
read's `profiles.Profile` (which words are question words, how far a named period
stretches); no model. A question word (what, when, who…) never becomes a lexical
term, and an author the question names becomes a soft preference on who said or
wrote a memory, not a word every one of that author's memories would match.
"""

from __future__ import annotations

import calendar
import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from assocmem.recall.profiles import GENERAL, Profile
from assocmem.recall.weighing import STEMS_KEPT
from assocmem.text import times
from assocmem.text.concepts import (
    MAX_CONCEPT_CHARS,
    STOP_WORDS,
    normalize_concept,
    normalize_text,
    tokenize,
)

# Trust of an author cue (see `filters.Cue`) by how exactly the question names
# them: the full name as written is near-certain; one part of a longer name (a
# first name) may be someone else. Half and a quarter of a score: enough to
# prefer the named author's memories among close candidates.
AUTHOR_TRUST_EXACT = 0.5
AUTHOR_TRUST_PARTIAL = 0.25
# Name parts this short are too ambiguous to match on their own ("Al", "Jo").
MIN_NAME_PART = 3


# Trust of a time cue: a question naming a day points at memories observed then
# more precisely than one naming a month or a year.
TIME_TRUST_DAY = 0.5
TIME_TRUST_MONTH = 0.25
TIME_TRUST_YEAR = 0.1

_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS |= {name.lower(): i for i, name in enumerate(calendar.month_abbr) if name}
_MONTH = "(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"((?:19|20)\d{2})"
_DATES = (
    (re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b", re.I), ("month", "day", "year")),
    (re.compile(rf"\b{_DAY}\s+{_MONTH},?\s+{_YEAR}\b", re.I), ("day", "month", "year")),
    (re.compile(rf"\b{_MONTH},?\s+{_YEAR}\b", re.I), ("month", "year")),
    (re.compile(rf"\b(?:in|during|of)\s+{_YEAR}\b", re.I), ("year",)),
)


@dataclass(frozen=True)
class Period:
    """A span of time a question names, as stored-time strings, and the cue's trust."""

    start: str
    end: str
    trust: float


# Pseudo-relevance feedback: at most this many words are added, each shared by at
# least two of the best hits (one hit's word may be its own topic, two is a theme).
FEEDBACK_TERMS = 10
FEEDBACK_MIN_DOCS = 2


@dataclass(frozen=True)
class QueryCues:
    """What a question says, split by use.

    ``terms`` go to the lexical arm; ``probe`` (the question without the authors
    it names) goes to the semantic arm; ``authors`` and ``periods`` become soft
    preferences. Once a named author is a preference on who wrote a memory, the
    name is taken out of both probes so they describe what was said.
    """

    terms: tuple[str, ...]
    probe: str
    authors: tuple[tuple[str, float], ...]
    periods: tuple[Period, ...] = ()
    author_words: frozenset[str] = frozenset()
    question_words: frozenset[str] = GENERAL.question_words


def read_question(question: str, authors: Sequence[str], profile: Profile = GENERAL) -> QueryCues:
    """Split a question into lexical terms, a semantic probe, author cues and time cues,
    by the question words and telling lag of ``profile``."""
    tokens = [_strip_possessive(t) for t in tokenize(question)]
    named, consumed = _named_authors(tokens, authors)
    skip = profile.question_words
    terms = [
        t
        for i, t in enumerate(tokens)
        if i not in consumed and t not in STOP_WORDS and t not in skip and len(t) > 1
    ]
    return QueryCues(
        terms=tuple(dict.fromkeys(terms)),
        probe=_without(question, [name for name, _ in named]),
        authors=tuple(named),
        periods=named_periods(question, profile.telling_lag),
        author_words=frozenset(w for a in authors for w in normalize_text(a).split(" ")),
        question_words=skip,
    )


def compounds(question: str) -> list[str]:
    """Adjacent word pairs of a question written as one word, normalised as concepts:
    "time out" → ``timeout``, "set up" → ``setup``. Only candidates: a read keeps those
    its reader's memories carry, so a compound never invents a concept."""
    words = [t for t in tokenize(question) if t.isalpha()]
    joined = (normalize_concept(a + b) for a, b in zip(words, words[1:], strict=False))
    return list(dict.fromkeys(c for c in joined if len(c) <= MAX_CONCEPT_CHARS))


def feedback_terms(texts: Sequence[str], question: QueryCues) -> list[str]:
    """Words the best hits share that the question lacks: the expansion of its terms."""
    # Author names are skipped too: a name matches everything its author wrote.
    skip = set(question.terms) | question.author_words
    counts: dict[str, int] = {}
    for text in texts:
        for word in _words(text):
            if (
                len(word) > 1
                and word not in skip
                and word not in STOP_WORDS
                and word not in question.question_words
            ):
                counts[word] = counts.get(word, 0) + 1
    shared = [w for w, n in counts.items() if n >= FEEDBACK_MIN_DOCS and not w.isdigit()]
    shared.sort(key=lambda w: (-counts[w], w))
    return shared[:FEEDBACK_TERMS]


@functools.lru_cache(maxsize=STEMS_KEPT)
def _words(text: str) -> frozenset[str]:
    """A text's words, possessives stripped (kept: the next read expands from many of the
    same best hits)."""
    return frozenset(_strip_possessive(t) for t in tokenize(text))


def _without(question: str, names: Sequence[str]) -> str:
    """The question with each name (and its possessive) removed; unchanged if nothing is left."""
    text = question
    for name in names:
        text = re.sub(rf"\b{re.escape(name)}(?:['’]s)?\b", " ", text, flags=re.IGNORECASE)
    stripped = " ".join(text.split())
    return stripped if stripped.strip(" ?.!,") else question


def named_periods(question: str, lag: timedelta = timedelta(0)) -> tuple[Period, ...]:
    """Absolute dates the question names (a day, a month of a year, a year), each
    extended by ``lag`` past its end."""
    found: list[Period] = []
    taken: list[tuple[int, int]] = []
    for pattern, fields in _DATES:
        for match in pattern.finditer(question):
            if any(a < match.end() and match.start() < b for a, b in taken):
                continue  # part of a more precise date already read
            period = _period(dict(zip(fields, match.groups(), strict=True)), lag)
            if period is not None:
                taken.append(match.span())
                found.append(period)
    return tuple(found)


def _period(parts: dict[str, str], lag: timedelta) -> Period | None:
    year = int(parts["year"])
    month = _MONTHS[parts["month"].lower()] if "month" in parts else None
    try:
        if month is None:
            start, end, trust = datetime(year, 1, 1), datetime(year + 1, 1, 1), TIME_TRUST_YEAR
        elif "day" in parts:
            start = datetime(year, month, int(parts["day"]))
            end, trust = start + timedelta(days=1), TIME_TRUST_DAY
        else:
            start = datetime(year, month, 1)
            end = datetime(year + month // 12, month % 12 + 1, 1)
            trust = TIME_TRUST_MONTH
    except ValueError:
        return None  # "February 30": not a date
    return Period(
        times.format_time(start.replace(tzinfo=UTC)),
        times.format_time((end + lag).replace(tzinfo=UTC)),
        trust,
    )


def _strip_possessive(token: str) -> str:
    for suffix in ("'s", "’s"):
        if token.endswith(suffix):
            return token[: -len(suffix)]
    return token.strip("'’")


def _named_authors(
    tokens: Sequence[str], authors: Sequence[str]
) -> tuple[list[tuple[str, float]], set[int]]:
    """Authors the tokens name, best match first, and the token positions used."""
    named: dict[str, float] = {}
    consumed: set[int] = set()
    for author in authors:
        parts = normalize_text(author).split(" ")
        full = _find(tokens, parts)
        if full is not None:
            named[author] = AUTHOR_TRUST_EXACT
            consumed.update(range(full, full + len(parts)))
            continue
        if len(parts) > 1:
            for part in parts:
                if len(part) >= MIN_NAME_PART and part in tokens:
                    named[author] = max(named.get(author, 0.0), AUTHOR_TRUST_PARTIAL)
                    consumed.add(tokens.index(part))
    ranked = sorted(named.items(), key=lambda item: (-item[1], item[0]))
    return ranked, consumed


def _find(tokens: Sequence[str], parts: Sequence[str]) -> int | None:
    width = len(parts)
    for start in range(len(tokens) - width + 1):
        if list(tokens[start : start + width]) == list(parts):
            return start
    return None
