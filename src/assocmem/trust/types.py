"""What trust reports: standing, the influence gate, stale derivations, and attribution
(receipts, ratifications, grades, the monitor, budgets, convergence)."""

from __future__ import annotations

from dataclasses import dataclass

from assocmem.types import Plain


@dataclass(frozen=True)
class Standing(Plain):
    """What a memory's standing rests on, and whether it passes the influence gate.

    ``good``/``bad`` count the application's outcomes (`credit`) banked while not
    slashed; ``origins`` are the distinct canonical origins (under strict
    corroboration: the distinct verified keys) of the memory and the active memories
    restating it. ``earned`` is ``not slashed and not stale and (good > bad or
    len(origins) >= 2)``; ``basis`` says which: ``credited``, ``corroborated``,
    ``slashed``, ``stale`` (derived from a memory since superseded or slashed, and not
    re-credited since: see `Memory.stale_derived`) or ``neither``.
    ``pre_slash`` is the ``(good, bad)`` a restore brings back.
    """

    id: str
    good: int
    bad: int
    source: str | None
    taint: tuple[str, ...]
    origins: tuple[str, ...]
    slashed: bool
    earned: bool
    basis: str
    pre_slash: tuple[int, int] | None = None
    attested_key: str | None = None


@dataclass(frozen=True)
class GateReport(Plain):
    """The influence gate's live cost on a store: ``would_block_frac`` of its
    ``active`` memories would be filtered by ``read(..., influence_only=True)``;
    ``breakdown`` counts each basis (credited, corroborated, slashed, neither)."""

    active: int
    would_block: int
    would_block_frac: float
    breakdown: dict[str, int]
    strict: bool
    advice: str


@dataclass(frozen=True)
class StaleDerived(Plain):
    """A memory whose derived_from ancestry holds a memory since contradicted,
    superseded or slashed (``reasons``: ``"<ancestor id>: <what>"``). ``demoted``: a
    superseded or slashed ancestor no re-credit has cleared costs it its standing and
    half its read score (a contradiction only flags it)."""

    id: str
    reasons: tuple[str, ...]
    demoted: bool = False


@dataclass(frozen=True)
class AttributionMismatch(Plain):
    """An active memory whose current canonical sources differ from its receipt's."""

    id: str
    committed: tuple[str, ...]
    current: tuple[str, ...]


@dataclass(frozen=True)
class AttributionReport(Plain):
    """What `verify_attribution` found.

    ``chain_intact`` is False from the first receipt whose link, hash or signature
    fails (``broken_at`` is its position, ``broken_reason`` why). ``mismatches`` are
    active memories whose current sources no longer match what was committed;
    ``receipts`` counts the active memories read here that carry a receipt and
    ``unreceipted`` those written without one (not an alarm); the chain itself is
    store-wide, so ``broken_at`` is a position in it.
    ``signed_by`` is the public key the signatures were checked against, if any.
    """

    chain_intact: bool
    receipts: int
    broken_at: int | None = None
    broken_reason: str | None = None
    mismatches: tuple[AttributionMismatch, ...] = ()
    unreceipted: int = 0
    signed_by: str | None = None

    @property
    def ok(self) -> bool:
        return self.chain_intact and not self.mismatches


@dataclass(frozen=True)
class Ratified(Plain):
    """What a `ratify` call recorded: ``stored`` is False for a duplicate."""

    id: str
    kind: str
    by_key: str
    lens: str | None
    stored: bool


@dataclass(frozen=True)
class Grade(Plain):
    """A claim's evidence grade: ``grade`` is claimed, corroborated, verified or
    settled; ``novel`` only after an empty prior-art search; ``why`` names what
    earned each rung."""

    id: str
    grade: str
    novel: bool
    why: tuple[str, ...] = ()


@dataclass(frozen=True)
class Case(Plain):
    """A case the monitor raised against a source: its CUSUM statistic at breach
    and the memory ids whose outcomes drove it."""

    id: int
    source: str
    raised_at: str
    statistic: float
    evidence: tuple[str, ...]
    status: str = "open"


@dataclass(frozen=True)
class SourceStatistic(Plain):
    """One attributed source's CUSUM state after a `monitor` call."""

    source: str
    statistic: float
    observations: int
    bad: int


@dataclass(frozen=True)
class MonitorResult(Plain):
    """What a `monitor` call did: the credit it recorded, each attributed source's
    statistic, the cases it raised and the sources it slashed (``auto_slash`` only)."""

    credited: tuple[str, ...]
    sources: tuple[SourceStatistic, ...]
    raised: tuple[Case, ...] = ()
    slashed: tuple[str, ...] = ()


@dataclass(frozen=True)
class SourceBudget(Plain):
    """One contributing source's irreversible budget after a spend."""

    source: str
    spent: float
    remaining: float


@dataclass(frozen=True)
class SpendResult(Plain):
    """Whether an irreversible spend was allowed; ``binding`` names the sources that
    would have exceeded the budget (nothing is charged when any would)."""

    allowed: bool
    amount: float
    budget: float
    sources: tuple[SourceBudget, ...]
    binding: tuple[str, ...] = ()
