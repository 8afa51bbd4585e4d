/* render_html.c: one self-contained HTML page (inline CSS and JS, no network): an icicle view of
 * the module tree (width: total time per iteration, colour: self time; hover shows every figure,
 * click zooms into a module), memory per module (retained and peak bars) and, when a timeline was
 * recorded, memory over time.
 *
 * The page carries the JSON report itself (the same document LP_FORMAT_JSON writes, so nothing is
 * computed twice) and, with a timeline, the memory series and the forwards' spans, in a
 * <script type="application/json"> block written with JSON_ESCAPE_SLASH so no "</script>" can
 * close it early. The script builds the page from that data.
 *
 * The page text below is kept line by line; tests/html/test_html.py drives it in headless
 * Chromium. */
#include <string.h>

#include "base/error.h"
#include "report/json_report.h"
#include "report/render.h"

/* The page, one source line per string. */
/* clang-format off */
static const char *const page_head[] = {
    "<!DOCTYPE html>\n",
    "<html lang=\"en\">\n",
    "<head>\n",
    "<meta charset=\"utf-8\">\n",
    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
    "<meta name=\"generator\" content=\"layerprof\">\n",
    "<title>layerprof</title>\n",
    "<style>\n",
    ":root { --fg: #1d2330; --muted: #5c6475; --line: #d8dce4; --bg: #ffffff; --panel: #f6f7f9; }\n",
    "* { box-sizing: border-box; }\n",
    "body { margin: 0; padding: 18px 24px 40px; font: 13px/1.45 system-ui, -apple-system, \"Segoe UI\", Roboto, sans-serif; color: var(--fg); background: var(--bg); }\n",
    "h1 { font-size: 18px; margin: 0 0 2px; font-weight: 600; }\n",
    "h2 { font-size: 14px; margin: 26px 0 8px; font-weight: 600; }\n",
    ".sub { color: var(--muted); margin-bottom: 10px; }\n",
    ".notes { color: var(--muted); font-size: 12px; margin: 6px 0 0; padding-left: 18px; }\n",
    "#crumbs { margin: 6px 0 8px; min-height: 20px; }\n",
    "#crumbs a { color: #2457c5; cursor: pointer; text-decoration: none; }\n",
    "#crumbs a:hover { text-decoration: underline; }\n",
    "#crumbs .sep { color: var(--muted); margin: 0 5px; }\n",
    "#icicle { position: relative; width: 100%; border: 1px solid var(--line); background: var(--panel); overflow: hidden; }\n",
    ".cell { position: absolute; height: 21px; border-right: 1px solid rgba(255,255,255,.85); border-bottom: 1px solid rgba(255,255,255,.85);\n",
    "  overflow: hidden; white-space: nowrap; text-overflow: ellipsis; padding: 2px 4px; font-size: 12px; cursor: pointer; color: #1b1b1b; }\n",
    ".cell:hover { outline: 2px solid #1d2330; outline-offset: -2px; z-index: 2; }\n",
    ".cell.zoomed { outline: 2px solid #2457c5; outline-offset: -2px; }\n",
    ".cell.ancestor { opacity: .55; }\n",
    "#tip { position: fixed; display: none; z-index: 10; max-width: 460px; background: #1d2330; color: #f2f4f8; border-radius: 5px;\n",
    "  padding: 8px 10px; font-size: 12px; pointer-events: none; box-shadow: 0 4px 14px rgba(0,0,0,.25); }\n",
    "#tip .path { font-weight: 600; word-break: break-all; margin-bottom: 4px; }\n",
    "#tip table { border-collapse: collapse; }\n",
    "#tip td { padding: 0 10px 0 0; vertical-align: top; }\n",
    "#tip td.v { text-align: right; font-variant-numeric: tabular-nums; }\n",
    ".legend { color: var(--muted); font-size: 12px; margin-top: 6px; }\n",
    ".legend .swatch { display: inline-block; width: 120px; height: 10px; vertical-align: middle; margin: 0 6px;\n",
    "  background: linear-gradient(to right, hsl(55,92%,66%), hsl(28,92%,58%), hsl(0,85%,50%)); }\n",
    "table.mem { border-collapse: collapse; width: 100%; }\n",
    "table.mem td, table.mem th { padding: 2px 8px 2px 0; font-size: 12px; white-space: nowrap; }\n",
    "table.mem th { text-align: left; color: var(--muted); font-weight: 500; border-bottom: 1px solid var(--line); }\n",
    "table.mem td.num { text-align: right; font-variant-numeric: tabular-nums; width: 90px; }\n",
    "table.mem td.bars { width: 55%; }\n",
    ".bar { height: 7px; margin: 1px 0; border-radius: 2px; }\n",
    ".bar.retained { background: #3b7dd8; }\n",
    ".bar.peak { background: #f0a030; }\n",
    ".key { display: inline-block; width: 10px; height: 10px; border-radius: 2px; vertical-align: middle; margin: 0 4px 0 12px; }\n",
    "svg.chart { width: 100%; height: 220px; border: 1px solid var(--line); background: var(--panel); }\n",
    "svg.chart text { font-size: 11px; fill: var(--muted); }\n",
    ".empty { color: var(--muted); font-style: italic; }\n",
    "</style>\n",
    "</head>\n",
    "<body>\n",
    "<h1 id=\"title\">layerprof</h1>\n",
    "<div class=\"sub\" id=\"subtitle\"></div>\n",
    "<ul class=\"notes\" id=\"notes\"></ul>\n",
    "<h2>Time: module tree <span class=\"sub\">(width: total time per iteration; colour: self time; hover for figures, click to zoom)</span></h2>\n",
    "<div id=\"crumbs\"></div>\n",
    "<div id=\"icicle\"></div>\n",
    "<div class=\"legend\">self time <span class=\"swatch\"></span> more self time</div>\n",
    "<h2 id=\"mem-title\">Memory</h2>\n",
    "<div id=\"memory\"></div>\n",
    "<div id=\"timeline\"></div>\n",
    "<div id=\"tip\"></div>\n",
    "<script type=\"application/json\" id=\"lp-data\">\n",
    NULL};

static const char *const page_tail[] = {
    "</script>\n",
    "<script>\n",
    "(function () {\n",
    "  'use strict';\n",
    "  var data = JSON.parse(document.getElementById('lp-data').textContent);\n",
    "  var rep = data.report || {};\n",
    "  var run = rep.run || {};\n",
    "  var mods = rep.modules || [];\n",
    "  var rec = rep.recorded || {};\n",
    "  var iters = rep.iterations > 0 ? rep.iterations : 1;\n",
    "  var ROW = 22;\n",
    "\n",
    "  function el(tag, cls, text) {\n",
    "    var e = document.createElement(tag);\n",
    "    if (cls) e.className = cls;\n",
    "    if (text !== undefined) e.textContent = text;\n",
    "    return e;\n",
    "  }\n",
    "  /* The tree view's units: 49.693us, 1.808ms, 1.234s; 756.50 Kb. */\n",
    "  function fmtTime(ns) {\n",
    "    var us = ns / 1000, m = Math.abs(us);\n",
    "    if (m >= 1e6) return (us / 1e6).toFixed(3) + 's';\n",
    "    if (m >= 1e3) return (us / 1e3).toFixed(3) + 'ms';\n",
    "    return us.toFixed(3) + 'us';\n",
    "  }\n",
    "  function fmtBytes(b) {\n",
    "    var r = Math.round(b), m = Math.abs(r);\n",
    "    if (m >= 1073741824) return (b / 1073741824).toFixed(2) + ' Gb';\n",
    "    if (m >= 1048576) return (b / 1048576).toFixed(2) + ' Mb';\n",
    "    if (m >= 1024) return (b / 1024).toFixed(2) + ' Kb';\n",
    "    return (r === 0 ? 0 : r) + ' b';\n",
    "  }\n",
    "  function fmtCalls(c) { return c === Math.round(c) ? String(c) : c.toFixed(2); }\n",
    "  function mean(s) { return s && s.n > 0 ? s.sum / s.n : 0; }\n",
    "\n",
    "  /* Nodes, in the report's order (pre-order: parents first). */\n",
    "  var nodes = mods.map(function (m, i) {\n",
    "    return {\n",
    "      i: i, m: m, path: m.path, label: m.parent < 0 ? m['class'] : m.name, parent: m.parent,\n",
    "      depth: m.depth, kids: [], ran: !!m.selected && m.calls > 0,\n",
    "      total: m.total_ns / iters, self: m.self_ns / iters, calls: m.calls / iters, w: 0, x0: 0\n",
    "    };\n",
    "  });\n",
    "  nodes.forEach(function (n) { if (n.parent >= 0) nodes[n.parent].kids.push(n); });\n",
    "  /* A package's module whose work Inductor fused into another module's kernel: where its time\n",
    "   * went, and on that module the modules whose work it holds (fused modules draw no cell). */\n",
    "  var byPath = Object.create(null); /* a path such as 'constructor' is no inherited key */\n",
    "  nodes.forEach(function (n) { byPath[n.path] = n; n.fusedIn = []; });\n",
    "  function fusedText(f) {\n",
    "    return (f.module === '' ? nodes[0].label : f.module) + ': ' + f.kernel +\n",
    "      (f.more_kernels > 0 ? ' + ' + f.more_kernels + ' more' : '');\n",
    "  }\n",
    "  nodes.forEach(function (n) {\n",
    "    var f = n.m.fused_into, to = f && byPath[f.module];\n",
    "    if (to) to.fusedIn.push(n.parent < 0 ? n.label : n.path);\n",
    "  });\n",
    "  /* Width: its total when it ran, else what ran beneath it (paths selected deeper). */\n",
    "  for (var k = nodes.length - 1; k >= 0; k--) {\n",
    "    var n = nodes[k];\n",
    "    var under = n.kids.reduce(function (s, c) { return s + c.w; }, 0);\n",
    "    n.w = n.ran ? Math.max(n.total, 0) : under;\n",
    "  }\n",
    "  var maxDepth = 0, maxSelf = 0;\n",
    "  nodes.forEach(function (n) {\n",
    "    var x = n.x0;\n",
    "    n.kids.forEach(function (c) { c.x0 = x; x += c.w; });\n",
    "    if (n.w > 0 && n.depth > maxDepth) maxDepth = n.depth;\n",
    "    if (n.ran && n.self > maxSelf) maxSelf = n.self;\n",
    "  });\n",
    "  var rootTotal = nodes.length ? nodes[0].w : 0;\n",
    "  /* With regions, % Total is of the nearest context's total (the tree view's share column). */\n",
    "  function contextOf(n) {\n",
    "    for (var p = n.parent >= 0 ? nodes[n.parent] : null; p; p = p.parent >= 0 ? nodes[p.parent] : null)\n",
    "      if (p.m.kind === 'context') return p;\n",
    "    return null;\n",
    "  }\n",
    "\n",
    "  /* Header. */\n",
    "  var model = String(run.model || 'model');\n",
    "  var base = model.split('/').pop();\n",
    "  document.title = 'layerprof: ' + base;\n",
    "  document.getElementById('title').textContent = 'layerprof: ' + base;\n",
    "  var sub = [run.device || 'cpu', (run.mode || 'hooks') + ' mode', iters + ' iteration' + (iters === 1 ? '' : 's')];\n",
    "  if (run.libtorch_version) sub.push('libtorch ' + run.libtorch_version);\n",
    "  if (run.date) sub.push(run.date);\n",
    "  sub.push('total ' + fmtTime(rootTotal) + ' per iteration');\n",
    "  document.getElementById('subtitle').textContent = sub.join(' \\u00b7 ');\n",
    "  (run.notes || []).forEach(function (t) { document.getElementById('notes').appendChild(el('li', '', t)); });\n",
    "\n",
    "  /* Colour by self time: yellow (little) to red (most). */\n",
    "  function colour(n) {\n",
    "    if (!n.ran) return 'hsl(220,10%,82%)';\n",
    "    var f = maxSelf > 0 ? Math.sqrt(n.self / maxSelf) : 0;\n",
    "    return 'hsl(' + (55 - 55 * f).toFixed(1) + ',' + (92 - 7 * f).toFixed(0) + '%,' + (66 - 16 * f).toFixed(1) + '%)';\n",
    "  }\n",
    "\n",
    "  /* Tooltip. */\n",
    "  var tip = document.getElementById('tip');\n",
    "  function row(t, k, v) {\n",
    "    var tr = el('tr');\n",
    "    tr.appendChild(el('td', '', k));\n",
    "    tr.appendChild(el('td', 'v', v));\n",
    "    t.appendChild(tr);\n",
    "  }\n",
    "  function showTip(n, ev) {\n",
    "    tip.textContent = '';\n",
    "    tip.appendChild(el('div', 'path', n.parent < 0 ? n.label + ' (root)' : n.path));\n",
    "    var t = el('table');\n",
    "    row(t, 'class', n.m['class']);\n",
    "    if (n.m.fused_into) row(t, 'fused into', fusedText(n.m.fused_into) + ' (its time is there)');\n",
    "    if (n.fusedIn.length) row(t, 'holds fused work of', n.fusedIn.join(', '));\n",
    "    if (!n.ran) {\n",
    "      row(t, 'not measured', n.w > 0 ? fmtTime(n.w) + ' measured beneath' : 'never ran');\n",
    "    } else {\n",
    "      row(t, 'calls / iteration', fmtCalls(n.calls));\n",
    "      row(t, 'Self CPU total', fmtTime(n.self));\n",
    "      row(t, 'CPU total', fmtTime(n.total));\n",
    "      var tm = n.m.time;\n",
    "      if (tm && tm.n > 0) {\n",
    "        row(t, 'Mean / call', fmtTime(tm.mean_ns) + (tm.n > 1 ? '  \\u00b1 ' + fmtTime(tm.std_ns) + ' (std)' : ''));\n",
    "        row(t, 'Min .. Max / call', fmtTime(tm.min_ns) + ' .. ' + fmtTime(tm.max_ns));\n",
    "      }\n",
    "      if (rootTotal > 0) row(t, '% of root total', (100 * n.total / rootTotal).toFixed(1) + '%');\n",
    "      var ctx = contextOf(n);\n",
    "      if (ctx && ctx.m.total_ns > 0) row(t, '% of context ' + ctx.label, (100 * n.m.total_ns / ctx.m.total_ns).toFixed(2) + '%');\n",
    "      if (rootTotal > 0) row(t, '% self of root total', (100 * n.self / rootTotal).toFixed(1) + '%');\n",
    "      if (rec.cuda_time) {\n",
    "        row(t, 'Self CUDA total', fmtTime(n.m.cuda_self_ns / iters));\n",
    "        row(t, 'CUDA total', fmtTime(n.m.cuda_total_ns / iters));\n",
    "      }\n",
    "      ['cpu', 'cuda'].forEach(function (d) {\n",
    "        var mm = n.m.memory && n.m.memory[d];\n",
    "        if (!mm) return;\n",
    "        var D = d.toUpperCase();\n",
    "        row(t, 'Self ' + D + ' Mem', fmtBytes(mean(mm.self_retained)));\n",
    "        row(t, D + ' Mem (retained)', fmtBytes(mean(mm.retained)) + '  [' + fmtBytes(mm.retained.min) + ' .. ' + fmtBytes(mm.retained.max) + ']');\n",
    "        row(t, 'Peak ' + D + ' Mem', fmtBytes(mean(mm.peak)) + '  [' + fmtBytes(mm.peak.min) + ' .. ' + fmtBytes(mm.peak.max) + ']');\n",
    "        row(t, 'Net ' + D + ' Mem', fmtBytes(mean(mm.net)));\n",
    "      });\n",
    "      if (n.m.ops) row(t, 'op rows', String(n.m.ops.length));\n",
    "    }\n",
    "    tip.appendChild(t);\n",
    "    tip.style.display = 'block';\n",
    "    moveTip(ev);\n",
    "  }\n",
    "  function moveTip(ev) {\n",
    "    var x = ev.clientX + 14, y = ev.clientY + 14;\n",
    "    var w = tip.offsetWidth, h = tip.offsetHeight;\n",
    "    if (x + w > window.innerWidth - 4) x = Math.max(4, ev.clientX - w - 14);\n",
    "    if (y + h > window.innerHeight - 4) y = Math.max(4, ev.clientY - h - 14);\n",
    "    tip.style.left = x + 'px';\n",
    "    tip.style.top = y + 'px';\n",
    "  }\n",
    "  function hideTip() { tip.style.display = 'none'; }\n",
    "\n",
    "  /* Icicle. */\n",
    "  var box = document.getElementById('icicle');\n",
    "  box.style.height = ((maxDepth + 1) * ROW + 1) + 'px';\n",
    "  var cells = [];\n",
    "  nodes.forEach(function (n) {\n",
    "    if (!(n.w > 0)) return;\n",
    "    var c = el('div', 'cell', n.label);\n",
    "    c.setAttribute('data-path', n.path);\n",
    "    c.setAttribute('data-depth', String(n.depth));\n",
    "    c.style.top = (n.depth * ROW) + 'px';\n",
    "    c.style.background = colour(n);\n",
    "    c.addEventListener('mouseenter', function (ev) { showTip(n, ev); });\n",
    "    c.addEventListener('mousemove', moveTip);\n",
    "    c.addEventListener('mouseleave', hideTip);\n",
    "    c.addEventListener('click', function () { zoom(n); });\n",
    "    n.cell = c;\n",
    "    cells.push(n);\n",
    "    box.appendChild(c);\n",
    "  });\n",
    "  if (!cells.length) box.appendChild(el('div', 'empty', 'No module ran: nothing to draw.'));\n",
    "\n",
    "  function isAncestorOrSelf(a, n) {\n",
    "    while (n && n.depth > a.depth) n = n.parent >= 0 ? nodes[n.parent] : null;\n",
    "    return n === a;\n",
    "  }\n",
    "  var crumbs = document.getElementById('crumbs');\n",
    "  var current = null;\n",
    "  function zoom(z) {\n",
    "    current = z;\n",
    "    var zx0 = z.x0, zw = z.w > 0 ? z.w : 1;\n",
    "    cells.forEach(function (n) {\n",
    "      var c = n.cell;\n",
    "      c.classList.remove('zoomed', 'ancestor');\n",
    "      if (isAncestorOrSelf(n, z)) {\n",
    "        c.style.display = '';\n",
    "        c.style.left = '0%';\n",
    "        c.style.width = '100%';\n",
    "        c.classList.add(n === z ? 'zoomed' : 'ancestor');\n",
    "        if (n === z && z.parent < 0) c.classList.remove('zoomed');\n",
    "      } else if (isAncestorOrSelf(z, n)) {\n",
    "        c.style.display = '';\n",
    "        c.style.left = (100 * (n.x0 - zx0) / zw) + '%';\n",
    "        c.style.width = (100 * n.w / zw) + '%';\n",
    "      } else {\n",
    "        c.style.display = 'none';\n",
    "      }\n",
    "    });\n",
    "    crumbs.textContent = '';\n",
    "    var chain = [];\n",
    "    for (var p = z; p; p = p.parent >= 0 ? nodes[p.parent] : null) chain.unshift(p);\n",
    "    chain.forEach(function (p, k) {\n",
    "      if (k) crumbs.appendChild(el('span', 'sep', '\\u203a'));\n",
    "      var a = el('a', '', p.label);\n",
    "      a.setAttribute('data-path', p.path);\n",
    "      a.addEventListener('click', function () { zoom(p); });\n",
    "      crumbs.appendChild(a);\n",
    "    });\n",
    "    if (z.parent >= 0) crumbs.appendChild(el('span', 'sep', ' (click an outer block or a name above to zoom out)'));\n",
    "  }\n",
    "  if (nodes.length && nodes[0].w > 0) zoom(nodes[0]);\n",
    "  window.layerprof = { zoom: function (path) { var n = nodes.filter(function (x) { return x.path === path; })[0]; if (n) zoom(n); return !!n; },\n",
    "                       current: function () { return current ? current.path : null; } };\n",
    "\n",
    "  /* Memory per module: retained and peak, means per call. */\n",
    "  var memBox = document.getElementById('memory');\n",
    "  var devs = ['cpu', 'cuda'].filter(function (d) { return rec[d + '_memory']; });\n",
    "  if (!devs.length) {\n",
    "    memBox.appendChild(el('div', 'empty', 'Memory was not recorded (profile with --memory).'));\n",
    "  }\n",
    "  devs.forEach(function (d) {\n",
    "    var D = d.toUpperCase();\n",
    "    var rows = nodes.filter(function (n) { return n.ran && n.m.memory && n.m.memory[d]; });\n",
    "    var max = 0;\n",
    "    rows.forEach(function (n) {\n",
    "      var mm = n.m.memory[d];\n",
    "      max = Math.max(max, mean(mm.retained), mean(mm.peak));\n",
    "    });\n",
    "    var head = el('div', 'sub');\n",
    "    head.appendChild(document.createTextNode(D + ' memory per call (mean):'));\n",
    "    var k1 = el('span', 'key'); k1.style.background = '#3b7dd8'; head.appendChild(k1);\n",
    "    head.appendChild(document.createTextNode('retained (allocated in the call, alive at its exit)'));\n",
    "    var k2 = el('span', 'key'); k2.style.background = '#f0a030'; head.appendChild(k2);\n",
    "    head.appendChild(document.createTextNode('peak (most alive at once)'));\n",
    "    memBox.appendChild(head);\n",
    "    var t = el('table', 'mem');\n",
    "    var hr = el('tr');\n",
    "    ['Module', 'Retained', 'Peak', ''].forEach(function (h) { hr.appendChild(el('th', '', h)); });\n",
    "    t.appendChild(hr);\n",
    "    rows.forEach(function (n) {\n",
    "      var mm = n.m.memory[d], tr = el('tr');\n",
    "      tr.setAttribute('data-path', n.path);\n",
    "      var name = el('td', '', n.label);\n",
    "      name.style.paddingLeft = (n.depth * 14) + 'px';\n",
    "      tr.appendChild(name);\n",
    "      tr.appendChild(el('td', 'num', fmtBytes(mean(mm.retained))));\n",
    "      tr.appendChild(el('td', 'num', fmtBytes(mean(mm.peak))));\n",
    "      var bars = el('td', 'bars');\n",
    "      var b1 = el('div', 'bar retained'), b2 = el('div', 'bar peak');\n",
    "      b1.style.width = (max > 0 ? Math.max(0, 100 * mean(mm.retained) / max) : 0) + '%';\n",
    "      b2.style.width = (max > 0 ? Math.max(0, 100 * mean(mm.peak) / max) : 0) + '%';\n",
    "      bars.appendChild(b1);\n",
    "      bars.appendChild(b2);\n",
    "      tr.appendChild(bars);\n",
    "      t.appendChild(tr);\n",
    "    });\n",
    "    memBox.appendChild(t);\n",
    "  });\n",
    "\n",
    "  /* Memory over time (a trace was recorded): bytes allocated since the timeline began. */\n",
    "  var tl = data.timeline;\n",
    "  var tlBox = document.getElementById('timeline');\n",
    "  var SVG = 'http://www.w3.org/2000/svg';\n",
    "  function svg(tag, attrs) {\n",
    "    var e = document.createElementNS(SVG, tag);\n",
    "    for (var a in attrs) e.setAttribute(a, attrs[a]);\n",
    "    return e;\n",
    "  }\n",
    "  var series = tl && tl.memory ? Object.keys(tl.memory).filter(function (d) { return tl.memory[d].length > 1; }) : [];\n",
    "  if (!tl) {\n",
    "    if (devs.length) tlBox.appendChild(el('div', 'empty', 'Memory over time needs a timeline (profile with --trace).'));\n",
    "  } else if (!series.length) {\n",
    "    tlBox.appendChild(el('div', 'empty', 'The timeline holds no memory samples (profile with --memory).'));\n",
    "  }\n",
    "  series.forEach(function (d) {\n",
    "    var pts = tl.memory[d];\n",
    "    tlBox.appendChild(el('h2', '', d.toUpperCase() + ' memory over time (' + tl.iterations + ' iteration' + (tl.iterations === 1 ? '' : 's') + ' recorded)'));\n",
    "    var W = Math.max(400, tlBox.clientWidth || 1000), H = 220, L = 70, R = 10, T = 10, B = 24;\n",
    "    var s = svg('svg', { 'class': 'chart', viewBox: '0 0 ' + W + ' ' + H, 'data-device': d });\n",
    "    var t0 = pts[0][0], t1 = pts[pts.length - 1][0];\n",
    "    var lo = 0, hi = 0;\n",
    "    pts.forEach(function (p) { lo = Math.min(lo, p[1]); hi = Math.max(hi, p[1]); });\n",
    "    if (hi === lo) hi = lo + 1;\n",
    "    var sx = function (t) { return L + (W - L - R) * (t1 > t0 ? (t - t0) / (t1 - t0) : 0); };\n",
    "    var sy = function (v) { return T + (H - T - B) * (1 - (v - lo) / (hi - lo)); };\n",
    "    (tl.forwards || []).forEach(function (f) {\n",
    "      s.appendChild(svg('rect', { x: sx(f[0]), y: T, width: Math.max(1, sx(f[1]) - sx(f[0])), height: H - T - B, fill: 'rgba(36,87,197,0.07)' }));\n",
    "    });\n",
    "    var dpath = '';\n",
    "    pts.forEach(function (p, k) { dpath += k ? 'H' + sx(p[0]).toFixed(1) + 'V' + sy(p[1]).toFixed(1) : 'M' + sx(p[0]).toFixed(1) + ' ' + sy(p[1]).toFixed(1); });\n",
    "    s.appendChild(svg('path', { d: dpath, fill: 'none', stroke: '#3b7dd8', 'stroke-width': 1.5 }));\n",
    "    [lo, (lo + hi) / 2, hi].forEach(function (v) {\n",
    "      var tx = svg('text', { x: 4, y: sy(v) + 4 }); tx.textContent = fmtBytes(v); s.appendChild(tx);\n",
    "    });\n",
    "    var tx0 = svg('text', { x: L, y: H - 6 }); tx0.textContent = '0'; s.appendChild(tx0);\n",
    "    var tx1 = svg('text', { x: W - R - 60, y: H - 6 }); tx1.textContent = fmtTime((t1 - t0) * 1000); s.appendChild(tx1);\n",
    "    tlBox.appendChild(s);\n",
    "  });\n",
    "})();\n",
    "</script>\n",
    "</body>\n",
    "</html>\n",
    NULL};
/* clang-format on */

/* Points per device series at most: long timelines keep each bucket's lowest and highest value,
 * so peaks survive the thinning. */
#define LP_HTML_MAX_POINTS 4000

static int add_point(json_t *series, double t_us, int64_t bytes) {
    return json_array_append_new(series, json_pack("[f,I]", t_us, (json_int_t)bytes));
}

/* The timeline part of the page's data, or json_null() when there is none. */
static json_t *timeline_json(const lp_timeline *tl) {
    if (!tl || !tl->recorded) return json_null();
    uint64_t origin = UINT64_MAX;
    for (size_t i = 0; i < tl->n_spans; i++)
        if (tl->spans[i].t0 < origin) origin = tl->spans[i].t0;
    if (tl->n_mem && tl->mem[0].t < origin) origin = tl->mem[0].t;
    if (origin == UINT64_MAX) origin = 0;
    json_t *o = json_object(), *mem = json_object(), *fw = json_array();
    if (!o || !mem || !fw) goto oom;
    json_object_set_new(o, "iterations", json_integer((json_int_t)tl->iterations));
    json_object_set_new(o, "lost_spans", json_integer((json_int_t)tl->lost_spans));
    json_object_set_new(o, "memory", mem);
    json_object_set_new(o, "forwards", fw);
    /* The forwards: the root module's calls on the first thread. */
    for (size_t i = 0; i < tl->n_spans; i++) {
        const lp_span *s = &tl->spans[i];
        if (s->kind == LP_SPAN_MODULE && s->id == 0 &&
            json_array_append_new(fw, json_pack("[f,f]", (double)(s->t0 - origin) / 1000.0,
                                                (double)(s->t1 - origin) / 1000.0)))
            goto oom_parts;
    }
    static const char *const devs[LP_DEV_COUNT] = {"cpu", "cuda"};
    for (int d = 0; d < LP_DEV_COUNT; d++) {
        size_t n = 0;
        for (size_t i = 0; i < tl->n_mem; i++)
            n += tl->mem[i].device == d;
        if (!n) continue;
        json_t *series = json_array();
        if (!series || json_object_set_new(mem, devs[d], series)) goto oom_parts;
        uint64_t t_last = tl->mem[tl->n_mem - 1].t;
        size_t buckets = n > LP_HTML_MAX_POINTS ? LP_HTML_MAX_POINTS / 2 : 0;
        double span = (double)(t_last - origin) + 1.0;
        int64_t live = 0;
        if (add_point(series, 0.0, 0)) goto oom_parts;
        size_t bucket = 0;
        int64_t lo = 0, hi = 0;
        uint64_t t_lo = origin, t_hi = origin;
        int open = 0;
        for (size_t i = 0; i < tl->n_mem; i++) {
            const lp_mem_sample *m = &tl->mem[i];
            if (m->device != d) continue;
            live += m->delta;
            if (!buckets) {
                if (add_point(series, (double)(m->t - origin) / 1000.0, live)) goto oom_parts;
                continue;
            }
            size_t b = (size_t)((double)(m->t - origin) / span * (double)buckets);
            if (open && b != bucket) {
                uint64_t ta = t_lo < t_hi ? t_lo : t_hi, tb = t_lo < t_hi ? t_hi : t_lo;
                int64_t va = t_lo < t_hi ? lo : hi, vb = t_lo < t_hi ? hi : lo;
                if (add_point(series, (double)(ta - origin) / 1000.0, va) ||
                    add_point(series, (double)(tb - origin) / 1000.0, vb))
                    goto oom_parts;
                open = 0;
            }
            if (!open) {
                bucket = b;
                lo = hi = live;
                t_lo = t_hi = m->t;
                open = 1;
            }
            if (live < lo) {
                lo = live;
                t_lo = m->t;
            }
            if (live > hi) {
                hi = live;
                t_hi = m->t;
            }
        }
        if (open) {
            uint64_t ta = t_lo < t_hi ? t_lo : t_hi, tb = t_lo < t_hi ? t_hi : t_lo;
            int64_t va = t_lo < t_hi ? lo : hi, vb = t_lo < t_hi ? hi : lo;
            if (add_point(series, (double)(ta - origin) / 1000.0, va) ||
                add_point(series, (double)(tb - origin) / 1000.0, vb))
                goto oom_parts;
        }
    }
    return o;
oom:
    json_decref(mem);
    json_decref(fw);
oom_parts:
    json_decref(o);
    return NULL;
}

int lp_render_html(const lp_tree *tree, const lp_timeline *tl, const json_t *run, FILE *out) {
    int rc = lp_render_require(tree, out);
    if (rc) return rc;
    json_t *data = json_object();
    json_t *report = lp_export_report(tree, run);
    json_t *timeline = timeline_json(tl);
    if (!data || !report || !timeline) {
        json_decref(data);
        json_decref(report);
        json_decref(timeline);
        return lp_error_set(LP_ERR_NOMEM, "render: out of memory building the page");
    }
    json_object_set_new(data, "report", report);
    json_object_set_new(data, "timeline", timeline);
    for (const char *const *p = page_head; *p; p++)
        fputs(*p, out);
    rc = json_dumpf(data, out, JSON_COMPACT | JSON_ESCAPE_SLASH | JSON_REAL_PRECISION(12));
    json_decref(data);
    fputc('\n', out);
    for (const char *const *p = page_tail; *p; p++)
        fputs(*p, out);
    if (rc || ferror(out)) return lp_error_set(LP_ERR_IO, "render: writing the page failed");
    return LP_OK;
}
