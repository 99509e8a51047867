"""Concept normalisation and extraction: pure functions, no model.

Invariant: the same input always gives the same normalised concept, on every
write and every read, so a concept written as ``Timeouts`` and one read as
``timeout`` meet. Normalisation is NFKC, case-fold, whitespace collapsed and
trimmed, then each word folded to its Snowball English stem (PyStemmer), so
``retried``, ``retry`` and ``retries`` are all ``retri``. The caller's original
form is kept alongside.
"""

from __future__ import annotations

import functools
import re
import threading
import unicodedata
from collections.abc import Iterable

import Stemmer

# A concept is at most this many characters after normalisation; longer strings
# are sentences, not concepts, and would bloat every link row they touch.
MAX_CONCEPT_CHARS = 64

# Concepts kept per memory when extracted from text. Links grow with the square of
# this (every pair co-occurs), so it bounds the write cost: 16 concepts are 120
# pairs, which keeps a write well under a millisecond of link upserts.
MAX_EXTRACTED_CONCEPTS = 16

_WHITESPACE = re.compile(r"\s+")
# Word characters with inner apostrophes, hyphens or dots kept ("don't", "e-mail", "v2.1").
_TOKEN = re.compile(r"\w+(?:['’.\-]\w+)*")

# English function words, auxiliaries, pronouns and discourse fillers. They
# co-occur with everything, so as concepts they would link every memory to every
# other and drown the learned signal.
STOP_WORDS = frozenset(
    """
    a about above after again against all almost also although always am among an and another
    any anybody anyone anything anyway anywhere are aren't around as at away back be became
    because become been before being below besides between both but by can can't cannot could
    couldn't did didn't do does doesn't doing don't done down during each either else enough
    even ever every everybody everyone everything for from further get gets getting got gotten
    had hadn't has hasn't have haven't having he he'd he'll he's her here here's hers herself
    him himself his how how's however i i'd i'll i'm i've if in into is isn't it it's its
    itself just let let's like made make many may maybe me might mine more most much must
    mustn't my myself neither never no nobody none nor not nothing now of off often oh ok okay
    on once one only onto or other others otherwise ought our ours ourselves out over own per
    perhaps quite rather really same shall shan't she she'd she'll she's should shouldn't since
    so some somebody someone something sometimes somewhat still such than that that's the their
    theirs them themselves then there there's these they they'd they'll they're they've thing
    things this those though through thus till to too toward towards under until up upon us
    very via was wasn't we we'd we'll we're we've were weren't what what's whatever when
    when's whenever where where's whereas wherever whether which while who who's whoever whom
    whose why why's will with within without won't would wouldn't yeah yes yet you you'd
    you'll you're you've your yours yourself yourselves
    """.split()
)


def normalize_text(text: str) -> str:
    """NFKC, case-fold, collapse whitespace to one space and trim."""
    return _WHITESPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


# The version of the folding a store's concept names were made with, recorded in
# its `store_info` (see store/refold.py): change it whenever `fold_word` changes
# what it returns, and every store refolds its concepts once when next opened.
FOLDING = "snowball-english-1"

# A Snowball stemmer keeps internal state and must not be called from two threads at
# once; the server reads on several. One per thread, made on first use, so no
# thread ever waits for another's stemming (a shared lock would serialise them).
_STEMMERS = threading.local()


def _stemmer() -> Stemmer.Stemmer:
    try:
        stemmer: Stemmer.Stemmer = _STEMMERS.stemmer
    except AttributeError:
        # No cache inside the stemmer: `fold_word`'s cache already serves repeats.
        stemmer = _STEMMERS.stemmer = Stemmer.Stemmer("english", 0)
    return stemmer


@functools.lru_cache(maxsize=65_536)
def fold_word(word: str) -> str:
    """Fold a word to its Snowball English stem: ``timeouts``, ``timeout`` → ``timeout``.

    Only words of letters (any script) and apostrophes are stemmed, curly
    apostrophes read as straight ones (``user’s`` → ``user``). Snowball changes only
    English suffixes in Latin letters, so other scripts come back as they are.
    Identifiers with digits, hyphens or dots (``v2.1``, ``e-mail``, ``gpt-4o``) pass
    through unchanged: their parts are names, not inflections.
    """
    core = word.replace("’", "'")
    if not core.replace("'", "").isalpha():
        return word
    stem: str = _stemmer().stemWord(core)
    return stem or word


@functools.lru_cache(maxsize=65_536)
def normalize_concept(concept: str) -> str:
    """Normalise a caller-given concept: text normalisation, then fold each word."""
    return " ".join(fold_word(w) for w in normalize_text(concept).split(" ") if w)


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens of a text, in order (NFKC, case-folded)."""
    return _TOKEN.findall(unicodedata.normalize("NFKC", text).casefold())


def is_keyword(token: str) -> bool:
    """A token worth being a concept: not a stop word, not a bare number, not one letter."""
    core = token.replace("’", "'")
    return len(core) > 1 and core not in STOP_WORDS and not core.replace(".", "").isdigit()


def extract_concepts(text: str, limit: int = MAX_EXTRACTED_CONCEPTS) -> list[tuple[str, str]]:
    """Deterministic keywords of a text as ``(normalised, original)`` pairs.

    Keywords are kept in order of first appearance, one per normalised form, at
    most ``limit`` of them.
    """
    originals = _TOKEN.findall(unicodedata.normalize("NFKC", text))
    seen: dict[str, str] = {}
    for original in originals:
        concept = _token_concept(original)
        if concept and concept not in seen:
            seen[concept] = original
            if len(seen) >= limit:
                break
    return list(seen.items())


@functools.lru_cache(maxsize=65_536)
def _token_concept(original: str) -> str:
    """The concept a text token stands for, or "" for a token that is none. Cached: a
    vocabulary's words recur across a batch, so each is judged and folded once."""
    token = original.casefold()
    if not is_keyword(token):
        return ""
    concept = fold_word(token.strip("'’"))
    return concept if len(concept) <= MAX_CONCEPT_CHARS else ""


def unique_concepts(pairs: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """Drop repeated normalised forms, keeping the first original form of each."""
    seen: dict[str, str] = {}
    for normalized, original in pairs:
        seen.setdefault(normalized, original)
    return list(seen.items())
