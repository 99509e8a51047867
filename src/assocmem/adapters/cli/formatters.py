"""How the CLI prints an operation's result: JSON for ``--json``, else a line per thing.

Invariant: `to_json` is the exact JSON the result's ``to_dict`` gives (lists of them
item by item); operations that return a bare count are wrapped in an object named
by `COUNT_NAMES`, as the CLI has always printed them. Every operation without a
formatter in `FORMATTERS` prints through `readable`, so a new operation prints
without code here.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from assocmem.graph.types import Reconstruction, Traversal
from assocmem.lifecycle.types import Contradiction, Lifecycle
from assocmem.links.types import FeedbackResult, Graph
from assocmem.types import Declared, ReadResult, Record, Stats, WriteResult

# Operations returning an int, and the key their count is printed under.
COUNT_NAMES = {"forget": "forgotten", "delete_entity": "deleted", "end_task": "cleared"}

Formatter = Callable[[Any, Mapping[str, Any]], str]


def to_json(name: str, result: Any) -> Any:
    """The JSON form of ``result`` of operation ``name``."""
    if name in COUNT_NAMES:
        return {COUNT_NAMES[name]: result}
    return _plain(result)


def _plain(value: Any) -> Any:
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    return value


def dumps(data: Any, *, lines: bool = False) -> str:
    """JSON text: indented, or compact for one JSON-lines row."""
    return json.dumps(data, ensure_ascii=False, indent=None if lines else 2)


def json_lines(items: Iterator[Any]) -> Iterator[str]:
    """One compact JSON line per item (export streams; it never holds the store in memory)."""
    return (dumps(_plain(item), lines=True) for item in items)


def readable(result: Any) -> str:
    """The fallback: scalars as they are, one line per list item, ``key: value`` for objects."""
    data = _plain(result)
    if isinstance(data, list):
        return "\n".join(_line(item) for item in data) or "none"
    if isinstance(data, dict):
        return "\n".join(f"{key}: {_line(value)}" for key, value in data.items())
    return str(data)


def _line(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _write(result: WriteResult, _: Mapping[str, Any]) -> str:
    if result.stored and result.id:
        return result.id
    return f"refused: {result.reason} ({result.id})"


def _read(result: ReadResult, _: Mapping[str, Any]) -> str:
    added = ", ".join(f"{c}({w:g})" for c, w in result.expanded_concepts.items()) or "nothing"
    lines = [f"read {result.id} asked: {', '.join(result.query_concepts)} | links add: {added}"]
    for item in result.items:
        via = f"  [via {', '.join(v.concept for v in item.via)}]" if item.via else ""
        lines.append(f"{item.id}  {item.text}{via}")
    return "\n".join(lines)


def _feedback(result: FeedbackResult, _: Mapping[str, Any]) -> str:
    summary = f"{result.lessons_updated} lessons taught, {result.links_updated} links moved"
    return f"feedback {result.id}: {summary}"


def _graph(result: Graph, _: Mapping[str, Any]) -> str:
    lines = [
        f"{e.source} — {e.target}  weight {e.weight:g}  count {e.count}  valence {e.valence:+.2f}"
        for e in result.edges
    ]
    return "\n".join(lines) or "no links"


def _records(found: list[Record], _: Mapping[str, Any]) -> str:
    return "\n".join(f"{r.id}  {r.text}" for r in found)


def _stats(stats: Stats, _: Mapping[str, Any]) -> str:
    return (
        f"{stats.memories} memories, {stats.concepts} concepts, {stats.links} links, "
        f"{stats.feedback} feedback"
    )


def _declare(result: Declared, _: Mapping[str, Any]) -> str:
    dropped = "".join(f"\ndropped {d.item}: {d.reason}" for d in result.dropped)
    return f"{len(result.entities)} entities, {len(result.relations)} relations{dropped}"


def _traverse(result: Traversal, _: Mapping[str, Any]) -> str:
    lines = [f"{'  ' * e.hops}{e.name} ({len(e.refs)} refs)" for e in result.entities]
    lines += [f"{r.subject} —{r.predicate}→ {r.object}" for r in result.relations]
    return "\n".join(lines)


def _reconstruct(result: Reconstruction, _: Mapping[str, Any]) -> str:
    lines = []
    for item in result.items:
        lines.append(f"{item.ref}  {item.text}")
        lines += [f"    + {e.ref} [{e.why}]  {e.text}" for e in item.evidence]
    return "\n".join(lines)


def _protect(result: Lifecycle, call: Mapping[str, Any]) -> str:
    return f"{'' if call.get('protected', True) else 'un'}protected {len(result.changed)}"


def _history(chain: list[Record], _: Mapping[str, Any]) -> str:
    lines = [f"{r.observed_at}  {r.status:10s}  {r.id}  {r.text}" for r in chain]
    return "\n".join(lines) or "no values"


def _contradictions(flags: list[Contradiction], _: Mapping[str, Any]) -> str:
    return "\n".join(f"{f.kind}: {f.first} vs {f.second} ({f.detail})" for f in flags) or "none"


FORMATTERS: dict[str, Formatter] = {
    "write": _write,
    "write_many": lambda results, call: "\n".join(_write(r, call) for r in results),
    "read": _read,
    "feedback": _feedback,
    "graph": _graph,
    "get": _records,
    "stats": _stats,
    "declare": _declare,
    "retract": lambda r, _: f"retracted {r['relations']} relations, {r['mentions']} mentions",
    "traverse": _traverse,
    "reconstruct": _reconstruct,
    "forget": lambda count, _: f"forgot {count} memories",
    "delete_entity": lambda count, _: f"deleted {count} entities",
    "end_task": lambda count, _: f"cleared {count} working memories",
    "archive": lambda r, _: f"archived {len(r.changed)}, skipped {len(r.skipped)}",
    "restore": lambda r, _: f"restored {len(r.changed)}",
    "protect": _protect,
    "history": _history,
    "contradictions": _contradictions,
    "retain": lambda report, _: "\n".join(f"{r['name']}: {r['matched']} matched" for r in report),
    "resolve": lambda names, _: "\n".join(names),
}


def human(name: str, result: Any, call: Mapping[str, Any]) -> str:
    """The text printed for ``result`` of operation ``name`` called with ``call``."""
    formatter = FORMATTERS.get(name)
    return formatter(result, call) if formatter else readable(result)
