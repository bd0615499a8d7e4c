// personasim view: renders the runs embedded in this page. Every text from a run is put in the
// page with text nodes (never innerHTML), so a model's reply can never become markup.
"use strict";
const T0 = performance.now();
const RUNS = JSON.parse(document.getElementById("runs").textContent);
const LIST_BLOCK = document.getElementById("run-list");  // a folder's run list page only
const LIST = LIST_BLOCK ? JSON.parse(LIST_BLOCK.textContent) : null;
const PAGE = 50;
const trajCache = new Map();

function el(tag, attrs, ...kids) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (k === "style") node.style.cssText = v;  // CSSOM: allowed by the page's CSP (no inline style)
    else node.setAttribute(k, v);
  }
  for (const kid of kids.flat(Infinity)) {
    if (kid === null || kid === undefined || kid === false) continue;
    node.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }
  return node;
}
const txt = (v) => (v === null || v === undefined ? "—" : typeof v === "object" ? JSON.stringify(v) : String(v));
const isNum = (v) => typeof v === "number" && isFinite(v);
const fmt = (v) => (isNum(v) && !Number.isInteger(v) ? String(+v.toFixed(4)) : txt(v));
const agentHref = (r, id) => "#agent/" + (RUNS.length > 1 ? r + "/" : "") + encodeURIComponent(id);
const callHref = (r, seq) => "#call/" + (RUNS.length > 1 ? r + "/" : "") + seq;
const card = (title, ...kids) => el("section", { class: "card" }, title ? el("h2", {}, title) : null, kids);
const badge = (text, cls) => el("span", { class: "badge " + (cls || "") }, text);
// A long id (a persona's UUID) as its first 8 characters; the whole id is its tooltip.
const shortId = (id) => typeof id === "string" && id.length > 12 ? el("span", { class: "short-id", title: id }, id.slice(0, 8) + "…") : fmt(id);

function kvTable(pairs) {
  return el("table", { class: "kv" }, pairs.map(([k, v]) =>
    el("tr", {}, el("th", {}, k), el("td", {}, v instanceof Node ? v : txt(v)))));
}

function dataTable(header, rows, numeric, cls) {
  return el("table", { class: cls || null },
    el("thead", {}, el("tr", {}, header.map((h) => el("th", {}, h)))),
    el("tbody", {}, rows.map((row) => el("tr", {}, row.map((c) =>
      c instanceof Node ? el("td", {}, c) : el("td", { class: numeric && isNum(c) ? "num" : null }, fmt(c)))))));
}

function flatten(value, prefix, out) {
  if (value !== null && typeof value === "object" && !Array.isArray(value)) {
    for (const k of Object.keys(value)) flatten(value[k], prefix ? prefix + "." + k : k, out);
  } else if (Array.isArray(value) && value.some((v) => v !== null && typeof v === "object")) {
    value.forEach((v, i) => flatten(v, prefix + "[" + i + "]", out));
  } else out.set(prefix, value);
  return out;
}

// ---------- navigation ----------
function nav(active) {
  const back = RUNS.length && RUNS[0].list ? [el("a", { href: RUNS[0].list, class: "back-to-list" }, "← all runs")] : [];
  const links = RUNS.map((run, r) => el("a", { href: "#run/" + r, class: active === "run/" + r ? "active" : null },
    RUNS.length > 1 ? "run " + (r + 1) + ": " + run.dir : run.dir));
  if (RUNS.length > 1) links.push(el("a", { href: "#compare", class: active === "compare" ? "active" : null }, "compare"));
  document.getElementById("nav").replaceChildren(...back, ...links);
}

// Links: #run/N, #agent/ID (several runs: #agent/N/ID), #call/SEQ (#call/N/SEQ), #compare,
// #compare/PERSONA; "#agent=ID" and "#call=SEQ" are read the same. A reload keeps the hash.
function route() {
  if (LIST) return showList();
  const hash = decodeURIComponent(location.hash.slice(1)).replace(/^(agent|call)=/, "$1/");
  const main = document.getElementById("main");
  let view, focus = null;
  const parts = hash.split("/");
  delete document.body.dataset.call;
  if (parts[0] === "call") {
    const multi = RUNS.length > 1 && parts.length > 2;
    const r = multi && RUNS[+parts[1]] ? +parts[1] : 0;
    const seq = parts[multi ? 2 : 1];
    const id = (RUNS[r].calls || {})[seq];
    view = id === undefined ? card("No such call", el("p", {}, "Run " + RUNS[r].dir + " has no model call #" + seq + " by an agent."),
      el("a", { href: "#run/" + r }, "back to the run")) : agentView(r, id);
    focus = id === undefined ? null : seq;
    nav("run/" + r);
  } else if (parts[0] === "agent") {
    const multi = RUNS.length > 1 && /^\d+$/.test(parts[1]) && parts.length > 2;
    const r = multi ? +parts[1] : 0;
    const id = parts.slice(multi ? 2 : 1).join("/");
    view = agentView(r, id);
    nav("run/" + r);
  } else if (parts[0] === "compare" && RUNS.length > 1) {
    view = parts.length > 1 ? comparePersonaView(parts.slice(1).join("/")) : compareView();
    nav("compare");
  } else {
    const r = parts[0] === "run" && RUNS[+parts[1]] ? +parts[1] : 0;
    view = runView(r);
    nav("run/" + r);
  }
  main.replaceChildren(view);
  window.scrollTo(0, 0);
  document.body.dataset.view = parts[0] === "call" ? "agent" : parts[0] || "run";
  const target = focus === null ? null : main.querySelector('#trajectory .ev[data-seq="' + focus + '"]');
  if (target) {
    target.classList.add("focus");
    target.querySelectorAll("details").forEach((d) => { d.open = true; });
    target.scrollIntoView({ block: "start" });
    document.body.dataset.call = focus;
  }
}

// ---------- run list (a sweep or a folder of runs) ----------
function showList() {
  document.querySelector("header .brand").setAttribute("href", "#");
  document.getElementById("nav").replaceChildren();
  document.getElementById("main").replaceChildren(listView());
  document.body.dataset.view = "list";
}

const LIST_COLUMNS = [["path", "run", "24%"], ["status", "status", "9%"], ["scenario", "scenario", "14%"],
  ["model", "model", "17%"], ["n", "n", "9%"], ["validity", "validity", "15%"], ["started", "started (UTC)", "12%"]];

function listView() {
  const head = el("tr", {}, LIST_COLUMNS.map(([, title]) => el("th", {}, title)));
  const widths = el("colgroup", {}, LIST_COLUMNS.map(([, , width]) => el("col", { style: "width:" + width })));
  const table = el("table", { id: "runs-table", class: "fit" }, widths, el("thead", {}, head),
    el("tbody", {}, LIST.rows.map(listRow)));
  return el("div", {}, el("h1", {}, "Runs in " + LIST.dir + " (" + LIST.rows.length + ")"),
    card(null, el("p", { class: "muted" }, "Newest first. Open a run for its results, agents and validity; each run page links back here."), table));
}

function listRow(row) {
  const path = row.href ? el("a", { href: row.href, class: "run-link" }, row.path) : el("span", { title: "cannot be opened" }, row.path);
  const valid = row.validity === "valid" ? "ok" : row.validity.startsWith("not valid") ? "bad" : "warn";
  const status = row.status === "complete" ? "ok" : row.status === "damaged" ? "bad" : "warn";
  return el("tr", { "data-run": row.path }, el("td", {}, path), el("td", {}, badge(row.status, status)),
    el("td", {}, row.scenario), el("td", {}, row.model), el("td", {}, row.n),
    el("td", {}, row.status === "damaged" ? el("span", { class: "muted" }, row.validity) : badge(row.validity, valid)),
    el("td", {}, row.started));
}

// ---------- run page ----------
function runView(r) {
  const run = RUNS[r], m = run.manifest, v = m.validity || {};
  const ok = v.overall ? v.overall.ok : null;
  const head = el("div", {},
    el("h1", {}, (m.scenario || "run") + " — " + run.dir),
    el("div", { class: "toolbar" },
      run.running ? badge("still running", "warn") : badge(m.status || "?", m.status === "complete" ? "ok" : "warn"),
      ok === null ? badge("validity unknown", "warn") : badge(ok ? "valid" : "NOT VALID", ok ? "ok" : "bad"),
      el("span", { class: "muted" }, "created " + txt(m.created_at) + " · finished " + txt(m.finished_at))));
  return el("div", {}, head, resultsCard(run), judgesCard(run), agentsCard(r), detailsBlock(run), kindsCard(run));
}

// What the run found comes first: the scenario's summary lines, its figures (file names as
// captions), its tables, then every metric. How it ran (manifest, validity, cost) follows the agents.
function resultsCard(run) {
  const results = card("Results", summaryBlock(run), figuresBlock(run), reportTables(run), metricsBlock(run));
  results.id = "results";
  return results;
}

function detailsBlock(run) {
  const validity = validityCard(run);
  validity.classList.add("wide");
  return el("div", { id: "run-details" }, el("h2", { class: "section" }, "How the run went"),
    el("div", { class: "grid" }, manifestCard(run.manifest), costCard(run), validity), el("div", { style: "height:14px" }));
}

// A pack by scenario and hash: shipped, or the edited file as given (never an install path;
// a manifest from before packs were named so gives a path, shown by its file name).
function packName(p) {
  if (p.shipped === true) return "shipped " + txt(p.scenario) + " pack";
  if (p.shipped === false) return "edited: " + txt(p.file);
  return txt(String(p.path || "").split(/[\\/]/).pop());
}

function manifestCard(m) {
  const roles = Object.entries(m.roles || {}).map(([role, specs]) => role + " → " + [].concat(specs).join(", "));
  const prompts = m.prompts ? packName(m.prompts) + " (sha256 " + txt(m.prompts.sha256).slice(0, 12) + "…)" : "—";
  return card("Manifest", kvTable([
    ["scenario", m.scenario], ["seed", m.seed], ["roles → models", roles.join("; ") || "—"],
    ["model", m.model && typeof m.model === "object" ? kvTable(Object.entries(m.model)) : m.model], ["response format", m.response_format], ["max tokens", m.max_tokens],
    ["prompt pack", prompts], ["scenario file", m.scenario_file || null],
  ]), el("h3", {}, "Parameters"), kvTable(Object.entries(m.params || {})),
  el("details", {}, el("summary", {}, "package versions"), kvTable(Object.entries(m.packages || {}))),
  m.client ? el("details", {}, el("summary", {}, "client settings"), kvTable(Object.entries(m.client))) : null);
}

function validityCard(run) {
  const v = run.manifest.validity;
  if (!v) return card("Validity", el("p", { class: "muted" }, "no validity in the manifest"));
  const cols = ["decisions", "parsed", "failed", "reasks", "failure_rate", "max_failure_rate", "ok"];
  const rows = Object.entries(v.tasks || {}).map(([task, s]) => [task, ...cols.map((c) =>
    c === "ok" ? badge(s.ok ? "ok" : "over limit", s.ok ? "ok" : "bad") : s[c] ?? (s[c + "_undefined"] || null))]);
  if (v.overall) rows.push(["overall", ...cols.map((c) => c === "ok" ? badge(v.overall.ok ? "ok" : "NOT VALID", v.overall.ok ? "ok" : "bad") : v.overall[c])]);
  const flagged = [];
  for (const [path, value] of flatten(run.metrics ? run.metrics.metrics : null, "", new Map())) {
    if (path.endsWith(".small") && value === true) flagged.push(path.slice(0, -6));
  }
  const heads = { reasks: "re-asks", failure_rate: "failure rate", max_failure_rate: "limit" };
  return card("Validity", el("div", { class: "scroll" }, dataTable(["task", ...cols.map((c) => heads[c] || c)], rows, true, "wrap fit")),
    el("p", { class: "muted" }, "max failure rate " + txt(v.max_failure_rate) + ", groups under n = " + txt(v.min_group_n) + " are flagged"),
    ...readingsBlock(v),
    el("h3", {}, "Flagged groups (" + flagged.length + ")"),
    flagged.length ? el("div", { class: "scroll", style: "max-height:160px" }, el("ul", {}, flagged.map((f) => el("li", {}, f))))
      : el("p", { class: "muted" }, "none"));
}

// How model text was read (docs/readers.md): per reader, texts read, unreadable, ambiguous, the
// rule or role behind each value, and the reading audit's estimate when one was made.
function readingsBlock(v) {
  const readers = Object.entries(v.readings || {});
  if (!readers.length) return [];
  const audit = (v.readings_audit || {}).readers || {};
  const rows = readers.map(([name, s]) => {
    const a = audit[name];
    const audited = !a ? "—" : !a.audited ? "not audited" : a.interval
      ? (100 * a.wrong_rate).toFixed(1) + "% [" + a.interval.map((x) => (100 * x).toFixed(1)).join(", ") + "], n " + (a.agree + a.disagree)
      : "undefined";
    return [name, s.n, s.read, s.unreadable, s.ambiguous, s.unread_rate,
      badge(s.ok ? "ok" : "over limit", s.ok ? "ok" : "bad"),
      Object.entries(s.by || {}).map(([rule, n]) => rule + ": " + n).join("; "), audited];
  });
  const heads = ["reader", "texts", "read", "unreadable", "ambiguous", "unread rate", "ok", "values by rule or role", "audit: wrong-read rate"];
  return [el("h3", {}, "Readings (" + readers.length + " readers)"),
    el("div", { class: "scroll" }, dataTable(heads, rows, true, "wrap fit"))];
}

function costCard(run) {
  const llm = run.manifest.llm || {};
  const sources = Object.entries(run.sources || {}).map(([s, n]) => s + " " + n).join(", ");
  return card("Cost", kvTable([
    ["model requests sent", llm.calls], ["cache hits", llm.cache_hits], ["failures", llm.failures],
    ["prompt tokens", llm.prompt_tokens], ["completion tokens", llm.completion_tokens],
    ["llm.call events by source", sources || "—"], ["agents", run.agents.rows.length],
  ]));
}

function summaryBlock(run) {
  if (!run.metrics) return el("p", { class: "muted" }, "no metrics.json (the run did not complete; `personasim metrics RUN_DIR` computes them)");
  if (!run.summary.length) return null;
  return el("pre", { id: "results-summary" }, run.summary.join("\n"));
}

// A rescore (docs/rescore.md): each scored item under the rescored run's judge and this run's.
function judgesCard(run) {
  const j = run.judges;
  if (!j) return null;
  const differ = j.rows.filter((row) => row[3] !== null && row[3] !== 0).length;
  return card("Two judges, item by item (" + j.rows.length + " items, " + differ + " scored differently)",
    el("div", { class: "scroll", style: "max-height:320px" },
      dataTable(["item", j.first, j.second, "difference"], j.rows, true, "judges")));
}

function figuresBlock(run) {
  const figures = run.reports.filter((x) => x.kind === "figure" && x.src.startsWith("data:image/png;base64,"));
  if (!figures.length) return null;
  return el("div", { class: "grid figures" }, figures.map((f) => el("figure", {}, el("img", { src: f.src, alt: f.name }), el("figcaption", {}, f.name))));
}

// The report's CSV tables, folded under their file names (the figures and summary say more at
// a glance). One of up to FIT_COLUMNS columns wraps its cells to the card's width; a wider one
// scrolls inside its table box.
const FIT_COLUMNS = 10;
function reportTables(run) {
  return run.reports.filter((x) => x.kind === "table").map((t) => {
    const fits = (t.rows[0] || []).length <= FIT_COLUMNS;
    return el("details", { class: "report-table" }, el("summary", {}, t.name + " (" + Math.max(0, t.rows.length - 1) + " rows)"),
      el("div", { class: "scroll", style: "max-height:320px" }, dataTable(t.rows[0] || [], t.rows.slice(1).map((row) => row.map(numberish)), true, fits ? "fit" : null)));
  });
}
const numberish = (s) => (s !== "" && !isNaN(+s) ? +s : s);

// Every metric, flattened; open when short or when the scenario gave no summary lines.
function metricsBlock(run) {
  if (!run.metrics) return null;
  const flat = [...flatten(run.metrics, "", new Map())];
  return el("details", { id: "results-metrics", open: flat.length <= 60 || !run.summary.length ? "" : null },
    el("summary", {}, "metrics.json, flattened (" + flat.length + " values)"),
    el("div", { class: "scroll", style: "max-height:520px" }, dataTable(["metric", "value"], flat, true, "fit metrics")));
}

function kindsCard(run) {
  return card("Events by kind", el("div", { class: "scroll" }, dataTable(["kind", "events"], Object.entries(run.kinds), true)));
}

// ---------- agents table: searched, filtered, sorted, paged (10,000 rows stay fast) ----------
// Filters combine with AND: the search (any cell's text), the agent type, the model role, failures,
// and any number of conditions "COLUMN OP VALUE" over attributes, decisions, outcomes and counts.
const tableState = new Map();
const OPS = ["=", "≠", "<", "≤", ">", "≥", "contains"];
const FAILED = [["", "any"], ["failed", "with a failed decision"], ["ok", "no failed decision"], ["reasked", "with a re-ask"]];

function agentsCard(r) {
  const run = RUNS[r], t = run.agents;
  const st = tableState.get(r) || { filter: "", type: "", role: "", failed: "", conds: [], sort: null, desc: false, page: 0, all: false };
  tableState.set(r, st);
  const body = el("div", {}), conds = el("div", { class: "conds" });
  const draw = () => body.replaceChildren(agentsTable(r, st, draw));
  const refilter = () => { st.page = 0; draw(); };
  const input = el("input", { type: "search", class: "agent-search", placeholder: "search: any text, e.g. a persona id or attribute value", value: st.filter });
  input.addEventListener("input", () => { st.filter = input.value; refilter(); });
  const choice = (cls, label, key, options) => options.length < 2 && key !== "failed" ? null : el("label", {}, label + " ",
    el("select", { class: cls, onchange: (e) => { st[key] = e.target.value; refilter(); } },
      options.map(([value, text]) => el("option", { value, selected: st[key] === value ? "" : null }, text))));
  const distinct = (col) => [...new Set(t.rows.flatMap((row) => row[col] === null ? [] : String(row[col]).split(", ")))].sort();
  const toggle = el("label", {}, el("input", { type: "checkbox", checked: st.all ? "" : null,
    onchange: (e) => { st.all = e.target.checked; draw(); } }), " all " + t.attributes.length + " attributes");
  const drawConds = () => conds.replaceChildren(...st.conds.map((c, n) => condition(t, c, refilter, () => { st.conds.splice(n, 1); drawConds(); refilter(); })));
  const add = el("button", { class: "add-condition", onclick: () => { st.conds.push({ col: filterColumns(t)[0], op: "=", value: "" }); drawConds(); } }, "+ condition");
  drawConds();
  draw();
  return card("Agents (" + t.rows.length + ")", el("div", { class: "toolbar" }, input,
    choice("agent-type", "type", "type", [["", "any"], ...distinct(t.columns.indexOf("type")).map((v) => [v, v])]),
    choice("agent-role", "model role", "role", [["", "any"], ...distinct(t.columns.indexOf("role")).map((v) => [v, v])]),
    choice("agent-failed", "failures", "failed", FAILED), add,
    t.attributes.length > t.shown_attributes.length ? toggle : null), conds, body);
}

// The columns a condition can test: attributes (traits), decisions, outcomes, then counts.
function filterColumns(t) {
  const fixed = ["id", "label", "persona", "type", "role"];
  const rest = t.columns.filter((c) => !fixed.includes(c) && !t.attributes.includes(c));
  return [...t.attributes, ...rest.filter((c) => c.startsWith("decision:")), ...rest.filter((c) => c.includes(":") && !c.startsWith("decision:")),
    ...rest.filter((c) => !c.includes(":"))];
}

function condition(t, c, refilter, remove) {
  const value = el("input", { type: "text", class: "cond-value", placeholder: "value", value: c.value, size: 12 });
  value.addEventListener("input", () => { c.value = value.value; refilter(); });
  return el("div", { class: "toolbar cond" }, "where",
    el("select", { class: "cond-column", onchange: (e) => { c.col = e.target.value; refilter(); } },
      filterColumns(t).map((name) => el("option", { value: name, selected: c.col === name ? "" : null }, name))),
    el("select", { class: "cond-op", onchange: (e) => { c.op = e.target.value; refilter(); } },
      OPS.map((op) => el("option", { value: op, selected: c.op === op ? "" : null }, op))),
    value, el("button", { onclick: remove, title: "remove this condition" }, "×"));
}

// A missing value never matches (not even ≠). Numbers compare as numbers when both sides are
// numbers; text compares without case, digits by value ("item 2" < "item 10").
function holds(v, op, want) {
  if (v === null || v === undefined) return false;
  if (op === "contains") return String(v).toLowerCase().includes(want.toLowerCase());
  const cmp = isNum(v) && want.trim() !== "" && !isNaN(+want) ? v - +want
    : String(v).localeCompare(want.trim(), undefined, { numeric: true, sensitivity: "base" });
  return { "=": cmp === 0, "≠": cmp !== 0, "<": cmp < 0, "≤": cmp <= 0, ">": cmp > 0, "≥": cmp >= 0 }[op];
}

function filtered(t, st) {
  const col = (name) => t.columns.indexOf(name);
  const needle = st.filter.trim().toLowerCase();
  const tests = [];
  if (needle) tests.push((row, i) => t.search[i].includes(needle));
  if (st.type) tests.push((row) => String(row[col("type")]) === st.type);
  if (st.role) tests.push((row) => row[col("role")] !== null && String(row[col("role")]).split(", ").includes(st.role));
  const failed = col("failed"), reasks = col("reasks");
  if (st.failed === "failed") tests.push((row) => row[failed] > 0);
  if (st.failed === "ok") tests.push((row) => !(row[failed] > 0));
  if (st.failed === "reasked") tests.push((row) => row[reasks] > 0);
  for (const c of st.conds) if (c.value.trim() !== "" && col(c.col) >= 0) tests.push((row) => holds(row[col(c.col)], c.op, c.value));
  const idx = [];
  t.rows.forEach((row, i) => { if (tests.every((f) => f(row, i))) idx.push(i); });
  return idx;
}

// Shown columns: the label (pinned), then decisions and outcomes, counts, role, type, persona,
// attributes, so the outcomes are on screen without scrolling sideways.
function shownColumns(t, st) {
  const shown = new Set(st.all ? t.attributes : t.shown_attributes);
  const order = ["label", ...filterColumns(t).filter((c) => !t.attributes.includes(c)), "role", "type", "persona", ...t.attributes.filter((a) => shown.has(a))];
  return order.map((c) => [c, t.columns.indexOf(c)]).filter(([, i]) => i >= 0);
}

function agentsTable(r, st, draw) {
  const t = RUNS[r].agents;
  if (!t.search) t.search = t.rows.map((row) => row.map((c) => (c === null ? "" : String(c))).join("\u0001").toLowerCase());
  const cols = shownColumns(t, st);
  const idx = filtered(t, st);
  if (st.sort !== null) {
    const k = st.sort, sign = st.desc ? -1 : 1;
    idx.sort((a, b) => sign * compare(t.rows[a][k], t.rows[b][k]));
  }
  const pages = Math.max(1, Math.ceil(idx.length / PAGE));
  st.page = Math.min(st.page, pages - 1);
  const shown = idx.slice(st.page * PAGE, st.page * PAGE + PAGE);
  const header = cols.map(([c, i]) => el("th", { class: "sortable", title: "sort by " + c, onclick: () => {
    st.desc = st.sort === i ? !st.desc : false; st.sort = i; draw(); } },
  breakable(c), st.sort === i ? (st.desc ? " ▼" : " ▲") : ""));
  const rows = shown.map((i) => {
    const row = t.rows[i];
    return el("tr", { "data-agent": row[0] }, cols.map(([c, k]) => k === 1
      ? el("td", {}, el("a", { href: agentHref(r, row[0]) }, txt(row[k])))
      : c === "persona" ? el("td", {}, shortId(row[k]))
        : el("td", { class: isNum(row[k]) ? "num" : null, title: typeof row[k] === "string" && row[k].length > 24 ? row[k] : null }, fmt(row[k]))));
  });
  const pager = el("div", { class: "toolbar" },
    el("button", { onclick: () => { st.page = Math.max(0, st.page - 1); draw(); } }, "‹ prev"),
    el("span", { class: "agent-count" }, "page " + (st.page + 1) + " of " + pages + " · " + idx.length + " matching"),
    el("button", { onclick: () => { st.page = Math.min(pages - 1, st.page + 1); draw(); } }, "next ›"));
  return el("div", {}, el("div", { class: "scroll agents" }, el("table", { id: "agents-" + r }, el("thead", {}, el("tr", {}, header)), el("tbody", {}, rows))), pager);
}

// A long column name (`decision:career.assistant`) may wrap after each ":" and ".".
const breakable = (name) => name.split(/(?<=[:.])/).flatMap((part, n) => (n ? [el("wbr"), part] : [part]));

function compare(a, b) {
  if (a === b) return 0;
  if (a === null || a === undefined) return 1;
  if (b === null || b === undefined) return -1;
  if (isNum(a) && isNum(b)) return a - b;
  return String(a).localeCompare(String(b), undefined, { numeric: true });
}

// ---------- one agent's trajectory ----------
function trajectory(r, id) {
  const key = r + "/" + id;
  if (!trajCache.has(key)) {
    const block = RUNS[r].blocks[id];
    trajCache.set(key, block ? JSON.parse(document.getElementById(block).textContent) : null);
  }
  return trajCache.get(key);
}

function agentRow(r, id) {
  const t = RUNS[r].agents;
  if (!t.byId) t.byId = new Map(t.rows.map((row, i) => [row[0], i]));
  const i = t.byId.get(id);
  return i === undefined ? null : Object.fromEntries(t.columns.map((c, k) => [c, t.rows[i][k]]));
}

function agentView(r, id) {
  const row = agentRow(r, id), events = trajectory(r, id);
  if (!row || !events) return card("No such agent", el("p", {}, "Run " + RUNS[r].dir + " has no agent " + id + "."), el("a", { href: "#run/" + r }, "back to the run"));
  const created = events.find((e) => e[2] === "agent.created");
  const persona = created && created[4].persona;
  const others = RUNS.length > 1 && row.persona ? el("a", { href: "#compare/" + encodeURIComponent(row.persona) }, "compare this persona across runs") : null;
  const stats = RUNS[r].agents.columns.filter((c) => !["id", "label", "persona", "type", "role", ...RUNS[r].agents.attributes].includes(c));
  return el("div", {},
    el("p", {}, el("a", { href: "#run/" + r }, "← " + RUNS[r].dir), " ", others),
    el("h1", { id: "agent-title" }, row.label),
    el("div", { class: "grid" },
      card("Agent", kvTable([["agent id", id], ["persona id", row.persona], ["type", row.type], ["model role", row.role],
        ...Object.entries((created && created[4]) || {}).filter(([k]) => !["persona", "type"].includes(k))]),
      persona ? el("details", { open: Object.keys(persona.attributes || {}).length <= 8 ? "" : null },
        el("summary", {}, "persona attributes (" + Object.keys(persona.attributes || {}).length + ")"),
        kvTable(Object.entries(persona.attributes || {})),
        Object.keys(persona.traits || {}).length ? [el("h3", {}, "traits"), kvTable(Object.entries(persona.traits))] : null) : null),
      card("Outcomes and steps", kvTable(stats.filter((c) => row[c] !== null && row[c] !== undefined).map((c) => [c, fmt(row[c])])))),
    el("div", { style: "height:14px" }),
    card("Trajectory (" + events.length + " events)", el("div", { id: "trajectory" }, renderEvents(r, events, id, null))));
}

function renderEvents(r, events, id, marks) {
  const out = [];
  let round;
  for (const ev of events) {
    const [seq, rnd, kind] = ev;
    if (kind === "round.started" || kind === "round.completed") continue;
    if (rnd !== round) {
      round = rnd;
      out.push(el("div", { class: "round" }, rnd === null ? "setup" : "round " + rnd));
    }
    out.push(renderEvent(r, ev, id, marks ? marks.get(seq) : null));
  }
  return out;
}

const KIND_CLASS = { "llm.call": "k-llm", "decision.made": "k-made", "decision.failed": "k-failed", "decision.reask": "k-reask",
  "llm.error": "k-error", "env.entered": "k-move", "env.left": "k-move", "agent.moved": "k-move" };

function renderEvent(r, ev, id, mark) {
  const [seq, , kind, actor, p] = ev;
  const cls = "ev " + (KIND_CLASS[kind] || (kind.includes(".") && !kind.startsWith("agent.") ? "k-env" : "")) + (mark ? " differs" : "");
  const head = el("div", { class: "head" }, kind === "llm.call"
    ? el("a", { class: "seq", href: callHref(r, seq), title: "a link to this call" }, "#" + seq) : el("span", { class: "seq" }, "#" + seq), el("span", { class: "kind" }, kind),
    actor && actor !== id ? el("span", { class: "muted" }, "by " + actor) : null,
    mark ? el("span", { class: "difflabel" }, mark) : null);
  const node = el("div", { class: cls, "data-seq": seq, "data-kind": kind }, head);
  const body = (EVENT_BODY[kind] || genericBody)(p, head);
  node.append(...[].concat(body).filter(Boolean));
  return node;
}

const EVENT_BODY = {
  "llm.call": (p, head) => {
    const resp = p.response || {}, usage = resp.usage || {};
    head.append(el("span", {}, "task " + txt(p.task)), p.role ? el("span", { class: "muted" }, "role " + p.role) : null,
      badge(txt(p.source), "src-" + p.source), badge("attempts " + txt(p.attempts)),
      badge("latency " + (isNum(p.latency_s) ? p.latency_s.toFixed(3) + " s" : "—")),
      badge("tokens " + txt(usage.prompt_tokens) + " + " + txt(usage.completion_tokens)),
      resp.finish_reason ? badge("finish " + resp.finish_reason) : null,
      el("span", { class: "muted" }, txt(resp.model || (p.backend || {}).model || (p.backend || {}).backend)));
    const messages = p.messages || [];
    return [
      el("details", {}, el("summary", {}, "messages sent (" + messages.length + ")"),
        messages.map((m) => [el("div", { class: "msg-role" }, txt(m.role)), el("pre", {}, txt(m.content))]),
        p.sampling ? [el("div", { class: "msg-role" }, "sampling"), el("pre", {}, JSON.stringify(p.sampling))] : null,
        p.response_format ? [el("div", { class: "msg-role" }, "response format"), el("pre", {}, JSON.stringify(p.response_format))] : null),
      el("div", { class: "msg-role" }, "reply"), el("pre", { class: "reply" }, txt(resp.text)),
      resp.logprobs ? logprobs(resp.logprobs) : null,
    ];
  },
  "decision.made": (p, head) => { head.append(el("span", {}, "task " + txt(p.task) + " →"), el("strong", { class: "value" }, txt(p.value)), badge("attempts " + txt(p.attempts), p.attempts > 1 ? "warn" : "")); return details(p, ["task", "value", "attempts"]); },
  "decision.failed": (p, head) => { head.append(badge("failed", "bad"), el("span", {}, "task " + txt(p.task) + " after " + txt(p.attempts) + " attempts")); return [el("div", {}, "error: " + txt(p.error)), el("div", { class: "msg-role" }, "last reply"), el("pre", {}, txt(p.last_reply)), details(p, ["task", "error", "attempts", "last_reply"])]; },
  "decision.reask": (p, head) => { head.append(badge("re-ask", "warn"), el("span", {}, "task " + txt(p.task) + ", attempt " + txt(p.attempt) + " unusable")); return [el("div", {}, "reminder reason: " + txt(p.error)), details(p, ["task", "attempt", "error"])]; },
  "llm.error": (p, head) => { head.append(badge("error", "bad"), el("span", {}, "task " + txt(p.task) + ", " + txt(p.attempts) + " attempts")); return el("pre", {}, txt(p.error)); },
  "env.entered": (p, head) => { head.append(el("span", {}, "→ entered " + txt(p.env))); return details(p, ["env"]); },
  "env.left": (p, head) => { head.append(el("span", {}, "← left " + txt(p.env))); return details(p, ["env"]); },
  "agent.moved": (p, head) => { head.append(el("span", {}, "moved " + txt(p.from) + " → " + txt(p.to))); return details(p, ["from", "to"]); },
  "agent.created": (p, head) => { head.append(el("span", { class: "muted" }, txt(p.type))); return null; },
};

function genericBody(p, head) {
  if (p.env) head.append(el("span", { class: "muted" }, "in " + p.env));
  const pairs = Object.entries(p).filter(([k]) => k !== "env");
  return pairs.length ? kvTable(pairs) : null;
}

function details(p, skip) {
  const rest = Object.entries(p).filter(([k]) => !skip.includes(k));
  return rest.length ? kvTable(rest) : null;
}

function logprobs(lp) {
  const tokens = Array.isArray(lp) ? lp : lp.content;
  if (!Array.isArray(tokens)) return el("details", {}, el("summary", {}, "logprobs"), el("pre", {}, JSON.stringify(lp)));
  const shown = tokens.slice(0, 400);
  return el("details", {}, el("summary", {}, "logprobs (" + tokens.length + " tokens; colour = probability)"),
    el("div", {}, shown.map((t) => {
      const prob = isNum(t.logprob) ? Math.exp(t.logprob) : null;
      const top = t.top && typeof t.top === "object" ? Object.entries(t.top) : (t.top_logprobs || []).map((a) => [a.token, a.logprob]);
      const alts = top.sort((a, b) => b[1] - a[1]).map(([tok, lp]) => JSON.stringify(tok) + " " + (isNum(lp) ? lp.toFixed(3) : "—")).join("\n");
      const light = prob === null ? 100 : 70 + 28 * prob;
      return el("span", { class: "lp", style: "background:hsl(" + (prob === null ? 0 : 120 * prob) + ",60%," + light + "%)",
        title: "logprob " + (isNum(t.logprob) ? t.logprob.toFixed(4) : "—") + (alts ? "\ntop:\n" + alts : "") }, txt(t.token));
    })),
    tokens.length > shown.length ? el("p", { class: "muted" }, "first " + shown.length + " tokens shown") : null);
}

// ---------- compare ----------
function personaIndex(r) {
  const t = RUNS[r].agents;
  if (!t.byPersona) {
    t.byPersona = new Map();
    for (const row of t.rows) if (row[2] !== null) {
      if (!t.byPersona.has(row[2])) t.byPersona.set(row[2], []);
      t.byPersona.get(row[2]).push(row[0]);
    }
  }
  return t.byPersona;
}

// Run 1 (A) against another run (B): the numbers come from the page's "compare" block, computed
// in Python from each run's log (simulation/runs/viewer/viewer_compare.py).
const COMPARE_BLOCK = document.getElementById("compare");
const COMPARISONS = COMPARE_BLOCK ? JSON.parse(COMPARE_BLOCK.textContent) : [];
let compareWith = 1;
const signed = (v) => (isNum(v) ? (v > 0 ? "+" : v < 0 ? "−" : "") + fmt(Math.abs(v)) : txt(v));
const two = (v) => (v < 0 ? "−" : "") + Math.abs(v).toFixed(2);
const plural = (n, one, many) => n + " " + (n === 1 ? one : many || one + "s");

function compareView() {
  const c = COMPARISONS[compareWith - 1];
  const pick = RUNS.length > 2 ? el("label", {}, "run B: ", el("select", { onchange: (e) => { compareWith = +e.target.value; route(); } },
    RUNS.slice(1).map((run, k) => el("option", { value: k + 1, selected: k + 1 === compareWith ? "" : null }, "run " + (k + 2) + ": " + run.dir)))) : null;
  if (!c) return card("Compare", el("p", { class: "muted" }, "this page has no comparison data (written by an older personasim)"));
  return el("div", {}, el("h1", {}, "Compare run A (run 1) with run B (run " + (compareWith + 1) + ")"), pick,
    summaryCard(c), parametersCard(c), compareMetricsCard(c), comparePersonasCard(c));
}

function runLine(r, letter) {
  const m = RUNS[r].manifest, v = m.validity && m.validity.overall;
  return el("li", {}, el("strong", {}, letter), " = run " + (r + 1) + ": " + RUNS[r].dir + " · " + txt(m.model_spec || m.model) + " · ",
    v ? badge(v.ok ? "valid" : "NOT VALID", v.ok ? "ok" : "bad") : badge("validity unknown", "warn"),
    " " + plural((m.llm || {}).calls || 0, "model request"));
}

// How many shared personas changed a decision, and per task the mean change B − A of numeric
// decisions with its 95% t interval over personas (undefined, with the reason, when it has none).
function summaryCard(c) {
  const only = c.only_a || c.only_b ? " (" + c.only_a + " only in A, " + c.only_b + " only in B)" : "";
  const tasks = c.tasks.map((t) => el("li", { "data-task": t.task }, el("strong", {}, t.task), ": " + t.changed + " of " + t.n + " changed; " + meanText(t)));
  return card("Summary", el("ul", { class: "runs-ab" }, runLine(0, "A"), runLine(compareWith, "B")),
    el("p", { id: "compare-changed", class: "lead" }, c.changed + " of " + plural(c.shared, "shared persona") + " changed a decision between the runs" + only + "."),
    c.tasks.length ? el("ul", { id: "compare-tasks" }, tasks) : el("p", { class: "muted" }, "no decisions in these runs"));
}

function meanText(t) {
  if (t.mean === null) return "mean change undefined: " + t.undefined;
  const n = "n = " + plural(t.pairs, "persona") + " with a number in both runs";
  const interval = t.undefined ? "95% interval undefined: " + t.undefined : "95% CI [" + two(t.low) + ", " + two(t.high) + "] (t interval)";
  return "mean change B − A " + (t.mean > 0 ? "+" : "") + two(t.mean) + ", " + interval + ", " + n;
}

function parametersCard(c) {
  const p = c.parameters;
  const equal = el("p", { class: "muted" }, plural(p.equal, "parameter") + " equal" + (p.differ.length ? "" : ": none differs"));
  if (!p.differ.length) return card("Parameters", equal);
  return card("Parameters that differ (" + p.differ.length + ")", dataTable(["parameter", "run A", "run B"], p.differ, false, "fit"), equal);
}

// Metrics that differ, the largest |B − A| first, each difference with a bar scaled to the
// largest; the equal ones folded.
function compareMetricsCard(c) {
  const m = c.metrics;
  const top = Math.max(0, ...m.differ.map((row) => (isNum(row[3]) ? Math.abs(row[3]) : 0)));
  const diffCell = (d) => el("td", { class: "num diff" }, isNum(d) && top > 0 ? el("span", { class: "bar " + (d < 0 ? "neg" : "pos"), style: "width:" + Math.max(2, 60 * Math.abs(d) / top).toFixed(0) + "px" }) : null, signed(d));
  const widths = el("colgroup", {}, ["46%", "17%", "17%", "20%"].map((w) => el("col", { style: "width:" + w })));
  const table = el("table", { id: "compare-metrics", class: "fit" }, widths,
    el("thead", {}, el("tr", {}, ["metric", "run A", "run B", "difference (B − A)"].map((h) => el("th", {}, h)))),
    el("tbody", {}, m.differ.map(([name, a, b, d]) => el("tr", {}, el("td", {}, name),
      el("td", { class: isNum(a) ? "num" : null }, fmt(a)), el("td", { class: isNum(b) ? "num" : null }, fmt(b)), diffCell(d)))));
  const same = el("details", { id: "compare-metrics-equal" }, el("summary", {}, plural(m.equal, "metric") + " equal"),
    dataTable(["metric", "value (both runs)"], m.same, true, "fit metrics"));
  return card("Metrics (" + m.differ.length + " of " + m.total + " differ)",
    m.differ.length ? el("div", { class: "scroll", style: "max-height:480px" }, table) : null, m.equal ? same : null);
}

// Shared personas, the ones whose decision changed first (both decisions side by side), the
// unchanged ones folded; each links to its runs' trajectories side by side.
function comparePersonasCard(c) {
  const tasks = c.tasks.map((t) => t.task);
  const head = el("thead", {}, el("tr", {}, el("th", {}, "persona"), tasks.map((t) => [el("th", {}, t + " (A)"), el("th", {}, t + " (B)")])));
  const row = (p) => el("tr", { "data-persona": p.unit, class: p.changed ? "changed" : null },
    el("td", {}, el("a", { href: "#compare/" + encodeURIComponent(p.unit.split("#")[0]) }, personaLabel(p.unit))),
    tasks.map((t) => { const x = p.tasks[t] || {}; return [x.a, x.b].map((v) => el("td", { class: x.changed ? "diffcell" : null }, txt(v))); }));
  const table = (rows, id) => el("table", { id, class: "fit" }, head.cloneNode(true), el("tbody", {}, rows.slice(0, 500).map(row)));
  const changed = c.personas.filter((p) => p.changed), unchanged = c.personas.filter((p) => !p.changed);
  const more = (rows) => rows.length > 500 ? el("p", { class: "muted" }, "first 500 shown; open #compare/<persona id> for any other") : null;
  return card("Personas in both runs (" + c.shared + "; " + changed.length + " changed)",
    changed.length ? [el("h3", {}, plural(changed.length, "persona") + " changed a decision"), table(changed, "compare-changed-personas"), more(changed)]
      : el("p", { class: "muted" }, "no shared persona changed a decision"),
    unchanged.length ? el("details", { id: "compare-unchanged" }, el("summary", {}, plural(unchanged.length, "persona") + " unchanged"),
      table(unchanged, "compare-unchanged-personas"), more(unchanged)) : null);
}

function personaLabel(unit) {
  const [persona, k] = unit.split("#");
  const ids = (personaIndex(0).get(persona) || []).slice().sort();
  const row = ids.length ? agentRow(0, ids[k ? +k - 1 : 0] || ids[0]) : null;
  return (row ? row.label : persona) + (k ? " (agent " + k + ")" : "");
}

// A step's key (which agent of the persona, round, kind, task, n-th such step) and what it
// produced: runs are compared step by step, and a step whose result differs is marked.
function stepSignatures(r, agentIds) {
  const steps = [];
  agentIds.forEach((id, a) => {
    const seen = new Map();
    for (const ev of trajectory(r, id) || []) {
      const [seq, rnd, kind, , p] = ev;
      if (kind.startsWith("round.") || kind === "agent.created") continue;
      const base = [a, rnd, kind, p.task || p.env || ""].join("|");
      const n = (seen.get(base) || 0) + 1; seen.set(base, n);
      const result = kind === "llm.call" ? (p.response || {}).text : kind.startsWith("decision.") ? JSON.stringify([p.value, p.error])
        : JSON.stringify(Object.fromEntries(Object.entries(p).filter(([k]) => !["persona"].includes(k))));
      steps.push({ key: base + "|" + n, seq, result });
    }
  });
  return steps;
}

function comparePersonaView(persona) {
  const agents = RUNS.map((_, r) => (personaIndex(r).get(persona) || []).slice().sort());
  const sigs = agents.map((ids, r) => stepSignatures(r, ids));
  const byKey = sigs.map((s) => new Map(s.map((x) => [x.key, x.result])));
  const marks = sigs.map((s, r) => new Map(s.filter((x) => byKey.some((m, o) => o !== r && m.get(x.key) !== x.result))
    .map((x) => [x.seq, "differs from run " + byKey.map((m, o) => o !== r && m.get(x.key) !== x.result ? o + 1 : null).filter(Boolean).join(", ")])));
  const rows = agents.map((ids, r) => ids.map((id) => agentRow(r, id)));
  const statCols = [...new Set(RUNS.flatMap((run) => run.agents.columns.filter((c) => !["id", "label", "persona", "type", "role", ...run.agents.attributes].includes(c))))];
  const outcomeRows = statCols.map((c) => { const vals = rows.map((rs) => rs.map((row) => fmt(row[c])).join(" / ")); return [c, vals]; })
    .filter(([, vals]) => vals.some((v) => v.split(" / ").some((x) => x !== "—")));
  const outcomeTable = el("table", { id: "compare-outcomes" },
    el("thead", {}, el("tr", {}, el("th", {}, ""), RUNS.map((run, r) => el("th", {}, "run " + (r + 1) + ": " + run.dir)))),
    el("tbody", {}, outcomeRows.map(([c, vals]) => el("tr", { class: vals.every((v) => v === vals[0]) ? null : "diffcell" },
      el("th", {}, c), vals.map((v) => el("td", {}, v))))));
  const label = rows.flat()[0] ? rows.flat()[0].label : persona;
  const columns = el("div", { class: "cols", style: "grid-template-columns:repeat(" + RUNS.length + ",minmax(0,1fr))" },
    agents.map((ids, r) => el("div", { class: "compare-col", "data-run": r }, el("h2", {}, "run " + (r + 1) + ": " + RUNS[r].dir),
      ids.length ? ids.map((id) => el("div", {}, el("h3", {}, el("a", { href: agentHref(r, id) }, id)),
        renderEvents(r, trajectory(r, id) || [], id, marks[r])))
        : el("p", { class: "muted" }, "this persona is not in this run"))));
  const differing = marks.reduce((n, m) => n + m.size, 0);
  return el("div", {}, el("p", {}, el("a", { href: "#compare" }, "← compare")),
    el("h1", {}, "Persona " + label),
    card("Outcomes (differences highlighted)", outcomeTable),
    card("Trajectories side by side (" + differing + " differing steps marked)", columns));
}

window.addEventListener("hashchange", route);
route();
document.body.dataset.renderMs = String(Math.round(performance.now() - T0));
document.body.dataset.openMs = String(Math.round(performance.now()));  // since navigation start
document.body.dataset.ready = "1";
