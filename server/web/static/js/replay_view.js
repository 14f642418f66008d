// The "Past games" screen and the replay it opens: the games this browser kept (journal.js) and
// any `.jsonl` of hand records opened from a file, stepped through hand by hand and trick by trick
// (buttons, the arrow keys, a swipe), each hand's deal re-checked (replay.js). It needs no
// connection: it works logged out, and with the server gone.

import { cardFace, cardText, displayOrder } from "./cards.js";
import { $, fill, h } from "./dom.js";
import { cardElement } from "./table_view.js";
import { checkRecord, checkRecordShape, Cursor, gameSummary, groupGames, handOf, MAX_FILE_BYTES, parseJsonl, position, RecordError, trickText } from "./replay.js";
import { Verdict } from "./verify.js";
import { MAX_GAMES } from "./journal.js";
import { ReviewRun, reviewLines } from "./review.js";

const view = {
  journal: null,
  onClose: null,
  request: null, // sends a request to the server, resolves with its reply (null: not connected)
  fileGames: [], // games read from a file this visit: { name, records }
  error: "",
  replay: null, // { title, hands, cursor, checks: Map(hand index -> { verdict, lines }), review }
};

// What is drawn: the screen (`<section id="replay-screen">` in index.html) holds it and, made once
// and kept, the live region that says each step (a live region made afresh with its text in it is
// not read out).
function root() {
  const screen = $("replay-screen");
  let body = $("replay-body");
  if (!body) {
    body = h("div", { id: "replay-body" });
    screen.replaceChildren(body, h("div", { id: "replay-announce", class: "sr-only", "aria-live": "polite", "aria-atomic": "true" }));
  }
  return body;
}

function say(text) {
  root();
  $("replay-announce").textContent = text;
}

// `request`: the page's connection's (the hand review asks the server); the replays need none.
export function setUpReplays(journal, onClose, request = null) {
  view.journal = journal;
  view.onClose = onClose;
  view.request = request;
  document.addEventListener("keydown", keyPressed);
}

// The list; or, given a table, the replay of this browser's latest game at it (the game-over
// dialog's *Replay this game*), the list when it kept none.
export function openPastGames(table = null) {
  view.replay = null;
  view.error = "";
  const game = table ? view.journal.games().find((g) => g.table === table && g.server === view.journal.server) : null;
  if (game) {
    openReplay(`Table ${game.table} · ${dateText(game.started)}`, view.journal.records(game.id));
    return;
  }
  drawList();
  requestAnimationFrame(() => $("replay-back").focus());
}

// ---------------------------------------------------------------- the list

function dateText(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? "" : date.toLocaleString([], { dateStyle: "medium", timeStyle: "short" });
}

function scoreText(sides, scores) {
  return sides.map((side, i) => `${side} ${scores[i] ?? "?"}`).join(" · ");
}

function checkWord(verdict) {
  if (verdict === "verified") return "deals verified";
  if (verdict === "MISMATCH") return "DEAL CHECK FAILED";
  return "deals partly checked";
}

function drawList() {
  const games = view.journal.games();
  fill(root(),
    h("div", { class: "replay-bar" },
      h("button", { type: "button", id: "replay-back", class: "secondary", onclick: close }, "Back"),
      h("h1", {}, "Past games")),
    view.error ? h("p", { class: "replay-error", role: "alert" }, view.error) : null,
    h("p", { class: "hint" }, `The last ${MAX_GAMES} games this browser saw (as a player or watching) are kept here, in this browser only.`),
    h("label", { class: "replay-file" }, "Replay a file of hand records (.jsonl, from spades-server export or spades ladder records) ",
      h("input", { type: "file", id: "replay-file", accept: ".jsonl,.json,.txt,application/jsonl,application/json", onchange: fileChosen })),
    view.fileGames.length ? h("section", { "aria-labelledby": "replay-file-title" },
      h("h2", { id: "replay-file-title" }, "From the file"),
      h("ul", { class: "replay-games" }, view.fileGames.map((g, i) => gameItem(
        { key: `file-${i}`, title: `${g.name}: game ${g.gameId}${g.half ? ` (half ${g.half})` : ""}`, ...summaryLine(g.records) },
        () => openReplay(`${g.gameId} (from ${g.name})`, g.records))))) : null,
    h("section", { "aria-labelledby": "replay-kept-title" },
      h("h2", { id: "replay-kept-title" }, "Kept in this browser"),
      games.length ? h("ul", { class: "replay-games", id: "replay-kept" }, games.map((g) => gameItem(
        {
          key: g.id, title: `Table ${g.table} · ${dateText(g.started)}`,
          players: (g.names || []).join(", "), score: scoreText(g.sides || [], g.scores || []),
          detail: `${g.hands} hand${g.hands === 1 ? "" : "s"}${g.finished ? "" : " (not finished)"} · ${checkWord(g.verified)}`,
          download: g.id,
        },
        () => openReplay(`Table ${g.table} · ${dateText(g.started)}`, view.journal.records(g.id)))))
        : h("p", { class: "empty" }, "No games yet: a game you play or watch on this page is kept here when its first hand ends.")));
}

function summaryLine(records) {
  const s = gameSummary(records);
  return { players: s.names.join(", "), score: scoreText(s.sides, s.scores), detail: `${s.hands} hand${s.hands === 1 ? "" : "s"}` };
}

function gameItem(game, open) {
  return h("li", { class: "replay-game", dataset: { key: game.key } },
    h("div", { class: "replay-game-title" }, game.title),
    h("div", {}, game.players),
    h("div", { class: "replay-score" }, game.score),
    h("div", { class: "hint" }, game.detail),
    h("div", { class: "buttons" },
      h("button", { type: "button", class: "replay-open", onclick: open }, "Replay"),
      game.download ? h("button", { type: "button", class: "secondary", onclick: () => download(game.download) }, "Save as .jsonl") : null,
      game.download ? h("button", { type: "button", class: "secondary", onclick: () => forget(game.download) }, "Delete") : null));
}

function download(id) {
  const url = URL.createObjectURL(new Blob([view.journal.jsonl(id)], { type: "application/jsonl" }));
  const link = h("a", { href: url, download: `${id}.jsonl` });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

function forget(id) {
  if (!confirm("Delete this game from this browser?")) return;
  view.journal.remove(id);
  drawList();
}

async function fileChosen(event) {
  const file = event.target.files && event.target.files[0];
  if (!file) return;
  try {
    if (file.size > MAX_FILE_BYTES) throw new RecordError(`${file.name} is ${Math.round(file.size / 1048576)} MB: at most ${MAX_FILE_BYTES / 1048576} MB is read`, "too_large");
    const games = groupGames(parseJsonl(await file.text()));
    view.fileGames = games.map((g) => ({ ...g, name: file.name }));
    view.error = "";
    if (games.length === 1) {
      openReplay(`${games[0].gameId} (from ${file.name})`, games[0].records);
      return;
    }
  } catch (error) {
    view.error = error instanceof RecordError ? `${file.name} cannot be replayed: ${error.message}` : `${file.name} cannot be read: ${error.message}`;
  }
  drawList();
  if (view.error) requestAnimationFrame(() => $("replay-file").focus());
}

// ---------------------------------------------------------------- the replay

function openReplay(title, records) {
  let hands;
  try {
    // A file's records were checked as they were read; this browser's own are checked here (its
    // storage may have been edited, or written by another version of the page).
    if (!records.length) throw new RecordError("no hands were kept");
    records.forEach((record, i) => checkRecordShape(record, `hand ${i + 1}`));
    hands = records.map(handOf);
  } catch (error) {
    view.error = `${title} cannot be replayed: ${error.message}`;
    drawList();
    return;
  }
  view.replay = { title, hands, cursor: new Cursor(hands), checks: new Map(), review: null };
  const replay = view.replay;
  // The double-dummy review, when asked for (the server's: review.js), redrawn as it goes.
  let said = "";
  replay.review = new ReviewRun(hands, (message) => (view.request ? view.request(message) : Promise.resolve(null)), () => {
    if (view.replay !== replay) return;
    drawReplay(false);
    const status = replay.review.status();
    if (status !== said && !status.startsWith("Reviewing hand")) say(status); // each step is not read out: its end is
    said = status;
  });
  // Each hand's deal, re-checked from its seed (async: the line says "checking" until then).
  hands.forEach((hand, i) => {
    checkRecord(hand.record)
      .then((result) => replay.checks.set(i, result))
      .catch((error) => replay.checks.set(i, { verdict: Verdict.UNCHECKED, lines: [`not checked here: ${error.message}`] }))
      .finally(() => { if (view.replay === replay) drawReplay(false); });
  });
  drawReplay(false);
  requestAnimationFrame(() => $("replay-next").focus());
}

function step(move) {
  const replay = view.replay;
  if (!replay || !replay.cursor[move]()) return;
  drawReplay(true);
}

const MOVES = { "replay-first": "previousHand", "replay-prev": "previousTrick", "replay-next": "nextTrick", "replay-last": "nextHand" };

function nav() {
  const c = view.replay.cursor;
  const button = (id, text, label, disabled) => h("button", { type: "button", id, class: "secondary", "aria-label": label, dataset: { key: id }, disabled, onclick: () => step(MOVES[id]) }, text);
  return h("div", { class: "replay-nav", role: "group", "aria-label": "Step through the game" },
    button("replay-first", "◀◀ Hand", "Previous hand (Page Up)", c.atStart),
    button("replay-prev", "◀ Trick", "Previous trick (Left arrow)", c.atStart),
    button("replay-next", "Trick ▶", "Next trick (Right arrow)", c.atEnd),
    button("replay-last", "Hand ▶▶", "Next hand (Page Down)", c.hand >= c.hands.length - 1));
}

function trickGrid(hand, trick) {
  const base = hand.seat ?? 0;
  const cells = [...Array(hand.players).keys()].map((seat) => {
    const play = trick ? trick.plays.find((p) => p.seat === seat) : null;
    const won = trick && trick.winner === seat;
    const led = trick && trick.leader === seat;
    return h("div", { class: `replay-cell at-${position(seat, hand.players, base)}${won ? " won" : ""}`, dataset: { seat: String(seat) } },
      play ? cardElement(play.card, { classes: won ? "winner" : "" }) : h("div", { class: "card empty", "aria-hidden": "true" }),
      h("div", { class: "replay-name" }, hand.names[seat], led ? " · led" : "", won ? " · won" : ""),
      // What the review says the card cost (review.js); empty until the hand is reviewed.
      play && play.note ? h("div", { class: `replay-note${play.cost > 0 ? " cost" : ""}` }, play.note) : null);
  });
  const label = trick ? `Trick ${trick.number}: ${trickText(hand, trick)}` : "No trick";
  return h("div", { id: "replay-trick", class: `replay-trick players-${hand.players}`, role: "group", "aria-label": label, dataset: { trick: trick ? String(trick.number) : "" } }, cells);
}

function verdictText(check) {
  if (!check) return "checking…";
  if (check.verdict === Verdict.VERIFIED) return "verified";
  if (check.verdict === Verdict.SEED_MATCHES) return "seed matches the commitment";
  if (check.verdict === Verdict.MISMATCH) return "FAILED";
  return "not checked";
}

// The review's panel: start and stop, the progress, and this hand's lines (review.js).
function reviewPanel(hand, run) {
  const lines = reviewLines(hand);
  return h("section", { class: "replay-panel review", "aria-labelledby": "review-title" },
    h("h2", { id: "review-title" }, "Double-dummy review"),
    // One data-key for the button whatever it says, so the keyboard focus stays on it as it turns
    // from start to Stop and back; once every hand is reviewed it stays, marked as doing nothing.
    h("div", { class: "buttons" },
      run.running
        ? h("button", { type: "button", id: "review-stop", class: "secondary", dataset: { key: "review-button" }, onclick: () => run.stop() }, "Stop")
        : h("button", { type: "button", id: "review-start", dataset: { key: "review-button" }, "aria-disabled": run.finished ? "true" : undefined, onclick: run.finished ? undefined : () => run.start() }, run.finished ? "Every hand reviewed" : run.done ? "Go on reviewing" : "Review the hands")),
    run.running || run.done ? h("progress", { id: "review-progress", max: String(run.total), value: String(run.done), "aria-label": `Hands reviewed: ${run.done} of ${run.total}` }) : null,
    h("p", { id: "review-status", class: "hint" }, run.status() || "Each hand's best play, every card visible: what each side could make, and the cards that cost tricks. The server works it out."),
    lines.length ? h("ul", { id: "review-lines" }, lines.map((line) => h("li", {}, line))) : null);
}

function handDetails(hand, check, cursorTrick) {
  const sign = (d) => (d === null ? "?" : d >= 0 ? `+${d}` : `−${-d}`);
  // The record's deal, or the one the check re-dealt from the seed (a record of this page's own).
  const dealt = hand.deal || (check && check.verdict === Verdict.VERIFIED ? check.hands : null);
  return [
    h("section", { class: "replay-panel", "aria-labelledby": "replay-bids-title" },
      h("h2", { id: "replay-bids-title" }, `Hand ${hand.number} · ${hand.names[hand.dealer]} dealt`),
      h("p", { id: "replay-bids" }, "Bids: ", hand.bids.length ? hand.bids.map((b) => `${hand.names[b.seat]} ${b.text}`).join(", ") : "none seen"),
      hand.passes.length ? h("p", {}, "Passed: ", hand.passes.map((t) => `${hand.names[t.giver]} → ${hand.names[t.receiver]}${t.cards ? ` ${t.cards.map(cardText).join(" ")}` : ""}`).join("; ")) : null),
    reviewPanel(hand, view.replay.review),
    h("section", { class: "replay-panel", "aria-labelledby": "replay-tricks-title" },
      h("h2", { id: "replay-tricks-title" }, "Tricks"),
      h("ol", { class: "replay-tricks", id: "replay-tricks" }, hand.tricks.map((trick, i) => h("li", {
        class: i === cursorTrick ? "current" : "", dataset: { trick: String(trick.number), winner: String(trick.winner ?? "") },
        value: String(trick.number), "aria-current": i === cursorTrick ? "step" : undefined,
      }, h("button", { type: "button", class: "link-like", dataset: { key: `trick-${i}` }, onclick: () => { view.replay.cursor.goTrick(i); drawReplay(true); } },
        trick.plays.map((p, j) => [j ? ", " : "", `${hand.names[p.seat]} `, h("span", { class: `suit-${cardFace(p.card).letter} ${cardFace(p.card).red ? "red" : ""}` }, cardText(p.card)), p.note ? ` (${p.note})` : ""]),
        trick.winner === null ? "" : ` → ${hand.names[trick.winner]}`)))),
      hand.claimed.length ? h("p", {}, `Then ${hand.claimed.length} trick${hand.claimed.length === 1 ? "" : "s"} by claim: ${hand.claimed.map((s) => hand.names[s]).join(", ")}.`) : null,
      hand.missed.length ? h("p", { class: "hint" }, `Not seen here (played while this page was away): trick ${hand.missed.join(", ")}.`) : null),
    h("section", { class: "replay-panel", "aria-labelledby": "replay-score-title" },
      h("h2", { id: "replay-score-title" }, "The hand's score"),
      h("ul", { id: "replay-score" }, hand.sides.map((side) => h("li", {},
        `${side.name}: ${sign(side.delta)} → ${side.after ?? "?"}${side.bags === null ? "" : ` (${side.bags} bag${side.bags === 1 ? "" : "s"})`}`))),
      hand.notes.length ? h("ul", { class: "replay-notes" }, hand.notes.map((n) => h("li", {}, n))) : null),
    h("section", { class: `replay-panel check ${check && check.verdict === Verdict.MISMATCH ? "bad" : ""}`, "aria-labelledby": "replay-check-title" },
      h("h2", { id: "replay-check-title" }, "Deal check: ", h("span", { id: "replay-verdict", dataset: { verdict: check ? check.verdict : "" } }, verdictText(check))),
      check ? h("ul", {}, check.lines.map((line) => h("li", {}, line))) : null,
      hand.checkedAtTable ? h("p", { class: "hint" }, `When the hand ended, at the table: ${hand.checkedAtTable}.`) : null),
    dealt ? h("details", { class: "replay-panel" }, h("summary", {}, "Hands as dealt"),
      h("ul", {}, dealt.map((cards, s) => h("li", {}, `${hand.names[s]}: `, displayOrder(cards).map(cardText).join(" "))))) : null,
  ];
}

function drawReplay(announce) {
  const replay = view.replay;
  const c = replay.cursor;
  const hand = c.current;
  const trick = hand.tricks[c.trick] || null;
  const where = `Hand ${hand.number} (${c.hand + 1} of ${c.hands.length})${trick ? ` · trick ${trick.number} of ${hand.tricks.length}` : " · no tricks"}`;
  const winner = trick && trick.winner !== null ? `${hand.names[trick.winner]} won trick ${trick.number}` : trick ? "" : "no trick was played in this hand";
  fill(root(),
    h("div", { class: "replay-bar" },
      h("button", { type: "button", id: "replay-back", class: "secondary", dataset: { key: "replay-back" }, onclick: () => { leaveReplay(); drawList(); } }, "Past games"),
      h("h1", { id: "replay-title" }, replay.title)),
    h("div", { class: "replay-grid" },
      h("div", { class: "replay-stage" },
        h("p", { id: "replay-where", class: "replay-where" }, where),
        trickGrid(hand, trick),
        h("p", { id: "replay-winner", class: "replay-winner" }, winner),
        nav()),
      h("div", { class: "replay-details" }, handDetails(hand, replay.checks.get(c.hand), c.trick))));
  if (announce) say(trick ? `${where}. ${trickText(hand, trick).replace("→", "; won by")}.` : where);
  // Keyboard focus stays on the button that was pressed (fill keeps it by data-key); a button
  // that became disabled hands it to the next one along.
  const active = document.activeElement;
  if (announce && (!active || active === document.body)) $("replay-next").focus();
  wireSwipe($("replay-trick"));
}

// A swipe across the trick: left for the next trick, right for the previous one.
function wireSwipe(el) {
  let start = null;
  el.addEventListener("pointerdown", (e) => { start = { x: e.clientX, y: e.clientY }; });
  el.addEventListener("pointerup", (e) => {
    if (!start) return;
    const dx = e.clientX - start.x;
    const dy = e.clientY - start.y;
    start = null;
    if (Math.abs(dx) > 40 && Math.abs(dx) > Math.abs(dy)) step(dx < 0 ? "nextTrick" : "previousTrick");
  });
  el.addEventListener("pointercancel", () => { start = null; });
}

function keyPressed(event) {
  if ($("replay-screen").hidden || !view.replay) return;
  const target = event.target;
  if (target && (target.tagName === "INPUT" || target.tagName === "SELECT" || target.tagName === "TEXTAREA")) return;
  const moves = { ArrowRight: "nextTrick", ArrowLeft: "previousTrick", PageDown: "nextHand", PageUp: "previousHand" };
  if (event.key === "Escape") {
    leaveReplay();
    drawList();
    $("replay-back").focus();
    event.preventDefault();
    return;
  }
  const move = moves[event.key];
  if (!move || event.altKey || event.ctrlKey || event.metaKey) return;
  event.preventDefault();
  step(move);
}

// The replay is left: its review stops (an answer on its way is let go).
function leaveReplay() {
  if (view.replay && view.replay.review) view.replay.review.stop();
  view.replay = null;
}

function close() {
  leaveReplay();
  if (view.onClose) view.onClose();
}
