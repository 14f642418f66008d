// Events (issue 43) on the page: the lobby's list, an event's view (entrants, the round tables,
// the standings and, for a knockout, the bracket), Register / Withdraw / Play, a host's Announce
// form, and the `event_round` notice. The server pairs, seats and scores (docs/events.md); this
// module only words what it said. The pure functions at the top are what the unit tests call
// without a page (tests/web/js/events.test.mjs); the drawing and wiring below them need one.

import { $, fill, h } from "./dom.js";

export const FORMAT_WORDS = {
  swiss_pairs: "Swiss pairs",
  swiss_individual: "Swiss individual",
  knockout_pairs: "Knockout pairs",
};
export const STATUS_WORDS = {
  registering: "registration open",
  running: "running",
  finished: "finished",
  cancelled: "cancelled",
};
const ENTRY_WORDS = { people: "people only", bots: "bots only", both: "people and bots" };
const PAIRS_FORMATS = new Set(["swiss_pairs", "knockout_pairs"]);

// ---------------------------------------------------------------- words (pure)

// `#event/E1` -> "E1"; anything else -> null (the invite link's `#table=...` is not a route).
export function eventRoute(hash) {
  const match = /^#event\/(E\d{1,12})$/.exec(hash || "");
  return match ? match[1] : null;
}

export function eventHash(eventId) {
  return `#event/${eventId}`;
}

export function isPairs(format) {
  return PAIRS_FORMATS.has(format);
}

// A span of seconds in words: "45 s", "12 min", "3 h 5 min", "2 days".
export function spanWords(seconds) {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.round(s / 60)} min`;
  if (s < 86400) {
    const hours = Math.floor(s / 3600);
    const minutes = Math.round((s % 3600) / 60);
    return minutes ? `${hours} h ${minutes} min` : `${hours} h`;
  }
  const days = Math.round(s / 86400);
  return `${days} ${days === 1 ? "day" : "days"}`;
}

// When an event starts, from now (both unix seconds): "starts in 5 min", "started 2 h ago".
export function startWords(startsAt, now) {
  const delta = startsAt - now;
  return delta > 0 ? `starts in ${spanWords(delta)}` : `started ${spanWords(-delta)} ago`;
}

// One line for an EventSummary: what it is, how far it has got, when it starts.
export function summaryLine(summary, now) {
  const parts = [
    FORMAT_WORDS[summary.format] || summary.format,
    `${summary.rounds} ${summary.rounds === 1 ? "round" : "rounds"} of ${summary.boards} ${summary.boards === 1 ? "board" : "boards"}`,
    summary.preset,
    `${summary.entrants} ${summary.entrants === 1 ? "entrant" : "entrants"}`,
  ];
  if (summary.entry && summary.entry !== "both") parts.push(ENTRY_WORDS[summary.entry] || summary.entry);
  const status = STATUS_WORDS[summary.status] || summary.status;
  const opens = summary.registration_opens;
  if (summary.status === "registering" && opens && now < opens) parts.push(`registration opens in ${spanWords(opens - now)}, ${startWords(summary.starts_at, now)}`);
  else if (summary.status === "registering") parts.push(`${status}, ${startWords(summary.starts_at, now)}`);
  else if (summary.status === "running") parts.push(`${status}: round ${summary.round} of ${summary.rounds}`);
  else parts.push(status);
  return parts.join(" · ");
}

// An entrant by its players: "ada & bob", a house entrant marked "(house)" as the ladder's are.
export function entrantName(entrant) {
  const names = (entrant.names || []).join(" & ") || entrant.key;
  return entrant.house && !names.endsWith("(house)") ? `${names} (house)` : names;
}

function byKey(info) {
  return new Map((info.entrants || []).map((e) => [e.key, e]));
}

function nameOf(entrants, key, names) {
  const entrant = entrants.get(key);
  if (entrant) return entrantName(entrant);
  return names && names.length ? names.join(" & ") : key;
}

function signed(n) {
  return n > 0 ? `+${n}` : n < 0 ? `−${-n}` : "0";
}

// The standings as the table shows them: the server's order and numbers, worded.
export function standingRows(info) {
  const entrants = byKey(info);
  return (info.standings || []).map((line) => ({
    key: line.key,
    place: String(line.place),
    name: nameOf(entrants, line.key, line.names),
    percent: `${Number(line.percent).toFixed(1)}%`,
    boards: String(line.boards),
    margin: signed(line.margin),
    forfeits: line.forfeits ? `${line.forfeits} ${line.forfeits === 1 ? "forfeit" : "forfeits"}` : "",
  }));
}

// A round's tables: who sits where (by seat 0..3, North-South being seats 0 and 2) and each
// board's points per side so far.
export function tableRows(round) {
  return (round.tables || []).map((table) => {
    const seats = table.seats || [];
    const ns = [seats[0], seats[2]].filter(Boolean).join(" & ");
    const ew = [seats[1], seats[3]].filter(Boolean).join(" & ");
    const ahead = (table.boards || []).reduce((sum, b) => sum + (b.ns - b.ew), 0);
    return {
      tableNo: table.table_no,
      table: table.table ?? null,
      ns,
      ew,
      boards: (table.boards || []).map((b) => `${b.board}: ${b.ns}–${b.ew}`),
      played: (table.boards || []).length,
      margin: (table.boards || []).length ? `North-South ${signed(ahead)}` : "",
    };
  });
}

// A knockout round's name, counted from the final back.
export function roundTitle(roundNo, rounds) {
  const left = rounds - roundNo;
  if (left === 0) return "Final";
  if (left === 1) return "Semi-finals";
  if (left === 2) return "Quarter-finals";
  return `Round ${roundNo}`;
}

// The bracket: a column a round, each match with its two sides (names, boards won, the winner),
// rounds not yet paired held open by as many places as they will have matches.
export function bracket(info) {
  const summary = info.summary;
  const entrants = byKey(info);
  const total = Math.max(summary.rounds || 0, ...(info.matches || []).map((m) => m.round));
  const firstRoundMatches = 2 ** Math.max(0, total - 1);
  const columns = [];
  for (let r = 1; r <= total; r += 1) {
    const played = (info.matches || []).filter((m) => m.round === r).sort((a, b) => a.table_no - b.table_no);
    const expected = Math.max(1, Math.ceil(firstRoundMatches / 2 ** (r - 1)));
    const matches = played.map((m) => ({
      tableNo: m.table_no,
      decided: m.winner !== null && m.winner !== undefined,
      sides: [m.a, m.b].map((key, i) => ({
        key,
        name: nameOf(entrants, key),
        won: i === 0 ? m.won_a : m.won_b,
        winner: m.winner === key,
      })),
    }));
    for (let i = matches.length; i < expected; i += 1) matches.push({ tableNo: i + 1, decided: false, sides: null });
    columns.push({ round: r, title: roundTitle(r, total), matches });
  }
  return { columns };
}

// This account's entry in the event (not withdrawn), or null.
export function myEntrant(info, user) {
  if (!user) return null;
  return (info.entrants || []).find((e) => !e.withdrawn && (e.names || []).includes(user)) || null;
}

// What this account may do at this event now (Unix seconds): the buttons the view offers.
export function eventActions(info, user, checkedIn, now = Date.now() / 1000) {
  const status = info.summary.status;
  if (status !== "registering" && status !== "running") return [];
  const mine = myEntrant(info, user);
  const host = user && info.summary.host === user ? ["cancel"] : [];
  const opens = info.summary.registration_opens;
  const open = status === "registering" && !(opens && now < opens);
  if (!mine) return [...(open ? ["register"] : []), ...host];
  return [...(checkedIn ? ["withdraw"] : ["play", "withdraw"]), ...host];
}

// The `event_round` notice in a sentence: "Round 2: table t5, partner bob, starts in 10 s".
// `left`: the seconds still to wait (the notice's `starts_in` less the time since it came).
export function roundNotice(msg, left = msg.starts_in) {
  const names = msg.names || [];
  const partner = names.length === 4 ? names[(msg.seat + 2) % 4] : null;
  const parts = [`Round ${msg.round}: table ${msg.table}`];
  if (partner) parts.push(`partner ${partner}`);
  parts.push(left > 0.5 ? `starts in ${Math.ceil(left - 0.5)} s` : "starting now");
  return parts.join(", ");
}

// The final standings' sentence for this account, from `event_ended`.
export function endedWords(msg, user) {
  if (msg.cancelled) return `Event ${msg.event} was cancelled.`;
  const mine = (msg.standings || []).find((line) => (line.names || []).includes(user));
  const place = mine ? `: you placed ${ordinal(mine.place)} with ${Number(mine.percent).toFixed(1)}%` : "";
  return `Event ${msg.event} is over${place}.`;
}

export function ordinal(n) {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? "th" : { 1: "st", 2: "nd", 3: "rd" }[n % 10] || "th";
  return `${n}${suffix}`;
}

// The Announce form's fields as an `event_create` request, or the sentence saying what is wrong.
// `fields.start`: the start as a Date's milliseconds (NaN when not given); `now`: milliseconds.
export function announceRequest(fields, now) {
  const name = String(fields.name || "").trim();
  if (!name) return { error: "Give the event a name." };
  if (!FORMAT_WORDS[fields.format]) return { error: "Choose a format." };
  // A knockout's rounds follow from its field (the server counts them: 0 asks it to).
  const knockout = fields.format === "knockout_pairs";
  const rounds = knockout ? 0 : Number(fields.rounds);
  const boards = Number(fields.boards);
  if (!knockout && (!Number.isInteger(rounds) || rounds < 1)) return { error: "The number of rounds is a whole number, 1 or more." };
  if (!Number.isInteger(boards) || boards < 1) return { error: "The number of boards is a whole number, 1 or more." };
  if (!Number.isFinite(fields.start)) return { error: "Choose when the event starts." };
  if (fields.start <= now) return { error: "The start time has passed: choose a later one." };
  const request = { t: "event_create", name, format: fields.format, rounds, boards, starts_at: fields.start / 1000 };
  if (fields.preset) request.preset = fields.preset;
  if (fields.entry && fields.entry !== "both") request.entry = fields.entry;
  return { request };
}

// The value of a `datetime-local` input (local time, to the second) for a time in milliseconds.
export function localInputValue(ms) {
  const d = new Date(ms);
  const two = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())}T${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}

// ---------------------------------------------------------------- the page

// What the page tells this module: `request(msg)` -> reply, `user()`, `show(screen)`,
// `notice(text)`, `presets()` (the served presets), `atTable()` (a table is on screen),
// `watch(table)` (watch a table of a round).
const ctx = { request: null, user: null, show: null, notice: null, presets: null, atTable: null, watch: null };
const session = typeof sessionStorage === "undefined" ? null : sessionStorage;
const PLAY_KEY = "spades.eventPlay"; // the event this tab checked in to play (for a reload)
const POLL_MS = 5000;

export const events = {
  list: [], // EventSummary, from the last `events` reply
  shown: null, // the event id on the event screen
  info: null, // its last `event_info`
  playing: null, // the event this connection checked in to (`event_play`)
  notice: null, // { msg, at }: the last `event_round`, for the banner's countdown
  ended: null, // the last `event_ended` seen
  eventTables: new Set(), // tables the server seated us at for an event
  pollTimer: null,
  bannerTimer: null,
};

function now() {
  return Date.now() / 1000;
}

async function ask(msg) {
  const reply = await ctx.request(msg);
  if (!reply) {
    ctx.notice("Not connected; trying again…");
    return null;
  }
  if (reply.t === "error") {
    ctx.notice(reply.message || reply.code);
    return null;
  }
  ctx.notice("");
  return reply;
}

// ---- the lobby's list

export async function refreshList() {
  const reply = await ctx.request({ t: "events" });
  if (reply && reply.t === "event_list") events.list = reply.events || [];
  drawList();
}

function drawList() {
  const el = $("event-list");
  if (!el) return;
  const shown = events.list.filter((e) => e.status !== "cancelled");
  fill(el, shown.length ? h("ul", { class: "event-items" }, shown.map((e) => h("li", { class: "event-item", dataset: { event: e.event } },
    h("a", { href: eventHash(e.event), dataset: { key: `open-${e.event}` }, onclick: (click) => { click.preventDefault(); openEvent(e.event); } }, `${e.name} (${e.event})`),
    h("span", { class: "event-facts" }, summaryLine(e, now()))))) : h("p", { class: "empty" }, "No events announced yet."));
}

// ---- the event screen

export async function openEvent(eventId) {
  events.shown = eventId;
  if (location.hash !== eventHash(eventId)) history.replaceState(null, "", eventHash(eventId));
  ctx.show("event-screen");
  if (!events.info || events.info.summary.event !== eventId) fill($("event-screen"), h("p", {}, `Event ${eventId}: loading…`));
  await refreshEvent();
  schedulePoll();
}

export function closeEvent() {
  events.shown = null;
  events.info = null;
  clearTimeout(events.pollTimer);
  if (eventRoute(location.hash)) history.replaceState(null, "", location.pathname + location.search);
}

async function refreshEvent() {
  const eventId = events.shown;
  if (!eventId) return;
  const reply = await ctx.request({ t: "event_show", event: eventId });
  if (events.shown !== eventId) return;
  if (!reply) return;
  if (reply.t === "error") {
    events.info = null;
    fill($("event-screen"), backButton(), h("p", { class: "error", role: "alert" }, reply.message || reply.code));
    return;
  }
  if (reply.t === "event_info") {
    events.info = reply;
    drawEvent();
  }
}

// While the event screen shows a live event, it is read again every few seconds: the server tells
// an entrant of its own round (`event_round`), not everyone of every board.
function schedulePoll() {
  clearTimeout(events.pollTimer);
  events.pollTimer = setTimeout(async () => {
    const live = events.info && ["registering", "running"].includes(events.info.summary.status);
    if (events.shown && !$("event-screen").hidden && !document.hidden && live) await refreshEvent();
    if (events.shown) schedulePoll();
  }, POLL_MS);
}

function backButton() {
  return h("div", { class: "buttons" }, h("button", { type: "button", class: "secondary", id: "event-back", onclick: backToLobby }, "Back to the lobby"));
}

function backToLobby() {
  closeEvent();
  ctx.show("lobby-screen");
  refreshList();
}

function drawEvent() {
  const info = events.info;
  if (!info) return;
  const s = info.summary;
  const user = ctx.user();
  const mine = myEntrant(info, user);
  const checkedIn = events.playing === s.event;
  const screen = $("event-screen");
  fill(screen,
    backButton(),
    h("h1", { id: "event-title" }, `${s.name} (${s.event})`),
    h("p", { id: "event-summary" }, summaryLine(s, now())),
    h("p", { class: "hint" }, s.registration_opens && s.status === "registering" && now() < s.registration_opens
      ? `Registration opens ${new Date(s.registration_opens * 1000).toLocaleString()}; the event starts ${new Date(s.starts_at * 1000).toLocaleString()}.`
      : `Starts ${new Date(s.starts_at * 1000).toLocaleString()}.`),
    h("p", { id: "event-me", class: "event-me" }, mine
      ? `You are entered${mine.names.length > 1 ? ` (${entrantName(mine)})` : ""}${checkedIn ? " and checked in: the server seats you at each round's table." : "; press Play to be seated when your round starts."}`
      : s.status === "registering" ? "You are not entered." : ""),
    actionButtons(info, user, checkedIn),
    s.format === "knockout_pairs" ? bracketView(info) : null,
    standingsView(info),
    roundsView(info),
    entrantsView(info));
}

function actionButtons(info, user, checkedIn) {
  const actions = eventActions(info, user, checkedIn, now());
  if (!actions.length) return null;
  const eventId = info.summary.event;
  const partner = actions.includes("register") && isPairs(info.summary.format)
    ? h("label", {}, "Partner (optional) ", h("input", { id: "event-partner", maxlength: "32", autocapitalize: "off", spellcheck: "false", placeholder: "their name" }))
    : null;
  const button = (action) => {
    if (action === "register") return h("button", { type: "button", id: "event-register", dataset: { key: "event-register" }, onclick: () => register(eventId) }, "Register");
    if (action === "cancel") return h("button", { type: "button", class: "risky", id: "event-cancel", dataset: { key: "event-cancel" }, onclick: () => cancel(eventId) }, "Cancel the event");
    if (action === "withdraw") return h("button", { type: "button", class: "secondary", id: "event-withdraw", dataset: { key: "event-withdraw" }, onclick: () => withdraw(eventId) }, "Withdraw");
    return h("button", { type: "button", id: "event-play", dataset: { key: "event-play" }, onclick: () => play(eventId) }, "Play");
  };
  return h("div", { class: "panel event-actions" }, partner, h("div", { class: "buttons" }, actions.map(button)));
}

function standingsView(info) {
  const rows = standingRows(info);
  return h("section", { class: "panel", "aria-labelledby": "event-standings-title" },
    h("h2", { id: "event-standings-title" }, info.summary.status === "finished" ? "Final standings" : "Standings"),
    rows.length ? h("table", { class: "standings", id: "event-standings" },
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "#"), h("th", { scope: "col" }, "Entrant"), h("th", { scope: "col" }, "%"),
        h("th", { scope: "col" }, "Boards"), h("th", { scope: "col" }, "Margin"))),
      h("tbody", {}, rows.map((row) => h("tr", { dataset: { entrant: row.key }, class: myEntrant(info, ctx.user())?.key === row.key ? "mine" : null },
        h("td", {}, row.place),
        h("th", { scope: "row" }, row.name, row.forfeits ? h("span", { class: "forfeits" }, ` · ${row.forfeits}`) : null),
        h("td", {}, row.percent), h("td", {}, row.boards), h("td", {}, row.margin)))))
      : h("p", { class: "empty" }, "No boards played yet."));
}

function roundsView(info) {
  const rounds = [...(info.rounds || [])].sort((a, b) => b.round - a.round); // the latest first
  return h("section", { class: "panel", "aria-labelledby": "event-rounds-title" },
    h("h2", { id: "event-rounds-title" }, "Rounds"),
    rounds.length ? rounds.map((round) => h("details", { class: "event-round", open: round.round === info.summary.round, dataset: { round: String(round.round) } },
      h("summary", {}, `Round ${round.round} · ${round.status}`),
      h("ul", { class: "event-tables" }, tableRows(round).map((row) => h("li", {},
        h("span", { class: "event-table-head" }, `Table ${row.tableNo}${row.table ? ` (${row.table})` : ""}`),
        h("span", {}, `North-South: ${row.ns || "–"}`),
        h("span", {}, `East-West: ${row.ew || "–"}`),
        row.played ? h("span", { class: "hint" }, `boards ${row.boards.join(", ")} · ${row.margin}`) : null,
        row.table && round.status !== "finished" ? h("button", { type: "button", class: "secondary", dataset: { key: `watch-${row.table}` }, onclick: () => ctx.watch(row.table) }, `Watch table ${row.tableNo}`) : null)))))
      : h("p", { class: "empty" }, "The first round is paired when the event starts."));
}

function entrantsView(info) {
  const list = info.entrants || [];
  return h("details", { class: "panel" },
    h("summary", {}, `Entrants (${list.filter((e) => !e.withdrawn).length})`),
    h("ul", { class: "event-entrants" }, list.map((e) => h("li", {}, entrantName(e), e.withdrawn ? " (withdrawn)" : ""))));
}

function bracketView(info) {
  const { columns } = bracket(info);
  return h("section", { class: "panel", "aria-labelledby": "event-bracket-title" },
    h("h2", { id: "event-bracket-title" }, "Bracket"),
    // A box of its own that scrolls sideways on a phone; focusable, so the keys scroll it too.
    h("div", { class: "bracket", id: "event-bracket", role: "region", "aria-label": "Bracket, a column a round", tabindex: "0" },
      columns.map((column) => h("div", { class: "bracket-round", dataset: { round: String(column.round) } },
        h("h3", { class: "bracket-title", id: `bracket-round-${column.round}` }, column.title),
        h("ol", { class: "bracket-matches", "aria-labelledby": `bracket-round-${column.round}` }, column.matches.map((match) => h("li", { class: `bracket-match${match.decided ? " decided" : ""}` },
          match.sides ? match.sides.map((side) => h("div", { class: `bracket-side${side.winner ? " winner" : ""}`, dataset: { entrant: side.key } },
            h("span", { class: "bracket-name" }, side.name, side.winner ? h("span", { class: "sr-only" }, " (winner)") : null),
            h("span", { class: "bracket-won" }, String(side.won), h("span", { class: "sr-only" }, side.won === 1 ? " board won" : " boards won"))))
            : h("div", { class: "bracket-side empty" }, "to be decided"))))))));
}

// ---- the buttons

async function register(eventId) {
  const partner = $("event-partner") ? $("event-partner").value.trim() : "";
  const msg = { t: "event_register", event: eventId };
  if (partner) msg.partner = partner;
  if (await ask(msg)) await refreshEvent();
}

async function withdraw(eventId) {
  const running = events.info && events.info.summary.status === "running";
  if (running && !confirm("Withdraw? Your remaining rounds are forfeited.")) return;
  if (await ask({ t: "event_withdraw", event: eventId })) {
    if (events.playing === eventId) stopPlaying();
    await refreshEvent();
  }
}

async function cancel(eventId) {
  if (!confirm("Cancel this event? Its tables close and it cannot be restarted.")) return;
  if (await ask({ t: "event_cancel", event: eventId })) await refreshEvent();
}

export async function play(eventId) {
  if (await ask({ t: "event_play", event: eventId })) {
    events.playing = eventId;
    if (session) session.setItem(PLAY_KEY, eventId);
    drawEvent();
  }
}

function stopPlaying() {
  events.playing = null;
  if (session) session.removeItem(PLAY_KEY);
}

// ---- the Announce form

async function announce(event) {
  event.preventDefault();
  const value = $("event-start").value;
  const fields = {
    name: $("event-name").value,
    format: $("event-format").value,
    rounds: $("event-rounds").value,
    boards: $("event-boards").value,
    preset: $("event-preset").value,
    entry: $("event-entry").value,
    start: value ? new Date(value).getTime() : NaN,
  };
  const { request, error } = announceRequest(fields, Date.now());
  const said = $("event-form-error");
  said.textContent = error || "";
  said.hidden = !error;
  if (error) return;
  const reply = await ctx.request(request);
  if (!reply || reply.t === "error") {
    said.textContent = reply ? reply.message || reply.code : "Not connected: try again once the page is back.";
    said.hidden = false;
    return;
  }
  $("event-announce").open = false;
  if (reply.t === "event_info") {
    events.info = reply;
    await openEvent(reply.summary.event);
  }
}

// A knockout plays as many rounds as its bracket needs: the Rounds field is for a Swiss.
function formatChosen() {
  const knockout = $("event-format").value === "knockout_pairs";
  $("event-rounds").disabled = knockout;
  $("event-rounds-hint").hidden = !knockout;
}

function drawAnnounceForm() {
  formatChosen();
  const select = $("event-preset");
  const current = select.value || "standard";
  const presets = ctx.presets().filter((p) => p.game === "spades" && p.players === 4);
  fill(select, presets.map((p) => h("option", { value: p.name, selected: p.name === current }, p.name)));
  if (!$("event-start").value) $("event-start").value = localInputValue(Math.ceil(Date.now() / 300000) * 300000 + 600000);
}

// ---- the notices

function drawBanner() {
  clearInterval(events.bannerTimer);
  const banner = $("event-banner");
  const n = events.notice;
  const ended = events.ended;
  if (!n && !ended) {
    banner.hidden = true;
    return;
  }
  banner.hidden = false;
  if (n) {
    const tick = () => {
      const left = n.msg.starts_in - (performance.now() - n.at) / 1000;
      $("event-banner-live").textContent = roundNotice(n.msg, left);
      // Gone a while after the round has started: the table shows the rest.
      if (left < -30) {
        events.notice = null;
        drawBanner();
      }
    };
    fill(banner,
      h("span", { class: "sr-only" }, `${roundNotice(n.msg)}.`), // said once; the countdown is not
      h("span", { id: "event-banner-live", "aria-hidden": "true" }),
      h("button", { type: "button", class: "secondary", id: "event-banner-open", onclick: () => openEvent(n.msg.event) }, "The event"));
    tick();
    events.bannerTimer = setInterval(tick, 1000);
  } else {
    fill(banner,
      h("span", { id: "event-banner-text" }, endedWords(ended, ctx.user())),
      h("button", { type: "button", class: "secondary", id: "event-banner-standings", onclick: () => openEvent(ended.event) }, "See the standings"),
      h("button", { type: "button", class: "link", "aria-label": "Close", onclick: () => { events.ended = null; drawBanner(); } }, "×"));
  }
}

// A server notice about events: true when it was one.
export function eventNotice(msg) {
  if (msg.t === "event_round") {
    events.notice = { msg, at: performance.now() };
    events.ended = null;
    events.playing = msg.event; // the server seats only checked-in entrants
    if (session) session.setItem(PLAY_KEY, msg.event);
    events.eventTables.add(msg.table);
    drawBanner();
    if (events.shown === msg.event) refreshEvent();
    return true;
  }
  if (msg.t === "event_ended") {
    events.notice = null;
    events.ended = msg;
    if (events.playing === msg.event) stopPlaying();
    drawBanner();
    if (events.shown === msg.event) refreshEvent();
    else refreshList();
    return true;
  }
  return false;
}

// The table is one the server seated us at for an event (its game over: back to the event, not
// *Play again*).
export function eventOfTable(tableId) {
  if (!events.eventTables.has(tableId)) return null;
  return events.notice?.msg.event || events.ended?.event || events.playing || events.shown;
}

// ---- wiring

// After a login (the first, or a reconnect): check in again where this tab had (a check-in lasts
// while its connection does), read the list, and open the event the address names.
export async function loggedIn() {
  const again = session ? session.getItem(PLAY_KEY) : null;
  if (again) {
    const reply = await ctx.request({ t: "event_play", event: again });
    if (reply && reply.t === "ok") events.playing = again;
    else stopPlaying();
  }
  const routed = eventRoute(location.hash);
  if (routed && !ctx.atTable()) await openEvent(routed);
  else refreshList();
}

export function setUpEvents(page) {
  Object.assign(ctx, page);
  $("event-form").addEventListener("submit", announce);
  $("event-format").addEventListener("change", formatChosen);
  $("event-announce").addEventListener("toggle", () => {
    if ($("event-announce").open) drawAnnounceForm();
  });
  $("event-refresh").addEventListener("click", refreshList);
  window.addEventListener("hashchange", () => {
    const routed = eventRoute(location.hash);
    if (routed && ctx.user()) openEvent(routed);
  });
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && !$("event-screen").hidden && !event.defaultPrevented) backToLobby();
  });
}
