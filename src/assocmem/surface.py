"""The operation registry: every public `Memory` operation, declared once.

Invariant: the HTTP routes, the `Client` methods, the CLI commands and the MCP tools
are all generated from `OPERATIONS`, so an operation added to `Memory` and named in
`DECLARED` is served, called and checked everywhere at once. A parameter's name, type
and default are read from `Memory`'s own signature (one source, never copied); its
one-line help comes from `PARAMETER_DOCS`. A test fails when a public `Memory` method
is missing here or any surface lacks an operation.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from assocmem.memory import Memory
from assocmem.operations.base import Declaration

# Every public operation. ``writes`` routes a server call to the writer connection.
# Every public operation of `Memory`'s own methods; each group of operations (a
# capability's ``operations.py``, among `Memory`'s bases) declares its own, in `declared`.
# ``writes`` routes a server call to the writer connection.
CORE: dict[str, Declaration] = {
    "write": Declaration(True, ("text",)),
    "write_many": Declaration(True, ("items",)),
    "read": Declaration(False, ("query",)),
    "get": Declaration(False, ("ids",)),
    "export": Declaration(False),
    "feedback": Declaration(True, ("used",)),
    "graph": Declaration(False, ("concepts",)),
    "stats": Declaration(False),
    "soft_read": Declaration(False, ("query_key",)),
    "declare": Declaration(True, ("associations",)),
    "retract": Declaration(True),
    "delete_entity": Declaration(True, ("entity",)),
    "traverse": Declaration(False, ("entity",)),
    "reconstruct": Declaration(False, ("query",)),
    "resolve": Declaration(False, ("entity", "predicates")),
    "forget": Declaration(True, ("ids",)),
    "archive": Declaration(True, ("ids",)),
    "restore": Declaration(True, ("ids",)),
    "protect": Declaration(True, ("ids",)),
    "history": Declaration(False, ("key",)),
    "contradictions": Declaration(False),
    "end_task": Declaration(True, ("task",)),
    "retain": Declaration(True),
}


def _declared() -> dict[str, Declaration]:
    """Every operation's declaration: `Memory`'s own, then each group's, in the order
    `Memory` lists its groups."""
    found = dict(CORE)
    for group in Memory.__bases__:
        found.update(getattr(group, "declared", {}))
    return found


DECLARED = _declared()

# The groups an agent's tool list is made of (`assocmem mcp --tools`): the core is what
# an agent needs every day, kept small because every tool listed costs prompt space in
# every call; the rest are turned on by name where a deployment uses them.
GROUPS: dict[str, tuple[str, ...]] = {
    "core": ("write", "read", "feedback", "get", "update", "forget"),
    "graph": ("declare", "retract", "delete_entity", "traverse", "reconstruct", "resolve",
              "graph", "history", "contradictions", "soft_read"),
    "trust": ("credit", "standing", "influence_gate_report", "slash", "stale_derived",
              "set_checked_sources", "checked_sources",
              "verify_attribution", "ratify", "grade", "spend_irreversible", "monitor", "cases",
              "convergence_report"),
    "vault": ("vault_index", "index_status", "relevant_notes", "coverage_gap", "find_gaps",
              "bridge_candidates", "extract_claims", "idea_methods", "maintenance_report",
              "apply_links"),
    "procedures": ("propose_procedure", "promote_procedure", "revise_procedure",
                   "retire_procedure", "graduate", "ungraduate"),
    "admin": ("write_many", "export", "export_all", "import_lines", "stats", "archive",
              "restore", "protect", "end_task", "retain", "consolidate", "consolidate_clusters",
              "value_by_cohort", "list_memories", "feedback_log", "inspect", "health"),
}  # fmt: skip
# Writing operations that may remove or overwrite what is kept (the rest only add, or
# change reversibly), and those a repeat with the same arguments changes nothing more.
DESTRUCTIVE = frozenset({"forget", "retract", "delete_entity", "end_task", "retain", "slash",
                         "spend_irreversible", "update", "set_checked_sources"})  # fmt: skip
IDEMPOTENT = frozenset({"forget", "retract", "delete_entity", "end_task", "archive",
                        "restore", "protect", "update", "vault_index", "retire_procedure",
                        "ungraduate", "set_checked_sources"})  # fmt: skip

# One line of help per parameter name, shared by every operation that takes it;
# ``(operation, name)`` entries override it where the meaning differs.
PARAMETER_DOCS: dict[str | tuple[str, str], str] = {
    "text": "the memory's text, as observed (kept verbatim)",
    "concepts": "concepts it is about (default: keywords of the text or query)",
    "kind": "working, episodic (default), semantic or procedural",
    "tags": "free labels",
    "value": "importance, a relative weight (default 1)",
    "meta": "a JSON object of extra fields, filterable in where",
    "source": "where it came from (a URL, a site, a person)",
    "observed_at": "when it was observed: ISO 8601 with a timezone (default now)",
    "version": "the version of the thing it describes",
    "verified_at": "when it was last checked true (ISO 8601)",
    "verification_scope": "what the check covered",
    "recheck_by": "when it must be checked again (ISO 8601)",
    "confidence": "the writer's confidence, 0 to 1 (never evidence on its own)",
    "access": "roles that may read it (default: everyone)",
    "key": "(subject, relation): a newer value retires the current one",
    "derived_from": "ids of the memories it was derived from",
    "protected": "shield it from archiving",
    "author": "who said or wrote it",
    "thread": "the conversation or thread it belongs to",
    "task": "the task a working memory belongs to",
    "associations": '{"entities": [{"name", "aliases"}], "relations": [{"subject", '
    '"predicate", "object"}]}; endpoints are entity names or mem:<id>',
    "items": "a list of write objects (the arguments of write)",
    "query": "a question or description",
    "k": "how many items to return (1-1000)",
    "hops": "learned-link hops to follow (0-3)",
    "threshold": "the link weight a hop follows",
    "where": "a hard JSON filter: field -> value, list or {$op: value}",
    "prefer": "a soft JSON filter (or a list of [filter, trust]) boosting matches",
    "prefer_trust": "how much a prefer match boosts (default 0.5)",
    "prefer_max_boost": "the cap on the product of prefer boosts (default 2)",
    "kinds": "memory kinds to read (default: all but working)",
    "explain": "say which arms found each item",
    "as_of": "the moment decay and verification are measured at (default now)",
    "mode": "recall (default: every arm; auto is the same), lexical (words only), semantic"
    " (meaning only) or evidence (verified, sourced facts only)",
    "role": "read in this role instead of the memory's",
    "include_superseded": "include values a newer one retired",
    "profile": "the recall profile to rank by: general or conversation (default: the memory's)",
    "ids": "memory ids",
    "sources": "source names or URLs evidence mode counts as checked here ([] clears them)",
    "outcome": "how the answer went, from -1 to 1",
    "query_concepts": "the concepts the question was about ([] for none), when no read is named",
    "used": "ids of the memories the answer used",
    ("feedback", "read"): "the id of the read that found them (its result's id)",
    "depth": "hops out (1-3)",
    "query_key": "the numeric key vector to attend with",
    "temperature": "softmax temperature (lower concentrates the weights)",
    "anchor_ref": "mem:<id> of the memory that evidences the declarations",
    "declared_by": "agent or operator",
    "relation_ids": "ids of declared relations to remove",
    "mentions": "(entity, mem:<id>) pairs to remove",
    "entity": "an entity name or alias",
    "max_hops": "relation hops to follow",
    "limit": "at most this many entities",
    "count": "how many items to return",
    "max_evidence": "evidence records per item",
    "predicates": "relation predicates to follow, in order",
    "policy": 'a retention policy {"rules": [...]}, each rule a match filter and its actions',
    # -- the vault (vault/ room) --
    "path": "the folder of Markdown notes (default: the one indexed before)",
    "note": "a note by path, file name, title or alias",
    "notes": "notes to add related links to (default: the orphans)",
    "stale_days": "a note dated (by its frontmatter) longer ago than this is stale",
    "dry_run": "only return the plan, writing nothing (default true)",
    ("relevant_notes", "k"): "how many notes to return (1-100)",
    ("coverage_gap", "k"): "how many notes to return (1-100)",
    ("bridge_candidates", "k"): "how many bridges to return (1-100)",
    # -- trust: attribution
    "public_key": "hex Ed25519 public key every receipt must be signed by",
    "id": "a memory id",
    "by_key": "the identity ratifying (never the claim's author)",
    "lens": "the method or angle of the check (two distinct lenses settle a claim)",
    ("ratify", "kind"): "independent_witness, reproduction, prior_art_empty or audit",
    "amount": "the irreversible influence this action spends (> 0)",
    "budget": "each contributing source's lifetime irreversible budget",
    ("monitor", "outcome"): "good or bad (or +1 / -1), from the application",
    ("monitor", "k"): "the tolerated bad rate per outcome (CUSUM reference, default 0.1)",
    "h": "the CUSUM threshold that raises a case (default 4)",
    "auto_slash": "slash a source when its case is raised (default off)",
    "with_status": "attach each item's convergence status",
    ("protect", "protected"): "true to shield, false to lift the shield",
    # standing
    "attestation": "(public_key_hex, signature_hex): the source's Ed25519 signature of the claim",
    "influence_only": "return only memories that earned standing (credited or corroborated)",
    (
        "credit",
        "outcome",
    ): "good or bad (or +1 / -1): what the memories drove, from the application",
    (
        "slash",
        "scope",
    ): "memory (these only) or source (default: all sharing their source or taint)",
    ("restore", "scope"): "none: unarchive; memory or source: lift a slash, restoring standing",
    ("read", "concepts"): "concepts to start from (default: keywords of the query)",
    # procedures
    "episodes": "ids of the episodic memories the procedure rests on",
    "steps": 'actions, and guards {"when": condition, "do": action} answered first',
    "preconditions": "the cases it repairs: field -> value, list or {$ne|$in|$nin|$exists}",
    "checks": 'check cases [{"case": {facts}, "expect": "apply", "decline" or an action}]',
    "name": "a name for the procedure (its versions share it)",
    ("promote_procedure", "id"): "a procedure id",
    ("revise_procedure", "id"): "a procedure id",
    ("retire_procedure", "id"): "a procedure id",
    "retired": "true to retire, false to bring it back",
    ("revise_procedure", "episodes"): "more episode ids to add to its references",
    ("graph", "concepts"): "concepts to look around",
    # consolidation
    "keep": "how many active memories to keep (default: no budget)",
    "by": "the cohorts: tag (default), month or week",
    ("consolidate_clusters", "threshold"): "the size a topic needs to be consolidated",
    # -- inspection
    ("list_memories", "limit"): "at most this many memories on the page (1-500, default 50)",
    "offset": "how many of the newest matches to skip",
    ("list_memories", "kind"): "only this kind: working, episodic, semantic or procedural",
    "tag": "only memories carrying this tag",
    "status": "only this status: active, superseded or archived (default: every status)",
    ("list_memories", "source"): "only memories from this source (as written or canonical)",
    ("feedback_log", "limit"): "at most this many calls on the page (1-500, default 50)",
    ("feedback_log", "memory_id"): "only the calls that rated this memory",
    ("inspect", "id"): "the id of the memory to open",
    # -- comforts: update, export and import --
    ("update", "id"): "the id of the memory to change",
    ("update", "tags"): "its new tags (replacing the old)",
    ("update", "value"): "its new importance",
    ("update", "meta"): "its new meta object (replacing the old whole)",
    ("update", "access"): "the roles that may read it from now on",
    ("update", "protected"): "true to shield it from archiving, false to lift the shield",
    "lines": "export lines (JSON objects, as export or export --all writes them)",
    "first_line": "the number of the first line, for error reports (default 1)",
    "rehome": "take records of another agent as this agent's own (default: refuse them)",
}


@dataclass(frozen=True)
class Parameter:
    """One parameter of an operation, as `Memory` declares it."""

    name: str
    annotation: Any  # the resolved type
    default: Any  # `inspect.Parameter.empty` when the caller must give it
    variadic: bool  # a ``*args`` parameter, sent as a list
    doc: str

    @property
    def required(self) -> bool:
        return self.default is inspect.Parameter.empty and not self.variadic

    @property
    def json_type(self) -> Any:
        """The type of the parameter as a named JSON field: a ``*args`` parameter is a list."""
        return list[self.annotation] if self.variadic else self.annotation  # type: ignore[name-defined]


@dataclass(frozen=True)
class Operation:
    """One public operation: its name, parameters, result type and documentation."""

    name: str
    writes: bool
    positional: tuple[str, ...]
    parameters: tuple[Parameter, ...]
    returns: Any
    doc: str
    group: str = "admin"  # its group of `GROUPS`

    @property
    def destructive(self) -> bool:
        """Whether it may remove or overwrite what is kept."""
        return self.name in DESTRUCTIVE

    @property
    def idempotent(self) -> bool:
        """Whether calling it again with the same arguments changes nothing more."""
        return not self.writes or self.name in IDEMPOTENT

    @property
    def summary(self) -> str:
        return self.doc.splitlines()[0] if self.doc else self.name

    @property
    def command(self) -> str:
        """The CLI command name."""
        return self.name.replace("_", "-")

    def parameter(self, name: str) -> Parameter:
        return next(p for p in self.parameters if p.name == name)

    @property
    def result_type(self) -> Any:
        """The result as it travels (JSON, a remote call): an iterator arrives as a list."""
        if typing.get_origin(self.returns) is Iterator:
            return list[typing.get_args(self.returns)[0]]  # type: ignore[misc]
        return self.returns

    def call(self, memory: Memory, arguments: Mapping[str, Any]) -> Any:
        """Call the operation on ``memory`` with named arguments (a ``*args`` parameter
        given as a list, the parameters before it passed by position); an iterator's
        items are gathered into a list, the form every remote surface sends."""
        method = getattr(memory, self.name)
        named = dict(arguments)
        star = next((i for i, p in enumerate(self.parameters) if p.variadic), None)
        if star is None:
            result = method(**named)
        else:
            leading = [named.pop(p.name) for p in self.parameters[:star] if p.name in named]
            result = method(*leading, *named.pop(self.parameters[star].name, ()), **named)
        return list(result) if isinstance(result, Iterator) else result


def _operation(name: str, declared: Declaration) -> Operation:
    method = getattr(Memory, name)
    hints = typing.get_type_hints(method)
    parameters = []
    for p in list(inspect.signature(method).parameters.values())[1:]:
        doc = PARAMETER_DOCS.get((name, p.name)) or PARAMETER_DOCS.get(p.name)
        if doc is None:
            raise TypeError(f"Memory.{name}'s parameter {p.name!r} has no entry in PARAMETER_DOCS")
        parameters.append(
            Parameter(
                name=p.name,
                annotation=hints.get(p.name, Any),
                default=p.default,
                variadic=p.kind is inspect.Parameter.VAR_POSITIONAL,
                doc=doc,
            )
        )
    group = next((g for g, names in GROUPS.items() if name in names), None)
    if group is None:
        raise TypeError(f"operation {name!r} is in no group of GROUPS")
    return Operation(
        name=name,
        writes=declared.writes,
        positional=declared.positional,
        parameters=tuple(parameters),
        returns=hints.get("return", Any),
        doc=inspect.getdoc(method) or name,
        group=group,
    )


@cache
def operations() -> Mapping[str, Operation]:
    """Every operation, in declaration order (built once, from `Memory`)."""
    return {name: _operation(name, declared) for name, declared in DECLARED.items()}


def public_methods() -> list[str]:
    """`Memory`'s public operations as the class defines them (what `DECLARED` must name)."""
    # `Memory` composes groups of operations (`operations/`): walk every class it is made of.
    return sorted(
        {
            name
            for cls in Memory.__mro__
            if cls.__module__.startswith("assocmem.")
            for name, value in vars(cls).items()
            if not name.startswith("_") and inspect.isfunction(value) and name not in ("close",)
        }
    )
