// Drawing one table: the seats around the felt, the trick, your hand, what you may do now, the
// scores, the last hand's result and the game's end. State comes from state.js; what is legal
// comes only from the server's `your_turn`.

import { classify, actionLabel, matchChoice } from "./actions.js";
import { cardFace, displayOrder } from "./cards.js";
import { $, fill, h, reconcile } from "./dom.js";
import { playerLink } from "./profile.js";
import { Verdict } from "./verify.js";

// A card's classes: its colour (red, or per suit with the four-colour deck: app.css) and `extra`.
export function cardClasses(card, extra = "") {
  const face = cardFace(card);
  return `card suit-${face.letter} ${face.red ? "red" : ""} ${extra}`;
}

// Rank and suit in the top-left corner, the part an overlapped hand leaves visible; a big pip in
// the middle for the eye.
export function cardElement(card, { tag = "div", classes = "", ...attrs } = {}) {
  const face = cardFace(card);
  // Its name is its words ("jack of spades"), as text a screen reader reads and the symbols hidden
  // from it: a name given by aria-label that hides the visible "J♠" is what axe calls a mismatch.
  return h(
    tag,
    { class: cardClasses(card, classes), dataset: { card }, ...attrs },
    attrs["aria-label"] ? null : h("span", { class: "sr-only" }, face.name),
    h("span", { class: "corner", "aria-hidden": "true" },
      h("span", { class: "rank" }, face.rank),
      h("span", { class: "suit" }, face.suit)),
    h("span", { class: "pip", "aria-hidden": "true" }, face.suit),
  );
}

export function secondsLeft(clock, now) {
  if (!clock) return null;
  return Math.max(0, Math.ceil((clock.deadline + clock.bank - now) / 1000));
}

function clockText(seconds) {
  if (seconds === null) return "";
  const m = Math.floor(seconds / 60);
  const s = String(seconds % 60).padStart(2, "0");
  return `${m}:${s}`;
}

// ctx: { names: {seat: name}, seatInfo: {seat: SeatInfo}, selected: Set, now, handlers }
export function renderTable(state, ctx) {
  const n = state.players;
  const positions = n === 4 ? ["bottom", "left", "top", "right"] : n === 3 ? ["bottom", "left", "right"] : ["bottom", "top"];
  for (const where of ["bottom", "left", "top", "right"]) {
    const el = $(`seat-${where}`);
    el.hidden = !positions.includes(where);
  }
  for (let seat = 0; seat < n; seat++) renderSeat(state, ctx, seat);
  renderTrick(state, ctx);
  renderTurn(state, ctx);
  renderScores(state, ctx);
  renderResult(state, ctx);
  renderGameOver(state, ctx);
  renderSheet(state, ctx);
}

function renderSeat(state, ctx, seat) {
  const el = $(`seat-${state.position(seat)}`);
  const v = state.view;
  const info = ctx.seatInfo[seat];
  const name = ctx.names[seat] || (info && info.player) || "empty seat";
  const bid = v.bids && v.bids[seat];
  const tricks = v.tricks ? v.tricks[seat] : 0;
  const facts = [];
  if (bid) facts.push(h("span", { class: "bid" }, `bid ${bid.text ?? bid.tricks}`));
  facts.push(h("span", { class: "tricks" }, `${tricks} won`));
  if (state.game === "hearts" && v.points) facts.push(h("span", { class: "points" }, `${v.points[seat]} pts`));
  const clock = secondsLeft(state.clocks[seat], ctx.now);
  const acting = state.acting().includes(seat);
  const status = state.seatStatus[seat];
  const offline = status ? !status.connected : Boolean(info && info.player && !info.bot && !info.connected);
  const held = offline && status && status.holdUntil !== null ? status : null;
  const size = v.hand_sizes ? v.hand_sizes[seat] : 0;
  const backs = seat === state.seat ? null : h("div", { class: "backs", role: "img", "aria-label": `${size} ${size === 1 ? "card" : "cards"}` }, Array.from({ length: Math.min(size, 18) }, () => h("span", { class: "mini" })));
  el.className = `seat seat-${state.position(seat)} ${acting ? "to-act" : ""}`;
  el.dataset.seat = String(seat);
  // One group per seat, named by its place, so a screen reader does not run the seats together.
  el.setAttribute("role", "group");
  el.setAttribute("aria-label", `${state.place(seat)}${name && name !== "empty seat" ? `, ${name}` : ""}${acting ? ", to play" : ""}`);
  fill(
    el,
    // The player's name opens their profile (profile.js); an open seat's words do not.
    h("div", { class: "name" }, info && info.player ? playerLink(info.player, name) : name),
    h("div", { class: "place" }, state.place(seat), seat === v.dealer ? " · dealer" : "", partnerOf(state, seat) ? h("span", { class: "partner" }, " · your partner") : null),
    h("div", { class: "facts" }, facts),
    h("div", { class: "facts" },
      acting ? h("span", { class: "clock", dataset: { clockSeat: String(seat) } }, clockText(clock)) : null,
      offline ? h("span", { class: "offline" }, "disconnected") : null,
      held ? h("span", { class: "hold", dataset: { holdSeat: String(seat) } }, holdText(held, ctx.now)) : null),
    backs,
  );
}

// The trick on the felt: the one being played; a completed one while the page holds it (its cards
// slide to the winner at the end of the hold); or the last one, when the player asks for it.
// Whether `seat` plays on our side (a partnership game, seen from a seat).
function partnerOf(state, seat) {
  if (state.seat === null || seat === state.seat) return false;
  const side = state.sides().find((x) => x.includes(state.seat));
  return Boolean(side && side.length > 1 && side.includes(seat));
}

function renderTrick(state, ctx) {
  const v = state.view;
  const el = $("trick");
  let plays = v.trick || [];
  let caption = "";
  let mode = "";
  const held = state.held && (state.held.until === null || ctx.wall < state.held.until) ? state.held : null; // wall time: a paused clock does not hold a trick
  const who = (seat) => state.place(seat); // the seat's name is beside it; the middle is small on a phone
  if (ctx.reviewLast && (v.last_trick || []).length) {
    plays = v.last_trick;
    mode = "review";
    caption = `Last trick: ${who(v.last_winner)} won`;
  } else if (held) {
    plays = held.plays;
    mode = `held to-${state.position(held.winner)}`;
    caption = `${who(held.winner)} ${held.winner === state.seat ? "win" : "wins"} the trick`;
    // A negative delay when the trick is redrawn mid-hold: the slide goes on where it was.
    el.style.setProperty("--collect-delay", `${Math.round((held.until ?? ctx.wall + held.ms) - COLLECT_MS - ctx.wall)}ms`);
  } else if (!plays.length) {
    caption = v.hand_number ? "" : "Waiting for the deal";
  }
  el.className = `trick ${mode}`;
  if (held && !mode.startsWith("review")) el.dataset.held = held.id;
  else delete el.dataset.held;
  el.setAttribute("aria-label", mode === "review" ? "The last trick" : "The trick");
  fill(
    el,
    plays.map(([seat, card]) => h("div", { class: `slot slot-${state.position(seat)}` },
      cardElement(card, { role: "img", "aria-label": `${state.place(seat)}: ${cardFace(card).name}` }))),
    caption ? h("div", { class: "caption" }, caption) : null,
  );
}

const COLLECT_MS = 350; // the slide to the winner, at the end of a held trick (app.css .trick.held)

function renderTurn(state, ctx) {
  const handEl = $("hand");
  const actionsEl = $("actions");
  const promptEl = $("prompt");
  const turn = state.turn;
  const { plays, buttons, choice } = turn ? classify(turn.legal) : { plays: new Set(), buttons: [], choice: null };
  const seated = state.seat !== null;
  handEl.className = `hand ${seated ? "mine" : ""}`;
  handEl.hidden = !seated;
  const selected = ctx.selected;
  const cards = displayOrder(state.hand());
  reconcile(
    handEl,
    cards.map((card) => ({
      key: `card-${card}`,
      create: () => cardElement(card, { tag: "button", type: "button", onclick: () => ctx.handlers.card(card) }),
      update: (el) => {
        const playable = plays.has(card);
        const choosable = Boolean(choice && choice.cards.has(card));
        const isSelected = selected.has(card);
        let classes = "";
        if (turn && plays.size) classes = playable ? "legal" : "dim";
        if (choice) classes = isSelected ? "selected" : choosable ? "" : "dim";
        el.className = cardClasses(card, classes);
        el.disabled = !(playable || choosable);
        el.tabIndex = -1; // one tab stop for the hand (rovingTabStop below); arrows move within
        if (choice) el.setAttribute("aria-pressed", String(isSelected));
        else el.removeAttribute("aria-pressed");
      },
    })),
  );
  fitHand(handEl, cards.length);
  rovingTabStop(handEl);
  // *Look at my cards* first, the safe choice the focus lands on; blind bids last, marked risky;
  // each nil with its stakes.
  const rank = (a) => (a.kind === "look" ? 0 : a.kind === "bid" && a.blind ? 2 : 1);
  const ordered = [...buttons].sort((a, b) => rank(a) - rank(b));
  const items = ordered.map((action) => ({
    key: `action-${JSON.stringify(action)}`,
    create: () => {
      const cls = action.kind === "look" ? "primary" : action.kind !== "bid" ? "secondary" : action.blind ? "bid risky" : "bid";
      const el = h("button", { type: "button", class: cls }, actionLabel(action), stakes(action, ctx.options || {}));
      el.addEventListener("click", () => ctx.handlers.act(action));
      return el;
    },
    update: () => {},
  }));
  if (choice) {
    const chosen = matchChoice(choice, [...selected]);
    const want = choice.sizes.join(" or ");
    const direction = state.view.pass_direction && state.view.pass_direction !== "none" ? ` ${state.view.pass_direction}` : "";
    items.unshift({
      key: "choose",
      create: () => {
        const el = h("button", { type: "button", id: "choose" });
        el.addEventListener("click", () => el.chosen && ctx.handlers.act(el.chosen));
        return el;
      },
      update: (el) => {
        el.chosen = chosen;
        el.disabled = !chosen;
        el.textContent = `${actionLabel({ kind: choice.kind })}${direction} (${selected.size}/${want})`;
      },
    });
  }
  reconcile(actionsEl, items);
  let prompt = "";
  if (state.gameOver) prompt = "The game is over.";
  else if (ctx.connected === false) prompt = "Not connected: the page reconnects by itself, and your seat is held meanwhile.";
  else if (turn) {
    if (choice) prompt = `Choose ${choice.sizes.join(" or ")} cards to ${choice.kind === "pass" ? "pass" : choice.kind === "exchange" ? "give your partner" : "set aside"}.`;
    else if (plays.size) prompt = "Your turn: play a highlighted card.";
    else if (buttons.some((a) => a.kind === "bid")) prompt = "Your turn: bid.";
    else prompt = "Your turn.";
  } else if (state.acting().length) {
    prompt = `Waiting for ${state.acting().map((s) => (s === state.seat ? "you (the server's turn message)" : ctx.names[s] ? `${state.place(s)} (${ctx.names[s]})` : state.place(s))).join(", ")}…`;
  } else if (!seated) prompt = "Watching.";
  const myClock = turn ? h("span", { class: "clock", dataset: { clockTurn: "1" } }, clockText(secondsLeft(turn, ctx.now))) : null;
  fill(promptEl, prompt, " ", myClock);
  promptEl.dataset.yourTurn = turn ? "yes" : "no";
}

// A nil's stakes, as the table's rules score it: won if no trick is taken, lost otherwise.
function stakes(action, options) {
  if (action.kind !== "bid" || action.tricks !== 0 || action.moe || action.double_nil) return "";
  const value = action.blind ? options.blind_nil_value ?? 100 : options.nil_value ?? 100;
  return ` (±${value})`;
}

function renderScores(state, ctx) {
  const v = state.view;
  const sides = state.sides();
  const rows = sides.map((side, i) =>
    h("tr", {},
      h("td", {}, state.sideName(i, ctx.names)),
      h("td", {}, String((v.scores || [])[i] ?? 0)),
      state.game === "spades" ? h("td", {}, String((v.bags || [])[i] ?? 0)) : null,
      state.game === "spades" ? h("td", {}, side.some((s) => v.bids && v.bids[s]) ? side.map((s) => bidText(v.bids[s])).join(" + ") : "–") : null,
      h("td", {}, String(side.reduce((sum, s) => sum + ((v.tricks || [])[s] || 0), 0)))),
  );
  fill(
    $("scores"),
    h("table", {},
      h("thead", {}, h("tr", {}, h("th", {}, `Hand ${v.hand_number || "–"}`), h("th", {}, "Score"), state.game === "spades" ? h("th", {}, "Bags") : null, state.game === "spades" ? h("th", {}, "Bid") : null, h("th", {}, "Won"))),
      h("tbody", {}, rows)),
  );
}

// The hand is one stop in the tab order (the card last focused, or the first usable one): Tab
// goes on to the hand's buttons (Pass, the bids) instead of through thirteen cards.
export function rovingTabStop(handEl) {
  const usable = [...handEl.querySelectorAll(".card:not(:disabled)")];
  const current = usable.find((el) => el === document.activeElement) || usable.find((el) => el.dataset.key === handEl.dataset.lastFocus) || usable[0];
  for (const el of usable) el.tabIndex = el === current ? 0 : -1;
}

// Overlap the cards just enough for the hand to fit its row (none when there is room).
function fitHand(handEl, count) {
  if (count < 2 || !handEl.clientWidth) return;
  const cardWidth = handEl.firstElementChild ? handEl.firstElementChild.getBoundingClientRect().width : 58;
  const room = handEl.clientWidth - 8;
  // At least the corner (rank over suit) of every card stays in sight.
  const gap = Math.max(-(cardWidth - 20), Math.min(4, (room - count * cardWidth) / (count - 1)));
  handEl.style.setProperty("--gap", `${Math.floor(gap)}px`);
}

export function verdictLine(check) {
  if (!check) return h("p", { class: "verdict" }, "Checking the deal…");
  const good = check.verdict === Verdict.VERIFIED || check.verdict === Verdict.SEED_MATCHES;
  const head = check.verdict === Verdict.VERIFIED ? "✔ Deal verified" : check.verdict === Verdict.SEED_MATCHES ? "✔ Seed matches the commitment" : check.verdict === Verdict.MISMATCH ? "✘ DEAL CHECK FAILED" : "Deal not checked";
  return h("p", { class: `verdict ${good ? "ok" : check.verdict === Verdict.MISMATCH ? "bad" : ""}`, title: check.lines.join("\n"), dataset: { verdict: check.verdict } },
    head, ": ", check.lines[check.lines.length - 1]);
}

const signed = (n) => (n > 0 ? `+${n}` : n < 0 ? `−${-n}` : "0");

// A bid in words, as the seat's place says it ("4", "nil", "blind nil").
function bidText(bid) {
  if (!bid) return "–";
  return String(bid.text ?? bid.tricks);
}

function sideTitle(state, i, ctx) {
  const side = state.sides()[i] || [];
  const name = state.sideName(i, ctx.names);
  const who = side.map((s) => state.place(s)).join(" + ");
  return name === who ? name : `${name} (${who})`;
}

// `seatName` as a button opening the seat's player's profile, when the seat has a player.
function namedSeat(state, seat, ctx) {
  const info = ctx.seatInfo[seat];
  const text = seatName(state, seat, ctx);
  return info && info.player ? playerLink(info.player, text) : text;
}

// A seat as the table names it: "You", or its place and its player ("West (heuristic bot)").
function seatName(state, seat, ctx) {
  if (seat === state.seat) return "You";
  return ctx.names[seat] ? `${state.place(seat)} (${ctx.names[seat]})` : state.place(seat);
}

// The engine's notes name seats ("seat 2 nil made"): the page names them as the table does.
function namedNote(state, note, ctx) {
  return note.replace(/\bseat (\d+)\b/g, (_, seat) => seatName(state, Number(seat), ctx));
}

// Which side each of the engine's "contract N made|set with M" notes is about: it writes one, in side
// order, for each side whose bids made a contract (a plain bid or 10 for 200; nil, blind and Moe
// bids are scored on their own).
function contractNotes(state, scored) {
  const bySide = {};
  const notes = (scored.notes || []).filter((n) => n.startsWith("contract "));
  let k = 0;
  state.sides().forEach((side, i) => {
    const hasContract = side.some((s) => {
      const bid = (scored.bids || [])[s];
      return bid && (bid.ten_for_200 || (bid.tricks > 0 && !bid.blind && !bid.moe));
    });
    if (hasContract && k < notes.length) bySide[i] = notes[k++];
  });
  return bySide;
}

function bagsText(state, i, scored, options) {
  const bags = (scored.bags_after || [])[i] ?? 0;
  const mode = options.bags || "counted";
  if (mode === "counted") {
    const limit = Number(options.bag_limit || 10);
    const penalty = Number(options.bag_penalty ?? 100);
    return `bags ${bags} of ${limit} (${limit - bags} more cost ${penalty})`;
  }
  if (mode === "last_digit") return `bags ${bags} (past 9 costs ${options.bag_penalty ?? 100})`;
  return "";
}

// Each side in two lines that fit a 360 px phone: who, the hand's points and the score; then its
// bids, tricks, contract made or set, and bags.
function resultSides(state, scored, ctx) {
  const spades = state.game === "spades";
  const contracts = spades ? contractNotes(state, scored) : {};
  return h("ul", { class: "result-sides" }, scored.sides.map((side, i) => {
    const took = side.reduce((sum, s) => sum + ((scored.tricks || [])[s] || 0), 0);
    const contract = contracts[i];
    const outcome = contract ? (/ made /.test(contract) ? "made" : "set") : "";
    const facts = spades
      ? [`bid ${side.map((s) => bidText((scored.bids || [])[s])).join(" + ")}`, `took ${took}`,
        outcome ? h("span", { class: `outcome ${outcome}` }, outcome) : null, bagsText(state, i, scored, ctx.options)]
      : [`${took} ${took === 1 ? "trick" : "tricks"}`];
    const parts = facts.filter((f) => f !== null && f !== "").flatMap((f, k) => (k ? [" · ", f] : [f]));
    return h("li", {},
      h("div", { class: "side-head" }, h("strong", {}, sideTitle(state, i, ctx)),
        h("span", {}, h("span", { class: "delta" }, signed(scored.delta[i])), ` → ${String(scored.after[i]).replace("-", "−")}`)),
      h("div", { class: "side-facts" }, parts));
  }));
}

function renderResult(state, ctx) {
  const el = $("result");
  const scored = state.lastScored;
  el.hidden = !ctx.summaryShown;
  if (!scored || el.hidden) return;
  const notes = (scored.notes || []).map((note) => namedNote(state, note, ctx));
  fill(el,
    h("div", { class: "result-head" },
      h("h3", { id: "result-title" }, `Hand ${scored.hand_number} result`),
      h("button", { type: "button", id: "result-close", class: "secondary", "aria-label": "Close the hand's result" }, "×")),
    resultSides(state, scored, ctx),
    notes.length ? h("ul", { class: "notes" }, notes.map((note) => h("li", {}, note))) : null,
    verdictLine(state.checks[scored.hand_number]));
}

// Hand by hand: each side's points for the hand and its score after it.
export function sheetTable(state, ctx) {
  const sides = state.sides();
  return h("table", { class: "sheet" },
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Hand"), sides.map((_, i) => h("th", { scope: "col" }, sideTitle(state, i, ctx))))),
    h("tbody", {}, state.scored.map((scored) => h("tr", {},
      h("td", {}, String(scored.hand_number)),
      sides.map((_, i) => h("td", {}, `${signed(scored.delta[i] ?? 0)} → ${scored.after[i] ?? 0}`,
        state.game === "spades" ? h("span", { class: "sheet-bags" }, ` · ${(scored.bags_after || [])[i] ?? 0} bags`) : null))))));
}

function renderSheet(state, ctx) {
  const el = $("sheet");
  el.hidden = !ctx.sheetOpen;
  if (el.hidden) return;
  fill($("sheet-body"), state.scored.length ? sheetTable(state, ctx) : h("p", { class: "empty" }, "No hand has been scored yet."));
}

function renderGameOver(state, ctx) {
  const el = $("game-over");
  const over = state.gameOver;
  const wasHidden = el.hidden;
  el.hidden = !over || ctx.gameOverDismissed;
  if (!over) return;
  const winners = over.winners.map((s) => seatName(state, s, ctx));
  const sides = state.sides();
  fill($("game-over-body"),
    h("p", { class: "winners" }, winners.length ? `${winners.join(" and ")} ${winners.length === 1 && winners[0] !== "You" ? "wins" : "win"}.` : "A draw."),
    // Each side by its players, as the table names them ("You and North (heuristic bot)").
    h("ul", { class: "finals" }, over.scores.map((score, i) => {
      const side = sides[i] || [];
      // Each name opens that player's profile (profile.js).
      const players = side.map((s, k) => [k ? " and " : "", namedSeat(state, s, ctx)]);
      const partners = state.seat !== null && side.length > 1; // "Us" or "Them" first
      return h("li", {}, partners ? h("strong", {}, `${state.sideName(i, ctx.names)}: `) : null, players, " · ", h("span", { class: "final-score" }, String(score).replace("-", "−")));
    })),
    state.scored.length ? sheetTable(state, ctx) : null,
    state.scored.length ? verdictLine(state.checks[state.scored[state.scored.length - 1].hand_number]) : null);
  if (wasHidden && !el.hidden) $("game-over-close").focus();
}

function holdText(status, now) {
  const left = Math.max(0, Math.ceil((status.holdUntil - now) / 1000));
  return left ? `seat held ${clockText(left)}` : "the server plays it";
}

// Update only the clocks' text (four times a second), not the whole table.
export function tickClocks(state, now) {
  for (const el of document.querySelectorAll("[data-clock-seat]")) {
    el.textContent = clockText(secondsLeft(state.clocks[Number(el.dataset.clockSeat)], now));
  }
  for (const el of document.querySelectorAll("[data-clock-turn]")) {
    el.textContent = clockText(secondsLeft(state.turn, now));
  }
  for (const el of document.querySelectorAll("[data-hold-seat]")) {
    const status = state.seatStatus[Number(el.dataset.holdSeat)];
    if (status && status.holdUntil !== null) el.textContent = holdText(status, now);
  }
}
