"""The views' one HTML document: inline CSS and JS, no network, Indonesian labels.

It plays the app's side of the MCP Apps postMessage protocol (JSON-RPC 2.0 with the host window): `ui/initialize`,
then `ui/notifications/initialized`; each `ui/notifications/tool-result` is drawn from its `structuredContent` by
the renderer the document was built for (the confirm view's drawing and buttons are `konfirmasi.py`'s script,
composed in), and `ui/notifications/size-changed` tells the host its height. Text goes in with `textContent` only
(names come from the data), and the view shows only what the result carries.
"""

from mcp_asrama.server.views import konfirmasi

APPS_PROTOCOL = "2026-01-26"

_HTML = """<!DOCTYPE html>
<html lang="id">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Data Anak Asrama</title>
<style>
:root { color-scheme: light dark; --fg: #1f2933; --muted: #616e7c; --grid: #d9e2ec; --bg: #ffffff;
  --hadir: #2f9e44; --izin: #1c7ed6; --sakit: #f08c00; --alpa: #e03131; --belum_dicatat: #868e96; --juz: #7048e8; }
@media (prefers-color-scheme: dark) { :root { --fg: #e4e7eb; --muted: #9aa5b1; --grid: #3e4c59; --bg: #1f2933; } }
body { margin: 0; padding: 12px 16px; font: 14px/1.4 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
h1 { font-size: 16px; margin: 0 0 4px; }
h2 { font-size: 14px; margin: 16px 0 4px; }
p.sub, p.catatan, p.kosong { margin: 0 0 8px; color: var(--muted); }
svg.chart { display: block; width: 100%; max-width: 640px; }
svg.chart text { fill: var(--fg); font-size: 12px; }
svg.chart text.value { fill: var(--muted); }
svg.chart line.avg { stroke: var(--fg); stroke-dasharray: 4 3; }
table { border-collapse: collapse; margin-top: 4px; }
th, td { text-align: left; padding: 2px 12px 2px 0; border-bottom: 1px solid var(--grid); }
__CSS__</style>
</head>
<body data-view="__VIEW__">
<main id="view"><p class="kosong">Menunggu hasil tool&hellip;</p></main>
<script>
"use strict";
(function () {
  const SVG = "http://www.w3.org/2000/svg";
  const STATUS = { hadir: "Hadir", izin: "Izin", sakit: "Sakit", alpa: "Alpa", belum_dicatat: "Belum dicatat" };
  const root = document.getElementById("view");
  const pending = new Map();
  const DRAW = {};  // views that draw the whole result themselves (the confirm view), by name
  let nextId = 1;
  let host = {};  // the host's answer to ui/initialize (its hostCapabilities among them)

  function send(message) { window.parent.postMessage(Object.assign({ jsonrpc: "2.0" }, message), "*"); }
  function request(method, params) {
    const id = nextId++;
    return new Promise(function (resolve, reject) {
      pending.set(id, { resolve: resolve, reject: reject });
      send({ id: id, method: method, params: params });
    });
  }
  function notify(method, params) { send({ method: method, params: params }); }

  function el(tag, attrs, text) {
    const node = document.createElement(tag);
    Object.entries(attrs || {}).forEach(function (kv) { node.setAttribute(kv[0], kv[1]); });
    if (text !== undefined) node.textContent = String(text);
    return node;
  }
  function svgEl(tag, attrs, text) {
    const node = document.createElementNS(SVG, tag);
    Object.entries(attrs || {}).forEach(function (kv) { node.setAttribute(kv[0], kv[1]); });
    if (text !== undefined) node.textContent = String(text);
    return node;
  }
  function who(row) { return row.nama ? row.nama + (row.kelas ? " (" + row.kelas + ")" : "") : row.id_anak; }
  function fmt(n) { return Number(n).toLocaleString("id-ID", { maximumFractionDigits: 2 }); }

  // A horizontal bar chart: one row per {label, value, color}; `avg` draws a dashed line at that value.
  function bars(name, rows, avg) {
    const rowH = 24, labelW = 170, valueW = 60, width = 640, plot = width - labelW - valueW;
    const max = Math.max(avg || 0, ...rows.map(function (r) { return r.value; })) || 1;
    const height = rows.length * rowH + 8;
    const chart = svgEl("svg", { class: "chart", "data-chart": name, viewBox: "0 0 " + width + " " + height,
      role: "img" });
    rows.forEach(function (r, i) {
      const y = 4 + i * rowH, w = Math.round(plot * r.value / max);
      chart.appendChild(svgEl("text", { class: "label", x: 0, y: y + 16 }, r.label));
      const bar = svgEl("rect", { class: "bar", x: labelW, y: y + 4, width: w, height: rowH - 8, fill: r.color,
        "data-label": r.label, "data-value": r.value });
      bar.appendChild(svgEl("title", {}, r.label + ": " + fmt(r.value)));
      chart.appendChild(bar);
      chart.appendChild(svgEl("text", { class: "value", x: labelW + w + 6, y: y + 16 }, fmt(r.value)));
    });
    if (avg !== undefined) {
      const x = labelW + Math.round(plot * avg / max);
      chart.appendChild(svgEl("line", { class: "avg", x1: x, x2: x, y1: 0, y2: height }));
    }
    return chart;
  }
  function statusRows(counts) {
    return Object.keys(STATUS).filter(function (s) { return counts[s] !== undefined && counts[s] !== null; })
      .map(function (s) { return { label: STATUS[s], value: counts[s], color: "var(--" + s + ")" }; });
  }
  function table(headers, rows) {
    const t = el("table");
    const head = el("tr");
    headers.forEach(function (h) { head.appendChild(el("th", {}, h)); });
    t.appendChild(head);
    rows.forEach(function (cells) {
      const tr = el("tr");
      cells.forEach(function (c) { tr.appendChild(el("td", {}, c === undefined || c === null ? "" : c)); });
      t.appendChild(tr);
    });
    return t;
  }
  function empty(text) { return el("p", { class: "kosong" }, text); }

  const RENDER = {
    "absensi-harian": function (d) {
      const parts = [el("h1", {}, "Absensi " + d.tanggal), el("p", { class: "sub" }, fmt(d.jumlah_anak) + " anak"),
        bars("status", statusRows(d.per_status)), el("h2", {}, "Tidak hadir")];
      parts.push(d.tidak_hadir.length ? table(["Anak", "Status", "Keterangan"], d.tidak_hadir.map(function (r) {
        return [who(r), STATUS[r.status] || r.status, r.keterangan];
      })) : empty("Semua anak hadir."));
      return parts;
    },
    "rekap-absensi": function (d) {
      const top = d.paling_sering_tidak_hadir;
      const rows = top.map(function (r) { return { label: who(r), value: r.tidak_hadir, color: "var(--alpa)" }; });
      return [el("h1", {}, "Rekap absensi " + d.dari + " s.d. " + d.sampai),
        el("p", { class: "sub" }, fmt(d.jumlah_anak) + " anak"),
        bars("status", statusRows(d.total)), el("h2", {}, "Paling sering tidak hadir"),
        rows.length ? bars("tidak-hadir", rows) : empty("Tidak ada anak yang absen.")];
    },
    "progres-hafalan": function (d) {
      const avg = d.rata_rata;
      const rows = d.data.map(function (r) { return { label: who(r), value: r.juz, color: "var(--juz)" }; });
      return [el("h1", {}, "Progres hafalan"),
        el("p", { class: "sub" }, fmt(d.jumlah_anak) + " anak, rata-rata " + fmt(avg.juz) + " juz (" + fmt(avg.ayat)
          + " ayat); garis putus-putus: rata-rata"),
        rows.length ? bars("juz", rows, avg.juz) : empty("Belum ada data hafalan.")];
    },
  };

  function resize() {
    const page = document.documentElement;
    notify("ui/notifications/size-changed", { width: page.scrollWidth, height: page.scrollHeight });
  }
  function chart(result) {
    const data = result && result.structuredContent;
    if (!data || result.isError) {
      root.appendChild(empty("Tidak ada data untuk digambar; lihat pesan tool."));
    } else {
      RENDER[document.body.dataset.view](data).forEach(function (node) { root.appendChild(node); });
      if (data.catatan) root.appendChild(el("p", { class: "catatan" }, data.catatan));
    }
  }
__SCRIPT__
  function show(result) {
    root.replaceChildren();
    (DRAW[document.body.dataset.view] || chart)(result);
    resize();
  }

  window.addEventListener("message", function (event) {
    if (event.source !== window.parent) return;
    const msg = event.data;
    if (!msg || msg.jsonrpc !== "2.0") return;
    if (msg.id !== undefined && pending.has(msg.id) && msg.method === undefined) {
      const waiter = pending.get(msg.id);
      pending.delete(msg.id);
      if (msg.error) waiter.reject(msg.error); else waiter.resolve(msg.result);
    } else if (msg.method === "ui/notifications/tool-result") {
      show(msg.params);
    } else if (msg.method === "ui/resource-teardown" && msg.id !== undefined) {
      send({ id: msg.id, result: {} });
    }
  });

  const hello = { protocolVersion: "__PROTOCOL__", appInfo: { name: "asrama-views", version: "1" },
    appCapabilities: {} };
  request("ui/initialize", hello)
    .then(function (answer) { host = answer || {}; notify("ui/notifications/initialized", {}); })
    .catch(function () { root.replaceChildren(empty("Host tidak menjawab ui/initialize.")); });
})();
</script>
</body>
</html>
"""


def page(view: str) -> str:
    """The document drawing results with renderer `view`: a chart (`absensi-harian`, `rekap-absensi`,
    `progres-hafalan`) or the confirm view (`konfirmasi`, whose CSS and script only its own document carries)."""
    own = view == "konfirmasi"
    return (
        _HTML.replace("__VIEW__", view)
        .replace("__PROTOCOL__", APPS_PROTOCOL)
        .replace("__CSS__", konfirmasi.CSS.lstrip() if own else "")
        .replace("__SCRIPT__", konfirmasi.SCRIPT.strip("\n") if own else "")
    )
