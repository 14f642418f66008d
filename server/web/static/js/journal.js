// The page's own record of the games it saw, kept in this browser (the protocol has no request for
// past games; the terminal client keeps its record the same way, client/journal.py).
//
// As a table's messages arrive (before the page's pacing queue: a player who leaves while a trick is
// still held loses nothing), `observe` gathers the hand in play: its dealer and commitment,
// the bids, the passes, and every trick (from `trick_won`, which carries the whole trick). When the
// hand is scored it becomes one `spades-client-hand/1` record, in the terminal client's field names
// (docs/client.md, "History and replays"), and the deal check's result is added when it is known
// (`checked`). The hand in play is kept in the tab's sessionStorage, so a reload loses none of it.
//
// Kept in localStorage, bounded: the MAX_GAMES most recently played games (an index under
// `spades.games`, each game's records under `spades.game.<id>`), at most MAX_HANDS hands a game (a
// longer one keeps its last); when the browser's quota is reached the oldest games go first.

import { CLIENT_FORMAT, gameSummary } from "./replay.js";
import { sortCards } from "./cards.js";

export const MAX_GAMES = 20;
export const MAX_HANDS = 100;
const INDEX_KEY = "spades.games";
const GAME_KEY = "spades.game.";
const PENDING_KEY = "spades.handInPlay";

export class Journal {
  // storage: localStorage; session: sessionStorage (the hand in play); server: this server's name.
  constructor(storage, session, { server = "", now = () => new Date() } = {}) {
    this.storage = storage;
    this.session = session;
    this.server = server;
    this.now = now;
    this.pending = readJson(session, PENDING_KEY);
    // What the table's snapshot said: { table, seat, players, game }, and each hand's commitment.
    this.facts = this.pending ? { ...this.pending.facts } : null;
    this.commitments = {};
  }

  // ---------------------------------------------------------------- the stored games

  // Every game kept, most recently played first: { id, table, server, game, hands, names, sides,
  // scores, started, updated, finished, verified }.
  games() {
    const index = readJson(this.storage, INDEX_KEY);
    return Array.isArray(index) ? index.filter((g) => g && typeof g.id === "string") : [];
  }

  records(id) {
    const records = readJson(this.storage, GAME_KEY + id);
    return Array.isArray(records) ? records : [];
  }

  remove(id) {
    this.storage.removeItem(GAME_KEY + id);
    this.writeIndex(this.games().filter((g) => g.id !== id));
  }

  // The game's records as a `.jsonl` text, as `spades replay FILE` reads it.
  jsonl(id) {
    return this.records(id).map((r) => JSON.stringify(r)).join("\n") + "\n";
  }

  writeIndex(index) {
    this.storage.setItem(INDEX_KEY, JSON.stringify(index));
  }

  // ---------------------------------------------------------------- gathering a hand

  // One message of a table, as it arrives; `info`: the lobby's TableInfo of that table.
  observe(msg, info) {
    const handler = GATHER[msg.t];
    if (!handler || typeof msg.table !== "string") return null;
    if (msg.t !== "snapshot" && (!this.facts || this.facts.table !== msg.table)) return null;
    const result = handler.call(this, msg, info || null);
    this.savePending();
    return result;
  }

  savePending() {
    try {
      if (this.pending) this.session.setItem(PENDING_KEY, JSON.stringify(this.pending));
      else this.session.removeItem(PENDING_KEY);
    } catch {
      // A full sessionStorage only costs the hand's record across a reload.
    }
  }

  startHand(handNumber, dealer, { commitment, myCards, midway }) {
    this.pending = {
      facts: { ...this.facts },
      table: this.facts.table,
      hand_number: handNumber,
      dealer,
      commitment: commitment || null,
      my_cards: myCards ? sortCards(myCards) : null,
      bids: [],
      passes: [],
      tricks: [],
      midway,
    };
  }

  pendingFor(handNumber) {
    const p = this.pending;
    return p && this.facts && p.table === this.facts.table && (handNumber === undefined || p.hand_number === handNumber) ? p : null;
  }

  // The finished hand in the `spades-client-hand/1` shape, stored at once; its deal check follows.
  finishHand(msg, info) {
    const facts = this.facts;
    const p = this.pendingFor(msg.hand_number) || {
      table: facts.table, hand_number: msg.hand_number, dealer: 0,
      commitment: this.commitments[msg.hand_number] || null, my_cards: null, bids: [], passes: [], tricks: [], midway: true,
    };
    this.pending = null;
    const tricks = [...p.tricks].sort((a, b) => a.number - b.number);
    const seen = new Set(tricks.map((t) => t.number));
    const last = Math.max(0, ...seen);
    const players = facts.players;
    const record = {
      format: CLIENT_FORMAT,
      game_id: facts.table,
      server: this.server,
      game: facts.game,
      preset: info ? info.preset : null,
      options: info && info.options ? { ...info.options } : {},
      ruleset: null, // the page has the preset and the table's options, not the engine's whole ruleset
      players,
      names: [...Array(players).keys()].map((s) => seatPlayer(info, s)),
      seat: facts.seat,
      hand_number: msg.hand_number,
      dealer: p.dealer,
      seed: msg.seed,
      commitment: p.commitment || this.commitments[msg.hand_number] || null,
      deal: null, // re-dealt from the seed by the deal check (`checked`)
      my_cards: p.my_cards,
      bids: p.bids,
      passes: p.passes,
      plays: tricks.flatMap((t) => t.plays),
      trick_winners: tricks.map((t) => t.winner),
      tricks_seen: tricks.map((t) => t.number),
      missed_tricks: [...Array(last).keys()].map((i) => i + 1).filter((n) => !seen.has(n)),
      tricks: [...msg.tricks],
      score: { sides: msg.sides.map((s) => [...s]), before: [...msg.before], delta: [...msg.delta], after: [...msg.after], bags_after: [...msg.bags_after] },
      notes: [...(msg.notes || [])],
      verified: "unchecked",
      saved_at: this.now().toISOString(),
    };
    this.store(record);
    return record;
  }

  // Keep one finished hand: appended to this table's game in play, or the start of a new game.
  store(record) {
    let index = this.games();
    let entry = index.find((g) => g.table === record.game_id && g.server === record.server && !g.finished);
    if (entry) {
      const records = this.records(entry.id);
      const lastHand = records.length ? records[records.length - 1].hand_number : 0;
      if (record.hand_number <= lastHand) entry = null; // the table's id was used again: a new game
    }
    if (!entry) {
      entry = { id: `${record.game_id}-${this.now().getTime().toString(36)}`, table: record.game_id, server: record.server, started: record.saved_at, finished: false };
      index = [entry, ...index];
    }
    const records = [...this.records(entry.id).filter((r) => r.hand_number !== record.hand_number), record].slice(-MAX_HANDS);
    Object.assign(entry, summaryOf(records), { updated: record.saved_at });
    this.save(entry, records, index);
  }

  // The deal check's result for a hand stored earlier: its verdict, its lines and (when the page
  // re-dealt the hand) every seat's cards as dealt.
  checked(table, handNumber, result) {
    const entry = this.games().find((g) => g.table === table && g.server === this.server && (!g.finished || g.updatedHand === handNumber));
    if (!entry) return;
    const records = this.records(entry.id);
    const record = records.find((r) => r.hand_number === handNumber);
    if (!record) return;
    record.verified = result.verdict;
    record.check = [...result.lines];
    if (Array.isArray(result.hands)) record.deal = result.hands.map((h) => [...h]);
    const index = this.games();
    const again = index.find((g) => g.id === entry.id);
    Object.assign(again, summaryOf(records));
    this.save(again, records, index);
  }

  // The game is over: its entry says so and how it ended.
  finishGame(msg) {
    const index = this.games();
    const entry = index.find((g) => g.table === msg.table && g.server === this.server && !g.finished);
    if (!entry) return;
    entry.finished = true;
    entry.winners = [...msg.winners];
    entry.final = [...msg.scores];
    this.save(entry, this.records(entry.id), index);
  }

  // Write a game and the index, most recently played first, at most MAX_GAMES; when the browser
  // refuses for want of room, drop the oldest other game and try again.
  save(entry, records, index) {
    let kept = [entry, ...index.filter((g) => g.id !== entry.id)];
    for (const gone of kept.slice(MAX_GAMES)) this.storage.removeItem(GAME_KEY + gone.id);
    kept = kept.slice(0, MAX_GAMES);
    for (;;) {
      try {
        this.storage.setItem(GAME_KEY + entry.id, JSON.stringify(records));
        this.writeIndex(kept);
        return true;
      } catch {
        if (kept.length <= 1) return false; // not even one game fits: keep nothing new
        const oldest = kept.pop();
        this.storage.removeItem(GAME_KEY + oldest.id);
      }
    }
  }
}

// The account at a seat, from the lobby's description of the table (null when open or unknown).
function seatPlayer(info, seat) {
  const found = info && Array.isArray(info.seats) ? info.seats.find((s) => s.seat === seat) : null;
  return found && found.player ? String(found.player) : null;
}

function summaryOf(records) {
  const summary = gameSummary(records);
  const last = records[records.length - 1];
  const checks = new Set(records.map((r) => String(r.verified || "")));
  return {
    game: summary.game,
    hands: records.length,
    names: summary.names,
    sides: summary.sides,
    scores: summary.scores,
    updatedHand: last.hand_number,
    verified: checks.has("MISMATCH") ? "MISMATCH" : checks.size === 1 && checks.has("verified") ? "verified" : "partly",
  };
}

function readJson(storage, key) {
  try {
    return JSON.parse(storage.getItem(key) || "null");
  } catch {
    return null;
  }
}

// What each message adds to the hand in play.
const GATHER = {
  snapshot(msg) {
    // Joined, reloaded or resynced: the hand in play goes on where it was, or is joined midway.
    const view = msg.view || {};
    this.facts = { table: msg.table, seat: msg.seat ?? null, players: Number(view.players || 4), game: String(view.game || "spades") };
    const hand = Number(view.hand_number || 0);
    if (msg.commitment && hand) this.commitments[hand] = this.commitments[hand] || msg.commitment;
    if (!hand || view.phase === "game_over" || this.pendingFor(hand)) return;
    this.startHand(hand, Number(view.dealer || 0), { commitment: this.commitments[hand], myCards: null, midway: true });
  },
  deal_commitment(msg) { this.commitments[msg.hand_number] = msg.commitment; },
  hand_dealt(msg) {
    const commitment = this.commitments[msg.hand_number] || msg.commitment;
    this.startHand(msg.hand_number, msg.dealer, { commitment, myCards: msg.cards || null, midway: false });
  },
  hand_looked(msg) {
    const p = this.pendingFor();
    if (p && msg.seat === this.facts.seat && msg.cards && !p.my_cards) p.my_cards = sortCards(msg.cards);
  },
  bid_made(msg) {
    const p = this.pendingFor();
    if (p) p.bids.push({ seat: msg.seat, text: msg.text });
  },
  cards_passed(msg) { moved(this.pendingFor(), msg); },
  cards_exchanged(msg) { moved(this.pendingFor(), msg); },
  trick_won(msg) {
    const p = this.pendingFor();
    if (p && !p.tricks.some((t) => t.number === msg.trick_number)) {
      p.tricks.push({ number: msg.trick_number, plays: msg.plays.map((x) => [x[0], x[1]]), winner: msg.seat });
    }
  },
  hand_scored(msg, info) { return this.finishHand(msg, info); },
  game_over(msg) { this.finishGame(msg); },
};

function moved(pending, msg) {
  if (pending) pending.passes.push({ giver: msg.giver, receiver: msg.receiver, cards: msg.cards ? [...msg.cards] : null });
}
