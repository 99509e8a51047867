// The assocmem dashboard: one page over the server's own /v1 operations, four hash routes.
// Every text from the store is set with textContent (never innerHTML), no handler is
// inline, and nothing is fetched from outside this server, so the page works offline
// under a strict Content-Security-Policy.

const KEY_STORAGE = "assocmem.key";
const PAGE_SIZE = 25;
const READ_K = 10;
// Edges whose learned weight is within this fraction of their co-occurrence count are
// drawn as "co-occurrence only": feedback moves weights by fractions, so any real rating
// shows, while float noise does not.
const FLAT_RATIO = 0.02;

const MAX_FIT_ZOOM = 1.3;

const cyInstances = { learned: null, declared: null };
window.assocmem = { cy: cyInstances };

// ---------------------------------------------------------------- small DOM helpers

const $ = (id) => document.getElementById(id);

function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "class") el.className = value;
    else if (name === "text") el.textContent = value;
    else if (name.startsWith("on")) el.addEventListener(name.slice(2), value);
    else el.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

function fill(el, ...children) {
  el.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined));
}

const fmt = (n) => (typeof n === "number" ? (Number.isInteger(n) ? String(n) : n.toFixed(3)) : String(n));

function bytes(n) {
  if (typeof n !== "number") return "—";
  const units = ["B", "KiB", "MiB", "GiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i += 1; }
  return `${i ? n.toFixed(1) : n} ${units[i]}`;
}

function showError(message) {
  const banner = $("error");
  banner.textContent = message;
  banner.hidden = !message;
}

function status(el, message, isError) {
  el.textContent = message;
  el.classList.toggle("error", Boolean(isError));
  el.classList.toggle("ok", !isError);
  el.hidden = !message;
}

// ---------------------------------------------------------------- the API

class ApiError extends Error {
  constructor(status, body) {
    const err = (body && body.error) || {};
    super(`${err.type || "Error"}: ${err.message || `HTTP ${status}`}`);
    this.status = status;
    this.type = err.type;
    this.field = err.field;
  }
}

let keyWaiter = null;

function askForKey() {
  // One dialog however many calls were refused at once; they all retry with its answer.
  if (!keyWaiter) {
    keyWaiter = new Promise((resolve) => {
      const dialog = $("key-dialog");
      const input = $("key-input");
      input.value = "";
      dialog.addEventListener("close", function done() {
        dialog.removeEventListener("close", done);
        keyWaiter = null;
        if (dialog.returnValue === "save" && input.value.trim()) {
          sessionStorage.setItem(KEY_STORAGE, input.value.trim());
          resolve(true);
        } else {
          if (dialog.returnValue === "clear") sessionStorage.removeItem(KEY_STORAGE);
          resolve(false);
        }
      });
      dialog.showModal();
      input.focus();
    });
  }
  return keyWaiter;
}

async function api(name, body = {}) {
  for (;;) {
    const key = sessionStorage.getItem(KEY_STORAGE);
    const headers = { "content-type": "application/json" };
    if (key) headers.authorization = `Bearer ${key}`;
    const response = await fetch(`/v1/${name}`, { method: "POST", headers, body: JSON.stringify(body) });
    const data = await response.json().catch(() => null);
    if (response.ok) return data;
    if (response.status === 401 && (await askForKey())) continue;
    throw new ApiError(response.status, data);
  }
}

// Runs an action, showing a failure in the page banner instead of the console.
async function guarded(action) {
  try {
    showError("");
    await action();
  } catch (error) {
    showError(error.message || String(error));
  }
}

// ---------------------------------------------------------------- routing

function route() {
  const [path, query] = location.hash.replace(/^#\/?/, "").split("?");
  const parts = path.split("/").filter(Boolean);
  return { name: parts[0] || "memories", arg: parts[1] ? decodeURIComponent(parts[1]) : null,
           params: new URLSearchParams(query || "") };
}

const VIEWS = {
  memories: { section: "view-memories", nav: "memories", show: showMemories },
  record: { section: "view-record", nav: "memories", show: showRecord },
  learned: { section: "view-learned", nav: "learned", show: showLearned },
  declared: { section: "view-declared", nav: "declared", show: showDeclared },
  health: { section: "view-health", nav: "health", show: showHealth },
};

function navigate() {
  const current = route();
  const view = VIEWS[current.name] || VIEWS.memories;
  for (const spec of Object.values(VIEWS)) $(spec.section).hidden = spec !== view;
  for (const link of document.querySelectorAll("nav a")) {
    link.classList.toggle("active", link.dataset.view === view.nav);
  }
  guarded(() => view.show(current));
}

// ---------------------------------------------------------------- shared renderers

function recordLink(record) {
  return h("a", { href: `#/record/${encodeURIComponent(record.id)}`, class: "id", "data-testid": "record-link",
                  text: record.id });
}

function chips(values, testid) {
  return h("ul", { class: "chips", "data-testid": testid }, values.map((v) => h("li", { text: v })));
}

// One read item: text, source, every arm with its rank, the score parts and the via paths.
function itemView(item, index, extra) {
  const record = item.record;
  const arms = Object.entries(item.sources || {}).sort((a, b) => a[1] - b[1]);
  const parts = Object.entries(item.parts || {});
  return h("li", { class: "item", "data-testid": "item", "data-id": record.id },
    h("div", { class: "item-head" },
      h("span", { class: "rank", text: `#${index + 1}` }),
      h("span", { class: "score", title: "score", text: fmt(item.score) }),
      h("span", { class: "tag", "data-testid": "item-source", title: "the arm that placed it", text: item.source }),
      h("span", { class: "muted small", text: record.kind }),
      recordLink(record)),
    h("p", { class: "text", "data-testid": "item-text", text: record.text }),
    h("div", { class: "meta" },
      h("span", { class: "label", text: "arms" }),
      h("ul", { class: "chips", "data-testid": "item-arms" },
        arms.map(([arm, rank]) => h("li", { "data-arm": arm, text: `${arm} #${rank}` })))),
    parts.length ? h("div", { class: "meta" },
      h("span", { class: "label", text: "score parts" }),
      h("ul", { class: "chips", "data-testid": "item-parts" },
        parts.map(([name, value]) => h("li", { text: `${name} ${fmt(value)}` })))) : null,
    h("div", { class: "meta" },
      h("span", { class: "label", text: "via" }),
      item.via && item.via.length
        ? h("ul", { class: "vias", "data-testid": "item-via" },
            item.via.map((v) => h("li", { "data-concept": v.concept },
              h("span", { class: "path", text: v.path.join(" → ") }),
              h("span", { class: "muted small", text: ` weight ${fmt(v.weight)}` }))))
        : h("span", { class: "muted small", "data-testid": "item-via-none", text: "no learned path (found directly)" })),
    extra || null);
}

function expansionView(result) {
  const expanded = Object.entries(result.expanded_concepts || {}).sort((a, b) => b[1] - a[1]);
  return h("div", { class: "expansion", "data-testid": "expansion" },
    h("div", {}, h("span", { class: "label", text: "query concepts" }),
      chips(result.query_concepts || [], "query-concepts")),
    h("div", {}, h("span", { class: "label", text: "expanded to" }),
      expanded.length
        ? h("ul", { class: "chips", "data-testid": "expanded-concepts" },
            expanded.map(([c, w]) => h("li", { text: `${c} ${fmt(w)}` })))
        : h("span", { class: "muted small", text: "nothing (no link reached the threshold)" })));
}

// ---------------------------------------------------------------- Memories

const browse = { offset: 0, total: 0 };

async function showMemories() {
  const query = $("search-query").value.trim();
  await Promise.all([loadBrowse(), query ? runSearch(query) : Promise.resolve()]);
}

function browseFilters() {
  const filters = {};
  for (const name of ["kind", "tag", "status", "source"]) {
    const value = $(`filter-${name}`).value.trim();
    if (value) filters[name] = value;
  }
  return filters;
}

async function loadBrowse() {
  const page = await api("list_memories", { limit: PAGE_SIZE, offset: browse.offset, ...browseFilters() });
  browse.total = page.total;
  fill($("browse-rows"), page.items.map((r) => h("tr", { "data-testid": "browse-row" },
    h("td", { class: "nowrap small", text: (r.created_at || "").replace("T", " ").slice(0, 19) }),
    h("td", { text: r.kind }),
    h("td", {}, h("a", { href: `#/record/${encodeURIComponent(r.id)}`, text: r.text.slice(0, 160) })),
    h("td", { text: (r.tags || []).join(", ") }),
    h("td", { class: "small", text: r.source || "" }),
    h("td", { text: r.status }))));
  const last = Math.min(browse.offset + page.items.length, page.total);
  $("browse-page").textContent = page.total ? `${browse.offset + 1}–${last} of ${page.total}` : "no memories";
  $("browse-prev").disabled = browse.offset === 0;
  $("browse-next").disabled = last >= page.total;
}

async function runSearch(query) {
  const result = await api("read", { query, k: READ_K, explain: true });
  fill($("search-summary"), expansionView(result));
  fill($("search-results"), result.items.map((item, i) => itemView(item, i)));
  if (!result.items.length) $("search-results").append(h("li", { class: "muted", text: "nothing came back" }));
}

// ---------------------------------------------------------------- one record

const PROVENANCE = [
  "id", "kind", "status", "source", "source_canonical", "author", "thread", "task", "agent_id",
  "project_id", "channel", "observed_at", "created_at", "accessed_at", "version", "verified_at",
  "verification_scope", "recheck_by", "confidence", "value", "valence", "protected", "tags",
  "access", "concepts", "derived_from", "key", "meta",
];
// Fields shown from another: a record's concepts as its text wrote them, not their stems.
const SHOWN_AS = { concepts: "concept_forms" };

function fieldValue(value) {
  if (value === null || value === undefined || value === "") return "—";
  if (Array.isArray(value)) return value.length ? value.join(", ") : "—";
  if (typeof value === "object") return Object.keys(value).length ? JSON.stringify(value) : "—";
  return fmt(value);
}

async function showRecord({ arg }) {
  const view = await api("inspect", { id: arg });
  const record = view.record;
  $("record-title").textContent = `${record.kind} memory ${record.id}`;
  $("record-text").textContent = record.text;
  fill($("record-fields"), PROVENANCE.filter((f) => f in record).flatMap((f) => [
    h("dt", { text: f }), h("dd", { "data-field": f, text: fieldValue(record[SHOWN_AS[f] || f]) })]));
  const none = (text) => h("li", { class: "muted", text });
  fill($("record-history"), view.history.length ? view.history.map((r) => h("li", {},
    recordLink(r), h("span", { class: "tag", text: r.status }), " ", r.text.slice(0, 140))) : none("no other version"));
  fill($("record-feedback"), view.feedback.length ? view.feedback.map((f) => h("li", {},
    h("span", { class: f.outcome > 0 ? "good" : f.outcome < 0 ? "bad" : "", text: `${f.outcome > 0 ? "+" : ""}${fmt(f.outcome)}` }),
    " ", h("span", { class: "muted small", text: f.at }), " ",
    (f.query_concepts || []).join(", "))) : none("none yet"));
  fill($("record-mentions"), view.mentions.length ? view.mentions.map((m) => h("li", {},
    h("a", { href: `#/declared?entity=${encodeURIComponent(m)}`, text: m }))) : none("none"));
  fill($("record-relations"), view.relations.length
    ? view.relations.map((r) => h("li", { text: `${r.subject} —${r.predicate}→ ${r.object}` })) : none("none"));
}

// ---------------------------------------------------------------- What it learned

const learned = { query: "", read: null };

function edgeTrend(edge) {
  if (edge.count <= 0) return edge.weight > 0 ? "up" : "flat";
  const ratio = edge.weight / edge.count;
  if (ratio > 1 + FLAT_RATIO) return "up";
  if (ratio < 1 - FLAT_RATIO) return "down";
  return "flat";
}

function graphElements(graph, result) {
  const degree = new Map(graph.concepts.map((c) => [c, 0]));
  for (const e of graph.edges) {
    degree.set(e.source, (degree.get(e.source) || 0) + 1);
    degree.set(e.target, (degree.get(e.target) || 0) + 1);
  }
  const maxDegree = Math.max(1, ...degree.values());
  const maxWeight = Math.max(1, ...graph.edges.map((e) => e.weight));
  const queried = new Set(result ? result.query_concepts : []);
  const expanded = new Set(result ? Object.keys(result.expanded_concepts || {}) : []);
  const nodes = [...degree.entries()].map(([c, d]) => ({
    data: { id: `c:${c}`, label: c, degree: d, size: 18 + 42 * (d / maxDegree) },
    classes: queried.has(c) ? "query" : expanded.has(c) ? "expanded" : "",
  }));
  const edges = graph.edges.map((e) => ({
    data: { id: `e:${e.source}|${e.target}`, source: `c:${e.source}`, target: `c:${e.target}`,
            weight: e.weight, count: e.count, width: 1 + 9 * (e.weight / maxWeight),
            label: `w ${fmt(e.weight)} · n ${e.count}` },
    classes: edgeTrend(e),
  }));
  return [...nodes, ...edges];
}

const CY_STYLE = [
  { selector: "node", style: { label: "data(label)", width: "data(size)", height: "data(size)",
    "background-color": "#8aa4c8", color: "#1d2733", "font-size": 11, "text-valign": "bottom",
    "text-margin-y": 4, "text-outline-color": "#fff", "text-outline-width": 2 } },
  { selector: "node.query", style: { "background-color": "#2f6fdd", "border-width": 3, "border-color": "#173f85" } },
  { selector: "node.expanded", style: { "background-color": "#f2a93b" } },
  { selector: "node.entity", style: { shape: "round-rectangle", width: "data(size)", height: 26,
    "text-valign": "center", "text-margin-y": 0, "background-color": "#dfe8f5", "border-width": 1,
    "border-color": "#6b86ad" } },
  { selector: "node.entity.centre", style: { "background-color": "#2f6fdd", color: "#fff", "text-outline-width": 0 } },
  { selector: "node.entity.operator", style: { "border-style": "double", "border-width": 4 } },
  { selector: "edge", style: { width: "data(width)", "curve-style": "bezier", "line-color": "#b4bcc8",
    label: "data(label)", "font-size": 9, color: "#4a5563", "text-rotation": "autorotate",
    "text-background-color": "#fff", "text-background-opacity": 0.8, "text-background-padding": 1 } },
  { selector: "edge.up", style: { "line-color": "#2e9b57" } },
  { selector: "edge.down", style: { "line-color": "#d0463b", "line-style": "dashed" } },
  { selector: "edge.relation", style: { width: 2, "line-color": "#6b86ad", "target-arrow-shape": "triangle",
    "target-arrow-color": "#6b86ad" } },
];

function draw(name, container, elements) {
  if (typeof window.cytoscape !== "function") throw new Error("the graph library did not load");
  if (cyInstances[name]) cyInstances[name].destroy();
  const layout = elements.length > 1
    ? { name: "cose", animate: false, randomize: false, nodeRepulsion: () => 9000, idealEdgeLength: () => 110, padding: 30 }
    : { name: "grid", padding: 30 };
  cyInstances[name] = window.cytoscape({ container, elements, style: CY_STYLE, layout, minZoom: 0.2, maxZoom: 3 });
  const cy = cyInstances[name];
  // A small picture fitted to the frame would be drawn huge; cap the zoom instead.
  if (cy.zoom() > MAX_FIT_ZOOM) { cy.zoom(MAX_FIT_ZOOM); cy.center(); }
  container.dataset.nodes = String(cy.nodes().length);
  return cy;
}

async function showLearned({ params }) {
  const query = params.get("q");
  if (query !== null) $("learned-query").value = query;
  if (params.get("depth")) $("learned-depth").value = params.get("depth");
  if (query) await runLearned(query);
}

async function runLearned(query) {
  const result = await api("read", { query, k: READ_K, explain: true });
  learned.query = query;
  learned.read = result;
  const concepts = result.query_concepts.length ? result.query_concepts
    : query.split(",").map((c) => c.trim()).filter(Boolean);
  const graph = concepts.length
    ? await api("graph", { concepts, depth: Number($("learned-depth").value) })
    : { concepts: [], edges: [] };
  const cy = draw("learned", $("learned-cy"), graphElements(graph, result));
  cy.on("tap", "node", (event) => {
    location.hash = `#/learned?q=${encodeURIComponent(event.target.data("label"))}&depth=${$("learned-depth").value}`;
  });
  fill($("learned-expansion"), expansionView(result),
    graph.truncated ? h("p", { class: "muted small", text: "the picture was cut at the edge limit" }) : null);
  fill($("learned-items"), result.items.map((item, i) => itemView(item, i, ratingButtons(item))));
  if (!result.items.length) $("learned-items").append(h("li", { class: "muted", text: "nothing came back" }));
}

function ratingButtons(item) {
  const note = h("span", { class: "muted small", "data-testid": "rate-status" });
  const rate = (outcome) => guarded(async () => {
    const done = await api("feedback", { used: [item.record.id], outcome, read: learned.read.id });
    await runLearned(learned.query);
    const after = document.querySelector(`#learned-items [data-id="${CSS.escape(item.record.id)}"] [data-testid="rate-status"]`);
    if (after) after.textContent = `rated ${outcome > 0 ? "helpful" : "not helpful"}: ${done.links_updated} links moved`;
  });
  return h("div", { class: "rate" },
    h("button", { type: "button", class: "good", "data-testid": "rate-helpful", onclick: () => rate(1) }, "Helpful"),
    h("button", { type: "button", class: "bad", "data-testid": "rate-unhelpful", onclick: () => rate(-1) }, "Not helpful"),
    note);
}

// ---------------------------------------------------------------- Declared graph

const declared = { entity: "" };

async function showDeclared({ params }) {
  const entity = params.get("entity");
  if (entity !== null) $("traverse-entity").value = entity;
  if (params.get("hops")) $("traverse-hops").value = params.get("hops");
  const name = $("traverse-entity").value.trim();
  if (name) await runTraverse(name);
}

// Entity boxes fit their label (cytoscape's own "label" width is deprecated).
function entityData(name, allNames) {
  const aliases = allNames.filter((a) => a !== name);
  const label = aliases.length ? `${name} (${aliases.join(", ")})` : name;
  return { id: `n:${name}`, label, size: 24 + 7 * label.length };
}

async function runTraverse(entity) {
  declared.entity = entity;
  let traversal;
  try {
    traversal = await api("traverse", { entity, max_hops: Number($("traverse-hops").value), limit: 50 });
  } catch (error) {
    if (error.status !== 404) throw error;
    traversal = { entities: [], relations: [] };
    status($("declare-status"), `no entity named ${entity} yet; declare a relation to make one`, false);
  }
  const names = new Set(traversal.entities.map((e) => e.name));
  const nodes = traversal.entities.map((e) => ({
    data: entityData(e.name, e.aliases),
    classes: `entity${e.hops === 0 ? " centre" : ""}${e.declared_by === "operator" ? " operator" : ""}`,
  }));
  for (const r of traversal.relations) {
    for (const end of [r.subject, r.object]) {
      if (!names.has(end)) { names.add(end); nodes.push({ data: entityData(end, []), classes: "entity" }); }
    }
  }
  const edges = traversal.relations.map((r) => ({
    data: { id: `r:${r.id}`, source: `n:${r.subject}`, target: `n:${r.object}`, label: r.predicate, width: 2 },
    classes: "relation",
  }));
  const cy = draw("declared", $("declared-cy"), [...nodes, ...edges]);
  cy.on("tap", "node", (event) => {
    location.hash = `#/declared?entity=${encodeURIComponent(event.target.id().slice(2))}`;
  });
  fill($("declared-entities"), traversal.entities.map((e) => h("li", { "data-testid": "entity" },
    h("strong", { text: e.name }), " ",
    h("span", { class: "muted small", "data-testid": "entity-aliases",
               text: aliasesOf(e).length ? `aka ${aliasesOf(e).join(", ")}` : "no aliases" }), " ",
    h("span", { class: "tag", text: e.declared_by }))));
  fill($("declared-relations"), traversal.relations.length ? traversal.relations.map((r) => h("li", { "data-testid": "relation" },
    `${r.subject} —${r.predicate}→ ${r.object} `,
    h("span", { class: "tag", text: r.declared_by }), " ",
    h("button", { type: "button", class: "ghost small", "data-testid": "retract", "data-relation": r.id,
                  onclick: () => retract(r.id) }, "Retract"))) : [h("li", { class: "muted", text: "none" })]);
}

const aliasesOf = (entity) => entity.aliases.filter((a) => a !== entity.name);

async function declareAs(associations, done) {
  const box = $("declare-status");
  try {
    const result = await api("declare", { associations, declared_by: "operator" });
    if (result.dropped && result.dropped.length) {
      status(box, `dropped: ${result.dropped.map((d) => `${d.item} (${d.reason})`).join("; ")}`, true);
      return;
    }
    status(box, done, false);
  } catch (error) {
    status(box, error.message, true);
    return;
  }
  await guarded(() => runTraverse($("traverse-entity").value.trim() || declared.entity));
}

async function retract(id) {
  const box = $("declare-status");
  try {
    const result = await api("retract", { relation_ids: [id] });
    status(box, `retracted ${result.relations ?? 0} relation(s)`, false);
  } catch (error) {
    status(box, error.message, true);
    return;
  }
  await guarded(() => runTraverse(declared.entity));
}

// ---------------------------------------------------------------- Health

async function showHealth() {
  const health = await api("health", {});
  const card = (label, value, testid) => h("div", { class: "card", "data-testid": testid },
    h("div", { class: "value", text: value }), h("div", { class: "muted small", text: label }));
  fill($("health-cards"),
    card("memories", fmt(health.memories), "health-memories"),
    card("concepts", fmt(health.concepts), "health-concepts"),
    card("links", fmt(health.links), "health-links"),
    card("feedback", fmt(health.feedback), "health-feedback-count"),
    card("store size", bytes(health.store_bytes), "health-store"),
    card("WAL size", bytes(health.wal_bytes), "health-wal"),
    card("embedder", health.embedder || "none", "health-embedder"),
    card("vectors", fmt(health.vectors ?? 0), "health-vectors"),
    card("pending vectors", fmt(health.pending_vectors ?? 0), "health-pending"),
    card("backend", health.backend, "health-backend"));
  const rows = (counts) => {
    const entries = Object.entries(counts || {}).sort((a, b) => b[1] - a[1]);
    return entries.length ? entries.map(([k, v]) => h("tr", {}, h("td", { text: k }), h("td", { class: "num", text: fmt(v) })))
      : [h("tr", {}, h("td", { class: "muted", text: "none" }))];
  };
  fill($("health-kinds"), rows(health.by_kind));
  fill($("health-status"), rows(health.by_status));
  const recent = health.recent_feedback || [];
  fill($("health-feedback"), recent.length ? recent.map((f) => h("li", {},
    h("span", { class: f.outcome > 0 ? "good" : f.outcome < 0 ? "bad" : "", text: `${f.outcome > 0 ? "+" : ""}${fmt(f.outcome)}` }),
    " ", h("span", { class: "muted small", text: f.at || "" }), " ",
    (f.query_concepts || []).join(", "), " ",
    f.ids ? h("span", { class: "muted small", text: `(${f.ids.length} memories)` }) : null))
    : [h("li", { class: "muted", text: "no feedback yet" })]);
}

// ---------------------------------------------------------------- wiring

function wire() {
  $("search-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const query = $("search-query").value.trim();
    if (query) guarded(() => runSearch(query));
  });
  $("search-clear").addEventListener("click", () => {
    $("search-query").value = "";
    fill($("search-summary"));
    fill($("search-results"));
  });
  $("browse-form").addEventListener("submit", (event) => {
    event.preventDefault();
    browse.offset = 0;
    guarded(loadBrowse);
  });
  $("browse-prev").addEventListener("click", () => {
    browse.offset = Math.max(0, browse.offset - PAGE_SIZE);
    guarded(loadBrowse);
  });
  $("browse-next").addEventListener("click", () => {
    browse.offset += PAGE_SIZE;
    guarded(loadBrowse);
  });
  $("learned-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const query = $("learned-query").value.trim();
    if (query) location.hash = `#/learned?q=${encodeURIComponent(query)}&depth=${$("learned-depth").value}`;
  });
  $("traverse-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const entity = $("traverse-entity").value.trim();
    if (entity) location.hash = `#/declared?entity=${encodeURIComponent(entity)}&hops=${$("traverse-hops").value}`;
  });
  $("declare-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const [subject, predicate, object] = ["subject", "predicate", "object"].map((f) => $(`declare-${f}`).value.trim());
    if (!$("traverse-entity").value.trim()) $("traverse-entity").value = subject;
    declareAs({ relations: [{ subject, predicate, object }] }, `declared ${subject} —${predicate}→ ${object}`);
  });
  $("alias-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const name = $("alias-entity").value.trim();
    const alias = $("alias-name").value.trim();
    if (!$("traverse-entity").value.trim()) $("traverse-entity").value = name;
    declareAs({ entities: [{ name, aliases: [alias] }] }, `${alias} is now an alias of ${name}`);
  });
  $("key-button").addEventListener("click", () => askForKey().then((saved) => { if (saved) navigate(); }));
  window.addEventListener("hashchange", navigate);
}

wire();
navigate();
