"""The benchmarks page: ``docs/benchmarks/index.md`` and its plots, rendered from the
benches' JSON reports.

Every figure on the page is read from a results file, ``results/<bench>.json`` or
``results/<bench>-<variant>.json``, kept as ``assocmem bench <bench> --out …`` wrote it;
nothing on the page is typed by hand. A file's bench is its ``benchmark`` field, or
else its name, so a new file of a known bench gets a section of its own with no change
here, and a file this module cannot read is refused by name (`UnreadableResults`).
The same files render to the same bytes: fixed precision in the tables, and plots drawn
in matplotlib's default style at a fixed size and resolution, with no timestamp.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assocmem.errors import DependencyMissing, InvalidInput

PAGE = "index.md"
PLOTS = "plots"
WIDTH, HEIGHT = 7.0, 4.0  # inches
DPI = 100
MARKERS = ["o", "s", "^", "v", "D", "x", "+", "*"]  # lines that coincide stay told apart
STYLES = ["-", "--", ":", "-."]  # a backend's lines
COLOURS = ["C0", "C1", "C2"]  # a read kind's lines
CATEGORY_KEY = "overall(1-4)"


class UnreadableResults(InvalidInput):
    """A results file that is not JSON, or not the report of a bench this page knows;
    the message names the file."""

    def __init__(self, path: Path, why: str) -> None:
        super().__init__(f"{path}: cannot render this results file: {why}", field="results")
        self.path = path


@dataclass(frozen=True)
class Results:
    """One results file: its path, the bench that wrote it and its report."""

    path: Path
    kind: str
    report: dict[str, Any]

    @property
    def name(self) -> str:
        return self.path.stem


@dataclass
class Section:
    """What the page shows of one file: Markdown lines, and plots as (file name, figure)."""

    lines: list[str]
    plots: list[tuple[str, Any]]


Renderer = Callable[[Results], Section]


# -- loading -------------------------------------------------------------------


def load(folder: Path) -> list[Results]:
    """Every ``*.json`` in ``folder``, by name, each with the bench that wrote it."""
    return [read_results(path) for path in sorted(folder.glob("*.json"))]


def read_results(path: Path) -> Results:
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UnreadableResults(path, f"not a JSON file ({exc})") from exc
    if not isinstance(report, dict):
        raise UnreadableResults(path, "not a JSON object")
    kind = report.get("benchmark") or _kind_of_name(path.stem)
    if kind not in KINDS:
        known = ", ".join(KINDS)
        raise UnreadableResults(path, f"no bench this page shows wrote it (known: {known})")
    return Results(path, kind, report)


def _kind_of_name(stem: str) -> str | None:
    """The bench a file's name says: ``locomo-minilm`` is a ``locomo`` report."""
    fits = [kind for kind in KINDS if stem == kind or stem.startswith(kind + "-")]
    return max(fits, key=len, default=None)


# -- the page ------------------------------------------------------------------


def render(results: Path, out: Path) -> list[Path]:
    """Write ``out/index.md`` and ``out/plots/*.png`` from every file in ``results``;
    plots no file drew any more are removed. Returns the files written."""
    files = load(results)
    plots, reports = out / PLOTS, Path(_relative(results, out))
    with _default_style():  # every plot drawn and saved in it
        sections = [(r, _section(r, reports)) for r in files]  # refuse before writing
        plots.mkdir(parents=True, exist_ok=True)
        written = [_save(fig, plots / name) for _, s in sections for name, fig in s.plots]
    for stale in sorted(set(plots.glob("*.png")) - set(written)):
        stale.unlink()
    page = out / PAGE
    page.write_text(markdown(sections), encoding="utf-8", newline="\n")
    return [page, *written]


def markdown(sections: Sequence[tuple[Results, Section]]) -> str:
    """The page: the intro, then each bench's section with every file of that bench."""
    lines = ["# Benchmarks", "", *INTRO, "", "```sh", "assocmem bench render-docs", "```", ""]
    for kind, (title, about, _) in KINDS.items():
        chosen = [section for result, section in sections if result.kind == kind]
        if chosen:
            lines += [f"## {title}", "", about, ""]
            lines += [line for section in chosen for line in section.lines]
    return "\n".join(lines).rstrip("\n") + "\n"


INTRO = [
    "What the benchmarks measured. Every table and plot on this page is generated from the",
    "JSON reports in `results/`, each kept as the command shown with it wrote it; the",
    "machine and the commit it ran at are those the report records.",
    "Times move between runs and machines: compare figures measured in the same run.",
    "After adding or replacing a report, render the page again from the repository root:",
]


def _relative(path: Path, start: Path) -> str:
    try:
        return path.resolve().relative_to(start.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def _provenance(result: Results, reports: Path) -> list[str]:
    """How the file's figures were made: command, machine, commit, and a link to it."""
    report = result.report
    run = report.get("run") or {}
    command = run.get("command")
    lines = [f"- Command: `{command}`" if command else "- Command: not recorded in the report"]
    env = report.get("environment") or _first_section(report).get("environment")
    if env:
        machine = f"{env.get('platform')}, {env.get('cpus')} CPUs, Python {env.get('python')}"
        lines.append(f"- Machine: {machine}; report written {env.get('time')}")
        if env.get("packages"):
            named = ", ".join(f"{name} {version}" for name, version in env["packages"].items())
            lines.append(f"- Packages: {named}")
    commit = run.get("commit")
    if commit:
        sha, dirty = commit.removesuffix("-dirty"), commit.endswith("-dirty")
        lines.append(f"- Commit: `{sha}`" + (" with uncommitted changes" if dirty else ""))
    link = (reports / result.path.name).as_posix()
    lines.append(f"- Report: [{result.path.name}]({link})")
    return lines


def _first_section(report: dict[str, Any]) -> dict[str, Any]:
    """A multi-embedder learning report keeps its environment in each section."""
    sections = report.get("embedders") or {}
    return next(iter(sections.values()), {})


def _section(result: Results, reports: Path) -> Section:
    """The file's part of the page: a heading, its provenance, its tables and plots."""
    _, _, renderer = KINDS[result.kind]
    try:
        head = [f"### `{result.path.name}`", "", *_provenance(result, reports), ""]
        body = renderer(result)
        return Section(head + body.lines, body.plots)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        raise UnreadableResults(
            result.path, f"not a {result.kind} report this page can read ({exc!r})"
        ) from exc


# -- formatting ----------------------------------------------------------------


def table(
    header: Sequence[str], rows: Iterable[Sequence[object]], words: Sequence[int] = (0,)
) -> list[str]:
    """A Markdown table: the columns ``words`` lists left-aligned, figures right-aligned."""
    lines = ["| " + " | ".join(header) + " |"]
    marks = [" --- " if i in words else " ---: " for i in range(len(header))]
    lines.append("|" + "|".join(marks) + "|")
    lines += ["| " + " | ".join(_cell(value) for value in row) + " |" for row in rows]
    return [*lines, ""]


def _cell(value: object) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def fixed(value: float | None, digits: int = 3) -> str | None:
    return None if value is None else f"{value:.{digits}f}"


def image(result: Results, what: str, alt: str) -> tuple[str, str]:
    """The plot's file name, and its Markdown line."""
    name = f"{result.name}-{what}.png"
    return name, f"![{alt}]({PLOTS}/{name})"


# -- plots ---------------------------------------------------------------------


@contextmanager
def _default_style() -> Iterator[None]:
    """matplotlib's default style, whatever the local matplotlibrc says, or a
    `DependencyMissing` that names the extra."""
    try:
        import matplotlib.style
    except ImportError as exc:
        raise DependencyMissing(
            "the benchmarks page's plots need matplotlib: install `assocmem[docs]`"
        ) from exc
    with matplotlib.style.context("default"):
        yield


def figure(panels: int = 1, height: float = HEIGHT) -> tuple[Any, Any]:
    """A blank figure of the page's width and its axes (a row of ``panels``)."""
    from matplotlib.figure import Figure  # inside `_default_style`: matplotlib is there

    fig = Figure(figsize=(WIDTH, height), dpi=DPI, layout="constrained")
    axes = fig.subplots(1, panels, squeeze=False)[0]
    return fig, axes if panels > 1 else axes[0]


def _save(fig: Any, path: Path) -> Path:
    import matplotlib

    metadata = {"Software": f"matplotlib {matplotlib.__version__}"}
    fig.savefig(path, format="png", dpi=DPI, metadata=metadata)
    return path


# -- LoCoMo: recall by category ------------------------------------------------


def locomo(result: Results) -> Section:
    report = result.report
    systems, timed = _systems(report)
    first = next(iter(systems.values()))
    env = report["environment"]
    lines = [
        f"On `{report['data']}`, {env['backend']}, embedder: {env['embedder'] or 'none'}. "
        "Recall@10 of the evidence turns, by question category:",
        "",
    ]
    rows = [
        [category, first[category]["n"]]
        + [fixed(figures[category]["recall@10"]) for figures in systems.values()]
        for category in first
    ]
    lines += table(["Category", "Questions", *systems], rows)
    name, line = image(result, "recall", "Recall@10 by LoCoMo category")
    lines += [line, "", f"All questions of categories 1 to 4 (`{CATEGORY_KEY}`):", ""]
    rows = [
        [label, *(fixed(figures[CATEGORY_KEY][f"recall@{k}"]) for k in (5, 10, 20)),
         *(timed.get(label, {}).get(f"query_{p}_ms") for p in ("p50", "p95"))]
        for label, figures in systems.items()
    ]  # fmt: skip
    lines += table(["System", "R@5", "R@10", "R@20", "Read p50 ms", "Read p95 ms"], rows)
    return Section(lines, [(name, _recall_plot(systems, list(first)))])


def _systems(report: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Each system's table by category (assocmem under each profile, then the baselines
    the run scored), and the read timings of those that have them."""
    systems, timed = {}, {}
    for profile, section in report["profiles"].items():
        for name, figures in section.items():
            if name != "timings":
                systems[f"{name} ({profile})"] = figures
                timed[f"{name} ({profile})"] = section.get("timings", {})
    systems.update((name, report[name]) for name in ("bm25", "dense", "hybrid") if name in report)
    return systems, timed


def _recall_plot(systems: dict[str, dict[str, Any]], categories: Sequence[str]) -> Any:
    fig, ax = figure()
    height = 0.8 / len(systems)
    for i, (label, figures) in enumerate(systems.items()):
        ys = [c + (i - (len(systems) - 1) / 2) * height for c in range(len(categories))]
        ax.barh(ys, [figures[c]["recall@10"] for c in categories], height, label=label)
    ax.set_yticks(range(len(categories)), categories)
    ax.invert_yaxis()  # the table's order, top to bottom
    ax.set_xlabel("recall@10 of the evidence turns")
    ax.set_xlim(0, 1)
    fig.legend(loc="outside lower center", ncols=min(3, len(systems)), fontsize="small")
    return fig


LOCOMO = (
    "`assocmem bench locomo` writes every turn of each LoCoMo conversation as a memory, "
    "asks each question, and scores which of its evidence turns come back in the top "
    "5, 10 and 20. Category 5 (adversarial) is asked but left out of the overall figure, "
    "as LoCoMo's own scoring does; *no shared words* counts the questions that share no "
    "content word with their evidence. The LoCoMo file itself (CC BY-NC) is not in the "
    "repository, only the figures scored on it."
)


# -- scale: latency by store size ----------------------------------------------


def scale(result: Results) -> Section:
    runs = result.report["runs"]
    header = [
        "Backend",
        "Memories",
        "Writes/s (batched)",
        "Writes/s (single)",
        "Text read p50 / p95 ms",
        "Text read, words across frequencies, p50 / p95 ms",
        "Concept read p50 / p95 ms",
        "Vector read p50 / p95 ms",
        "Open ms",
        "Disk MB",
    ]
    # Reports from before the day-later reads have no such column.
    day_later = any("read_text_day_later" in m for sizes in runs.values() for m in sizes.values())
    if day_later:
        header.insert(6, "Text read a day later (clocks restarted) p50 / p95 ms")
    rows = [
        [
            backend,
            int(size),
            w["batched_per_s"],
            w["single_per_s"],
            _pair(m["read_text"]),
            _pair(m.get("read_text_spread")),
            *([_pair(m.get("read_text_day_later"))] if day_later else []),
            _pair(m["read_concepts"]),
            _pair(m["vector"].get("read")),
            m["open"]["open_ms"],
            m["disk_mb"],
        ]
        for backend, sizes in runs.items()
        for size, m in sizes.items()
        for w in [m["writes"]]
    ]
    skipped = {m["vector"]["skipped"] for sizes in runs.values() for m in sizes.values()
               if "skipped" in m["vector"]}  # fmt: skip
    backends = result.report["environment"]["backends"]
    versions = "; ".join(
        ", ".join(f"{name} {version}" for name, version in described.items() if name != "backend")
        for described in backends.values()
    )
    lines = [f"Backends: {versions}.", "", *table(header, rows)]
    if skipped:
        lines += [f"Vector reads skipped: {'; '.join(sorted(skipped))}.", ""]
    name, line = image(result, "latency", "Read latency by store size")
    return Section([*lines, line, ""], [(name, _latency_plot(runs))])


def _pair(block: dict[str, Any] | None) -> str | None:
    return None if block is None else f"{block['p50_ms']:.2f} / {block['p95_ms']:.2f}"


def _latency_plot(runs: dict[str, dict[str, Any]]) -> Any:
    """p50 and p95 by size: a colour per read kind, a line style per backend."""
    fig, axes = figure(2, height=4.5)
    kinds = {"read_text": "text", "read_concepts": "concepts", "vector": "vector"}
    sizes = sorted({int(size) for by_size in runs.values() for size in by_size})
    for ax, stat in zip(axes, ("p50_ms", "p95_ms"), strict=True):
        for (backend, by_size), style in zip(runs.items(), STYLES * len(runs), strict=False):
            xs = [int(size) for size in by_size]
            for (key, kind), colour in zip(kinds.items(), COLOURS, strict=False):
                blocks = [
                    m[key].get("read") if key == "vector" else m[key] for m in by_size.values()
                ]
                if all(blocks):
                    ys = [block[stat] for block in blocks]
                    ax.plot(xs, ys, style, color=colour, marker="o", label=f"{kind}, {backend}")
        ax.set_xscale("log")
        ax.set_xticks(sizes, [f"{size:,}" for size in sizes])
        ax.minorticks_off()
        ax.set_xlabel("memories in the store")
        ax.set_ylabel(f"read {stat.removesuffix('_ms')} (ms)")
        ax.set_ylim(bottom=0)
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncols=3,
               fontsize="small")  # fmt: skip
    return fig


SCALE = (
    "`assocmem bench scale` fills a fresh store to each size with memories of 8 words "
    "drawn from a Zipf-weighted 5,000-word vocabulary, then times reads of 2-word "
    "questions (k = 10) in a fresh process: as text, as concepts and, with an embedder, "
    "with the vector arm (the questions' vectors worked out beforehand). Its questions "
    "draw their words by frequency, so they ask mostly the commonest; a second set of "
    "text reads asks words drawn evenly from the 50th to the 2,000th commonest. Single "
    "writes are timed on top of the fill, one transaction each."
)


# -- learning: learning curves -------------------------------------------------


def learning(result: Results) -> Section:
    report = result.report
    sections = report.get("embedders") or {report["config"]["embedder"] or "none": report}
    lines: list[str] = []
    plots = []
    for embedder, section in sections.items():
        curves = _curves(section)
        outcomes = section["read_text"]["outcomes"]
        config = section["config"]
        lines += [
            f"Embedder: {embedder}; {config['types']} problem types, {config['notes']:,} notes; "
            f"recall@{config['top']} of the fixing note on held-out questions, by outcomes "
            "taught per type:",
            "",
        ]
        rows = [[label, *(fixed(v) for v in values)] for label, values in curves.items()]
        lines += table(["Condition", *(f"n = {n}" for n in outcomes)], rows)
        name, line = image(result, f"curves-{embedder}", f"Learning curves, embedder {embedder}")
        plots.append((name, _curves_plot(curves, outcomes, config["top"])))
        lines += [line, "", *_learning_checks(section), ""]
        if section.get("locomo"):
            lines += _learning_transfer(section["locomo"])
    return Section(lines, plots)


def _curves(section: dict[str, Any]) -> dict[str, list[float | None]]:
    """recall@5 by n of each condition: the rows of the table, the lines of the plot."""
    read_text = section["read_text"]
    outcomes = read_text["outcomes"]

    def row(cells: dict[str, Any]) -> list[float | None]:
        return [cells[n]["recall@5"] if cells.get(n) else None for n in outcomes]

    curves = {"text read": row(read_text["original"])}
    curves["concept read"] = [section["outcomes"][n]["concepts"]["recall@5"] for n in outcomes]
    curves["text read, unseen frames"] = row(read_text["frames"])
    curves["text read, synonyms"] = row(read_text["synonyms"])
    for p in section["config"]["noise"]:
        curves[f"text read, teacher wrong {p:.0%}"] = row(read_text[f"noise_{p}"])
    curves["text read, random feedback"] = row(read_text["random_feedback"])
    for wording, cells in (read_text["nearest_past_question"] or {}).items():
        curves[f"nearest past question, {wording}"] = row(cells)
    return curves


def _curves_plot(curves: dict[str, list[float | None]], outcomes: list[str], top: int) -> Any:
    fig, ax = figure(height=5.0)
    xs = [int(n) for n in outcomes]
    for (label, values), marker in zip(curves.items(), MARKERS * len(curves), strict=False):
        points = [(x, v) for x, v in zip(xs, values, strict=True) if v is not None]
        if points:
            ax.plot(*zip(*points, strict=True), marker=marker, label=label)
    ax.set_xticks(xs)
    ax.set_xlabel("outcomes taught per problem type")
    ax.set_ylabel(f"recall@{top} of the fixing note")
    ax.set_ylim(-0.03, 1.03)  # the points at 0 and 1 whole
    fig.legend(loc="outside lower center", ncols=2, fontsize="small")
    return fig


def _learning_checks(section: dict[str, Any]) -> list[str]:
    """The baselines, the restart and rebuilt stores, and read latency, in a few lines."""
    top, read_text = section["config"]["top"], section["read_text"]
    baselines = ", ".join(
        f"{name} {fixed(figures['recall@5']) if figures else 'not run'}"
        for name, figures in section["baselines"].items()
    )
    restart = next(iter(read_text["restart"].items()))
    untaught, taught = section["latency"]["no_feedback"], section["latency"]["taught"]
    crowding = section["interference"]
    return [
        f"- Baselines, recall@{top} with no feedback: {baselines}.",
        f"- The n = {restart[0]} store read again in a fresh process: recall@{top} "
        f"{fixed(restart[1]['recall@5'])}; a store rebuilt from the notes alone: "
        f"{fixed(read_text['rebuilt']['0']['recall@5'])}.",
        f"- Text-read latency untaught: p50 {untaught['p50_ms']} ms, p95 {untaught['p95_ms']} ms; "
        f"taught with {taught['outcomes']} outcomes per type: p50 {taught['p50_ms']} ms, "
        f"p95 {taught['p95_ms']} ms.",
        f"- Half the types taught, {crowding['outcomes']} outcomes each: the untaught half's "
        f"top {top} holds {crowding['untaught_mean_wrong_fixes_in_top5']['text']} wrong fixing "
        f"notes a read ({crowding['untaught_mean_wrong_fixes_in_top5_no_feedback']['text']} "
        f"with no feedback), {crowding['untaught_mean_taught_fixes_in_top5']['text']} of them "
        f"taught ones ({crowding['untaught_mean_taught_fixes_in_top5_no_feedback']['text']}).",
    ]


def _learning_transfer(report: dict[str, Any]) -> list[str]:
    """The LoCoMo split-half transfer: recall@k of held-out questions with no feedback,
    with the other half's evidence rated, and with as many random turns rated; the
    paired gains with their intervals; and what feedback brought in, by arm."""
    k, by_category = report["k"], report["recall@10"]

    def gain(block: dict[str, Any]) -> str:
        if not block["ci95"]:
            return f"{block['mean']:+.3f}"
        low, high = block["ci95"]
        return f"{block['mean']:+.3f} [{low:+.3f}, {high:+.3f}]"

    rows = [
        [
            name, block["n"], fixed(block["no_feedback"]), fixed(block["feedback"]),
            gain(block["gain"]), fixed(block["random"]), gain(block["random_gain"]),
        ]
        for name, block in by_category.items()
    ]  # fmt: skip
    arrivals = "; ".join(
        f"{source} {counts.get('evidence', 0):,} of {sum(counts.values()):,}"
        for source, counts in report["feedback_newcomers"].items()
    )
    return [
        f"LoCoMo transfer ({report['data']}): each conversation's questions split in two "
        f"halves, {report['repeats']} times each way; recall@{k} of the held-out half's "
        "evidence with the other half's evidence rated, and with as many random turns "
        "rated; gains are paired, with 95% bootstrap intervals:",
        "",
        *table(
            ["Category", "n", "no feedback", "feedback", "gain", "random", "random gain"],
            rows,
            words=(0, 4, 6),
        ),
        f"- Turns feedback brought into held-out top {k}s that are their evidence, by the "
        f"arm that ranked them: {arrivals}.",
        "",
    ]


LEARNING = (
    "`assocmem bench learning` generates a recurring-problem workload whose fixing notes "
    "share no word with the questions about them, tells the memory which note fixed "
    "each problem type after n training questions, and reads held-out wordings: the "
    "training ones (*text read*, *concept read*), frames no training question used, and "
    "synonyms that share no stem with anything taught. Controls: the same rating calls "
    "naming random notes, and teachers wrong on a share of their calls."
)


# -- folds ---------------------------------------------------------------------


def folds(result: Results) -> Section:
    report = result.report
    recall, variants = report["recall"], report["variants"]
    subsets = list(next(iter(recall.values())))
    first = next(iter(recall.values()))
    k = report["workload"]["k"]
    header = [
        "Variant",
        "Decay weight",
        "Value exponent",
        *(f"{s} (n = {first[s]['n']})" for s in subsets),
    ]
    rows = [
        [
            name,
            variants[name]["decay_weight"],
            variants[name]["value_exponent"],
            *(fixed(by_subset[s][f"recall@{k}"]) for s in subsets),
        ]
        for name, by_subset in recall.items()
    ]
    workload = report["workload"]
    lines = [
        f"On `{workload['data']}`, embedder: {report['environment']['embedder']}; "
        f"recall@{k} of the evidence turns by question subset:",
        "",
        *table(header, rows),
    ]
    return Section(lines, [])


FOLDS = (
    "`assocmem bench folds` reads LoCoMo conversations a day after their last session "
    "(so every turn has its real age), with value 3 marked on the evidence of a random "
    "half of the questions and on a random tenth of all turns, under each strength of "
    "the decay and value folds. A fold that only reorders near neighbours leaves the "
    "columns close to *no folds*; one that crowds out what the question asks shows in the "
    "oldest evidence and in the questions none of whose evidence was marked."
)


# -- clients -------------------------------------------------------------------


def clients(result: Results) -> Section:
    report = result.report
    lines = []
    for workload, transports in report["transports"].items():
        against = report["against_urllib"].get(workload, {})
        rows = [
            [
                transport,
                f["calls"],
                f["errors"],
                f["calls_per_s"],
                f.get("p50_ms"),
                f.get("p95_ms"),
                *_ratios(against.get(transport)),
            ]
            for transport, f in transports.items()
        ]
        header = [
            "Transport",
            "Calls",
            "Errors",
            "Calls/s",
            "p50 ms",
            "p95 ms",
            "Throughput vs urllib",
            "p50 vs urllib",
            "p95 vs urllib",
        ]
        lines += [f"Workload `{workload}`:", "", *table(header, rows)]
    w = report["workload"]
    lines += [
        f"{w['clients']} concurrent callers, {w['rounds']} rounds of {w['seconds_per_turn']} s "
        "per transport and workload.",
        "",
    ]
    return Section(lines, [])


def _ratios(against: dict[str, float] | None) -> list[str | None]:
    if against is None:
        return [None] * 3
    return [f"{against[key]:.2f}x" for key in ("throughput", "p50", "p95")]


CLIENTS = (
    "`assocmem bench clients` serves one store on 127.0.0.1 and calls it through each "
    "transport in turn: `mixed`, concurrent callers each doing three text reads to one "
    "write, where the server's work dominates; and `get`, one caller fetching one memory "
    "by id, where what a call costs besides the server's work shows. `urllib` opens a "
    "connection per call (the baseline); `client` is `Client`, `async` `AsyncClient` and "
    "`mcp` the MCP SDK's client on `assocmem mcp --transport http`. Over loopback a kept "
    "connection saves only the connect; it saves more where connecting costs a round "
    "trip or a TLS handshake."
)


# -- statements ----------------------------------------------------------------


def statements(result: Results) -> Section:
    report = result.report
    notes = f"{report['text_read']['memories']:,} notes"
    calls = {
        "a write declaring two entities and a relation": report["declaring_write"],
        f"a text read on {notes}, the store unchanged since the last read": report["text_read"],
    }
    if "text_read_after_a_write" in report:
        calls[f"a text read on {notes}, just after a write"] = report["text_read_after_a_write"]
    if "text_read_with_lessons" in report:
        taught = report["text_read_with_lessons"]
        calls[f"a text read on {notes} with lessons and the {taught['embedder']} embedder"] = taught
    if "text_read_by_meaning" in report:
        meant = report["text_read_by_meaning"]
        calls[
            f"the same, more words taught, asking in words no note holds ({meant['question']!r})"
        ] = meant
    header = [
        "Call",
        "Statements",
        "Write transactions",
        "Writes",
        "data_version checks",
        "By verb",
    ]
    rows = [
        [
            call,
            c["statements"],
            c["write_transactions"],
            c["writes"],
            c["pragma_data_version"],
            ", ".join(f"{verb} {n}" for verb, n in c["by_verb"].items()),
        ]
        for call, c in calls.items()
    ]
    return Section(table(header, rows, words=(0, len(header) - 1)), [])


STATEMENTS = (
    "`assocmem bench statements` counts the SQL statements one call runs on a SQLite "
    "store's own connection (statements SQLite runs inside triggers and full-text "
    "indexes left out). Counts, not times: they compare across machines and runs."
)


# -- peers ---------------------------------------------------------------------


def peers(result: Results) -> Section:
    report = result.report
    rounds = report["workload"]["rounds"]
    lines = []
    for corpus, section in report["corpora"].items():
        if "skipped" in section:
            lines += [f"Corpus `{corpus}`: skipped, {section['skipped']}.", ""]
            continue
        lines += [
            f"Corpus `{corpus}`: {section['memories']:,} memories, {section['queries']} queries "
            f"(k = {report['workload']['k']}); {_corpus_words(section)}. Each side's median "
            f"over {rounds} interleaved pairs, and the median of the pairs' ratios:",
            "",
        ]
        rows = []
        for name, peer in section["peers"].items():
            if "skipped" in peer:
                rows.append([name, f"skipped: {peer['skipped']}", None, None, None])
                continue
            ours, theirs = peer["assocmem"]["median"], peer["peer"]["median"]
            label = f"{name} {peer['peer']['version']}"
            for key, measure, digits in PEER_MEASURES:
                ratio = peer["ratio_assocmem_over_peer"][key]
                rows.append(
                    [label, measure, f"{ours[key]:,.{digits}f}", f"{theirs[key]:,.{digits}f}",
                     f"{ratio:.2f}x"]
                )  # fmt: skip
        lines += table(["Peer", "Measure", "assocmem", "Peer", "assocmem / peer"], rows, (0, 1))
    return Section(lines, [])


# (key in a run's figures, what the table calls it, decimals shown)
PEER_MEASURES = [
    ("writes_per_s", "Writes/s, one call each", 0),
    ("p50_ms", "Read p50 ms", 2),
    ("p95_ms", "Read p95 ms", 2),
    ("disk_bytes_per_memory", "Disk bytes per memory", 0),
]


def _corpus_words(section: dict[str, Any]) -> str:
    """What a corpus's memories and queries are, in a few words."""
    if "vocabulary" in section:
        return (
            f"memories of {section['words_per_memory']} Zipf-weighted words from a "
            f"{section['vocabulary']:,}-word vocabulary of syllable-made words, queries of "
            f"{section['query_words']} of those words"
        )
    words = f"the turns of `{section['data']}` as memories, its questions as queries"
    return f"{words} ({section['short']})" if "short" in section else words


PEERS = (
    "`assocmem bench peers` writes the same memories into assocmem and into each peer "
    "that installs beside it, one call each into a fresh on-disk store, then asks each "
    "the same queries; every system runs in a process of its own, and each pair of runs "
    "back to back alternates which goes first. A ratio is assocmem's figure over the "
    "peer's (writes/s above 1 and read times below 1 favour assocmem). Two corpora: "
    "`zipf-syllables`, generated words made from a small syllable set, whose shared "
    "trigrams swell a trigram index's postings; and `natural`, English conversation (the "
    "turns and questions of a LoCoMo-format file, not in the repository, only the "
    "figures measured on it)."
)


# The benches this page shows, in its order: (title, what the bench does, renderer).
KINDS: dict[str, tuple[str, str, Renderer]] = {
    "locomo": ("Recall by category (LoCoMo)", LOCOMO, locomo),
    "scale": ("Latency by store size", SCALE, scale),
    "learning": ("Learning curves", LEARNING, learning),
    "folds": ("Folds", FOLDS, folds),
    "clients": ("Clients", CLIENTS, clients),
    "statements": ("Statements per call", STATEMENTS, statements),
    "peers": ("Beside its peers", PEERS, peers),
}
