// The page's record of the games it saw (server/web/static/js/journal.js), fed the protocol
// document's walk-through (docs/protocol.md, "A whole hand, step by step"): the hand's record in
// the terminal client's `spades-client-hand/1` field names, its deal check added, a reload that
// loses nothing, and the storage bounded (MAX_GAMES, the browser's quota).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { sortCards } from "../../../server/web/static/js/cards.js";
import { Journal, MAX_GAMES } from "../../../server/web/static/js/journal.js";
import { checkRecordShape, handOf } from "../../../server/web/static/js/replay.js";

const fixtures = JSON.parse(readFileSync(process.env.SPADES_FIXTURES, "utf8"));
const messages = fixtures.walkthrough;
const TABLE = messages.find((m) => m.t === "snapshot").table;
const INFO = { table: TABLE, preset: "standard", options: {}, seats: [0, 1, 2, 3].map((seat) => ({ seat, player: seat ? "bot:heuristic" : "ada", bot: seat > 0 })) };

// localStorage's interface over a Map, refusing writes past `quota` characters as browsers do.
class FakeStorage {
  constructor(quota = Infinity) { this.map = new Map(); this.quota = quota; }
  getItem(key) { return this.map.has(key) ? this.map.get(key) : null; }
  setItem(key, value) {
    const used = [...this.map].reduce((n, [k, v]) => n + (k === key ? 0 : k.length + v.length), 0);
    if (used + key.length + String(value).length > this.quota) throw new Error("QuotaExceededError");
    this.map.set(key, String(value));
  }
  removeItem(key) { this.map.delete(key); }
}

let clock = Date.parse("2026-12-05T04:00:00Z");
const now = () => new Date((clock += 1000));

function play(journal, msgs, table = TABLE) {
  let record = null;
  for (const msg of msgs) {
    const shown = msg.table === TABLE ? { ...msg, table } : msg;
    const out = journal.observe(shown, { ...INFO, table });
    if (out) record = out;
  }
  return record;
}

test("the walk-through's hand becomes one spades-client-hand/1 record", () => {
  const journal = new Journal(new FakeStorage(), new FakeStorage(), { server: "lan:7778", now });
  const record = play(journal, messages);
  assert.ok(record);
  checkRecordShape(record);
  const scored = messages.find((m) => m.t === "hand_scored");
  const dealt = messages.find((m) => m.t === "hand_dealt");
  const won = messages.filter((m) => m.t === "trick_won");
  assert.equal(record.format, "spades-client-hand/1");
  assert.equal(record.game_id, TABLE);
  assert.equal(record.server, "lan:7778");
  assert.equal(record.seat, 0);
  assert.deepEqual(record.names, ["ada", "bot:heuristic", "bot:heuristic", "bot:heuristic"]);
  assert.equal(record.hand_number, scored.hand_number);
  assert.equal(record.dealer, dealt.dealer);
  assert.equal(record.commitment, dealt.commitment);
  assert.equal(record.seed, scored.seed);
  assert.deepEqual(record.my_cards, sortCards(dealt.cards));
  assert.equal(record.my_cards.length, 13);
  assert.deepEqual(record.plays, won.flatMap((m) => m.plays));
  assert.deepEqual(record.trick_winners, won.map((m) => m.seat));
  assert.deepEqual(record.tricks_seen, won.map((m) => m.trick_number));
  // The document leaves tricks 3 to 12 out: the record says they were not seen.
  assert.deepEqual(record.missed_tricks, [3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
  assert.deepEqual(record.score, { sides: scored.sides, before: scored.before, delta: scored.delta, after: scored.after, bags_after: scored.bags_after });
  assert.deepEqual(record.tricks, scored.tricks);
  assert.equal(record.verified, "unchecked");

  const [game] = journal.games();
  assert.equal(game.table, TABLE);
  assert.equal(game.hands, 1);
  assert.equal(game.finished, true); // game_over came after
  assert.deepEqual(game.final, messages.find((m) => m.t === "game_over").scores);
  assert.deepEqual(journal.records(game.id), [record]);
  // Replayed as any record: the tricks seen, numbered as they were.
  const hand = handOf(record);
  assert.deepEqual(hand.tricks.map((t) => t.number), [1, 2, 13]);
  assert.deepEqual(hand.names, ["You", "West (heuristic)", "North (heuristic)", "East (heuristic)"]);
  assert.equal(hand.bids.length, messages.filter((m) => m.t === "bid_made").length);
  // Its .jsonl is one line a hand.
  assert.deepEqual(journal.jsonl(game.id).trim().split("\n").map((l) => JSON.parse(l)), [record]);
});

test("the deal check's result is added to the stored hand", () => {
  const journal = new Journal(new FakeStorage(), new FakeStorage(), { server: "lan", now });
  const record = play(journal, messages);
  const deal = [["AS"], ["KS"], ["QS"], ["JS"]];
  journal.checked(TABLE, record.hand_number, { verdict: "verified", lines: ["seed matches"], hands: deal });
  const [game] = journal.games();
  const [stored] = journal.records(game.id);
  assert.equal(stored.verified, "verified");
  assert.deepEqual(stored.check, ["seed matches"]);
  assert.deepEqual(stored.deal, deal);
  assert.equal(game.verified, "verified");
});

test("a reload in the middle of the hand loses none of it", () => {
  const session = new FakeStorage();
  const storage = new FakeStorage();
  const cut = messages.findIndex((m) => m.t === "trick_won") + 1;
  play(new Journal(storage, session, { server: "lan", now }), messages.slice(0, cut));
  // The page is reloaded: a new journal over the same storage, and the server's snapshot again.
  const again = new Journal(storage, session, { server: "lan", now });
  const snapshot = messages.find((m) => m.t === "snapshot");
  const dealt = messages.find((m) => m.t === "hand_dealt");
  again.observe({ ...snapshot, view: { ...snapshot.view, hand_number: dealt.hand_number, dealer: dealt.dealer, phase: "playing" } }, INFO);
  const record = play(again, messages.slice(cut));
  assert.deepEqual(record.tricks_seen, messages.filter((m) => m.t === "trick_won").map((m) => m.trick_number));
  assert.equal(record.commitment, dealt.commitment);
  assert.equal(record.my_cards.length, 13);
});

test("at most MAX_GAMES games are kept, the oldest dropped; a table's id used again is a new game", () => {
  const storage = new FakeStorage();
  const journal = new Journal(storage, new FakeStorage(), { server: "lan", now });
  for (let i = 0; i < MAX_GAMES + 3; i++) play(journal, messages, `t${i}`);
  const games = journal.games();
  assert.equal(games.length, MAX_GAMES);
  assert.equal(games[0].table, `t${MAX_GAMES + 2}`); // most recent first
  assert.ok(!games.some((g) => g.table === "t0" || g.table === "t2"));
  const kept = [...storage.map.keys()].filter((k) => k.startsWith("spades.game."));
  assert.equal(kept.length, MAX_GAMES);
  // The same table id again (a server started afresh): its hand 1 is a new game.
  play(journal, messages, `t${MAX_GAMES + 2}`);
  assert.equal(journal.games().filter((g) => g.table === `t${MAX_GAMES + 2}`).length, 2);
});

test("when the browser's quota is reached the oldest games go first", () => {
  const probe = new Journal(new FakeStorage(), new FakeStorage(), { server: "lan", now });
  play(probe, messages);
  const oneGame = [...probe.storage.map.values()].reduce((n, v) => n + v.length + 40, 0);
  const storage = new FakeStorage(oneGame * 3.5);
  const journal = new Journal(storage, new FakeStorage(), { server: "lan", now });
  for (let i = 0; i < 6; i++) play(journal, messages, `q${i}`);
  const tables = journal.games().map((g) => g.table);
  assert.ok(tables.length >= 2 && tables.length <= 3, tables.join());
  assert.equal(tables[0], "q5");
  assert.ok(!tables.includes("q0"));
  // A message of another table than the one shown is not taken for this one's.
  assert.equal(journal.observe({ t: "trick_won", table: "elsewhere", plays: [], seat: 0, trick_number: 1 }, null), null);
});
