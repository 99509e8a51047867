"""The dashboard in a real headless browser (Debian's chromium through Playwright) against
real `assocmem serve` processes on 127.0.0.1.

Every test fails on a console error and on any request leaving 127.0.0.1 (each one is
recorded and aborted). Without chromium or the playwright package the module skips with
the reason, unless ``ASSOCMEM_REQUIRE_BROWSER=1`` (CI), where that is a failure.
Screenshots of each view go to ``$ASSOCMEM_ARTIFACTS`` (default
``test-artifacts/dashboard/`` in the repository).
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.adapters.server_kit import add_key, post, running_server

CHROMIUM = "/usr/bin/chromium"
# Offline and quiet: no QUIC probing, no component or sync traffic of chromium's own.
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
WAIT_MS = 10_000
ARTIFACTS = Path(
    os.environ.get("ASSOCMEM_ARTIFACTS")
    or Path(__file__).resolve().parents[2] / "test-artifacts" / "dashboard"
)

SEED = [
    "The team deploys the gateway on Kubernetes every Friday",
    "Kubernetes runs the gateway in the staging cluster",
    "The gateway depends on Redis for rate limiting",
    "Helm charts describe every Kubernetes release",
    "Lunch on Friday is pizza",
]


def _unavailable(reason: str) -> None:
    if os.environ.get("ASSOCMEM_REQUIRE_BROWSER") == "1":
        pytest.fail(f"the browser tests are required here but cannot run: {reason}")
    pytest.skip(f"browser tests skipped: {reason}", allow_module_level=True)


try:
    from playwright.sync_api import Browser, Page, expect, sync_playwright
except ImportError:
    _unavailable("they need the playwright package (`pip install -e '.[test]'`)")
if not shutil.which(CHROMIUM):
    _unavailable(f"no chromium at {CHROMIUM} (`apt-get install chromium`)")


def _seed(url: str, key: str | None = None) -> list[str]:
    items = [{"text": t, "tags": ["ops"], "source": "https://wiki.example/ops"} for t in SEED]
    status, body = post(url, "write_many", {"items": items}, key=key)
    assert status == 200, body
    ids = [r["id"] for r in body]
    associations = {
        "entities": [{"name": "Alice", "aliases": ["Al"]}],
        "relations": [{"subject": "Alice", "predicate": "works_on", "object": "gateway"}],
    }
    status, body = post(
        url, "declare", {"associations": associations, "anchor_ref": f"mem:{ids[0]}"}, key=key
    )
    assert status == 200 and not body["dropped"], body
    return ids


@pytest.fixture(scope="module")
def open_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A keyless server (loopback), seeded."""
    folder = tmp_path_factory.mktemp("dash-open")
    with running_server(str(folder / "open.db")) as url:
        yield {"url": url, "ids": _seed(url)}


@pytest.fixture(scope="module")
def keyed_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A server with keys: one with the operator role, one plain, both for alice."""
    folder = tmp_path_factory.mktemp("dash-keyed")
    keys = folder / "keys.json"
    operator, plain = add_key(keys, "alice", "operator"), add_key(keys, "alice")
    with running_server(str(folder / "keyed.db"), "--keys", str(keys)) as url:
        yield {"url": url, "operator": operator, "plain": plain, "ids": _seed(url, plain)}


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@dataclass
class Watched:
    """A page with what it did wrong: console errors, uncaught errors, outside requests."""

    page: Page
    errors: list[str] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)
    # Chromium logs every 4xx answer to fetch as a console error; a test that provokes
    # one on purpose (a 401 before the key, a refused 403) names its status here.
    expected_statuses: set[int] = field(default_factory=set)

    def assert_clean(self) -> None:
        allowed = "|".join(str(s) for s in self.expected_statuses) or "-"
        unexpected = [
            e for e in self.errors
            if not re.search(rf"responded with a status of ({allowed})\b", e)
        ]  # fmt: skip
        assert not self.outside, f"requests left 127.0.0.1: {self.outside}"
        assert not unexpected, f"console errors: {unexpected}"


@pytest.fixture
def watched(browser: Browser) -> Iterator[Watched]:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    seen = Watched(page)

    def guard(route: Any) -> None:
        if urlsplit(route.request.url).hostname == "127.0.0.1":
            route.continue_()
        else:
            seen.outside.append(route.request.url)
            route.abort()

    context.route("**/*", guard)
    page.on("console", lambda m: seen.errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda exc: seen.errors.append(f"uncaught: {exc}"))
    page.set_default_timeout(WAIT_MS)
    yield seen
    context.close()


def shot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def graph_weight(url: str, a: str, b: str, key: str | None = None) -> float:
    status, body = post(url, "graph", {"concepts": [a]}, key=key)
    assert status == 200, body
    return next((e["weight"] for e in body["edges"] if {e["source"], e["target"]} == {a, b}), 0.0)


def use_key(watched: Watched, url: str, key: str) -> None:
    """Open the dashboard on a keyed server: the first call's 401 asks for the key."""
    watched.expected_statuses.add(401)
    watched.page.goto(f"{url}/")
    expect(watched.page.get_by_test_id("key-dialog")).to_be_visible()
    watched.page.get_by_test_id("key-input").fill(key)
    watched.page.get_by_test_id("key-save").click()
    expect(watched.page.get_by_test_id("browse-row").first).to_be_visible()


# ---------------------------------------------------------------- views


VIEWS = {
    "memories": ("#/memories", "browse-row"),
    "learned": ("#/learned?q=gateway", "learned-items"),
    "declared": ("#/declared?entity=Alice", "declared-entities"),
    "health": ("#/health", "health-memories"),
}


@pytest.mark.parametrize("view", list(VIEWS))
def test_every_view_loads_offline_without_console_errors(
    watched: Watched, open_server: dict[str, Any], view: str
) -> None:
    route, testid = VIEWS[view]
    watched.page.goto(f"{open_server['url']}/dashboard/{route}")
    expect(watched.page.get_by_test_id(f"view-{view}")).to_be_visible()
    expect(watched.page.get_by_test_id(testid).first).not_to_be_empty()
    expect(watched.page.get_by_test_id("error")).to_be_hidden()
    shot(watched.page, view)
    watched.assert_clean()


def test_the_root_opens_the_dashboard(watched: Watched, open_server: dict[str, Any]) -> None:
    watched.page.goto(f"{open_server['url']}/")
    assert urlsplit(watched.page.url).path == "/dashboard/"
    expect(watched.page.get_by_test_id("browse-row").first).to_be_visible()
    watched.assert_clean()


def test_the_api_docs_render_offline(watched: Watched, open_server: dict[str, Any]) -> None:
    watched.page.goto(f"{open_server['url']}/docs")
    expect(watched.page.locator(".swagger-ui .opblock").first).to_be_visible()
    shot(watched.page, "docs")
    watched.assert_clean()


def test_the_offline_guard_catches_an_outside_request(watched: Watched) -> None:
    # The guard every other test relies on: an outside request is recorded, not sent.
    watched.page.goto("about:blank")
    watched.page.evaluate("fetch('http://192.0.2.1/x.js').catch(() => null)")
    watched.page.wait_for_timeout(200)
    assert watched.outside == ["http://192.0.2.1/x.js"]


def test_health_shows_the_counts(watched: Watched, open_server: dict[str, Any]) -> None:
    status, health = post(open_server["url"], "health", {})
    assert status == 200 and health["memories"] >= len(SEED), health
    watched.page.goto(f"{open_server['url']}/dashboard/#/health")
    expect(watched.page.get_by_test_id("health-memories")).to_contain_text(str(health["memories"]))
    expect(watched.page.get_by_test_id("health-kinds")).to_contain_text("episodic")
    watched.assert_clean()


# ---------------------------------------------------------------- Memories


def test_a_search_shows_items_with_their_via(watched: Watched, open_server: dict[str, Any]) -> None:
    page = watched.page
    page.goto(f"{open_server['url']}/dashboard/#/memories")
    page.get_by_test_id("search-query").fill("gateway")
    page.get_by_test_id("search-submit").click()
    helm = page.get_by_test_id("search-results").get_by_test_id("item").filter(has_text="Helm")
    expect(helm.get_by_test_id("item-via")).to_contain_text("gateway → Kubernetes")
    expect(helm.get_by_test_id("item-source")).to_have_text("hebbian_retrieval")
    expect(helm.get_by_test_id("item-arms")).to_contain_text("hebbian_retrieval #1")
    expect(
        page.get_by_test_id("search-summary").get_by_test_id("expanded-concepts")
    ).to_contain_text("Kubernetes")
    shot(page, "search")
    watched.assert_clean()


def test_browse_filters_and_pages_newest_first(
    watched: Watched, open_server: dict[str, Any]
) -> None:
    page = watched.page
    page.goto(f"{open_server['url']}/dashboard/#/memories")
    rows = page.get_by_test_id("browse-row")
    expect(rows.first).to_contain_text(SEED[-1])  # the newest first
    page.get_by_test_id("filter-tag").fill("no-such-tag")
    page.get_by_test_id("browse-submit").click()
    expect(rows).to_have_count(0)
    expect(page.get_by_test_id("browse-page")).to_have_text("no memories")
    watched.assert_clean()


def test_a_record_shows_its_provenance_and_mentions(
    watched: Watched, open_server: dict[str, Any]
) -> None:
    page = watched.page
    first = open_server["ids"][0]
    page.goto(f"{open_server['url']}/dashboard/#/memories")
    page.get_by_test_id("browse-row").filter(has_text=SEED[0]).get_by_role("link").click()
    expect(page.get_by_test_id("view-record")).to_be_visible()
    expect(page.get_by_test_id("record-text")).to_have_text(SEED[0])
    fields = page.get_by_test_id("record-fields")
    expect(fields.locator('[data-field="id"]')).to_have_text(first)
    expect(fields.locator('[data-field="source"]')).to_have_text("https://wiki.example/ops")
    # Its concepts as its text wrote them, not their stems ("deploy", "kubernet").
    expect(fields.locator('[data-field="concepts"]')).to_contain_text(
        "deploys, gateway, Kubernetes"
    )
    expect(page.get_by_test_id("record-mentions")).to_contain_text("Alice")
    shot(page, "record")
    watched.assert_clean()


def test_a_record_shows_its_supersession_history(
    watched: Watched, open_server: dict[str, Any]
) -> None:
    url = open_server["url"]
    texts = ["Standup is at nine", "Standup moved to ten"]
    ids = [post(url, "write", {"text": t, "key": ["standup", "time"]})[1]["id"] for t in texts]
    watched.page.goto(f"{url}/dashboard/#/record/{ids[1]}")
    history = watched.page.get_by_test_id("record-history")
    expect(history).to_contain_text(texts[0])
    expect(history.locator("li").filter(has_text=texts[0])).to_contain_text("superseded")
    watched.assert_clean()


# ---------------------------------------------------------------- What it learned


def test_a_rating_from_the_page_changes_the_link_weight(
    watched: Watched, open_server: dict[str, Any]
) -> None:
    page, url = watched.page, open_server["url"]
    before = graph_weight(url, "gateway", "Kubernetes")
    page.goto(f"{url}/dashboard/#/learned?q=gateway")
    helm = page.get_by_test_id("learned-items").get_by_test_id("item").filter(has_text="Helm")
    expect(helm.get_by_test_id("item-via")).to_contain_text("gateway → Kubernetes")
    expect(page.get_by_test_id("learned-expansion").get_by_test_id("query-concepts")).to_have_text(
        "gateway"
    )
    assert picture_weight(page, "gateway", "Kubernetes") == before
    helm.get_by_test_id("rate-helpful").click()
    expect(helm.get_by_test_id("rate-status")).to_contain_text("links moved")
    after = graph_weight(url, "gateway", "Kubernetes")
    assert after > before
    # The picture was redrawn with the new weight, and tells it apart from co-occurrence.
    assert picture_weight(page, "gateway", "Kubernetes") == after
    assert edge_classes(page, "gateway", "Kubernetes") == ["up"]
    shot(page, "learned-rated")
    watched.assert_clean()


# The learned picture's edge between two concepts, either way round: its weight and classes.
PICTURE_EDGE = """([a, b]) => {
  const ends = (x, y) => [x, y].sort().join("|");
  const edge = window.assocmem.cy.learned.edges()
    .filter((e) => ends(e.data("source"), e.data("target")) === ends("c:" + a, "c:" + b))[0];
  return { weight: edge.data("weight"), classes: edge.classes() };
}"""


def picture_weight(page: Page, a: str, b: str) -> float:
    weight: float = page.evaluate(PICTURE_EDGE, [a, b])["weight"]
    return weight


def edge_classes(page: Page, a: str, b: str) -> list[str]:
    classes: list[str] = page.evaluate(PICTURE_EDGE, [a, b])["classes"]
    return classes


# ---------------------------------------------------------------- Declared graph


def declared_names(page: Page) -> list[str]:
    names: list[str] = page.evaluate(
        "() => window.assocmem.cy.declared.nodes().map(n => n.id().slice(2))"
    )
    return names


def test_an_operator_declaration_appears_in_the_entity_picture(
    watched: Watched, keyed_server: dict[str, Any]
) -> None:
    page, url = watched.page, keyed_server["url"]
    use_key(watched, url, keyed_server["operator"])
    page.get_by_test_id("nav-declared").click()
    page.get_by_test_id("declare-subject").fill("Carol")
    page.get_by_test_id("declare-predicate").fill("maintains")
    page.get_by_test_id("declare-object").fill("gateway")
    page.get_by_test_id("declare-submit").click()
    expect(page.get_by_test_id("declare-status")).to_contain_text("declared Carol")
    expect(page.get_by_test_id("declared-relations")).to_contain_text("Carol —maintains→ gateway")
    assert {"Carol", "gateway"} <= set(declared_names(page))

    page.get_by_test_id("alias-entity").fill("Carol")
    page.get_by_test_id("alias-name").fill("Caz")
    page.get_by_test_id("alias-submit").click()
    carol = page.get_by_test_id("entity").filter(has_text="Carol")
    expect(carol.get_by_test_id("entity-aliases")).to_have_text("aka Caz")
    shot(page, "declared-operator")

    status, body = post(url, "traverse", {"entity": "Carol"}, key=keyed_server["plain"])
    assert status == 200 and [r["predicate"] for r in body["relations"]] == ["maintains"]
    page.get_by_test_id("relation").filter(has_text="maintains").get_by_test_id("retract").click()
    expect(page.get_by_test_id("declare-status")).to_contain_text("retracted 1")
    expect(page.get_by_test_id("declared-relations")).not_to_contain_text("maintains")
    status, body = post(url, "traverse", {"entity": "Carol"}, key=keyed_server["plain"])
    assert status == 200 and body["relations"] == []
    watched.assert_clean()


def test_a_declaration_without_the_operator_role_is_refused_visibly(
    watched: Watched, keyed_server: dict[str, Any]
) -> None:
    page, url = watched.page, keyed_server["url"]
    watched.expected_statuses.add(403)
    use_key(watched, url, keyed_server["plain"])
    page.goto(f"{url}/dashboard/#/declared?entity=Alice")
    expect(page.get_by_test_id("declared-entities")).to_contain_text("Alice")
    page.get_by_test_id("declare-subject").fill("Mallory")
    page.get_by_test_id("declare-predicate").fill("owns")
    page.get_by_test_id("declare-object").fill("gateway")
    page.get_by_test_id("declare-submit").click()
    refusal = page.get_by_test_id("declare-status")
    expect(refusal).to_be_visible()
    expect(refusal).to_have_class(re.compile(r"\berror\b"))
    expect(refusal).to_contain_text("OperatorRequired")
    shot(page, "declared-refused")
    assert "Mallory" not in declared_names(page)
    status, _ = post(url, "traverse", {"entity": "Mallory"}, key=keyed_server["plain"])
    assert status == 404
    watched.assert_clean()
