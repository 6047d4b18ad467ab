// agentwire view: the conversation viewer's page. Hand-written, no framework. Every
// string from the trace is written with textContent (never innerHTML); every request
// carries the token of the page's URL.
'use strict';

const TOKEN = new URLSearchParams(location.search).get('token') || '';
const ROW_H = 26;
const S = { turns: [], view: [], sel: -1, summary: null, episodes: [], lanes: new Map(), filter: {}, live: false, hits: null };

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k === 'on') for (const [ev, f] of Object.entries(v)) e.addEventListener(ev, f);
    else e.setAttribute(k, String(v));
  }
  for (const k of kids.flat()) {
    if (k === null || k === undefined || k === false) continue;
    e.appendChild(typeof k === 'object' ? k : document.createTextNode(String(k)));
  }
  return e;
}
const $ = (id) => document.getElementById(id);
function clear(e) { while (e.firstChild) e.removeChild(e.firstChild); }

async function api(path) {
  const r = await fetch(path, { headers: { 'X-Agentwire-Token': TOKEN }, cache: 'no-store' });
  const v = await r.json();
  if (!r.ok) throw new Error(v.error || ('HTTP ' + r.status));
  return v;
}

const fmtMs = (v) => (v === null || v === undefined) ? '–' : (v >= 1000 ? (v / 1000).toFixed(1) + ' s' : Math.round(v) + ' ms');
const fmtUsd = (v) => (v === null || v === undefined) ? '' : '$' + (v >= 1 ? v.toFixed(2) : v.toFixed(4));
const fmtInt = (v) => (v || 0).toLocaleString('en-US');
const fmtBytes = (b) => b >= 1048576 ? (b / 1048576).toFixed(1) + ' MiB' : b >= 1024 ? (b / 1024).toFixed(1) + ' KiB' : b + ' B';

// ---- loading ------------------------------------------------------------------------

async function loadTurns() {
  const v = await api('/api/turns');
  S.turns = v.turns;
  S.live = v.live;
  $('input').textContent = v.input;
  $('live').textContent = v.live ? 'live' : '';
  $('live').className = v.live ? 'on' : '';
  showProblems(v.problems);
  fillSelect('f-tool', [...new Set(S.turns.flatMap((t) => t.tools))].sort());
  fillSelect('f-session', [...new Set(S.turns.map((t) => t.session))]);
}

async function loadSummary() {
  const v = await api('/api/summary');
  S.summary = v.summary;
  S.episodes = v.episodes || [];
  S.jobs = v.jobs || [];
  buildLanes();
  showSummary();
}

function fillSelect(id, values) {
  const s = $(id);
  const keep = s.value;
  while (s.options.length > 1) s.remove(1);
  for (const v of values) s.appendChild(el('option', { value: v }, v));
  s.value = values.includes(keep) ? keep : '';
}

function showProblems(problems) {
  const box = $('problems');
  clear(box);
  box.hidden = !problems.length;
  if (!problems.length) return;
  box.appendChild(el('div', {}, `${problems.length} line(s) could not be read (the rest is shown):`));
  for (const p of problems.slice(0, 100)) {
    box.appendChild(el('div', { class: 'problem' }, `${p.file ? p.file + ': ' : ''}line ${p.line} (byte ${p.offset}): ${p.message}`));
  }
}

// ---- summary ------------------------------------------------------------------------

function figure(label, value, turns) {
  if (!turns) return el('span', { class: 'fig' }, el('span', { class: 'v' }, value), label);
  return el('a', { href: '#', 'data-fig': label, on: { click: (e) => { e.preventDefault(); setFilter({ only: new Set(turns), label }); } } },
    el('span', { class: 'v' }, value), label);
}

function showSummary() {
  const box = $('summary');
  clear(box);
  const s = S.summary;
  if (!s) return;
  const polls = S.turns.filter((t) => t.badges.some((b) => b.kind === 'poll' || b.kind === 'redundant')).map((t) => t.n);
  const redundant = S.turns.filter((t) => t.badges.some((b) => b.kind === 'redundant')).map((t) => t.n);
  const misses = S.turns.filter((t) => t.badges.some((b) => b.kind === 'miss')).map((t) => t.n);
  const jobs = S.turns.filter((t) => t.badges.some((b) => b.kind.startsWith('job_'))).map((t) => t.n);
  box.append(
    figure('requests', fmtInt(s.requests)),
    figure('polls', fmtInt(s.polls), polls),
    figure('redundant polls', fmtInt(s.redundant_polls), redundant),
    figure('wasted', fmtUsd(s.wasted_cost_usd)),
    figure('cache hit rate', (100 * s.cache_hit_rate).toFixed(1) + '%'),
    figure('cache misses', fmtInt(misses.length), misses),
    figure('miss cost', fmtUsd(s.cache_miss_cost_usd), misses),
    figure('jobs', fmtInt(Object.values(s.jobs_by_state || {}).reduce((a, b) => a + b, 0)), jobs),
    figure('total cost', fmtUsd(s.total_cost_usd)),
  );
  for (const c of s.misses_by_cause || []) {
    const turns = S.turns.filter((t) => t.badges.some((b) => b.kind === 'miss') && (t.cause || '').length && causeOf(t) === c.cause).map((t) => t.n);
    box.append(figure('miss: ' + c.cause, fmtInt(c.requests) + ' · ' + fmtUsd(c.cost_usd), turns.length ? turns : misses));
  }
}
function causeOf(t) { return (t.cause_name || ''); }

// Poll episodes drawn across their turns: a lane per episode, from its first turn to its
// last (job start to notification when the job is linked), a dot on each poll.
function buildLanes() {
  S.lanes = new Map();
  const spans = S.episodes.map((e) => {
    const ts = e.turns.slice();
    const job = S.jobs.find((j) => j.reference === e.job);
    if (job) for (const t of S.turns) if (t.badges.some((b) => b.kind.startsWith('job_') && b.text.includes(' ' + job.reference + ' '))) ts.push(t.n);
    return ts.length ? { i: e.i, lo: Math.min(...ts), hi: Math.max(...ts), dots: new Set(e.turns) } : null;
  }).filter(Boolean);
  spans.forEach((sp, lane) => {
    for (let n = sp.lo; n <= sp.hi; n++) {
      if (!S.lanes.has(n)) S.lanes.set(n, []);
      S.lanes.get(n).push({ lane: lane % 6, dot: sp.dots.has(n), ep: sp.i });
    }
  });
}

// ---- filters and the virtualized list -------------------------------------------------

function setFilter(extra) {
  S.filter.only = extra ? extra.only : null;
  applyFilters();
}

function applyFilters() {
  const f = { polls: $('f-polls').checked, misses: $('f-misses').checked, errors: $('f-errors').checked, tool: $('f-tool').value, session: $('f-session').value };
  const has = (t, k) => t.badges.some((b) => k.includes(b.kind));
  S.view = S.turns.filter((t) =>
    (!f.polls || has(t, ['poll', 'redundant'])) &&
    (!f.misses || has(t, ['miss'])) &&
    (!f.errors || t.error || t.problem) &&
    (!f.tool || t.tools.includes(f.tool)) &&
    (!f.session || t.session === f.session) &&
    (!S.filter.only || S.filter.only.has(t.n))).map((t) => t.n);
  $('count').textContent = `${S.view.length} of ${S.turns.length} turns`;
  $('export').setAttribute('href', '/export?token=' + encodeURIComponent(TOKEN) + '&turns=' + S.view.join(','));
  $('spacer').style.height = (S.view.length * ROW_H) + 'px';
  render(true);
}

function rowOf(t) {
  const lanes = (S.lanes.get(t.n) || []).map((l) => el('span', { class: 'lane ' + (l.dot ? 'dot' : 'on'), 'data-episode': l.ep, title: 'poll episode ' + (l.ep + 1) }));
  const badges = t.badges.map((b) => el('span', { class: 'badge ' + b.kind, 'data-kind': b.kind, title: b.text }, b.kind === 'miss' ? b.text : b.kind.replace('_', ' ')));
  if (t.problem) badges.push(el('span', { class: 'badge error', 'data-kind': 'problem', title: t.problem }, 'unreadable part'));
  const tok = t.path.endsWith('/messages') || t.model ? `${fmtInt(t.input_tokens)} / ${fmtInt(t.cached_tokens)} / ${fmtInt(t.output_tokens)}` : '';
  const cls = 'row' + (t.n === S.sel ? ' sel' : '') + (t.error ? ' err' : '') + (t.streaming ? ' streaming' : '');
  return el('div', { class: cls, 'data-n': t.n, 'data-id': t.id, on: { click: () => select(t.n, true) } },
    el('span', { class: 'c-n' }, t.id),
    el('span', { class: 'c-time', title: t.time }, t.time.slice(11, 19)),
    el('span', { class: 'c-thread', title: t.session + '/' + t.thread }, t.thread),
    el('span', { class: 'c-model', title: t.method + ' ' + t.path }, t.model || t.method + ' ' + t.path),
    el('span', { class: 'c-lat' }, fmtMs(t.latency_ms) + ' / ' + fmtMs(t.ttft_ms)),
    el('span', { class: 'c-tok' }, tok),
    el('span', { class: 'c-cost' }, fmtUsd(t.cost_usd)),
    el('span', { class: 'c-status' }, t.streaming ? 'streaming' : (t.status === null ? '–' : t.status) + (t.cache ? ' ' + t.cache : '')),
    el('span', { class: 'c-badges' }, lanes, badges));
}

let lastRange = '';
function render(force) {
  const list = $('list');
  const first = Math.max(0, Math.floor(list.scrollTop / ROW_H) - 5);
  const last = Math.min(S.view.length, Math.ceil((list.scrollTop + list.clientHeight) / ROW_H) + 5);
  const key = first + ':' + last + ':' + S.sel;
  if (!force && key === lastRange) return;
  lastRange = key;
  const sp = $('spacer');
  clear(sp);
  for (let i = first; i < last; i++) {
    const r = rowOf(S.turns[S.view[i]]);
    r.style.top = (i * ROW_H) + 'px';
    sp.appendChild(r);
  }
}

function select(n, open) {
  S.sel = n;
  const i = S.view.indexOf(n);
  const list = $('list');
  if (i >= 0) {
    const top = i * ROW_H;
    if (top < list.scrollTop) list.scrollTop = top;
    else if (top + ROW_H > list.scrollTop + list.clientHeight) list.scrollTop = top + ROW_H - list.clientHeight;
  }
  render(true);
  if (open) {
    history.replaceState(null, '', location.pathname + location.search + '#t=' + n);
    openTurn(n);
  }
}

function move(d) {
  if (!S.view.length) return;
  const i = S.view.indexOf(S.sel);
  const j = i < 0 ? 0 : Math.max(0, Math.min(S.view.length - 1, i + d));
  select(S.view[j], false);
}

// ---- one turn -----------------------------------------------------------------------

function item(it) {
  const head = [it.role, it.kind, it.name, it.id ? '(' + it.id + ')' : null, it.bytes ? fmtBytes(it.bytes) : null].filter(Boolean).join(' · ');
  const body = [];
  if (it.kind === 'image') body.push(el('pre', { class: 'placeholder' }, `[image ${it.media_type || ''}, ${fmtBytes(it.bytes)}]`));
  if (it.input !== undefined) body.push(el('pre', { class: 'input' }, it.input));
  if (it.text !== undefined && it.text !== null) body.push(el('pre', { class: 'text' }, it.text));
  if (it.images) body.push(el('pre', { class: 'placeholder' }, `[${it.images} image(s)]`));
  const cls = 'item ' + it.role + ' ' + it.kind + (it.is_error ? ' iserr' : '');
  return el('div', { class: cls, 'data-kind': it.kind }, el('div', { class: 'ih' }, head + (it.is_error ? ' · error' : '')), body);
}

function kv(pairs) {
  return el('div', { class: 'kv' }, pairs.filter((p) => p[1] !== undefined && p[1] !== null && p[1] !== '').flatMap(([k, v]) => [el('span', {}, k), el('span', {}, String(v))]));
}

function copyButton(label, text) {
  return el('button', { class: 'copy', on: { click: () => navigator.clipboard && navigator.clipboard.writeText(text) } }, label);
}

async function openTurn(n) {
  const d = $('detail');
  clear(d);
  d.appendChild(el('p', { class: 'hint' }, 'loading turn ' + n + '…'));
  let v;
  try { v = await api('/api/turn/' + n); } catch (e) { clear(d); d.appendChild(el('p', { class: 'problem' }, String(e.message))); return; }
  if (S.sel !== n) return;
  clear(d);
  const t = v.row;
  d.appendChild(el('h2', {}, `#${t.id} · ${t.session}/${t.thread} · ${t.model || t.method + ' ' + t.path}`));
  d.appendChild(kv([['time', t.time], ['status', t.status], ['latency', fmtMs(t.latency_ms)], ['time to first token', fmtMs(t.ttft_ms)],
    ['line', t.line], ['cache', t.cache], ['miss cause', t.cause], ['miss cost', fmtUsd(t.miss_cost_usd)], ['problem', t.problem || v.request_error]]));
  if (t.badges.length) d.appendChild(el('div', { class: 'badges' }, t.badges.map((b) => el('span', { class: 'badge ' + b.kind, 'data-kind': b.kind }, b.text))));
  const cols = el('div', { class: 'cols' });
  const added = el('div', { id: 'added' }, el('h3', {}, 'What this request added'));
  if (v.added) {
    added.appendChild(el('p', { class: 'hint' }, v.added.previous === null ? 'first request of its thread: everything' : `since turn ${v.added.previous} (messages from ${v.added.from_message})`));
    v.added.items.forEach((it) => added.appendChild(item(it)));
  }
  const change = el('div', { id: 'cache-change' }, el('h3', {}, 'What changed before the cache breakpoint'));
  if (v.cache_change) {
    if (v.cache_change.cause) change.appendChild(el('p', {}, 'cause: ' + v.cache_change.cause));
    v.cache_change.changes.forEach((c) => change.appendChild(el('div', {}, c)));
  } else change.appendChild(el('p', { class: 'hint' }, 'no miss on this turn'));
  cols.append(added, change);
  d.appendChild(cols);
  const r = v.response || {};
  const resp = el('div', { id: 'response' }, el('h3', {}, 'Response' + (r.stop ? ' (' + r.stop + ')' : '')));
  (r.items || []).forEach((it) => resp.appendChild(item(it)));
  if (r.error) resp.appendChild(el('pre', { class: 'blk' }, JSON.stringify(r.error, null, 2)));
  if (r.text) resp.appendChild(el('pre', { class: 'blk' }, r.text));
  (r.problems || []).forEach((p) => resp.appendChild(el('div', { class: 'problem' }, p)));
  if (r.usage) resp.appendChild(kv(Object.entries(r.usage)));
  d.appendChild(resp);
  if (v.billing) {
    const b = v.billing;
    d.appendChild(el('h3', {}, 'Billing'));
    d.appendChild(kv([['figures', b.usage + ' (' + b.usage_reason + ')'], ['tokens', JSON.stringify(b.tokens)], ['cost', fmtUsd(b.cost_usd)], ['status', b.status], ['cause', b.cause_detail]]));
  }
  const q = v.request;
  if (q) {
    d.appendChild(el('h3', {}, `Request (${q.dialect}, ${fmtBytes(q.bytes)}, ${q.messages} messages)`));
    if (q.system) d.appendChild(el('details', { id: 'system' }, el('summary', {}, `system prompt · ${fmtBytes(q.system.bytes)}`), q.system.blocks.map((b) => el('pre', { class: 'blk' }, b.text))));
    d.appendChild(el('details', { id: 'tools' }, el('summary', {}, `tool definitions · ${q.tools.list.length} · ${fmtBytes(q.tools.bytes)}`),
      q.tools.list.map((tl) => el('details', {}, el('summary', {}, `${tl.name} · ${fmtBytes(tl.bytes)}`), el('pre', { class: 'blk' }, (tl.description || '') + '\n' + (tl.schema || ''))))));
    d.appendChild(el('details', { id: 'conversation', open: true }, el('summary', {}, 'whole conversation'), q.items.map(item)));
  }
  const copies = el('div', {});
  if (v.curl) copies.appendChild(copyButton('copy as cURL', v.curl));
  if (v.body_json) copies.appendChild(copyButton('copy as JSON', v.body_json));
  d.appendChild(copies);
}

// ---- search -------------------------------------------------------------------------

let searchTimer = null;
function onSearch() {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(runSearch, 250);
}
async function runSearch() {
  const q = $('search').value.trim();
  const box = $('hits');
  clear(box);
  if (!q) { box.hidden = true; return; }
  box.hidden = false;
  box.appendChild(el('div', { class: 'hint' }, 'searching…'));
  const v = await api('/api/search?q=' + encodeURIComponent(q) + '&turns=' + S.view.join(','));
  clear(box);
  box.appendChild(el('div', { class: 'hint' }, `${v.hits.length} hit(s) for “${q}”`));
  for (const h of v.hits) {
    const t = S.turns[h.n];
    box.appendChild(el('div', { class: 'hit', 'data-n': h.n, on: { click: () => select(h.n, true) } }, `#${t.id} ${t.thread} · ${h.side} ${h.kind}: ${h.snippet}`));
  }
}

// ---- live ---------------------------------------------------------------------------

function connect() {
  const es = new EventSource('/api/events?token=' + encodeURIComponent(TOKEN));
  es.onmessage = async (m) => {
    const ev = JSON.parse(m.data);
    if (ev.type === 'turn') {
      const t = ev.row;
      const known = t.n < S.turns.length;
      S.turns[t.n] = t;
      if (!known) {
        for (const k of t.tools) if (![...$('f-tool').options].some((o) => o.value === k)) $('f-tool').appendChild(el('option', { value: k }, k));
      }
      applyFilters();
      if (S.follow !== false && !known && S.view.length) $('list').scrollTop = S.view.length * ROW_H;
      render(true);
    } else if (ev.type === 'analysis' || (ev.type === 'hello' && ev.turns !== S.turns.length)) {
      await loadTurns(); await loadSummary(); applyFilters();
    }
  };
  // EventSource reconnects by itself; on reconnect the hello event resynchronises.
}

// ---- start --------------------------------------------------------------------------

function onKey(e) {
  if (e.target.tagName === 'INPUT' || e.target.tagName === 'SELECT') {
    if (e.key === 'Escape') e.target.blur();
    return;
  }
  if (e.key === 'j') { move(1); e.preventDefault(); }
  else if (e.key === 'k') { move(-1); e.preventDefault(); }
  else if (e.key === 'Enter' && S.sel >= 0) { select(S.sel, true); e.preventDefault(); }
  else if (e.key === '/') { $('search').focus(); e.preventDefault(); }
}

function fromHash() {
  const m = /^#t=(\d+)$/.exec(location.hash);
  if (m && +m[1] < S.turns.length) select(+m[1], true);
}

async function start() {
  for (const id of ['f-polls', 'f-misses', 'f-errors', 'f-tool', 'f-session']) $(id).addEventListener('change', () => { S.filter.only = null; applyFilters(); });
  $('search').addEventListener('input', onSearch);
  $('list').addEventListener('scroll', () => render(false));
  window.addEventListener('resize', () => render(true));
  document.addEventListener('keydown', onKey);
  window.addEventListener('hashchange', fromHash);
  try {
    await loadTurns();
    await loadSummary();
  } catch (e) {
    $('detail').appendChild(el('p', { class: 'problem' }, String(e.message)));
  }
  applyFilters();
  fromHash();
  document.body.setAttribute('data-ready', '1');
  connect();
}
document.addEventListener('DOMContentLoaded', start);
