// Thirty-one in the browser: the server draws the table (SVG) and says which moves are legal;
// this page only shows what it receives and sends clicks back. No framework, no build step.
"use strict";

const $ = (id) => document.getElementById(id);
const state = { tab: "play", game: null, logSize: 0, timer: null, replay: null, frame: 0, busy: false,
  pending: [] };

async function api(method, url, body) {
  const options = { method, headers: {} };
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  const response = await fetch(url, options);
  const data = await response.json();
  if (!response.ok) throw new Error(data.error || response.statusText);
  return data;
}

function status(text) { $("status").textContent = text || ""; }

// -- setup forms ------------------------------------------------------------------------------
let meta = null;

async function loadMeta() {
  meta = await api("GET", "/api/meta");
  for (const mode of ["play", "watch"]) {
    const preset = $(mode + "-preset");
    preset.innerHTML = meta.presets.map((p) => `<option value="${p.name}">${p.name}</option>`).join("");
    preset.value = "scat";
    preset.addEventListener("change", () => fillPlayers(mode));
    $(mode + "-players").addEventListener("change", () => fillOpponents(mode));
    await fillPlayers(mode);
  }
}

async function fillPlayers(mode) {
  const p = meta.presets.find((x) => x.name === $(mode + "-preset").value);
  const select = $(mode + "-players");
  const keep = select.value;
  select.innerHTML = p.players.map((n) => `<option value="${n}">${n}</option>`).join("");
  select.value = p.players.includes(Number(keep)) ? keep : String(p.players[0]);
  await fillOpponents(mode);
}

async function fillOpponents(mode) {
  const preset = $(mode + "-preset").value, players = $(mode + "-players").value;
  const data = await api("GET", `/api/opponents?preset=${encodeURIComponent(preset)}&players=${players}`);
  const select = $(mode + "-opponents");
  const keep = select.value;
  select.innerHTML = data.opponents.map((o) => `<option value="${o}">${o}</option>`).join("");
  select.value = data.opponents.includes(keep) ? keep : (data.opponents.includes("heuristic") ? "heuristic"
    : data.opponents[0]);
}

// -- tabs -------------------------------------------------------------------------------------
function showTab(tab) {
  state.tab = tab;
  stopWatching();
  for (const t of ["play", "watch", "replay"]) {
    $("tab-" + t).classList.toggle("active", t === tab);
    $("controls-" + t).classList.toggle("hidden", t !== tab);
  }
  $("moves").classList.toggle("hidden", tab !== "play");
  clearBoard(tab === "replay" ? "Open a replay file (thirtyone eval --save-replays, or a match played here)."
    : "Pick the rules and opponents, then start.");
}

function clearBoard(hint) {
  state.game = null; state.replay = null; state.logSize = 0; state.pending = [];
  $("table").innerHTML = `<p class="hint">${hint}</p>`;
  $("log").innerHTML = ""; $("buttons").innerHTML = "";
  $("result").classList.add("hidden"); $("download").classList.add("hidden");
  $("showdown").classList.add("hidden");
  status("");
}

// -- a game (play and watch) ------------------------------------------------------------------
function addLog(entries) {
  const log = $("log");
  for (const e of entries) {
    const li = document.createElement("li");
    li.textContent = e.text;
    if (e.text.startsWith("deal ") || e.text.startsWith("match over")) li.className = "settle";
    log.appendChild(li);
  }
  log.scrollTop = log.scrollHeight;
}

function showGame(g) {
  state.game = g;
  $("table").innerHTML = g.svg;
  addLog(g.log);
  state.logSize = g.log_size;
  const buttons = $("buttons");
  buttons.innerHTML = "";
  for (const a of g.legal) {
    if (a.id === 2 || a.id === 3) {  // knock and pass have no place on the table: buttons
      const b = document.createElement("button");
      b.textContent = a.name; b.dataset.action = a.id; b.id = "action-" + a.name;
      buttons.appendChild(b);
    }
  }
  $("how").classList.toggle("hidden", !g.your_turn);
  if (g.mode === "play" && !g.over) status(g.your_turn ? "Your turn" : "");
  if (g.over) {
    $("result").textContent = g.result;
    $("result").classList.remove("hidden");
    $("download").href = `/api/games/${g.id}/replay`;
    $("download").classList.remove("hidden");
    status("Match over");
    stopWatching();
  }
  if (g.showdowns.length) {
    state.pending.push(...g.showdowns);
    if (g.mode === "play") showShowdown(); else state.pending = [];
  }
}

function showShowdown() {
  const s = state.pending.shift();
  if (!s) { $("showdown").classList.add("hidden"); return; }
  $("showdown-title").textContent = `Deal ${s.deal} is over`;
  $("showdown-svg").innerHTML = s.svg;
  $("showdown-lines").innerHTML = s.lines.map((l) => `<li>${l.replace(/&/g, "&amp;").replace(/</g, "&lt;")}</li>`)
    .join("");
  $("showdown").classList.remove("hidden");
  $("showdown-continue").focus();
}

async function newGame(mode) {
  clearBoard("Dealing...");
  const body = { mode, preset: $(mode + "-preset").value, players: Number($(mode + "-players").value),
    opponents: $(mode + "-opponents").value, reveal: $("watch-reveal").checked };
  try {
    showGame(await api("POST", "/api/games", body));
    if (mode === "watch") startWatching();
  } catch (err) { status(err.message); }
}

async function sendAction(action) {
  if (!state.game || state.busy || !state.game.your_turn) return;
  state.busy = true;
  document.body.dataset.busy = "1";  // tests and styles can tell a move in flight
  try {
    showGame(await api("POST", `/api/games/${state.game.id}/action`, { action }));
  } catch (err) { status(err.message); } finally { state.busy = false; delete document.body.dataset.busy; }
}

function startWatching() {
  stopWatching();
  $("watch-pause").disabled = false; $("watch-pause").textContent = "Pause";
  const tick = async () => {
    if (!state.game || state.game.over || state.tab !== "watch") return stopWatching();
    try {
      showGame(await api("POST", `/api/games/${state.game.id}/advance`, { steps: 1 }));
    } catch (err) { status(err.message); return stopWatching(); }
    if (!state.game.over) state.timer = setTimeout(tick, Number($("watch-speed").value));
  };
  state.timer = setTimeout(tick, Number($("watch-speed").value));
}

function stopWatching() {
  if (state.timer) clearTimeout(state.timer);
  state.timer = null;
  $("watch-pause").textContent = "Resume";
  $("watch-pause").disabled = !state.game || state.game.over;
}

// -- replays ------------------------------------------------------------------------------------
async function openReplay(file) {
  clearBoard("Checking the replay...");
  let data;
  try { data = JSON.parse(await file.text()); } catch (err) { status("not a JSON file: " + err.message); return; }
  try {
    state.replay = await api("POST", "/api/replays", data);
  } catch (err) { status(err.message); $("table").innerHTML = ""; return; }
  const r = state.replay;
  status(`${r.preset}, ${r.num_players} players: ${r.frames - 1} moves` + (r.complete ? "" : " (unfinished)"));
  await showFrame(0);
}

async function showFrame(k) {
  const r = state.replay;
  if (!r) return;
  k = Math.max(0, Math.min(r.frames - 1, k));
  state.frame = k;  // at once: quick clicks step from here, and a late answer for another frame is dropped
  const f = await api("GET", `/api/replays/${r.id}/frames/${k}`);
  if (state.frame !== k || state.replay !== r) return;
  $("table").innerHTML = f.svg;
  $("replay-pos").textContent = `${k} / ${r.frames - 1}`;
  $("log").innerHTML = "";
  addLog(r.lines.slice(1, k + 1).map((text) => ({ text })));
  if (f.ended) addLog(f.ended.map((text) => ({ text: "deal over: " + text })));
  $("replay-first").disabled = $("replay-prev").disabled = k === 0;
  $("replay-next").disabled = $("replay-last").disabled = k === r.frames - 1;
}

// -- wiring ---------------------------------------------------------------------------------------
document.addEventListener("DOMContentLoaded", async () => {
  for (const b of document.querySelectorAll(".tab")) b.addEventListener("click", () => showTab(b.dataset.tab));
  $("play-new").addEventListener("click", () => newGame("play"));
  $("watch-new").addEventListener("click", () => newGame("watch"));
  $("watch-pause").addEventListener("click", () => (state.timer ? stopWatching() : startWatching()));
  $("showdown-continue").addEventListener("click", showShowdown);
  $("table").addEventListener("click", (e) => {
    const el = e.target.closest("[data-action]");
    if (el) sendAction(Number(el.dataset.action));
  });
  $("table").addEventListener("keydown", (e) => {
    const el = e.target.closest("[data-action]");
    if (el && (e.key === "Enter" || e.key === " ")) { e.preventDefault(); sendAction(Number(el.dataset.action)); }
  });
  $("buttons").addEventListener("click", (e) => {
    const el = e.target.closest("[data-action]");
    if (el) sendAction(Number(el.dataset.action));
  });
  $("replay-file").addEventListener("change", (e) => e.target.files[0] && openReplay(e.target.files[0]));
  $("replay-first").addEventListener("click", () => showFrame(0));
  $("replay-prev").addEventListener("click", () => showFrame(state.frame - 1));
  $("replay-next").addEventListener("click", () => showFrame(state.frame + 1));
  $("replay-last").addEventListener("click", () => showFrame(state.replay ? state.replay.frames - 1 : 0));
  document.addEventListener("keydown", (e) => {
    if (state.tab !== "replay" || !state.replay) return;
    if (e.key === "ArrowRight") showFrame(state.frame + 1);
    if (e.key === "ArrowLeft") showFrame(state.frame - 1);
  });
  try { await loadMeta(); } catch (err) { status("cannot reach the server: " + err.message); }
  showTab("play");
});
