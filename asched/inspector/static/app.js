// asched inspector: renders the snapshots the server pushes over server-sent events.
// No dependencies; the queue chart is drawn on a canvas. The server coalesces snapshots
// per client, so this page always renders the newest state and never a backlog.
"use strict";

const COLORS = { active: "#2f6fdf", backoff: "#e09a2f", unschedulable: "#c9423a", gated: "#7a5bc8" };
let latest = null;
let selectedPod = null;

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k.startsWith("data-")) e.setAttribute(k, v);
    else if (k === "onclick") e.addEventListener("click", v);
    else e[k] = v;
  }
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}

function fill(tbody, rows) {
  tbody.replaceChildren(...rows);
}

function renderQueues(q) {
  const samples = q.samples;
  const last = samples.length ? samples[samples.length - 1] : null;
  document.getElementById("queue-depths").replaceChildren(
    ...q.names.map((name, i) =>
      el("span", { "data-queue": name },
        el("span", { class: "swatch", style: `background:${COLORS[name]}` }),
        `${name}: `, el("b", {}, last ? last[i + 1] : 0))));
  const canvas = document.getElementById("queue-chart");
  const ctx = canvas.getContext("2d");
  const w = canvas.width, h = canvas.height, pad = 28;
  ctx.clearRect(0, 0, w, h);
  let max = 1;
  for (const s of samples) for (let i = 1; i < s.length; i++) max = Math.max(max, s[i]);
  canvas.dataset.points = String(samples.length);
  canvas.dataset.max = String(max);
  canvas.dataset.last = last ? last.slice(1).join(",") : "";
  ctx.strokeStyle = "#dde1e8"; ctx.fillStyle = "#5a6375"; ctx.font = "11px sans-serif";
  ctx.beginPath(); ctx.moveTo(pad, 4); ctx.lineTo(pad, h - pad); ctx.lineTo(w - 4, h - pad); ctx.stroke();
  ctx.fillText(String(max), 2, 12); ctx.fillText("0", 2, h - pad);
  if (samples.length < 2) return;
  const t0 = samples[0][0], t1 = samples[samples.length - 1][0];
  ctx.fillText(`last ${Math.round(t1 - t0)} s`, w - 70, h - 8);
  const x = (t) => pad + (w - pad - 6) * (t - t0) / Math.max(t1 - t0, 1e-9);
  const y = (v) => (h - pad) - (h - pad - 8) * v / max;
  q.names.forEach((name, i) => {
    ctx.strokeStyle = COLORS[name]; ctx.lineWidth = 1.5; ctx.beginPath();
    samples.forEach((s, j) => (j ? ctx.lineTo(x(s[0]), y(s[i + 1])) : ctx.moveTo(x(s[0]), y(s[i + 1]))));
    ctx.stroke();
  });
}

function renderThroughput(t) {
  const ms = (s) => `${(s * 1e3).toFixed(1)} ms`;
  const dl = document.getElementById("throughput");
  dl.replaceChildren(
    el("dt", {}, "binds per second"), el("dd", { id: "binds-per-second" }, t.bindsPerSecond),
    el("dt", {}, "binds since start"), el("dd", { id: "binds-total" }, t.binds),
    el("dt", {}, "event-loop lag p99"), el("dd", {}, ms(t.loopLagP99)),
    el("dt", {}, "bind latency p50 / p99"), el("dd", {}, `${ms(t.bindLatencyP50)} / ${ms(t.bindLatencyP99)}`));
}

function rejectionText(r) {
  if (!r) return "";
  return Object.entries(r.plugins).map(([p, n]) => `${p}: ${n}`).join(", ");
}

function renderPending(rows, total) {
  document.getElementById("pending-total").textContent = `(${total})`;
  fill(document.querySelector("#pending tbody"), rows.map((p) =>
    el("tr", {
      class: "clickable" + (p.pod === selectedPod ? " selected" : ""),
      "data-pod": p.pod, title: p.rejection ? p.rejection.message : "",
      onclick: () => explain(p.pod),
    },
      el("td", {}, p.pod), el("td", {}, p.gatedBy ? `gated (${p.gatedBy})` : p.queue),
      el("td", { class: "num" }, p.age), el("td", { class: "num" }, p.attempts),
      el("td", { class: "rejection" }, rejectionText(p.rejection)))));
}

function scoreTable(weights, scored, chosen) {
  const plugins = Object.keys(weights);
  const head = el("tr", {}, el("th", {}, "node"), el("th", {}, "total"),
    ...plugins.map((p) => el("th", { title: "raw / normalized / weighted" }, `${p} ×${weights[p]}`)));
  const rows = scored.map((s) =>
    el("tr", { class: s.node === chosen ? "chosen" : "", "data-node": s.node },
      el("td", {}, s.node), el("td", { class: "num", "data-total": s.total }, s.total),
      ...plugins.map((p) => {
        const v = s.plugins[p];
        return el("td", { class: "num score", "data-plugin": p, "data-node": s.node },
          v ? `${v[0]} / ${v[1]} / ${v[2]}` : "");
      })));
  return el("table", { class: "scores" }, el("thead", {}, head), el("tbody", {}, ...rows));
}

function renderDecisions(ds) {
  const box = document.getElementById("decisions");
  const open = new Set([...box.querySelectorAll("details[open]")].map((d) => d.dataset.key));
  box.replaceChildren(...ds.map((d) => {
    const key = `${d.pod}@${d.at}`;
    const det = el("details", { class: "decision", "data-key": key, "data-pod": d.pod, "data-node": d.node },
      el("summary", {}, `${d.pod} → `, el("b", {}, d.node),
        ` (profile ${d.profile}, cycle ${d.cycleMs} ms${d.scored.length ? "" : d.group
          ? `, placed with its PodGroup ${d.group} by the group cycle: no per-member scores`
          : d.hinted
            ? ", the next-best node of the previous alike pod (opportunistic batching): not scored"
            : ", one feasible node: not scored"})`),
      d.scored.length ? scoreTable(d.weights, d.scored, d.node) : "");
    if (open.has(key)) det.open = true;
    return det;
  }));
}

function renderGangs(gangs) {
  fill(document.querySelector("#gangs tbody"), gangs.map((g) =>
    el("tr", { "data-gang": g.name },
      el("td", {}, g.name), el("td", {}, g.kind), el("td", { class: "num" }, g.minMember),
      el("td", { class: "num", "data-field": "created" }, g.created),
      el("td", { class: "num", "data-field": "assumed" }, g.assumed),
      el("td", { class: "num", "data-field": "bound" }, g.bound),
      el("td", { "data-field": "state" }, g.state),
      el("td", { class: "num" }, g.timeoutSeconds === null ? "–" : g.timeoutSeconds))));
}

function heat(f) {
  if (f === null || f === undefined) return "#e4e7ec";
  const hue = 120 - 120 * f; // green (idle) to red (full)
  return `hsl(${hue}, 70%, ${70 - 25 * f}%)`;
}

function renderNodes(nodes, total) {
  const resource = document.querySelector("input[name=resource]:checked").value;
  document.getElementById("nodes-total").textContent =
    nodes.length < total ? `(${nodes.length} of ${total})` : `(${total})`;
  const zones = new Map();
  for (const n of nodes) {
    const z = n.zone || "(no zone)";
    if (!zones.has(z)) zones.set(z, []);
    zones.get(z).push(n);
  }
  const pct = (f) => (f === null ? "n/a" : `${Math.round(f * 100)}%`);
  document.getElementById("heatmap").replaceChildren(...[...zones.entries()].sort().map(([z, ns]) =>
    el("div", { class: "zone", "data-zone": z }, el("span", { class: "zone-name" }, z),
      el("span", {}, `${ns.length} nodes`),
      el("div", { class: "cells" }, ...ns.map((n) => el("div", {
        class: "cell", "data-node": n.name, style: `background:${heat(n[resource])}`,
        title: `${n.name}: cpu ${pct(n.cpu)}, memory ${pct(n.memory)}, GPUs ${pct(n.gpu)}, ${n.pods} pods`,
      }))))));
}

function render(s) {
  latest = s;
  renderQueues(s.queues);
  renderThroughput(s.throughput);
  renderPending(s.pending, s.pendingTotal);
  renderDecisions(s.decisions);
  renderGangs(s.gangs);
  renderNodes(s.nodes, s.nodesTotal);
}

async function explain(pod) {
  selectedPod = pod;
  const box = document.getElementById("explain");
  box.replaceChildren(el("p", {}, `explaining ${pod}…`));
  let out;
  try {
    const resp = await fetch(`api/explain?pod=${encodeURIComponent(pod)}`);
    if (!resp.ok) throw new Error(`${resp.status} ${await resp.text()}`);
    out = await resp.json();
  } catch (e) {
    box.replaceChildren(el("p", { class: "error" }, `cannot explain ${pod}: ${e.message}`));
    return;
  }
  const nodes = out.nodes.map((n) =>
    el("tr", { class: n.feasible ? "" : "infeasible", "data-node": n.node },
      el("td", {}, n.node), el("td", {}, n.feasible ? "feasible" : n.verdict.code),
      el("td", { "data-field": "plugin" }, n.feasible ? "" : n.verdict.plugin),
      el("td", {}, n.verdict.reasons.join(", "))));
  const parts = [
    el("h3", {}, `${out.pod} (profile ${out.profile})`),
    out.fitError ? el("p", { class: "error", id: "explain-fit-error" }, out.fitError) : "",
    out.preFilter ? el("p", { class: "error" }, `PreFilter: ${out.preFilter.plugin}: ${out.preFilter.reasons.join(", ")}`) : "",
    el("table", { id: "explain-nodes" },
      el("thead", {}, el("tr", {}, el("th", {}, "node"), el("th", {}, "verdict"), el("th", {}, "rejected by"), el("th", {}, "reasons"))),
      el("tbody", {}, ...nodes)),
  ];
  if (out.scores.length) {
    parts.push(el("h3", {}, `scores (selected: ${out.selected || "a tie"})`));
    const scored = out.scores.map((s) => ({
      node: s.node, total: s.total,
      plugins: Object.fromEntries(Object.entries(s.plugins).map(([p, v]) => [p, [v.raw, v.normalized, v.weighted]])),
    }));
    parts.push(scoreTable(out.scoreWeights, scored, out.selected));
  }
  for (const n of out.notes) parts.push(el("p", { class: "hint" }, n));
  box.replaceChildren(...parts);
}

function connect() {
  const status = document.getElementById("status");
  const es = new EventSource("api/events");
  es.onopen = () => { status.textContent = "live"; status.className = "status live"; };
  es.onmessage = (ev) => render(JSON.parse(ev.data));
  es.onerror = () => { status.textContent = "reconnecting…"; status.className = "status"; };
}

document.querySelectorAll("input[name=resource]").forEach((r) =>
  r.addEventListener("change", () => latest && renderNodes(latest.nodes, latest.nodesTotal)));
connect();
