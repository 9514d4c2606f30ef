// The tablebase explorer: a board of the chosen variant, set up by clicking or from a FEN, and
// what the server's API (/api/<variant>?fen=...) says of it. Everything about values and moves
// comes from the server; this page only draws, edits positions and follows moves by the FENs
// the answers carry. Plain JavaScript, no build step, nothing fetched but from this server.
"use strict";

const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";
const CELL = 50;

const state = {
  variants: [],      // from /api/variants
  variant: null,     // one of them
  pieces: new Map(), // square number -> "wm" | "wk" | "bm" | "bk"
  side: "W",
  tool: "wm",
  answer: null,      // the last good answer
  history: [],       // FENs before the moves played, for "back"
  request: 0,        // answers to older requests are ignored
};

// Squares are written as the API writes them: /api/variants gives each variant's notation (the
// one its players use: algebraic in russian and brazilian, c3 and captures c3:e5) and the text of
// every square in it, and the answers' FENs and moves come in that notation. The page converts
// nothing itself: it looks the squares' texts up.
const squareName = (sq) => state.variant.names[sq - 1];

// The square number of a square's text in the variant's notation (or a PDN number, as a
// shared address or an example may give); NaN when it is none.
function squareNumber(token) {
  const i = state.variant.names.indexOf(token);
  if (i >= 0) return i + 1;
  const n = /^[0-9]+$/.test(token) ? parseInt(token, 10) : NaN;
  return n >= 1 && n <= state.variant.squares ? n : NaN;
}

// Example positions per board size, shown when the address names none.
const EXAMPLES = { 50: "W:WK46,K47:BK5", 32: "W:WK29,K30:BK1", 72: "W:WK67,K68:BK1" };

function fenOf() {
  const list = (colour) => {
    const men = [], kings = [];
    for (const [sq, p] of [...state.pieces].sort((a, b) => a[0] - b[0])) {
      if (p[0] !== colour) continue;
      (p[1] === "k" ? kings : men).push((p[1] === "k" ? "K" : "") + squareName(sq));
    }
    return men.concat(kings).join(",");
  };
  return `${state.side}:W${list("w")}:B${list("b")}`;
}

// A FEN as the server writes it (squares ascending, K for kings, no ranges, the variant's notation).
function setFromFen(fen) {
  const parts = fen.split(":");
  state.pieces.clear();
  state.side = parts[0] === "B" ? "B" : "W";
  for (const part of parts.slice(1)) {
    const colour = part[0] === "W" ? "w" : part[0] === "B" ? "b" : null;
    if (!colour) continue;
    for (const item of part.slice(1).split(",")) {
      if (!item) continue;
      const king = item[0] === "K";
      const sq = squareNumber(king ? item.slice(1) : item);
      if (!Number.isNaN(sq)) state.pieces.set(sq, colour + (king ? "k" : "m"));
    }
  }
}

function drawBoard() {
  const v = state.variant;
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", `0 0 ${v.size * CELL} ${v.size * CELL}`);
  svg.setAttribute("role", "img");
  const squareAt = new Map(v.layout.map(([r, c], i) => [r * v.size + c, i + 1]));
  const lastMove = state.lastMove || {};
  for (let r = 0; r < v.size; r++) {
    for (let c = 0; c < v.size; c++) {
      const sq = squareAt.get(r * v.size + c);
      const rect = document.createElementNS(SVG, "rect");
      rect.setAttribute("x", c * CELL);
      rect.setAttribute("y", r * CELL);
      rect.setAttribute("width", CELL);
      rect.setAttribute("height", CELL);
      rect.setAttribute("class", sq ? (sq === lastMove.from ? "from" : sq === lastMove.to ? "to" : "dark") : "light");
      if (sq) {
        rect.dataset.square = sq;
        rect.addEventListener("click", () => clickSquare(sq));
      }
      svg.appendChild(rect);
      if (!sq) continue;
      const num = document.createElementNS(SVG, "text");
      num.setAttribute("x", c * CELL + 3);
      num.setAttribute("y", r * CELL + 10);
      num.setAttribute("class", "num");
      num.textContent = squareName(sq);
      svg.appendChild(num);
      const p = state.pieces.get(sq);
      if (!p) continue;
      const disc = document.createElementNS(SVG, "circle");
      disc.setAttribute("cx", c * CELL + CELL / 2);
      disc.setAttribute("cy", r * CELL + CELL / 2);
      disc.setAttribute("r", CELL * 0.38);
      disc.setAttribute("class", p[0] === "w" ? "wp" : "bp");
      disc.dataset.piece = p;
      disc.dataset.square = sq;
      disc.addEventListener("click", () => clickSquare(sq));
      svg.appendChild(disc);
      if (p[1] === "k") {
        const crown = document.createElementNS(SVG, "text");
        crown.setAttribute("x", c * CELL + CELL / 2);
        crown.setAttribute("y", r * CELL + CELL / 2);
        crown.setAttribute("class", "crown");
        crown.setAttribute("fill", p[0] === "w" ? "#b8860b" : "#ffd700");
        crown.textContent = "\u265B";
        svg.appendChild(crown);
      }
    }
  }
  $("board").replaceChildren(svg);
  $("side").textContent = state.side === "W" ? "white to move" : "black to move";
  $("fen").value = fenOf();
}

function clickSquare(sq) {
  if (state.pieces.get(sq) === state.tool || !state.tool) state.pieces.delete(sq);
  else state.pieces.set(sq, state.tool);
  state.history = [];
  state.lastMove = null;
  show(fenOf());
}

const colourName = (s) => (s === "W" ? "White" : "Black");

function showError(message) {
  $("error").textContent = message;
  $("error").hidden = false;
  $("value").textContent = "";
  $("value").className = "";
  $("dtw").textContent = "";
  $("line").textContent = "";
  $("moves").tBodies[0].replaceChildren();
  state.answer = null;
  updateButtons();
}

function showAnswer(a) {
  $("error").hidden = true;
  const mover = a.side === "white" ? "W" : "B";
  const other = mover === "W" ? "B" : "W";
  const value = $("value");
  value.className = a.wdl;
  value.textContent = a.wdl === "draw" ? "Draw" : `${colourName(a.wdl === "win" ? mover : other)} wins`;
  $("dtw").textContent = a.dtw === null ? "" :
    a.dtw === 0 ? `${colourName(mover)} to move has no move: the game is over` :
    `in ${a.dtw} ${a.dtw === 1 ? "ply" : "plies"} (DTW), ${colourName(mover).toLowerCase()} to move`;
  $("line").textContent = a.line ? a.line.join(" ") : "(no DTW tables)";
  const body = $("moves").tBodies[0];
  body.replaceChildren();
  for (const m of a.moves || []) {
    const tr = document.createElement("tr");
    tr.className = m.wdl;
    tr.dataset.move = m.move;
    const cells = [m.move, m.wdl, m.dtw === null ? "" : String(m.dtw)];
    for (const text of cells) {
      const td = document.createElement("td");
      td.textContent = text;
      tr.appendChild(td);
    }
    tr.addEventListener("click", () => play(m));
    body.appendChild(tr);
  }
  updateButtons();
}

function updateButtons() {
  $("back").disabled = state.history.length === 0;
  $("forward").disabled = !(state.answer && state.answer.moves && state.answer.moves.length);
}

// The server's answer for fen, or null after showing why there is none (an error, or a newer
// request made since: request id is then no longer the latest).
async function ask(fen, id) {
  const url = `api/${encodeURIComponent(state.variant.name)}?fen=${encodeURIComponent(fen)}`;
  let a;
  try {
    a = await (await fetch(url)).json();
  } catch (e) {
    if (id === state.request) showError(`no answer from the server (${e.message})`);
    return null;
  }
  if (id !== state.request) return null;
  if (a.error) {
    showError(a.error);
    return null;
  }
  return a;
}

// Probes fen; on success the board shows the server's canonical form of it.
async function show(fen) {
  const id = ++state.request;
  drawBoard();
  const a = await ask(fen, id);
  if (!a) return;
  state.answer = a;
  setFromFen(a.fen);
  drawBoard();
  showAnswer(a);
  const params = new URLSearchParams({ variant: state.variant.name, fen: a.fen });
  history.replaceState(null, "", `?${params}`);
}

function play(m) {
  if (!m.fen) return;
  state.history.push(state.answer.fen);
  const path = m.move.split(/[-x:]/).map(squareNumber);
  state.lastMove = { from: path[0], to: path[path.length - 1] };
  show(m.fen);
}

function chooseVariant(name, fen) {
  state.variant = state.variants.find((v) => v.name === name) || state.variants[0];
  $("variant").value = state.variant.name;
  state.history = [];
  state.lastMove = null;
  const start = fen || EXAMPLES[state.variant.squares] || "W:W:B";
  setFromFen(start);
  show(start);
}

async function init() {
  for (const b of document.querySelectorAll("#palette button[data-piece]")) {
    b.addEventListener("click", () => {
      state.tool = b.dataset.piece;
      for (const o of document.querySelectorAll("#palette button[data-piece]"))
        o.classList.toggle("active", o === b);
    });
  }
  document.querySelector('#palette button[data-piece="wm"]').classList.add("active");
  $("side").addEventListener("click", () => {
    state.side = state.side === "W" ? "B" : "W";
    state.history = [];
    show(fenOf());
  });
  $("clear").addEventListener("click", () => {
    state.pieces.clear();
    state.history = [];
    drawBoard();
    showError("an empty board: place pieces of both sides");
  });
  $("fenform").addEventListener("submit", (e) => {
    e.preventDefault();
    state.history = [];
    state.lastMove = null;
    showFenTyped($("fen").value.trim());
  });
  $("back").addEventListener("click", () => {
    if (!state.history.length) return;
    state.lastMove = null;
    show(state.history.pop());
  });
  $("forward").addEventListener("click", () => {
    if (state.answer && state.answer.moves && state.answer.moves.length) play(state.answer.moves[0]);
  });
  $("variant").addEventListener("change", () => chooseVariant($("variant").value, null));

  let list;
  try {
    list = await (await fetch("api/variants")).json();
  } catch (e) {
    showError(`cannot reach the server (${e.message})`);
    return;
  }
  state.variants = list.variants;
  for (const v of state.variants) {
    const o = document.createElement("option");
    o.value = v.name;
    o.textContent = `${v.name} (2..${v.wdl_pieces})`;
    $("variant").appendChild(o);
  }
  const params = new URLSearchParams(location.search);
  chooseVariant(params.get("variant"), params.get("fen"));
}

// A typed FEN is sent as typed, in either notation (the server reads ranges and the like, and
// names a square the board does not have); the board keeps its position until the server
// accepts the FEN.
async function showFenTyped(fen) {
  const a = await ask(fen, ++state.request);
  if (!a) return;
  setFromFen(a.fen);
  show(a.fen);
}

init();
