// biomed-search retrieval-testing page: plain JavaScript, no build step, no dependencies.
// Every URL is relative to the page's <base>, so the page works behind a route prefix.
"use strict";

const KEY_STORE = "biomed-search.api-key";
const PARTS = [
  // [score_parts key, label, how it acts on the similarity]
  ["ce", "ce", "cross-encoder"],
  ["entity", "entity", "drug match"],
  ["section", "section", "section cue"],
  ["topic", "topic", "the question's other terms in the drug's own chunk"],
  ["xdrug", "xdrug", "cross-drug penalty"],
  ["first", "first", "first-stage evidence"],
];
const FIELD_CONTROLS = {
  query: "query",
  kb_ids: "kb_ids",
  route_mode: "route_mode",
  page: "page",
  page_size: "page_size",
  similarity_threshold: "similarity_threshold",
  vector_similarity_weight: "vector_similarity_weight",
  rerank: "rerank",
  highlight: "highlight",
  collections: "collections",
  image: "image",
};

const $ = (id) => document.getElementById(id);
let lastQuery = null;

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "text") node.textContent = value;
    else if (name === "className") node.className = value;
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function fmt(value, digits = 3) {
  return typeof value === "number" && Number.isFinite(value) ? value.toFixed(digits) : "–";
}

function apiKey() {
  return $("api-key").value.trim();
}

function authHeaders() {
  const key = apiKey();
  return key ? { Authorization: `Bearer ${key}` } : {};
}

// -- form -> request ---------------------------------------------------------------------

function numberField(id) {
  const raw = $(id).value.trim();
  if (raw === "") return undefined;
  const value = Number(raw);
  return Number.isFinite(value) ? value : raw; // let the service name a bad value
}

function kbIds() {
  return $("kb_ids").value.split(",").map((s) => s.trim()).filter(Boolean);
}

function searchBody() {
  const body = {
    query: $("query").value,
    route_mode: $("route_mode").value,
    page: numberField("page") ?? 1,
    rerank: $("rerank").checked,
    highlight: $("highlight").checked,
  };
  const kbs = kbIds();
  if (kbs.length) body.kb_ids = kbs;
  for (const id of ["page_size", "similarity_threshold", "vector_similarity_weight"]) {
    const value = numberField(id);
    if (value !== undefined) body[id] = value;
  }
  const ticked = [...document.querySelectorAll("#collections input:checked")].map((i) => i.value);
  if (ticked.length) body.collections = ticked;
  return body;
}

// -- errors ------------------------------------------------------------------------------

function clearError() {
  $("error").hidden = true;
  $("error").replaceChildren();
  for (const node of document.querySelectorAll("[aria-invalid]")) node.removeAttribute("aria-invalid");
}

function showError(status, payload) {
  const box = $("error");
  const kind = payload && payload.error ? ` ${payload.error}` : "";
  const message = payload && payload.message ? payload.message : String(payload || "no answer");
  box.replaceChildren(
    el("h2", { text: `Request failed (HTTP ${status}${kind})` }),
    el("p", { className: "error-message", text: message }),
  );
  const fields = (payload && Array.isArray(payload.fields)) ? payload.fields : [];
  if (fields.length) {
    const list = el("ul", { className: "error-fields" });
    for (const item of fields) {
      list.append(el("li", {}, el("strong", { text: `${item.field}: ` }), item.message || ""));
      const control = $(FIELD_CONTROLS[String(item.field).split(".")[0]] || "");
      if (control) control.setAttribute("aria-invalid", "true");
    }
    box.append(list);
  }
  box.hidden = false;
  $("status").textContent = "";
}

async function readAnswer(response) {
  const text = await response.text();
  try {
    return JSON.parse(text);
  } catch {
    return { message: text.slice(0, 500) || response.statusText };
  }
}

// -- requests ----------------------------------------------------------------------------

let searchCall = 0;

async function send(url, init, label) {
  const call = ++searchCall; // only the latest request's answer is shown
  clearError();
  $("status").textContent = `${label}…`;
  $("search-button").disabled = $("image-button").disabled = true;
  const started = performance.now();
  try {
    const response = await fetch(url, { ...init, headers: { ...authHeaders(), ...(init.headers || {}) } });
    const answer = await readAnswer(response);
    if (call !== searchCall) return;
    if (!response.ok) {
      showError(response.status, answer);
      return;
    }
    render(answer, performance.now() - started);
  } catch (error) {
    if (call === searchCall) showError("–", { error: "network", message: String(error) });
  } finally {
    if (call === searchCall) $("search-button").disabled = $("image-button").disabled = false;
  }
}

function runSearch(fromPager) {
  const query = $("query").value.trim();
  if (!fromPager && lastQuery !== null && query !== lastQuery) $("page").value = "1";
  lastQuery = query;
  return send("v1/search", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(searchBody()),
  }, "Searching");
}

function runImageSearch() {
  const form = new FormData();
  const file = $("image").files[0];
  if (file) form.append("image", file, file.name);
  const query = $("query").value.trim();
  if (query) form.append("query", query);
  const pageSize = $("page_size").value.trim();
  if (pageSize) form.append("page_size", pageSize);
  for (const kb of kbIds()) form.append("kb_ids", kb);
  return send("v1/search/image", { method: "POST", body: form }, "Searching by image");
}

let collectionsCall = 0;

async function loadCollections() {
  const call = ++collectionsCall; // a later call (a new key) wins over a slower earlier one
  const box = $("collections");
  const status = $("collections-status");
  status.textContent = "loading…";
  let answer;
  let failure = null;
  try {
    const response = await fetch("v1/collections", { headers: authHeaders() });
    answer = await readAnswer(response);
    if (!response.ok) failure = answer.message || String(response.status);
  } catch (error) {
    failure = String(error);
  }
  if (call !== collectionsCall) return;
  for (const node of box.querySelectorAll(".collection")) node.remove();
  if (failure !== null) {
    status.textContent = `not listed: ${failure}`;
    return;
  }
  status.textContent = "";
  if (Array.isArray(answer.kb_ids)) $("kb_ids").placeholder = `all of: ${answer.kb_ids.join(", ")}`;
  for (const item of answer.collections || []) {
    const id = `collection-${item.name}`;
    box.append(el("span", { className: "collection" },
      el("input", { type: "checkbox", id, value: item.name, disabled: !item.exists }),
      el("label", { for: id, text: `${item.name} (${item.rows} rows, ${item.modality})` })));
  }
}

// -- response -> page --------------------------------------------------------------------

function unescapeHtml(text) {
  // the service escapes &, < and > in highlights; &amp; last, so "&amp;lt;" stays "&lt;"
  return text.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
}

function highlighted(chunk, query) {
  // The service marks query terms with <em>…</em> (same normalisation as its matching)
  // in escaped text; the text itself is never parsed as HTML.
  const out = el("p", { className: "text" });
  if (typeof chunk.highlight === "string") {
    chunk.highlight.split(/(<em>[\s\S]*?<\/em>)/).forEach((part) => {
      const match = /^<em>([\s\S]*)<\/em>$/.exec(part);
      out.append(match ? el("mark", { text: unescapeHtml(match[1]) })
        : document.createTextNode(unescapeHtml(part)));
    });
    return out;
  }
  const terms = query.split(/[^\p{L}\p{N}]+/u).filter((t) => t.length > 2);
  if (!terms.length) {
    out.textContent = chunk.content;
    return out;
  }
  const escaped = terms.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  const pattern = new RegExp(`(${escaped.join("|")})`, "giu");
  chunk.content.split(pattern).forEach((part, index) => {
    out.append(index % 2 ? el("mark", { text: part }) : document.createTextNode(part));
  });
  return out;
}

function scoreParts(parts) {
  const table = el("div", { className: "parts", role: "list", "aria-label": "score parts" });
  for (const [key, label, meaning] of PARTS) {
    const value = parts ? parts[key] : null;
    if (typeof value !== "number") continue;
    const bar = el("span", { className: `bar bar-${key}`, "aria-hidden": "true" });
    bar.style.width = `${Math.max(0, Math.min(1, Math.abs(value))) * 100}%`;
    const sign = key === "xdrug" && value > 0 ? "−" : "";
    table.append(el("div", { className: "part", role: "listitem", title: meaning },
      el("span", { className: "part-name", text: label }),
      el("span", { className: "track" }, bar),
      el("span", { className: "part-value", text: `${sign}${fmt(value)}` })));
  }
  if (!table.childElementCount) table.append(el("span", { className: "help", text: "no score parts" }));
  return table;
}

function decisions(trace, prefix) {
  const found = [];
  for (const stage of trace || []) {
    for (const decision of stage.decisions || []) {
      if (decision.startsWith(prefix)) found.push(...decision.slice(prefix.length).split(",").filter(Boolean));
    }
  }
  return found;
}

function renderSummary(body) {
  const intent = body.intent || {};
  const corrections = intent.corrections || [];
  // the intent stage names what the vocabulary found; older services only the supplement
  const found = decisions(body.trace, "entities:");
  const entities = found.length ? found : decisions(body.trace, "drug_terms:");
  const route = (body.route || []).map((p) => `${p.collection} (${p.encoder}, top ${p.top_k})`);
  const rows = [
    ["Workflow", intent.workflow || "general"],
    [
      "Section cues",
      ((intent.section_cues || []).join(", ") || "none") +
        (intent.section_cues_implied ? " (inferred: the question names no drug)" : ""),
    ],
    ["Entity match required", intent.require_entity_match ? "yes" : "no"],
    ["Detected entities", entities.join(", ") || "none reported"],
    ["Typo corrections", corrections.join(", ") || "none"],
    ["Route", route.join("; ") || "no plans"],
  ];
  const list = el("dl", {});
  for (const [name, value] of rows) list.append(el("dt", { text: name }), el("dd", { text: value }));
  $("summary").replaceChildren(el("h3", { text: "Query understanding" }), list);
  $("summary").hidden = false;
}

function renderResults(body, query) {
  const list = $("results");
  list.replaceChildren();
  const first = (body.page - 1) * body.page_size + 1;
  list.start = first;
  if (!(body.chunks || []).length) {
    list.append(el("li", { className: "empty", text: "No results on this page." }));
  }
  for (const warning of body.warnings || []) {
    list.append(el("li", { className: "empty warning", text: warning }));
  }
  // the service searched each misspelt drug name as the name it was read as
  // ("Tagriso→Tagrisso"); mark those names beside the words typed.
  const readAs = ((body.intent || {}).corrections || []).map((c) => c.split("\u2192").pop());
  const markedText = [query, ...readAs].join(" ");
  for (const chunk of body.chunks || []) {
    const meta = el("p", { className: "meta" },
      el("span", { text: `section: ${chunk.biomed_section || "–"}` }),
      el("span", { text: `kb: ${chunk.kb_id || "–"}` }),
      el("span", { text: `collection: ${chunk.collection || "–"}` }),
      el("span", { text: `document: ${chunk.document_id || "–"}` }));
    const scores = el("p", { className: "scores" },
      el("strong", { className: "similarity", text: `similarity ${fmt(chunk.similarity)}` }),
      el("span", { text: `vector ${fmt(chunk.vector_similarity)}` }),
      el("span", { text: `term ${fmt(chunk.term_similarity)}` }));
    list.append(el("li", { className: "result" },
      el("h3", { className: "doc-name", text: chunk.document_name || chunk.document_id || chunk.chunk_id }),
      meta, scores, scoreParts(chunk.score_parts), highlighted(chunk, markedText)));
  }
  const pages = Math.max(1, Math.ceil((body.total || 0) / (body.page_size || 1)));
  $("page-label").textContent = `Page ${body.page} of ${pages} · ${body.total} results`;
  $("prev").disabled = body.page <= 1;
  $("next").disabled = body.page >= pages;
  $("pager").hidden = false;
}

function renderAggs(body) {
  const list = $("doc-aggs");
  list.replaceChildren();
  for (const agg of body.doc_aggs || []) {
    list.append(el("li", {},
      el("span", { className: "agg-name", text: agg.document_name || agg.document_id }),
      el("span", { className: "agg-count", text: `${agg.count} chunk${agg.count === 1 ? "" : "s"}` })));
  }
  if (!list.childElementCount) list.append(el("li", { className: "empty", text: "none" }));
}

function renderTrace(trace) {
  const list = $("trace");
  list.replaceChildren();
  const longest = Math.max(1, ...(trace || []).map((s) => s.ms || 0));
  for (const stage of trace || []) {
    const bar = el("span", { className: "bar bar-stage", "aria-hidden": "true" });
    bar.style.width = `${Math.max(0.5, ((stage.ms || 0) / longest) * 100)}%`;
    const flags = stage.degraded ? " DEGRADED" : "";
    const item = el("li", { className: stage.degraded ? "stage degraded" : "stage" },
      el("span", { className: "stage-name", text: stage.name }),
      el("span", { className: "track" }, bar),
      el("span", { className: "stage-ms", text: `${fmt(stage.ms, 1)} ms` }),
      el("span", { className: "stage-io", text: `${stage.in ?? 0} → ${stage.out ?? 0}${flags}` }));
    const notes = [...(stage.decisions || [])];
    if (stage.error) notes.unshift(`error: ${stage.error}`);
    if (notes.length) {
      item.append(el("details", { className: "decisions" },
        el("summary", { text: `${notes.length} decision${notes.length === 1 ? "" : "s"}` }),
        el("ul", {}, ...notes.map((n) => el("li", { text: n })))));
    }
    list.append(item);
  }
}

function render(body, elapsedMs) {
  const query = $("query").value.trim();
  renderSummary(body);
  renderResults(body, query);
  renderAggs(body);
  renderTrace(body.trace);
  const serverMs = (body.trace || []).reduce((sum, s) => sum + (s.ms || 0), 0);
  $("status").textContent =
    `${body.total} results · round trip ${fmt(elapsedMs, 0)} ms · stage sum ${fmt(serverMs, 0)} ms`;
}

// -- wiring ------------------------------------------------------------------------------

function changePage(delta) {
  const page = Math.max(1, (Number($("page").value) || 1) + delta);
  $("page").value = String(page);
  runSearch(true);
}

document.addEventListener("DOMContentLoaded", () => {
  $("api-key").value = sessionStorage.getItem(KEY_STORE) || "";
  $("api-key").addEventListener("input", () => sessionStorage.setItem(KEY_STORE, apiKey()));
  $("api-key").addEventListener("change", loadCollections);
  $("search-form").addEventListener("submit", (event) => {
    event.preventDefault();
    runSearch(false);
  });
  $("image-form").addEventListener("submit", (event) => {
    event.preventDefault();
    runImageSearch();
  });
  $("prev").addEventListener("click", () => changePage(-1));
  $("next").addEventListener("click", () => changePage(1));
  loadCollections();
  $("query").focus();
});
