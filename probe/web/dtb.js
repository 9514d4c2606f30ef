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
  tool: "move",      // "move" (play), or the piece a click places ("" empties)
  flipped: false,    // black at the bottom
  selected: null,    // the square of the piece about to move
  answer: null,      // the last good answer
  history: [],       // [FEN, clock, diagonal] before each move played, for "back"
  request: 0,        // answers to older requests are ignored
  clock: 0,          // plies on the move-count rules' counter (the clock input, a FEN's H)
  diagonal: 0,       // fmjd64: plies a lone king held the main road (the diagonal input)
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
  svg.classList.toggle("flipped", state.flipped);
  const squareAt = new Map(v.layout.map(([r, c], i) => [r * v.size + c, i + 1]));
  const lastMove = state.lastMove || {};
  const targets = new Set(movesFrom(state.selected).map((m) => m.to));
  for (let row = 0; row < v.size; row++) {
    for (let col = 0; col < v.size; col++) {
      const sq = squareAt.get(row * v.size + col);
      // where the square is drawn: turned round when flipped
      const r = state.flipped ? v.size - 1 - row : row, c = state.flipped ? v.size - 1 - col : col;
      const rect = document.createElementNS(SVG, "rect");
      rect.setAttribute("x", c * CELL);
      rect.setAttribute("y", r * CELL);
      rect.setAttribute("width", CELL);
      rect.setAttribute("height", CELL);
      rect.setAttribute("class", !sq ? "light" : sq === state.selected ? "selected" :
        targets.has(sq) ? "target" : sq === lastMove.from ? "from" : sq === lastMove.to ? "to" : "dark");
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
  svg.addEventListener("pointerdown", pointerDown);
  svg.addEventListener("pointerup", pointerUp);
  $("board").replaceChildren(svg);
  $("side").textContent = state.side === "W" ? "white to move" : "black to move";
  $("fen").value = fenOf();
}

// A move's squares from its text ("32-28", "28x19x8", "c3:e5"): from is the first, to the last.
function moveSquares(m) {
  const path = m.move.split(/[-x:]/).map(squareNumber);
  return { from: path[0], to: path[path.length - 1] };
}

// The legal moves (of the last answer, best first) that start on square sq.
function movesFrom(sq) {
  if (!sq || !state.answer || !state.answer.moves) return [];
  return state.answer.moves.map((m) => ({ ...moveSquares(m), m })).filter((x) => x.from === sq);
}

function clickSquare(sq) {
  if (state.tool === "move") return moveClick(sq);
  if (state.pieces.get(sq) === state.tool || !state.tool) state.pieces.delete(sq);
  else state.pieces.set(sq, state.tool);
  state.history = [];
  state.lastMove = null;
  show(fenOf());
}

// Moving by clicks: a piece that has moves is chosen, then one of its targets plays the best
// move from it to there (two captures with the same ends: the better is played; the list
// offers both).
function moveClick(sq) {
  const to = movesFrom(state.selected).find((x) => x.to === sq);
  if (to) {
    state.selected = null;
    play(to.m);
    return;
  }
  state.selected = movesFrom(sq).length && sq !== state.selected ? sq : null;
  drawBoard();
}

// Moving by dragging: pressed on a piece, released on one of its targets.
let dragFrom = null;
function squareUnder(e) {
  const el = document.elementFromPoint(e.clientX, e.clientY);
  return el && el.dataset && el.dataset.square ? parseInt(el.dataset.square, 10) : null;
}
function pointerDown(e) {
  dragFrom = state.tool === "move" ? squareUnder(e) : null;
}
function pointerUp(e) {
  const from = dragFrom, to = squareUnder(e);
  dragFrom = null;
  if (!from || !to || from === to) return; // a click: the click handlers do it
  const x = movesFrom(from).find((y) => y.to === to);
  if (x) {
    state.selected = null;
    play(x.m);
  }
}

const colourName = (s) => (s === "W" ? "White" : "Black");

function showError(message) {
  $("error").textContent = message;
  $("error").hidden = false;
  $("value").textContent = "";
  $("value").className = "";
  $("dtw").textContent = "";
  $("dtw").className = "";
  $("line").replaceChildren();
  $("note").hidden = true;
  $("moves").tBodies[0].replaceChildren();
  state.answer = null;
  state.selected = null;
  updateButtons();
}

// The board under an error about a FEN typed or in the address: empty, since the position
// shown before is not the one the message is about. The FEN box keeps the text as typed.
function showFenError(message, typed) {
  state.pieces.clear();
  state.lastMove = null;
  drawBoard();
  $("fen").value = typed;
  showError(message);
}

const isCapture = (m) => /[x:]/.test(m.move);

// The best line as numbered moves, each a button that plays the line up to it: "1. 47-41 5-10
// 2. 41x5", or "1... 5-10 2. 41x5" from a black-to-move position.
function lineNodes(a) {
  const nodes = [];
  let number = 1;
  a.line.forEach((text, i) => {
    const white = (a.side === "white") === (i % 2 === 0);
    if (white || i === 0) {
      const n = document.createElement("span");
      n.className = "number";
      n.textContent = white ? `${number}.` : `${number}...`;
      nodes.push(n);
    }
    if (!white) number++;
    const b = document.createElement("button");
    b.className = "ply";
    b.dataset.ply = i;
    b.textContent = text;
    b.addEventListener("click", () => playLine(i));
    nodes.push(b);
  });
  return nodes;
}

function lineText(a) {
  return lineNodes(a).map((n) => n.textContent).join(" ");
}

// The material of the board as the tables name it: white first, kings (K) then men (M), "v".
function materialName() {
  const count = (p) => [...state.pieces.values()].filter((x) => x === p).length;
  const side = (c) => "K".repeat(count(c + "k")) + "M".repeat(count(c + "m"));
  return `${side("w")}v${side("b")}`;
}

// What the move-count rules make of the position (the answer's "rules" object, from a set with
// rule tables), beside the unlimited value: "Cursed win — drawn by the 5-move rule", and the
// moves grouped by their category under the rules with the clock after each.
const RULE_GROUPS = [["win", "win"], ["cursed-win", "cursed win"], ["draw", "draw"],
                     ["blessed-loss", "blessed loss"], ["loss", "loss"]];

function showRules(a) {
  const r = a.rules;
  $("rules").hidden = !r;
  $("rulemoves").hidden = !r;
  if (!r) return;
  const name = Object.fromEntries(RULE_GROUPS)[r.category];
  $("diagonallabel").hidden = r.name !== "fmjd64";
  const where = !r.rule ? r.name
    : !r.limit ? `${r.name}, no count`
    : `${r.name}, clock ${r.clock} of ${r.limit}` + (r.diagonal ? `, diagonal count ${r.diagonal}` : "");
  const words = {
    "win": `won within the ${r.rule} rule`, "loss": `lost within the ${r.rule} rule`,
    "cursed-win": `won in unlimited play, drawn by the ${r.rule} rule`,
    "blessed-loss": `lost in unlimited play, drawn by the ${r.rule} rule`,
    "draw": `drawn`,
  }[r.category];
  $("rules").className = r.category;
  $("rules").textContent = `${name[0].toUpperCase()}${name.slice(1)} \u2014 ${words} (${where})`;
  const body = $("rulemoves").tBodies[0];
  body.replaceChildren();
  for (const [category, title] of RULE_GROUPS) {
    const group = r.moves.filter((m) => m.category === category);
    if (!group.length) continue;
    const head = document.createElement("tr");
    head.className = `group ${category}`;
    const th = document.createElement("th");
    th.colSpan = 4;
    th.textContent = `${group.length} ${group.length === 1 ? "move" : "moves"}: ${title}`;
    head.appendChild(th);
    body.appendChild(head);
    for (const m of group) {
      const tr = document.createElement("tr");
      tr.className = category;
      tr.dataset.move = m.move;
      for (const text of [m.move, title, m.plies === null ? "" : String(m.plies), String(m.clock)]) {
        const td = document.createElement("td");
        td.textContent = text;
        tr.appendChild(td);
      }
      tr.addEventListener("click", () => play(m));
      body.appendChild(tr);
    }
  }
}

function showAnswer(a) {
  $("error").hidden = true;
  const material = materialName();
  $("materiallink").href = `material.html?${new URLSearchParams({ variant: state.variant.name, material })}`;
  $("materiallink").textContent = `${material}: the table's counts, and every table of ${state.variant.name}`;
  const mover = a.side === "white" ? "W" : "B";
  const other = mover === "W" ? "B" : "W";
  const winner = a.wdl === "win" ? mover : a.wdl === "loss" ? other : null;
  // The headline names the winner in the winner's colours (never the mover's green or red: "White
  // wins" in red misread as a loss for White); the line below gives the mover's view.
  const value = $("value");
  value.className = winner ? (winner === "W" ? "white" : "black") : "draw";
  value.textContent = winner ? `${colourName(winner)} wins` : "Draw";
  const moverText = `${colourName(mover)} to move`;
  $("dtw").className = a.wdl;
  $("dtw").textContent = a.dtw === null ? (a.wdl === "draw" ? `${moverText.toLowerCase()}` :
    `${moverText.toLowerCase()} (no DTW tables)`) :
    a.dtw === 0 ? `${moverText} has no move: the game is over` :
    `${moverText.toLowerCase()} ${a.wdl === "win" ? "wins" : "loses"} in ${a.dtw} ` +
    `${a.dtw === 1 ? "ply" : "plies"} (DTW)`;
  if (a.mtc !== null && a.mtc !== undefined && a.mtc > 0) /* sets made with --metrics ...,mtc */
    $("dtw").textContent += `, the next conversion in ${a.mtc} ${a.mtc === 1 ? "ply" : "plies"} (MTC)`;
  $("line").replaceChildren(...(a.line ? a.line.length ? lineNodes(a) :
    [document.createTextNode(a.wdl === "draw" ? "(a draw has no end)" : "")] :
    [document.createTextNode("(no DTW tables)")]));
  showRules(a);
  const moves = a.moves || [];
  const note = $("note");
  note.hidden = !(moves.length && moves.every(isCapture));
  note.textContent = "Captures are compulsory: only the captures are legal here.";
  const body = $("moves").tBodies[0];
  body.replaceChildren();
  const groups = [["win", `winning for ${colourName(mover)}`], ["draw", "drawing"],
                  ["loss", `losing for ${colourName(mover)}`]];
  for (const [wdl, title] of groups) {
    const group = moves.filter((m) => m.wdl === wdl);
    if (!group.length) continue;
    const head = document.createElement("tr");
    head.className = `group ${wdl}`;
    const th = document.createElement("th");
    th.colSpan = 3;
    th.textContent = `${group.length} ${group.length === 1 ? "move" : "moves"} ${title}`;
    head.appendChild(th);
    body.appendChild(head);
    for (const m of group) {
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
  }
  updateButtons();
}

// ▶ follows the best line: nothing to follow in a draw (it has no end) or after the end.
const canForward = () => !!(state.answer && state.answer.line && state.answer.line.length &&
                            state.answer.moves && state.answer.moves.length);

function updateButtons() {
  $("back").disabled = state.history.length === 0;
  $("forward").disabled = !canForward();
  $("copyfen").disabled = !state.answer;
  $("copyline").disabled = !(state.answer && state.answer.line && state.answer.line.length);
}

// The server's answer for fen, or null after showing why there is none (an error, or a newer
// request made since: request id is then no longer the latest).
async function ask(fen, id, typed) {
  const url = `api/${encodeURIComponent(state.variant.name)}?fen=${encodeURIComponent(fen)}` +
    `&clock=${state.clock}&diagonal=${state.diagonal}`;
  let a;
  try {
    a = await (await fetch(url)).json();
  } catch (e) {
    if (id === state.request) showError(`no answer from the server (${e.message})`);
    return null;
  }
  // (an answer to an older request is dropped: a newer one is under way)
  if (id !== state.request) return null;
  if (a.error) {
    if (typed !== undefined) showFenError(a.error, typed);
    else showError(a.error);
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
  state.selected = null;
  setFromFen(a.fen);
  drawBoard();
  showAnswer(a);
  const params = new URLSearchParams({ variant: state.variant.name, fen: a.fen });
  history.replaceState(null, "", `?${params}`);
}

// The clock after move m: the rules' answer says (0 when the move resets the count); without
// rule tables one more ply, as the count runs on.
function clockAfter(m) {
  const r = state.answer && state.answer.rules;
  const ruled = r && r.moves.find((x) => x.move === m.move);
  return ruled ? ruled.clock : state.clock + 1;
}

function setClock(clock) {
  state.clock = clock;
  $("clock").value = String(clock);
}

// The diagonal count after move m (fmjd64): the rules' answer says; else it stays.
function diagonalAfter(m) {
  const r = state.answer && state.answer.rules;
  const ruled = r && r.moves.find((x) => x.move === m.move);
  return ruled && ruled.diagonal !== undefined ? ruled.diagonal : state.diagonal;
}

function setDiagonal(diagonal) {
  state.diagonal = diagonal;
  $("diagonal").value = String(diagonal);
}

function play(m) {
  if (!m.fen) return Promise.resolve();
  state.history.push([state.answer.fen, state.clock, state.diagonal]);
  setClock(clockAfter(m));
  setDiagonal(diagonalAfter(m));
  state.lastMove = moveSquares(m);
  state.selected = null;
  return show(m.fen);
}

// Plays the best line up to its ply-th move (from 0), one answer after another.
async function playLine(ply) {
  const line = state.answer && state.answer.line ? state.answer.line.slice(0, ply + 1) : [];
  for (const text of line) {
    const m = state.answer && (state.answer.moves || []).find((x) => x.move === text);
    if (!m) return;
    await play(m);
  }
}

async function copy(text, button) {
  try {
    await navigator.clipboard.writeText(text);
  } catch (e) { // no clipboard API (an insecure origin): the old way
    const t = document.createElement("textarea");
    t.value = text;
    document.body.appendChild(t);
    t.select();
    document.execCommand("copy");
    t.remove();
  }
  button.dataset.copied = text;
  const label = button.textContent;
  button.textContent = "copied";
  setTimeout(() => { button.textContent = label; }, 1200);
}

function chooseVariant(name, fen) {
  const found = state.variants.find((v) => v.name === name);
  state.variant = found || state.variants[0];
  $("variant").value = state.variant.name;
  $("materiallink").href = `material.html?variant=${encodeURIComponent(state.variant.name)}`;
  state.history = [];
  state.lastMove = null;
  state.selected = null;
  if (name && !found) { // an address naming a variant not served here: say so, show nothing
    state.pieces.clear();
    drawBoard();
    showError(`no tables of variant '${name}' here; this server has ` +
              state.variants.map((v) => v.name).join(", "));
    return;
  }
  if (fen) { // from the address: sent as it is, as if typed
    state.pieces.clear();
    showFenTyped(fen);
    return;
  }
  const start = EXAMPLES[state.variant.squares] || "W:W:B";
  setFromFen(start);
  show(start);
}

async function init() {
  for (const b of document.querySelectorAll("#palette button[data-piece]")) {
    b.addEventListener("click", () => {
      state.tool = b.dataset.piece;
      state.selected = null;
      for (const o of document.querySelectorAll("#palette button[data-piece]"))
        o.classList.toggle("active", o === b);
    });
  }
  document.querySelector('#palette button[data-piece="move"]').classList.add("active");
  $("flip").addEventListener("click", flip);
  $("copyfen").addEventListener("click", () => state.answer && copy(state.answer.fen, $("copyfen")));
  $("copyline").addEventListener("click", () => state.answer && state.answer.line &&
    copy(lineText(state.answer), $("copyline")));
  document.addEventListener("keydown", (e) => {
    if (e.target.closest && e.target.closest("input, select, textarea")) return;
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    if (e.key === "ArrowLeft") $("back").click();
    else if (e.key === "ArrowRight") $("forward").click();
    else if (e.key === "f") flip();
    else return;
    e.preventDefault();
  });
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
    const [fen, clock, diagonal] = state.history.pop();
    setClock(clock);
    setDiagonal(diagonal);
    show(fen);
  });
  $("clock").addEventListener("change", () => {
    const n = parseInt($("clock").value, 10);
    setClock(Number.isNaN(n) || n < 0 ? 0 : n);
    if (state.answer) show(state.answer.fen);
  });
  $("diagonal").addEventListener("change", () => {
    const n = parseInt($("diagonal").value, 10);
    setDiagonal(Number.isNaN(n) || n < 0 ? 0 : n);
    if (state.answer) show(state.answer.fen);
  });
  $("forward").addEventListener("click", () => {
    if (canForward()) play(state.answer.moves[0]);
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
    // (a set without even every 2-piece table has no "2..n" to show)
    o.textContent = v.wdl_pieces >= 2 ? `${v.name} (2..${v.wdl_pieces})` : `${v.name} (partial set)`;
    $("variant").appendChild(o);
  }
  const params = new URLSearchParams(location.search);
  chooseVariant(params.get("variant"), params.get("fen"));
}

// A typed FEN is sent as typed, in either notation (the server reads ranges and the like, and
// names a square the board does not have); the board keeps its position until the server
// answers, and is emptied if it refuses the FEN.
async function showFenTyped(fen) {
  const h = /:\s*H\s*([0-9]+)\s*(?=:|\.?\s*$)/.exec(fen); // lidraughts' halfmove clock
  if (h) setClock(parseInt(h[1], 10));
  const a = await ask(fen, ++state.request, fen);
  if (!a) return;
  setFromFen(a.fen);
  await show(a.fen);
}

function flip() {
  state.flipped = !state.flipped;
  drawBoard();
}

init();
