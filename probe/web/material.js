// The tables of a variant, as syzygy-tables.info shows them: every material the server has,
// with its counts of wins, draws and losses and its longest win (from dtbgen's STATS, served as
// /api/<variant>/materials). The address names the variant and, optionally, one material
// (material.html?variant=international&material=KKvK), shown first and marked in the list.
"use strict";

const $ = (id) => document.getElementById(id);
const fmt = (n) => n.toLocaleString("en");
const pct = (n, all) => (all ? (100 * n / all).toFixed(1) : "0.0") + "%";

function showError(message) {
  $("error").textContent = message;
  $("error").hidden = false;
}

function explorerLink(variant, fen, text) {
  const a = document.createElement("a");
  a.href = `./?${new URLSearchParams({ variant, fen })}`;
  a.textContent = text;
  return a;
}

function materialLink(variant, material) {
  const a = document.createElement("a");
  a.href = `material.html?${new URLSearchParams({ variant, material })}`;
  a.textContent = material;
  return a;
}

function cell(row, content, cls) {
  const td = document.createElement("td");
  if (typeof content === "string") td.textContent = content;
  else td.appendChild(content);
  if (cls) td.className = cls;
  row.appendChild(td);
}

function showDetail(variant, m) {
  const d = $("detail");
  d.replaceChildren();
  const h = document.createElement("h2");
  h.textContent = `${m.material} (${variant}, ${m.pieces} pieces)`;
  const p = document.createElement("p");
  p.textContent = `${fmt(m.positions)} positions, white to move: ${fmt(m.wins)} wins ` +
    `(${pct(m.wins, m.positions)}), ${fmt(m.draws)} draws (${pct(m.draws, m.positions)}), ` +
    `${fmt(m.losses)} losses (${pct(m.losses, m.positions)}); ${fmt(m.captures)} with a capture.`;
  const q = document.createElement("p");
  if (m.longest_win_fen) {
    q.append(`Longest win: ${m.longest_win} plies, for example `);
    q.appendChild(explorerLink(variant, m.longest_win_fen, m.longest_win_fen));
  } else {
    q.textContent = "No position of this table is a win for white.";
  }
  d.append(h, p, q);
  d.hidden = false;
}

async function load(variant, material) {
  $("error").hidden = true;
  $("detail").hidden = true;
  let answer;
  try {
    const r = await fetch(`api/${encodeURIComponent(variant)}/materials`);
    answer = await r.json();
  } catch (e) {
    showError(`no answer from the server (${e.message})`);
    return;
  }
  if (answer.error) {
    showError(answer.error);
    return;
  }
  const list = answer.materials.slice().sort((a, b) => a.pieces - b.pieces ||
    a.material.localeCompare(b.material));
  $("summary").textContent = list.length ?
    `${list.length} tables of ${variant}, ${list[0].pieces} to ${list[list.length - 1].pieces} pieces.` :
    `No statistics of ${variant}'s tables here (dtbgen writes them in STATS beside the tables).`;
  const body = $("materials").tBodies[0];
  body.replaceChildren();
  let pieces = 0;
  for (const m of list) {
    if (m.pieces !== pieces) {
      pieces = m.pieces;
      const tr = document.createElement("tr");
      tr.className = "group";
      const th = document.createElement("th");
      th.colSpan = 6;
      th.textContent = `${pieces} pieces`;
      tr.appendChild(th);
      body.appendChild(tr);
    }
    const tr = document.createElement("tr");
    tr.id = m.material;
    tr.dataset.material = m.material;
    if (m.material === material) tr.className = "chosen";
    cell(tr, materialLink(variant, m.material));
    cell(tr, fmt(m.positions));
    cell(tr, pct(m.wins, m.positions), "win");
    cell(tr, pct(m.draws, m.positions), "draw");
    cell(tr, pct(m.losses, m.positions), "loss");
    cell(tr, m.longest_win_fen ? explorerLink(variant, m.longest_win_fen, `${m.longest_win} plies`) : "");
    body.appendChild(tr);
  }
  const chosen = list.find((m) => m.material === material);
  if (material && !chosen) showError(`no table ${material} of ${variant} here`);
  if (chosen) showDetail(variant, chosen);
}

async function init() {
  let list;
  try {
    list = (await (await fetch("api/variants")).json()).variants;
  } catch (e) {
    showError(`cannot reach the server (${e.message})`);
    return;
  }
  const params = new URLSearchParams(location.search);
  const wanted = params.get("variant") || list[0].name;
  for (const v of list) {
    const o = document.createElement("option");
    o.value = o.textContent = v.name;
    $("variant").appendChild(o);
  }
  if (!list.some((v) => v.name === wanted)) {
    showError(`no tables of variant '${wanted}' here; this server has ` +
              list.map((v) => v.name).join(", "));
    return;
  }
  $("variant").value = wanted;
  $("home").href = `./?${new URLSearchParams({ variant: wanted })}`;
  $("variant").addEventListener("change", () => {
    location.search = `?${new URLSearchParams({ variant: $("variant").value })}`;
  });
  load(wanted, params.get("material"));
}

init();
