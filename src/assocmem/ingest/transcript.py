"""Transcripts into writes: "Speaker: text" turns become items for `Memory.write_many`.

Invariant: one item per turn, in the transcript's order, its text kept as written
("Speaker: text", the label included) with the speaker as ``author``; turns of one
call share its ``thread`` and ``observed_at`` unless a turn gives its own. Read such
a store with the ``"conversation"`` recall profile, which embeds a turn without
its speaker label and ranks by the transcript rules (see `recall.profiles`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from assocmem.errors import InvalidInput

# A speaker label: a name (no colon, not too long) before the first colon.
_TURN = re.compile(r"\s*([^:\n]{1,256}?)\s*:\s*(\S.*)", re.DOTALL)
# Fields a turn given as a dict may carry besides its speaker and text.
TURN_FIELDS = frozenset({"speaker", "text", "observed_at", "thread", "meta"})


def transcript_items(
    turns: str | Iterable[str] | Iterable[Mapping[str, Any]],
    *,
    thread: str | None = None,
    observed_at: str | datetime | None = None,
) -> list[dict[str, Any]]:
    """Write items for the turns of a transcript.

    ``turns`` is the transcript as text (one "Speaker: text" turn per line; blank
    lines skipped), a list of such lines, or a list of dicts with ``speaker`` and
    ``text`` (and optionally ``observed_at``, ``thread``, ``meta``), taken as given.
    A turn without a speaker raises `InvalidInput` naming ``turns``.
    """
    if isinstance(turns, str):
        turns = turns.splitlines()
    items = []
    for position, turn in enumerate(turns):
        if isinstance(turn, str):
            if not turn.strip():
                continue
            speaker, text = _split(turn, position)
            fields: Mapping[str, Any] = {}
        elif isinstance(turn, Mapping):
            speaker, text, fields = _fields(turn, position)
        else:
            raise InvalidInput(f"turn {position} must be a line or a dict", field="turns")
        item = {
            "text": f"{speaker}: {text}",
            "author": speaker,
            "thread": fields.get("thread", thread),
            "observed_at": fields.get("observed_at", observed_at),
            "meta": fields.get("meta"),
        }
        items.append({k: v for k, v in item.items() if v is not None})
    return items


def _split(line: str, position: int) -> tuple[str, str]:
    match = _TURN.fullmatch(line)
    if match is None:
        raise InvalidInput(f"turn {position} is not 'Speaker: text': {line[:80]!r}", field="turns")
    return match.group(1), match.group(2).strip()


def _fields(turn: Mapping[str, Any], position: int) -> tuple[str, str, Mapping[str, Any]]:
    unknown = sorted(set(turn) - TURN_FIELDS)
    if unknown:
        raise InvalidInput(f"turn {position} has unknown fields {unknown}", field="turns")
    speaker, text = turn.get("speaker"), turn.get("text")
    if not isinstance(speaker, str) or not speaker.strip():
        raise InvalidInput(f"turn {position} needs a non-empty speaker", field="turns")
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput(f"turn {position} needs a non-empty text", field="turns")
    return speaker, text, turn  # as given: the text is kept verbatim
