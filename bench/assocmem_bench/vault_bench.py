"""The vault benchmark: index, re-index and relevant_notes on a generated vault.

The vault is deterministic for a seed: ``notes`` Markdown notes in folders of about
200, each with frontmatter, two headed sections of words drawn from a fixed made-up
vocabulary, and three wikilinks to other notes. Measured on one SQLite file: the full
index, a re-index with nothing changed, a re-index after editing 1 % of the notes
(checked to read exactly those), and relevant_notes latency over ``queries`` queries.
Progress goes to stderr, the figures to ``out`` as JSON.
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from assocmem import Memory
from assocmem.progress import track

from .measure import environment, percentile

NOTES_PER_FOLDER = 200
VOCABULARY = 4000
SYLLABLES = ("ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "po", "qu", "da", "fe", "gi")
EDITED_SHARE = 0.01


def _words(rng: random.Random) -> list[str]:
    words: set[str] = set()
    while len(words) < VOCABULARY:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def _paragraph(rng: random.Random, words: list[str], length: int) -> str:
    sentences = []
    for _ in range(max(1, length // 12)):
        sentence = " ".join(rng.choice(words) for _ in range(12))
        sentences.append(sentence.capitalize() + ".")
    return " ".join(sentences)


def generate(root: Path, notes: int, seed: int = 0) -> list[Path]:
    """Write the vault under ``root``; returns the note files in order."""
    rng = random.Random(seed)
    words = _words(rng)
    titles = [f"Note {i:05d}" for i in range(notes)]
    paths = []
    for i, title in enumerate(titles):
        folder = root / f"folder-{i // NOTES_PER_FOLDER:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        links = " ".join(f"[[{rng.choice(titles)}]]" for _ in range(3))
        text = (
            f"---\ntags: [{rng.choice(words)}, {rng.choice(words)}]\n"
            f"date: 20{rng.randint(15, 25)}-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}\n---\n"
            f"# {title}\n\n{_paragraph(rng, words, 60)}\n\n## Details\n\n"
            f"{_paragraph(rng, words, 48)} See {links}.\n"
        )
        path = folder / f"{title}.md"
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _timed(action: Any) -> tuple[Any, float]:
    started = time.perf_counter()
    result = action()
    return result, round(time.perf_counter() - started, 4)


def run(out: str, notes: int = 10_000, queries: int = 200, seed: int = 0) -> dict[str, Any]:
    """Run the benchmark; write and return its figures."""
    with tempfile.TemporaryDirectory(prefix="assocmem-vault-bench-") as folder:
        root = Path(folder) / "vault"
        _progress(f"generating {notes} notes")
        paths = generate(root, notes, seed)
        with Memory(str(Path(folder) / "vault.db"), agent_id="bench") as memory:
            _progress("full index")
            full, full_s = _timed(lambda: memory.vault_index(str(root)))
            _progress("re-index, nothing changed")
            same, same_s = _timed(memory.vault_index)
            rng = random.Random(seed + 1)
            edited = rng.sample(paths, max(1, int(len(paths) * EDITED_SHARE)))
            for path in edited:
                path.write_text(path.read_text() + "\nAn edit for the benchmark.\n")
            _progress(f"re-index after editing {len(edited)} notes")
            edit, edit_s = _timed(memory.vault_index)
            words = _words(random.Random(seed))
            asked = [" ".join(rng.choice(words) for _ in range(3)) for _ in range(queries)]
            _progress(f"{queries} relevant_notes queries")
            latencies = []
            for query in track(asked, total=len(asked), desc="vault bench", unit="query"):
                _, seconds = _timed(lambda q=query: memory.relevant_notes(q, k=5))
                latencies.append(seconds * 1000)
    report = {
        "benchmark": "vault",
        "machine": environment(),
        "notes": notes,
        "chunks": full.chunks,
        "full_index_s": full_s,
        "reindex_unchanged_s": same_s,
        "reindex_unchanged_read": same.read,
        "edited": len(edited),
        "reindex_edited_s": edit_s,
        "reindex_edited_read": edit.read,
        "reindex_edited_changed": edit.changed,
        "relevant_notes_ms": {
            "queries": queries,
            "p50": round(statistics.median(latencies), 2),
            "p95": round(percentile(latencies, 0.95), 2),
        },
    }
    Path(out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return report


if __name__ == "__main__":
    print(json.dumps(run(sys.argv[1] if len(sys.argv) > 1 else "bench-vault.json"), indent=2))
