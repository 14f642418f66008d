// The page's picture of one table: the last snapshot's view, kept current by the events that
// follow. What an event changes in the view is the engine's fold (view_fold.js, the port of
// engine/view_fold.py, tested against the engine on generated event streams); the rest is the
// page's own: the log, the deal check's evidence, the hand's result, clocks and seats. Pure: no
// DOM, no socket; `now` is a millisecond clock passed in. Legal moves come from `your_turn`, scores
// from `hand_scored`, never from a rule of our own.

import { cardText, sortCards } from "./cards.js";
import { foldable, foldEvent, foldTurn, HANDLED } from "./view_fold.js";

export const LOG_LINES = 80;
const PLACES = { 4: ["You", "West", "North", "East"], 3: ["You", "Left", "Right"], 2: ["You", "Opponent"] };
const SPECTATOR_PLACES = { 4: ["South", "West", "North", "East"], 3: ["South", "Left", "Right"], 2: ["South", "North"] };

export class TableState {
  constructor(table) {
    this.table = table;
    this.seat = null;
    this.view = {};
    this.turn = null; // { version, legal, deadline, bank }
    this.clocks = {}; // seat -> { deadline, bank } from `turn`
    this.seatStatus = {}; // seat -> { connected, holdUntil } from `seat_status`
    this.log = [];
    this.logTotal = 0;
    this.scored = []; // hand_scored messages, oldest first
    this.lastScored = null; // the latest hand_scored with the hand's bids (the page decides how long it shows)
    this.checks = {}; // hand number -> { verdict, lines }
    this.pendingChecks = []; // [{ hand, seed, evidence }] for the page to verify (async)
    this.gameOver = null;
    this.evidence = null;
    this.commitments = {};
    this.jackOfDiamonds = false;
    this.rules = null; // the table's ruleset options (/presets.json's with the table's), for the fold
  }

  // ------------------------------------------------------------ facts for the screen

  get players() { return Number(this.view.players || 4); }
  get game() { return String(this.view.game || "spades"); }
  hand() { return Array.isArray(this.view.hand) ? this.view.hand : []; }
  sides() {
    const sides = this.view.sides;
    return Array.isArray(sides) && sides.length ? sides : [...Array(this.players).keys()].map((s) => [s]);
  }
  acting() { return Array.isArray(this.view.to_act) ? this.view.to_act : []; }

  // Where a seat sits as seen from ours: You, West, North, East (Left/Right at three).
  place(seat) {
    const n = this.players;
    if (seat < 0 || seat >= n) return `seat ${seat}`;
    if (this.seat === null) return (SPECTATOR_PLACES[n] || [])[seat] || `seat ${seat}`;
    return (PLACES[n] || [])[(seat - this.seat + n) % n] || `seat ${seat}`;
  }

  // Position on the screen (bottom, left, top, right) of a seat.
  position(seat) {
    const n = this.players;
    const offset = (seat - (this.seat ?? 0) + n) % n;
    if (n === 4) return ["bottom", "left", "top", "right"][offset];
    if (n === 3) return ["bottom", "left", "right"][offset];
    return ["bottom", "top"][offset];
  }

  sideOf(seat) { return this.sides().findIndex((side) => side.includes(seat)); }

  sideName(index, names = {}) {
    const side = this.sides()[index] || [];
    if (this.seat !== null && side.includes(this.seat)) return side.length > 1 ? "Us" : "You";
    if (this.seat !== null && side.length > 1) return "Them";
    return side.map((s) => names[s] || this.place(s)).join(" + ");
  }

  say(line) {
    this.logTotal += 1; // every line ever said: the page appends the new ones only
    this.log.push(line);
    if (this.log.length > LOG_LINES) this.log.splice(0, this.log.length - LOG_LINES);
  }

  // ------------------------------------------------------------ applying messages

  apply(msg, now) {
    if (msg.table !== undefined && typeof msg.table === "string" && msg.table !== this.table) return false;
    // A game event the fold knows and the page keeps nothing of needs no handler of its own.
    const handler = HANDLERS[msg.t] || (HANDLED.includes(msg.t) ? this.gameEvent : null);
    if (!handler) return false;
    handler.call(this, msg, now);
    return true;
  }

  // The ruleset the fold reads: the table's, or this game's defaults until the page has it.
  foldRules() {
    const defaults = { game: this.game, players: this.players, deck: "standard", blind_nil_exchange: 0 };
    return { ...defaults, ...(this.rules || {}), hearts_jack_of_diamonds: Boolean((this.rules || {}).hearts_jack_of_diamonds ?? this.jackOfDiamonds) };
  }

  gameEvent(msg) {
    if (foldable(this.view)) foldEvent(this.view, msg, this.foldRules(), this.seat);
    else {
      this.view.version = msg.version;
      // Events do not say who acts next: the `turn` that follows them does.
      this.view.to_act = [];
    }
    this.clocks = {};
    // Our turn is spent once the game moves on, except while others pass at the same time as we
    // do (a Hearts pass): their passes move the version, and the server sends our `your_turn`
    // again for the new one, so the choice on the screen stays where it is.
    const othersPass = msg.t === "cards_given" && msg.seat !== this.seat;
    if (this.turn && msg.version > this.turn.version && !othersPass) this.turn = null;
  }

  newEvidence(handNumber, commitment, myCards, midway) {
    this.evidence = {
      table: this.table,
      hand: handNumber,
      dealer: Number(this.view.dealer || 0),
      seat: this.seat,
      players: this.players,
      commitment: commitment || null,
      myCards: myCards ? [...myCards] : null,
      plays: [],
      tricksSeen: [],
      transfers: midway ? possibleTransfers(this) : [],
      deckCards: [],
      midway,
    };
  }

  verifyLater(handNumber, seed) {
    if (this.checks[handNumber] || this.pendingChecks.some((p) => p.hand === handNumber)) return;
    let evidence = this.evidence;
    if (!evidence || evidence.hand !== handNumber) evidence = null;
    else evidence.deckCards = [...(this.view.played || [])];
    this.pendingChecks.push({ hand: handNumber, seed, evidence });
  }
}

// Cards that may have changed hands before we came in: the Hearts pass and partners' exchanges,
// so a card played after one is no false alarm (as client/state.py).
function possibleTransfers(state) {
  const n = state.players;
  const direction = String(state.view.pass_direction || "none");
  const pairs = [];
  if (state.game === "hearts") {
    if (direction === "none") return pairs;
    for (let g = 0; g < n; g++) for (let r = 0; r < n; r++) if (g !== r) pairs.push([g, r]);
    return pairs;
  }
  for (const side of state.sides()) if (side.length === 2) pairs.push([side[0], side[1]], [side[1], side[0]]);
  return pairs;
}

const HANDLERS = {
  snapshot(msg) {
    const before = this.view;
    // A resync at our turn's own version (a join right after the server gave the seat back)
    // leaves that decision open: nothing happened since, and its your_turn follows.
    const stillOpen = this.turn !== null && msg.version === this.turn.version && (msg.seat ?? null) === this.seat;
    this.seat = msg.seat ?? null;
    this.view = structuredClone(msg.view);
    if (Array.isArray(this.view.hand)) this.view.hand = sortCards(this.view.hand);
    if (!stillOpen) this.turn = null;
    this.clocks = {};
    this.seatStatus = {}; // the lobby's seat list says who is connected until the next seat_status
    if (before && before.version !== undefined) this.say("Back at the table.");
    const handNumber = Number(this.view.hand_number || 0);
    if (msg.commitment && handNumber) {
      this.commitments[handNumber] = this.commitments[handNumber] || msg.commitment;
      const e = this.evidence;
      if (!e || e.hand !== handNumber || e.table !== this.table) this.newEvidence(handNumber, msg.commitment, null, true);
      else if (!e.commitment) e.commitment = msg.commitment;
    }
    if (this.view.phase === "game_over" && !this.gameOver) {
      this.gameOver = { winners: this.view.winners || [], scores: this.view.scores || [], reason: "over" };
    }
  },

  turn(msg, now) {
    foldTurn(this.view, msg.version, msg.to_act);
    this.clocks = {};
    msg.to_act.forEach((seat, i) => {
      this.clocks[seat] = { deadline: now + msg.deadline_ms[i], bank: msg.bank_ms[i] };
    });
  },

  your_turn(msg, now) {
    if (this.seat !== null && msg.seat !== this.seat) return;
    this.turn = { version: msg.version, legal: msg.legal, deadline: now + msg.deadline_ms, bank: msg.bank_ms || 0 };
    // A server without `turn`: at least we are to act.
    foldTurn(this.view, msg.version, this.acting().includes(msg.seat) ? this.acting() : [...this.acting(), msg.seat]);
  },

  clock_expired(msg) {
    const who = msg.seat === this.seat ? "Your" : `${this.place(msg.seat)}'s`;
    this.say(msg.reason === "abandoned"
      ? `${this.place(msg.seat)} left the game; the server plays the ${msg.fallback}.`
      : `${who} clock ran out; the server played the ${msg.fallback}.`);
    delete this.clocks[msg.seat];
  },

  seat_status(msg, now) {
    const hold = msg.hold_ms ?? null;
    this.seatStatus[msg.seat] = { connected: msg.connected, holdUntil: hold === null ? null : now + hold };
    if (msg.connected) this.say(`${this.place(msg.seat)} is back.`);
    else this.say(`${this.place(msg.seat)} lost the connection${hold === null ? "" : `; the seat is held for ${Math.round(hold / 1000)} s`}.`);
  },

  deal_commitment(msg) { this.commitments[msg.hand_number] = msg.commitment; },

  hand_dealt(msg) {
    this.gameEvent(msg);
    const cards = msg.cards ? sortCards(msg.cards) : null;
    this.commitments[msg.hand_number] = this.commitments[msg.hand_number] || msg.commitment;
    this.newEvidence(msg.hand_number, this.commitments[msg.hand_number], cards, false);
    this.say(`Hand ${msg.hand_number}: ${this.place(msg.dealer)} dealt.`);
  },

  hand_looked(msg) {
    this.gameEvent(msg);
    if (msg.seat === this.seat && msg.cards && this.evidence && !this.evidence.myCards) this.evidence.myCards = [...msg.cards];
    this.say(`${this.place(msg.seat)} looked at the cards.`);
  },

  bid_made(msg) {
    this.gameEvent(msg);
    this.say(`${this.place(msg.seat)} bid ${msg.text}.`);
  },

  cards_given(msg) {
    this.gameEvent(msg);
    if (msg.seat === this.seat && msg.cards) this.say(`You passed ${msg.cards.map(cardText).join(" ")} to ${this.place(msg.receiver)}.`);
    else this.say(`${this.place(msg.seat)} passed ${msg.cards ? msg.cards.length : (msg.count || 0)} cards.`);
  },

  cards_passed(msg) { moved.call(this, msg); },
  cards_exchanged(msg) { moved.call(this, msg); },

  card_played(msg) {
    this.gameEvent(msg);
    this.say(`${this.place(msg.seat)} ${msg.seat === this.seat ? "play" : "plays"} ${cardText(msg.card)}.`);
  },

  trick_won(msg) {
    this.gameEvent(msg);
    const e = this.evidence;
    if (e && !e.tricksSeen.includes(msg.trick_number)) {
      e.tricksSeen.push(msg.trick_number);
      for (const play of msg.plays) e.plays.push([play[0], play[1]]);
    }
    this.say(`${this.place(msg.seat)} won trick ${msg.trick_number}.`);
  },

  spades_broken(msg) {
    this.gameEvent(msg);
    this.say(this.game === "hearts" ? "Hearts are broken." : "Spades are broken.");
  },

  claim_made(msg) {
    this.gameEvent(msg);
    this.say(`${this.place(msg.seat)} claimed the rest with ${msg.cards.map(cardText).join(" ")} ${msg.held ? "and it held" : `and it failed (${msg.penalty})`}.`);
  },

  deal_declared_dead(msg) {
    this.gameEvent(msg);
    this.say(`${this.place(msg.seat)} showed a deficient hand (${msg.reason}); redeal.`);
  },

  hand_scored(msg) {
    // The hand's bids go with its result: the next deal clears the view's.
    const scored = { ...msg, bids: structuredClone(this.view.bids || []) };
    this.gameEvent(msg);
    this.scored.push(scored);
    this.lastScored = scored;
    const sign = (d) => (d >= 0 ? `+${d}` : `−${-d}`);
    this.say(`Hand ${msg.hand_number} scored: ${msg.sides.map((_, i) => `${this.sideName(i)} ${sign(msg.delta[i])} (${msg.after[i]})`).join(", ")}.`);
    this.verifyLater(msg.hand_number, msg.seed);
  },

  deal_seed(msg) { this.verifyLater(msg.hand_number, msg.seed); },

  game_over(msg) {
    this.gameEvent(msg);
    this.gameOver = msg;
    this.turn = null;
    this.clocks = {};
    this.say("Game over.");
  },
};

// Every message kind the picture takes: its own handlers' and every event the fold knows.
export const HANDLED_MESSAGES = Object.freeze([...new Set([...Object.keys(HANDLERS), ...HANDLED])]);

function moved(msg) {
  this.gameEvent(msg);
  if (this.evidence) this.evidence.transfers.push([msg.giver, msg.receiver]);
  if (msg.receiver === this.seat && msg.cards) this.say(`You received ${msg.cards.map(cardText).join(" ")} from ${this.place(msg.giver)}.`);
}
