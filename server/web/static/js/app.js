// The page: login, lobby and table screens over one connection (connection.js), the table's
// picture (state.js) drawn by table_view.js. Everything the page does is a protocol request; what
// it shows is what the server said.

import { classify } from "./actions.js";
import { Connection } from "./connection.js";
import { $, fill, h } from "./dom.js";
import { cardFace } from "./cards.js";
import { Journal } from "./journal.js";
import { eventNotice, eventOfTable, loggedIn as eventsLoggedIn, openEvent, refreshList as refreshEvents, setUpEvents } from "./events.js";
import { everyTable } from "./listing.js";
import { openPastGames, setUpReplays } from "./replay_view.js";
import { playerLink, setUpProfile } from "./profile.js";
import { TableState } from "./state.js";
import { ruleLines, valueWords } from "./rules.js";
import { renderTable, rovingTabStop, tickClocks } from "./table_view.js";
import { checkHand } from "./verify.js";

// How long a completed trick stays on the table, and the beat between two cards played in a row.
const PACES = { fast: { trick: 800, card: 150 }, normal: { trick: 1600, card: 300 }, slow: { trick: 3000, card: 600 } };

const storage = window.localStorage; // the token: survives reloads and browser restarts
const session = window.sessionStorage; // this tab's table being watched, and the deal evidence
// Every hand this page sees, kept for its replays (journal.js; the Past games screen, replay_view.js).
const journal = new Journal(storage, session, { server: location.host });

const app = {
  conn: null,
  user: null,
  tables: new Map(), // table id -> TableInfo, from list_tables and table_changed
  presets: [],
  optionDocs: {}, // option -> its description (the engine's table, from presets.json)
  optionOrder: [],
  table: null, // TableState of the table on screen
  codes: {}, // table id -> join code we were given or typed
  selected: new Set(), // cards chosen for a pass, exchange or discard
  gameOverDismissed: false,
  resumed: new Set(),
  takeovers: 0, // seats this tab took back from a connection the server still counted as live
  pausedAt: null, // performance.now() when the server paused play (`service_paused`), or null
  lobbyChat: [],
  renderQueued: false,
  // Pacing (issue 39): the table's events wait in `queue` while a completed trick is held on the
  // felt (`holdUntil`), and bots' cards land one by one; the server and protocol are unchanged.
  queue: [], // [{ msg, at }] with the time each arrived (a turn's clock runs from then)
  holdUntil: 0,
  holdTimer: null,
  pace: PACES[storage.getItem("spades.pace")] ? storage.getItem("spades.pace") : "normal",
  fourColour: storage.getItem("spades.fourColour") === "yes",
  autoplay: storage.getItem("spades.autoplay") === "yes", // a forced card played for the player
  turnAlert: storage.getItem("spades.turnAlert") === "yes", // the title blinks on a hidden tab
  blinkTimer: null,
  reviewLast: false, // the last trick shown on demand
  summaryClosed: 0, // the hand number whose summary the player closed
  sheetOpen: false,
  connected: false,
};
window.spadesApp = app; // for the browser tests and the curious

// ---------------------------------------------------------------- small helpers

function notice(text) {
  const el = $("notice");
  el.textContent = text || "";
  el.hidden = !text;
}

function show(screen) {
  for (const id of ["login-screen", "lobby-screen", "table-screen", "replay-screen", "event-screen"]) $(id).hidden = id !== screen;
  document.body.dataset.screen = screen;
  if (screen === "lobby-screen" && app.user && app.conn) refreshEvents(); // the events list (events.js)
}

function render() {
  if (app.renderQueued) return;
  app.renderQueued = true;
  requestAnimationFrame(() => {
    app.renderQueued = false;
    draw();
  });
}

function seatInfo(tableId) {
  const info = app.tables.get(tableId);
  const bySeat = {};
  const names = {};
  if (info) {
    for (const seat of info.seats) {
      bySeat[seat.seat] = seat;
      if (seat.player) names[seat.seat] = playerName(seat);
    }
  }
  return { bySeat, names };
}

// A built-in bot by its kind ("quick search bot"), not its account name ("bot:search_fast").
const BOT_WORDS = { random: "random", heuristic: "heuristic", search_fast: "quick search", search: "search" };

function playerName(seat) {
  if (!seat.bot) return seat.player;
  const kind = BOT_WORDS[seat.bot_kind] || String(seat.player).replace(/^bot:/, "");
  return `${kind} bot`;
}

function presetOptions(name) {
  const preset = app.presets.find((p) => p.name === name);
  return preset ? preset.options : {};
}

// ---------------------------------------------------------------- the connection

function connect() {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  app.conn = new Connection(`${scheme}//${location.host}/ws`, {
    onOpen: welcomed,
    onMessage: received,
    onStatus: status,
    onFatal: (error) => {
      status(`refused: ${error.message}`);
      notice(`The server refused this page: ${error.message}`);
    },
  }, storage);
  app.conn.start();
  window.addEventListener("online", () => app.conn.retryNow());
  // The browser knows at once when the network goes; the socket may take a minute to notice.
  window.addEventListener("offline", () => app.conn.drop("this device is offline"));
}

function status(text) {
  const el = $("status");
  app.connected = text === "connected";
  el.textContent = !app.connected && !navigator.onLine ? "offline: reconnecting when the network is back" : text;
  el.classList.toggle("bad", text !== "connected");
  render();
}

function welcomed(welcome) {
  $("server-name").textContent = welcome.server;
  app.resumed = new Set(); // tables whose seat this connection holds (joined / table_created)
  if (welcome.user) loggedIn(welcome.user);
  else if (!app.conn.token) {
    app.user = null;
    show("login-screen");
  }
  // With a token and no user the server follows with `error bad_token` (see received()).
}

async function loggedIn(name) {
  app.user = name;
  $("user-name").textContent = name;
  $("logout").hidden = false;
  if (!app.table) show("lobby-screen");
  app.tables = await everyTable((message) => app.conn.request(message)); // every page of it
  // The server gives a seat back at `hello` when the connection that held it is gone. After a
  // dropped Wi-Fi it may not know yet that the old one is gone (it waits for the idle timeout):
  // then this tab takes its seat over, as it asks to (`join` with `takeover`).
  const mine = readSeated();
  if (mine && !app.resumed.has(mine.table)) {
    const info = app.tables.get(mine.table);
    if (info && info.status !== "finished") {
      const back = await app.conn.request({ t: "join", table: mine.table, seat: mine.seat, takeover: true, code: app.codes[mine.table] });
      if (back && back.t === "error") {
        session.removeItem("spades.seated");
        notice(`Your seat at table ${mine.table} could not be taken back: ${back.message}`);
      } else if (back) app.takeovers += 1;
    } else session.removeItem("spades.seated");
  }
  // An invite link (#table=ID&code=CODE): sit at that table's open seat, or watch it when none is.
  const invite = new URLSearchParams(location.hash.slice(1));
  if (invite.get("table") && !app.table) {
    history.replaceState(null, "", location.pathname + location.search);
    const tableId = invite.get("table");
    const code = invite.get("code") || undefined;
    if (code) app.codes[tableId] = code;
    const back = await app.conn.request({ t: "join", table: tableId, code });
    if (!back || back.t === "error") await watch(tableId, code);
    render();
    return;
  }
  // A spectator is not resumed by the server (only seats are): watch again, after a reload or a
  // dropped connection alike.
  const watching = session.getItem("spades.watching");
  const shown = app.table;
  if (watching && (!shown || (shown.table === watching && shown.seat === null))) {
    await watch(watching, app.codes[watching]);
  }
  // Events (events.js): checked in again after a reload, and the event the address names shown.
  await eventsLoggedIn();
  render();
}

function received(msg) {
  switch (msg.t) {
    case "error":
      if (msg.code === "bad_token") {
        app.conn.token = null;
        notice("The token saved in this browser was not accepted: log in again.");
        show("login-screen");
      } else notice(msg.message);
      return;
    case "service_paused":
      paused(msg);
      return;
    case "event_round": // an event's round notice (the seat follows as `joined` + `snapshot`)
    case "event_ended":
      eventNotice(msg);
      return;
    case "table_changed":
      app.tables.set(msg.table.table, msg.table);
      render();
      return;
    case "table_closed":
      app.tables.delete(msg.table);
      if (app.table && app.table.table === msg.table && !app.table.gameOver) {
        notice(`Table ${msg.table} has closed${msg.reason ? `: ${msg.reason}` : ""}.`);
        const eventId = eventOfTable(msg.table);
        leaveScreen();
        if (eventId) openEvent(eventId); // an event's table: back to its event
      }
      render();
      return;
    case "announcement": // the server's operator, to everyone: a notice, and kept in the chat
      notice(`Operator: ${msg.text}`);
      app.lobbyChat.push(`operator: ${msg.text}`);
      app.lobbyChat = app.lobbyChat.slice(-60);
      if (app.table) app.table.say(`operator: ${msg.text}`);
      render();
      return;
    case "chat_message":
      if (msg.scope === "lobby") {
        app.lobbyChat.push(`${msg.name}: ${msg.text}`);
        app.lobbyChat = app.lobbyChat.slice(-60);
      } else if (app.table && msg.table === app.table.table) {
        app.table.say(`${msg.name}: ${msg.text}`);
      }
      render();
      return;
    case "joined":
    case "table_created":
      if (msg.code) app.codes[msg.table] = msg.code; // a private table's code, for the invite link
      if (msg.seat !== undefined && msg.seat !== null) seated(msg.table, msg.seat);
      return;
    case "seat_lost":
      if (app.table && app.table.table === msg.table) {
        session.removeItem("spades.seated");
        notice(SEAT_LOST[msg.reason] || "This browser no longer holds its seat at this table.");
        app.table.turn = null;
        watch(msg.table, app.codes[msg.table]); // go on watching the table
      }
      return;
    case "snapshot":
      openTable(msg.table);
      break;
    default:
      break;
  }
  journal.observe(msg, app.tables.get(msg.table));
  const state = app.table;
  if (!state || msg.table !== state.table) return;
  if (msg.t === "snapshot") {
    // A snapshot is the whole picture as it is now: what was waiting to be shown is in it.
    app.queue = [];
    app.holdUntil = 0;
    state.held = null;
    applyShown(state, msg, performance.now());
    return;
  }
  app.queue.push({ msg, at: performance.now() });
  drain();
}

// Apply what waited, in order, except while a completed trick (or a card just played) is held.
function drain() {
  clearTimeout(app.holdTimer);
  const state = app.table;
  while (state && app.queue.length) {
    const now = performance.now();
    if (state.held && state.held.until === null) return; // its hold starts when it is drawn (draw())
    if (now < app.holdUntil) {
      app.holdTimer = setTimeout(drain, app.holdUntil - now);
      return;
    }
    const { msg, at } = app.queue.shift();
    applyShown(state, msg, at);
    const pace = PACES[app.pace];
    if (document.hidden) continue; // nobody is looking: no holds, nothing piles up
    if (msg.t === "trick_won") {
      // Held for the pace from the frame that first shows it, however busy the page was.
      state.held = { id: `${state.view.hand_number}-${msg.trick_number}`, plays: msg.plays, winner: msg.seat, ms: pace.trick, until: null };
      app.reviewLast = false;
      return;
    } else if (msg.t === "hand_scored") {
      app.holdUntil = now + 2 * pace.trick; // the result is read before the next deal moves on
    } else if (msg.t === "card_played" && app.queue.some((q) => q.msg.t === "card_played" || q.msg.t === "trick_won")) {
      app.holdUntil = now + pace.card; // the next card lands a beat later, not in the same frame
    }
  }
  if (state && state.held && state.held.until !== null && performance.now() >= state.held.until) {
    state.held = null;
    render();
  } else if (state && state.held && state.held.until !== null) {
    app.holdTimer = setTimeout(drain, state.held.until - performance.now());
  }
}

function applyShown(state, msg, at) {
  const hadTurn = state.turn;
  if (msg.t === "card_played") state.held = null;
  state.apply(msg, at);
  announce(state, msg, hadTurn);
  if (msg.t === "hand_dealt" || msg.t === "snapshot") app.selected.clear();
  if (msg.t === "your_turn") keepChoosable(state);
  saveEvidence(state);
  runChecks(state);
  render();
  if (msg.t === "your_turn" && !hadTurn) {
    requestAnimationFrame(focusTurn);
    if (app.turnAlert && document.hidden) blinkTitle();
    forcedCard(state);
  }
}

// The one card the player may play, played for them a beat after it is shown (when they asked).
function forcedCard(state) {
  if (!app.autoplay || !state.turn || state.turn.legal.length !== 1 || state.turn.legal[0].kind !== "play") return;
  const turn = state.turn;
  setTimeout(() => {
    if (app.table === state && state.turn === turn) act(turn.legal[0]);
  }, PACES[app.pace].card * 2);
}

// The tab's title blinks until the player comes back to it.
function blinkTitle() {
  clearInterval(app.blinkTimer);
  const title = "Spades table";
  let on = false;
  const tick = () => {
    on = !on;
    document.title = on ? "▶ Your turn · Spades" : title;
  };
  tick();
  app.blinkTimer = setInterval(tick, 1000);
}

function stopBlinking() {
  clearInterval(app.blinkTimer);
  app.blinkTimer = null;
  document.title = "Spades table";
}

// The server cannot store anything for now: play is paused and no clock runs, so the clocks are
// shown as they stood (the `turn` each table sends once play resumes sets them again).
function paused(msg) {
  const banner = $("pause-banner");
  if (msg.paused) {
    if (app.pausedAt === null) app.pausedAt = performance.now();
    banner.textContent = "Play is paused: the server cannot reach its database. Nothing is lost; play resumes by itself when it is back.";
    banner.hidden = false;
  } else {
    app.pausedAt = null;
    banner.hidden = true;
    if (app.table) app.table.say(`Play resumed after ${((msg.paused_ms || 0) / 1000).toFixed(1)} s.`);
  }
  render();
}

function clockNow() {
  return app.pausedAt === null ? performance.now() : app.pausedAt;
}

// What a screen reader hears, once, as it is shown: plays, tricks, turns and results.
function announce(state, msg, hadTurn) {
  let text = "";
  const who = (seat) => (seat === state.seat ? "You" : state.place(seat));
  if (msg.t === "card_played") text = `${who(msg.seat)} ${msg.seat === state.seat ? "play" : "plays"} the ${cardFace(msg.card).name}.`;
  else if (msg.t === "trick_won") text = `${who(msg.seat)} ${msg.seat === state.seat ? "win" : "wins"} the trick.`;
  else if (msg.t === "bid_made") text = `${who(msg.seat)} ${msg.seat === state.seat ? "bid" : "bids"} ${msg.text}.`;
  else if (msg.t === "hand_scored" || msg.t === "game_over") text = state.log[state.log.length - 1] || "";
  else if (msg.t === "your_turn" && !hadTurn && state.turn) {
    const kinds = new Set(state.turn.legal.map((a) => a.kind));
    text = kinds.has("bid") ? "Your turn: bid." : kinds.has("play") ? "Your turn: play a card." : kinds.has("pass") ? "Your turn: choose cards to pass." : "Your turn.";
  }
  if (text) $("announce").textContent = text;
}

// In a simultaneous phase (a Hearts pass) every other seat's pass brings a new `your_turn` for the
// new version: the cards already chosen stay chosen while they may still be chosen.
function keepChoosable(state) {
  const { choice } = classify(state.turn ? state.turn.legal : []);
  for (const card of [...app.selected]) if (!choice || !choice.cards.has(card)) app.selected.delete(card);
}

const SEAT_LOST = {
  taken_over: "Your seat was taken over by another window or device logged in as you; this one now watches.",
  match_over: "The ladder's match at this table is over.",
  forfeited: "The ladder's fallback bot plays your seat for the rest of the match.",
};

// This tab holds a seat at `table`: remembered (for this tab only) so that a connection that comes
// back can take it back even while the server still counts the lost one as live.
function seated(table, seat) {
  session.setItem("spades.seated", JSON.stringify({ table, seat }));
  session.removeItem("spades.watching");
  app.resumed.add(table);
}

function readSeated() {
  try {
    const value = JSON.parse(session.getItem("spades.seated") || "null");
    return value && typeof value.table === "string" && Number.isInteger(value.seat) ? value : null;
  } catch {
    return null;
  }
}

function openTable(tableId) {
  if (app.table && app.table.table === tableId) return;
  const state = new TableState(tableId);
  const options = { ...presetOptions(app.tables.get(tableId)?.preset), ...(app.tables.get(tableId)?.options || {}) };
  state.jackOfDiamonds = Boolean(options.hearts_jack_of_diamonds);
  state.rules = options; // what the view fold needs of the rules (view_fold.js)
  try {
    const saved = JSON.parse(session.getItem("spades.evidence") || "null");
    if (saved && saved.table === tableId) state.evidence = saved;
  } catch {
    session.removeItem("spades.evidence");
  }
  try {
    const saved = JSON.parse(session.getItem("spades.log") || "null");
    if (saved && saved.table === tableId && Array.isArray(saved.lines)) for (const line of saved.lines) state.say(String(line));
  } catch {
    session.removeItem("spades.log");
  }
  app.table = state;
  app.queue = [];
  app.holdUntil = 0;
  app.reviewLast = false;
  app.summaryClosed = 0;
  app.sheetOpen = false;
  app.selected.clear();
  app.gameOverDismissed = false;
  show("table-screen");
}

function saveEvidence(state) {
  if (state.evidence) session.setItem("spades.evidence", JSON.stringify(state.evidence));
  // The table's log too: a reload shows what happened before it.
  session.setItem("spades.log", JSON.stringify({ table: state.table, lines: state.log }));
}

function runChecks(state) {
  while (state.pendingChecks.length) {
    const { hand, seed, evidence } = state.pendingChecks.shift();
    checkHand(evidence, seed)
      .then((result) => {
        state.checks[hand] = result;
        journal.checked(state.table, hand, result);
        if (result.verdict === "MISMATCH") notice(`DEAL CHECK FAILED for hand ${hand}: ${result.lines[result.lines.length - 1]}`);
        render();
      })
      .catch((error) => {
        state.checks[hand] = { verdict: "unchecked", lines: [`the deal could not be checked here: ${error.message}`] };
        render();
      });
  }
}

function focusTurn() {
  const active = document.activeElement;
  if (active && (active.tagName === "INPUT" || active.tagName === "SELECT")) return;
  const target = document.querySelector("#hand .card.legal, #actions button:not(:disabled), #hand .card:not(:disabled)");
  if (target) target.focus({ preventScroll: true });
}

// ---------------------------------------------------------------- requests

async function ask(msg, okTypes) {
  const reply = await app.conn.request(msg);
  if (!reply) {
    notice("Not connected; trying again…");
    return null;
  }
  if (reply.t === "error") {
    notice(reply.message);
    return null;
  }
  if (okTypes && !okTypes.includes(reply.t)) return null;
  notice("");
  return reply;
}

async function register(name) {
  const reply = await ask({ t: "register", name }, ["registered"]);
  if (!reply) return;
  app.conn.token = reply.token;
  const banner = $("token-banner");
  fill(banner,
    h("p", {}, `Welcome, ${reply.name}. Your token is saved in this browser; keep a copy to log in from another one:`),
    h("p", {}, h("code", { id: "token-text" }, reply.token)),
    h("button", { type: "button", class: "secondary", onclick: () => { banner.hidden = true; } }, "Got it"));
  banner.hidden = false;
  await loggedIn(reply.name);
}

async function guest(name) {
  const reply = await ask({ t: "guest", name: name || undefined }, ["logged_in"]);
  if (!reply) return;
  if (reply.token) app.conn.token = reply.token; // the guest's resume token: back after a drop
  await loggedIn(reply.name);
}

async function tokenLogin(token) {
  const reply = await ask({ t: "login", token }, ["logged_in"]);
  if (!reply) return;
  app.conn.token = token;
  await loggedIn(reply.name);
}

async function createTable() {
  const game = $("create-game").value;
  const preset = $("create-preset").value;
  const players = (app.presets.find((p) => p.name === preset) || { players: 4 }).players;
  const bots = [...document.querySelectorAll("#create-bots input:checked")].map((el) => Number(el.value)).filter((s) => s < players);
  const bot = $("create-bot").value;
  const options = {};
  const target = $("create-target").value;
  const hands = $("create-hands").value;
  const defaults = presetOptions(preset);
  if (target !== "" && Number(target) !== defaults.target_score) options.target_score = Number(target);
  if (hands !== "" && Number(hands) > 0) options.max_hands = Number(hands);
  const request = { t: "create_table", game, preset, options, bots, bot, private: $("create-private").checked, sit: 0 };
  Object.assign(request, watchingOptions({ no_watching: $("create-no-watching").checked, spectator_delay: Number($("create-delay").value) }));
  const reply = await ask(request, ["table_created"]);
  if (reply && reply.code) app.codes[reply.table] = reply.code;
}

// What spectators may see (docs/protocol.md, `spectate`): sent only when set, as the listing shows it.
function watchingOptions(info) {
  if (info.no_watching) return { no_watching: true };
  return info.spectator_delay ? { spectator_delay: info.spectator_delay } : {};
}

function watchingWords(info) {
  if (info.no_watching) return "no spectators";
  const n = info.spectator_delay;
  return n ? `spectators ${n} ${n === 1 ? "trick" : "tricks"} behind` : null;
}

async function sit(tableId, seat, code) {
  if (code) app.codes[tableId] = code;
  await ask({ t: "join", table: tableId, seat: seat ?? undefined, code: code || undefined }, ["joined"]);
}

async function watch(tableId, code) {
  if (code) app.codes[tableId] = code;
  const reply = await ask({ t: "spectate", table: tableId, code: code || undefined }, ["joined"]);
  if (reply) session.setItem("spades.watching", tableId);
  else session.removeItem("spades.watching");
}

async function leave() {
  const state = app.table;
  if (!state) return;
  if (state.seat !== null && !state.gameOver && !confirm("Leave your seat? The server plays it for you until the game ends.")) return;
  await app.conn.request({ t: "leave", table: state.table });
  if (app.table === state) leaveScreen(); // unless another table took the screen meanwhile
}

function leaveScreen() {
  app.table = null;
  session.removeItem("spades.watching");
  session.removeItem("spades.seated");
  session.removeItem("spades.evidence");
  session.removeItem("spades.log");
  show(app.user ? "lobby-screen" : "login-screen");
  render();
}

async function act(action) {
  const state = app.table;
  if (!state || !state.turn) return;
  const asked = state.turn; // kept: a refused act leaves the same decision open
  const version = state.turn.version;
  state.turn = null; // one act per turn: the next `your_turn` brings the next choice
  app.selected.clear();
  render();
  let reply = await app.conn.request({ t: "act", table: state.table, version, action });
  if (reply && reply.t === "error" && reply.code === "stale_version" && state.turn) {
    // Someone else acted at the same moment (a Hearts pass): the same choice, if it is still
    // legal at the new version, is sent again.
    const again = state.turn.legal.find((a) => JSON.stringify(a) === JSON.stringify(action));
    if (again) {
      const newer = state.turn.version;
      state.turn = null;
      render();
      reply = await app.conn.request({ t: "act", table: state.table, version: newer, action: again });
    }
  }
  if (reply && reply.t === "error") {
    // The server sends a decision's choices once: unless the decision is over (made for us, or
    // the seat is no longer ours), the refused act leaves it open, so offer it again.
    if (!state.turn && !["not_your_turn", "not_seated", "stale_version"].includes(reply.code)) {
      state.turn = asked;
      render();
    }
    notice(reply.message);
  } else if (reply) notice("");
}

// A card was clicked, tapped or pressed: chosen for a pass (or unchosen), or played.
function cardChosen(card) {
  const state = app.table;
  if (!state || !state.turn) return;
  const { plays, choice } = classify(state.turn.legal);
  if (choice && choice.cards.has(card)) toggle(card);
  else if (plays.has(card)) act({ kind: "play", card });
}

function toggle(card) {
  if (app.selected.has(card)) app.selected.delete(card);
  else app.selected.add(card);
  render();
}

// ---------------------------------------------------------------- drawing

// The hand's result stays until the player closes it or the next hand asks something of them (a
// bid, a pass); a spectator's, until the next hand's first card.
function summaryShown(state) {
  const scored = state.lastScored;
  if (!scored || app.summaryClosed === scored.hand_number) return false;
  const v = state.view;
  if (Number(v.hand_number || 0) > scored.hand_number && (state.turn || (v.played || []).length)) return false;
  return true;
}

function draw() {
  if (!$("lobby-screen").hidden) drawLobby();
  const state = app.table;
  if (state && !$("table-screen").hidden) {
    const { bySeat, names } = seatInfo(state.table);
    const info = app.tables.get(state.table);
    if (state.held && state.held.until === null) {
      // The held trick's first frame: its hold (and the queue's) runs from now.
      state.held.until = performance.now() + state.held.ms;
      app.holdUntil = state.held.until;
      clearTimeout(app.holdTimer);
      app.holdTimer = setTimeout(drain, state.held.ms);
    }
    $("table-title").textContent = `Table ${state.table} · ${info ? info.preset : state.game}${state.seat === null ? " · watching" : ""}`;
    drawTableRules(info);
    $("table-code").textContent = app.codes[state.table] ? `code ${app.codes[state.table]}` : "";
    const link = inviteLink(state.table);
    $("invite").href = link;
    $("invite").dataset.link = link;
    renderTable(state, {
      names, seatInfo: bySeat, selected: app.selected, now: clockNow(), wall: performance.now(), gameOverDismissed: app.gameOverDismissed,
      reviewLast: app.reviewLast, summaryShown: summaryShown(state), sheetOpen: app.sheetOpen, connected: app.connected,
      options: { ...presetOptions(info?.preset), ...(info?.options || {}) },
      handlers: { act, card: cardChosen },
    });
    // A table of an event: its game over, the way on is the event's next round, not *Play again*.
    const eventId = eventOfTable(state.table);
    $("play-again").hidden = Boolean(eventId);
    $("game-over-close").textContent = eventId ? "Back to the event" : "Back to the lobby";
    $("last-trick").setAttribute("aria-pressed", String(app.reviewLast));
    $("last-trick").disabled = !(state.view.last_trick || []).length;
    drawLog($("table-log"), state);
  }
}

// The table's log is a `role="log"`: new lines are appended (a screen reader reads those), never
// the whole list redrawn.
function drawLog(el, state) {
  const total = state.logTotal;
  const shown = el.dataset.table === state.table ? Number(el.dataset.total || 0) : -1;
  if (shown === total) return;
  const fresh = shown < 0 || total - shown > state.log.length;
  if (fresh) el.replaceChildren();
  const lines = fresh ? state.log : state.log.slice(state.log.length - (total - shown));
  for (const line of lines) el.append(h("p", {}, line));
  while (el.childElementCount > state.log.length) el.firstElementChild.remove();
  el.dataset.table = state.table;
  el.dataset.total = String(total);
  el.scrollTop = el.scrollHeight;
}

function optionChips(info) {
  const entries = Object.entries(info.options || {});
  const chip = ([key, value]) => {
    const doc = app.optionDocs[key];
    return doc ? `${doc.label}: ${valueWords(doc, key, value)}` : `${key.replaceAll("_", " ")}: ${value}`;
  };
  return h("div", { class: "chips" },
    h("span", { class: "chip" }, info.game), h("span", { class: "chip" }, info.preset),
    entries.map((entry) => h("span", { class: "chip" }, chip(entry))),
    h("span", { class: "chip" }, `${Math.round(info.clock.turn_ms / 1000)} s a turn`),
    info.private ? h("span", { class: "chip" }, "private") : null,
    watchingWords(info) ? h("span", { class: "chip" }, watchingWords(info)) : null);
}

function drawLobby() {
  const tables = [...app.tables.values()].filter((t) => t.status !== "finished");
  fill($("table-list"), tables.length ? tables.map((info) => {
    const code = () => (info.private ? app.codes[info.table] || prompt(`Join code for table ${info.table}`) || "" : undefined);
    return h("article", { class: "table-item", dataset: { table: info.table } },
      h("h3", {}, `Table ${info.table}`, ` · ${info.status}`, info.spectators ? ` · ${info.spectators} watching` : ""),
      optionChips(info),
      h("details", { class: "rules" }, h("summary", {}, "Rules"), optionList({ ...presetOptions(info.preset), ...info.options })),
      h("ul", { class: "seat-list" }, info.seats.map((seat) => h("li", {},
        h("span", {}, `Seat ${seat.seat}: `, seat.player ? [playerLink(seat.player, playerName(seat)), !seat.bot && !seat.connected ? " (disconnected)" : ""] : h("em", { class: "empty" }, "open")),
        !seat.player && info.status === "waiting" ? h("button", { type: "button", dataset: { key: `sit-${info.table}-${seat.seat}` }, onclick: () => sit(info.table, seat.seat, code()) }, "Sit here") : null))),
      h("div", { class: "buttons" },
        info.no_watching ? null : h("button", { type: "button", class: "secondary", dataset: { key: `watch-${info.table}` }, onclick: () => watch(info.table, code()) }, "Watch")));
  }) : h("p", { class: "empty" }, "No tables yet: open one."));
  const chat = $("lobby-chat");
  fill(chat, app.lobbyChat.map((line) => h("p", {}, line)));
  chat.scrollTop = chat.scrollHeight;
}

// The options that matter in this game, in words, as the engine describes them (rules.js): no
// Hearts option at a Spades table, no blind nil's worth where blind nil is off.
function optionList(options) {
  return h("dl", {}, ruleLines(options, app.optionDocs, app.optionOrder).map((line) => [
    h("dt", {}, line.label),
    h("dd", {}, line.value, h("span", { class: "about" }, line.about)),
  ]));
}

// The table's rules in words (its preset's with its own changes), drawn again only when they change.
function drawTableRules(info) {
  const el = $("table-rules-body");
  const key = info ? JSON.stringify([info.preset, info.options || {}]) : "";
  if (el.dataset.key === key) return;
  el.dataset.key = key;
  const preset = info && app.presets.find((p) => p.name === info.preset);
  fill(el, info ? [
    preset && preset.description ? h("p", { class: "preset-about" }, preset.description) : null,
    optionList({ ...presetOptions(info.preset), ...(info.options || {}) }),
  ] : []);
}

// Where a seat sits for the one who creates the table (seat 0): four-handed, seat 2 is the partner.
function seatWords(seat, players) {
  const where = players === 4 ? ["you", "on your left", "your partner, opposite", "on your right"][seat] : players === 3 ? ["you", "on your left", "on your right"][seat] : ["you", "opposite"][seat];
  return `Seat ${seat} (${where})`;
}

function drawCreateForm() {
  const game = $("create-game").value;
  const select = $("create-preset");
  const current = select.value;
  fill(select, app.presets.filter((p) => p.game === game).map((p) => h("option", { value: p.name, selected: p.name === current }, `${p.name} (${p.players} players)`)));
  const preset = app.presets.find((p) => p.name === select.value);
  if (!preset) return;
  // Which rules source the preset plays (or that it plays house rules), before anyone sits.
  const about = preset.description ? [h("p", { class: "preset-about" }, preset.description)] : [];
  fill($("preset-options"), [...about, optionList(preset.options)]); // a paragraph, then the list
  $("create-target").value = String(preset.options.target_score ?? "");
  fill($("create-bots"), h("legend", {}, "Built-in bots in the other seats"),
    [...Array(preset.players).keys()].slice(1).map((seat) =>
      h("label", { class: "check" }, h("input", { type: "checkbox", value: String(seat), checked: true, dataset: { key: `bot-${seat}` } }), seatWords(seat, preset.players))));
}

// ---------------------------------------------------------------- wiring

function wire() {
  setUpReplays(journal, () => {
    show(app.table ? "table-screen" : app.user ? "lobby-screen" : "login-screen");
    render(); // the table went on while the replays were on the screen
  }, (message) => (app.conn ? app.conn.request(message) : Promise.resolve(null))); // the hand review asks the server
  setUpProfile((message) => app.conn.request(message)); // the lobby's player statistics (profile.js)
  setUpEvents({
    request: (message) => app.conn.request(message),
    user: () => app.user,
    show,
    notice,
    presets: () => app.presets,
    atTable: () => Boolean(app.table),
    watch: (tableId) => watch(tableId),
  });
  $("past-games").addEventListener("click", () => {
    show("replay-screen");
    openPastGames();
  });
  $("game-over-replay").addEventListener("click", () => {
    app.gameOverDismissed = true; // back from the replay, the table is as it was left
    show("replay-screen");
    openPastGames(app.table ? app.table.table : null);
  });
  $("login-form").addEventListener("submit", (event) => {
    event.preventDefault();
    register($("login-name").value.trim());
  });
  $("guest").addEventListener("click", () => guest($("login-name").value.trim()));
  $("token-login").addEventListener("click", () => tokenLogin($("login-token").value.trim()));
  $("logout").addEventListener("click", () => {
    app.conn.token = null;
    session.clear();
    location.reload();
  });
  $("create-game").addEventListener("change", drawCreateForm);
  $("create-preset").addEventListener("change", drawCreateForm);
  $("create-form").addEventListener("submit", (event) => {
    event.preventDefault();
    createTable();
  });
  $("code-form").addEventListener("submit", (event) => {
    event.preventDefault();
    sit($("code-table").value.trim(), null, $("code-code").value.trim());
  });
  $("code-watch").addEventListener("click", () => watch($("code-table").value.trim(), $("code-code").value.trim()));
  $("leave").addEventListener("click", leave);
  $("pace").value = app.pace;
  $("pace").addEventListener("change", () => {
    app.pace = PACES[$("pace").value] ? $("pace").value : "normal";
    storage.setItem("spades.pace", app.pace);
  });
  $("four-colour").checked = app.fourColour;
  document.body.classList.toggle("four-colour", app.fourColour);
  $("four-colour").addEventListener("change", () => {
    app.fourColour = $("four-colour").checked;
    storage.setItem("spades.fourColour", app.fourColour ? "yes" : "no");
    document.body.classList.toggle("four-colour", app.fourColour);
  });
  $("last-trick").addEventListener("click", () => {
    app.reviewLast = !app.reviewLast;
    render();
  });
  $("sheet-open").addEventListener("click", () => {
    app.sheetOpen = true;
    render();
    requestAnimationFrame(() => $("sheet-close").focus());
  });
  $("sheet-close").addEventListener("click", closeSheet);
  $("invite").addEventListener("click", copyInvite);
  $("play-again").addEventListener("click", playAgain);
  $("game-over-keep").addEventListener("click", () => {
    app.gameOverDismissed = true;
    render();
  });
  document.addEventListener("click", (event) => {
    if (event.target && event.target.id === "result-close" && app.table && app.table.lastScored) {
      app.summaryClosed = app.table.lastScored.hand_number;
      render();
    }
  });
  $("game-over-close").addEventListener("click", async () => {
    app.gameOverDismissed = true;
    const state = app.table;
    const eventId = state ? eventOfTable(state.table) : null;
    if (state) await app.conn.request({ t: "leave", table: state.table });
    // Another table took the screen while the server answered (an event's next round seats the
    // player by itself): that one stays.
    if (app.table !== state) return;
    leaveScreen();
    if (eventId) openEvent(eventId); // an event's table: back to the event, its next round to come
  });
  for (const [form, input, scope] of [["lobby-chat-form", "lobby-chat-input", "lobby"], ["table-chat-form", "table-chat-input", "table"]]) {
    $(form).addEventListener("submit", async (event) => {
      event.preventDefault();
      const text = $(input).value.trim();
      if (!text) return;
      const msg = { t: "chat", scope, text };
      if (scope === "table") {
        if (!app.table) return;
        msg.table = app.table.table;
      }
      if (await ask(msg, ["ok"])) $(input).value = "";
    });
  }
  document.addEventListener("keydown", (event) => {
    const active = document.activeElement;
    if (event.key === "Escape" && app.sheetOpen) {
      closeSheet();
      return;
    }
    if (event.key === "Escape") {
      app.selected.clear();
      render();
      return;
    }
    if (!active || !active.closest || !active.closest("#hand")) return;
    if (event.key !== "ArrowLeft" && event.key !== "ArrowRight") return;
    const cards = [...document.querySelectorAll("#hand .card:not(:disabled)")];
    const i = cards.indexOf(active);
    const next = cards[i + (event.key === "ArrowRight" ? 1 : -1)];
    if (next) {
      next.focus();
      event.preventDefault();
    }
  });
  $("hand").addEventListener("focusin", (event) => {
    if (!event.target.classList.contains("card")) return;
    $("hand").dataset.lastFocus = event.target.dataset.key;
    rovingTabStop($("hand"));
  });
  setInterval(() => {
    if (app.table) tickClocks(app.table, clockNow());
  }, 250);
  window.addEventListener("resize", render);
  for (const [id, key, field] of [["autoplay", "spades.autoplay", "autoplay"], ["turn-alert", "spades.turnAlert", "turnAlert"]]) {
    $(id).checked = app[field];
    $(id).addEventListener("change", () => {
      app[field] = $(id).checked;
      storage.setItem(key, app[field] ? "yes" : "no");
      if (field === "autoplay" && app.table) forcedCard(app.table);
    });
  }
  document.addEventListener("visibilitychange", () => {
    if (!document.hidden) stopBlinking();
    else if (app.turnAlert && app.table && app.table.turn) blinkTitle(); // left while it is our turn
    if (document.hidden && app.table) {
      app.table.held = null; // a hidden tab draws nothing: let what waits through
      app.holdUntil = 0;
    }
    drain();
  });
}

// The address a friend opens to sit at this table (its join code in it, for a private table).
function inviteLink(tableId) {
  const params = new URLSearchParams({ table: tableId });
  if (app.codes[tableId]) params.set("code", app.codes[tableId]);
  return `${location.origin}${location.pathname}#${params}`;
}

async function copyInvite(event) {
  event.preventDefault();
  const link = $("invite").dataset.link;
  try {
    await navigator.clipboard.writeText(link);
    notice(`Invite link copied: ${link}`);
  } catch {
    notice(`Invite link: ${link}`); // no clipboard (plain http from another machine): shown to copy
  }
}

// Play again: a new table with this one's game, rules, options and bots; you sit where you sat.
async function playAgain() {
  const state = app.table;
  const info = state && app.tables.get(state.table);
  if (!info) return;
  const bots = info.seats.filter((s) => s.bot).map((s) => s.seat);
  const kind = (info.seats.find((s) => s.bot && s.bot_kind) || {}).bot_kind; // the same bots again
  const seat = state.seat ?? 0;
  await app.conn.request({ t: "leave", table: state.table });
  leaveScreen();
  const again = { t: "create_table", game: info.game, preset: info.preset, options: info.options || {}, bots, private: Boolean(info.private), sit: seat, ...watchingOptions(info) };
  if (kind) again.bot = kind;
  const reply = await ask(again, ["table_created"]);
  if (reply && reply.code) app.codes[reply.table] = reply.code;
}

function closeSheet() {
  app.sheetOpen = false;
  render();
  $("sheet-open").focus();
}

async function start() {
  wire();
  try {
    const response = await fetch("presets.json");
    const served = await response.json();
    app.presets = served.presets;
    app.optionDocs = served.options || {};
    app.optionOrder = served.option_order || [];
  } catch {
    app.presets = [{ name: "standard", game: "spades", players: 4, options: {} }, { name: "hearts", game: "hearts", players: 4, options: {} }];
  }
  drawCreateForm();
  connect();
}

start();
