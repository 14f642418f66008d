// The replay's model (server/web/static/js/replay.js) on the engine's own hand records
// (spades-hand/1, from tests/web/test_page_logic.py): reading a .jsonl, the tricks and names, the
// stepping, and the deal re-checked from the seed; bad files refused with a sentence.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import {
  checkRecord, checkRecordShape, Cursor, gameSummary, groupGames, handOf, parseJsonl, position, RecordError, trickText,
} from "../../../server/web/static/js/replay.js";
import { cardNumber } from "../../../server/web/static/js/cards.js";
import { Verdict } from "../../../server/web/static/js/verify.js";

const fixtures = JSON.parse(readFileSync(process.env.SPADES_FIXTURES, "utf8"));
const standard = fixtures.records.standard;
const jsonl = (records) => records.map((r) => JSON.stringify(r)).join("\n") + "\n";

test("a .jsonl of server records reads back as one game, hand by hand, trick by trick", () => {
  const records = parseJsonl(jsonl(standard));
  const games = groupGames(records);
  assert.equal(games.length, 1);
  assert.equal(games[0].gameId, "g-standard");
  assert.equal(games[0].records.length, standard.length);
  for (const record of standard) {
    const hand = handOf(record);
    assert.equal(hand.number, record.hand_number);
    assert.equal(hand.tricks.length, 13);
    // Every trick is the record's plays four at a time, with the record's winner.
    hand.tricks.forEach((trick, i) => {
      assert.equal(trick.number, i + 1);
      assert.deepEqual(trick.plays.map((p) => [p.seat, p.card]), record.plays.slice(4 * i, 4 * i + 4));
      assert.equal(trick.winner, record.trick_winners[i]);
      assert.equal(trick.leader, record.plays[4 * i][0]);
      assert.ok(trick.plays.every((p) => p.note === null), "a place for a later per-card note");
    });
    assert.deepEqual(hand.names, ["South", "West", "North", "East"]);
    assert.deepEqual(hand.sides.map((s) => s.name), ["North-South", "East-West"]);
    assert.deepEqual(hand.sides.map((s) => s.after), record.score.after);
    assert.equal(hand.bids.length, 4);
    assert.ok(hand.bids.every((b) => /^(Blind )?(Nil|nil|\d+)/.test(b.text)), JSON.stringify(hand.bids));
  }
  const summary = gameSummary(records);
  assert.deepEqual(summary.scores, standard[standard.length - 1].score.after);
  assert.equal(summary.hands, standard.length);
  assert.match(trickText(handOf(standard[0]), handOf(standard[0]).tricks[0]), /^(South|West|North|East) (10|[2-9JQKA])[♣♦♥♠], .* → (South|West|North|East)$/);
});

test("the deal is re-dealt from the seed: four-handed Spades and Hearts verified", async () => {
  for (const record of [...standard, ...fixtures.records.hearts]) {
    const result = await checkRecord(record);
    assert.equal(result.verdict, Verdict.VERIFIED, result.lines.join("\n"));
    assert.match(result.lines.join("\n"), /re-dealt from the seed/);
  }
});

test("a deal the page cannot re-deal says so and checks the seed", async () => {
  const [record] = fixtures.records["three-player"];
  const result = await checkRecord(record);
  assert.equal(result.verdict, Verdict.SEED_MATCHES, result.lines.join("\n"));
  assert.match(result.lines.join("\n"), /not re-dealt on this page \(a 3-handed deal\)/);
  const hand = handOf(record);
  assert.equal(hand.tricks.length, 17);
  assert.deepEqual(hand.names, ["seat 0", "seat 1", "seat 2"]);
});

test("a tampered record fails its deal check, saying why", async () => {
  const record = structuredClone(standard[0]);
  const wrongSeed = { ...record, seed: "00".repeat(16) };
  assert.equal((await checkRecord(wrongSeed)).verdict, Verdict.MISMATCH);
  const swapped = structuredClone(record);
  [swapped.deal[0][0], swapped.deal[1][0]] = [swapped.deal[1][0], swapped.deal[0][0]];
  const result = await checkRecord(swapped);
  assert.equal(result.verdict, Verdict.MISMATCH);
  assert.match(result.lines.join("\n"), /the seed deals seat 0/);
  const played = structuredClone(record);
  const other = played.plays.findIndex((p) => p[0] !== played.plays[0][0]);
  played.plays[0] = [played.plays[other][0], played.plays[0][1]];
  const plays = await checkRecord(played);
  assert.equal(plays.verdict, Verdict.MISMATCH);
  assert.match(plays.lines.join("\n"), /which the seed did not deal to it/);
  assert.equal((await checkRecord({ ...record, seed: undefined })).verdict, Verdict.UNCHECKED);
  assert.equal((await checkRecord({ ...record, commitment: null })).verdict, Verdict.UNCHECKED);
});

test("stepping: next and previous trick run across hands, and stop at the ends", () => {
  const hands = standard.map(handOf);
  const c = new Cursor(hands);
  assert.ok(c.atStart);
  assert.equal(c.previousTrick(), false);
  for (let i = 0; i < 12; i++) assert.ok(c.nextTrick());
  assert.equal(c.trick, 12);
  assert.ok(c.nextTrick());
  assert.deepEqual([c.hand, c.trick], [1, 0]);
  assert.ok(c.previousTrick());
  assert.deepEqual([c.hand, c.trick], [0, 12]);
  assert.ok(c.previousHand()); // back to this hand's first trick
  assert.deepEqual([c.hand, c.trick], [0, 0]);
  assert.ok(c.nextHand());
  assert.equal(c.nextHand(), false);
  c.goTrick(99);
  assert.ok(c.atEnd);
  assert.equal(c.nextTrick(), false);
  assert.ok(c.previousHand());
  assert.deepEqual([c.hand, c.trick], [1, 0]);
  assert.ok(c.previousHand());
  assert.deepEqual([c.hand, c.trick], [0, 0]);
});

test("seats are drawn from the reader's seat round the table", () => {
  assert.deepEqual([0, 1, 2, 3].map((s) => position(s, 4, 2)), ["top", "right", "bottom", "left"]);
  assert.deepEqual([0, 1, 2].map((s) => position(s, 3, 0)), ["bottom", "left", "right"]);
  assert.deepEqual([0, 1].map((s) => position(s, 2, null)), ["bottom", "top"]);
});

test("bad files are refused with the line and the reason", () => {
  const cases = [
    ["", /no hand records/],
    ["{not json\n", /line 1 is not JSON/],
    [`${JSON.stringify(standard[0])}\n[1, 2]\n`, /line 2: not a JSON object/],
    [JSON.stringify({ format: "something/1" }), /line 1: not a hand record/],
    [JSON.stringify({ ...standard[0], players: 9 }), /`players` is not 2, 3 or 4/],
    [JSON.stringify({ ...standard[0], plays: [[0, "ZZ"]] }), /`plays` is not a list of \[seat, card\]/],
    [JSON.stringify({ ...standard[0], plays: [[7, "AS"]] }), /`plays`/],
    [JSON.stringify({ ...standard[0], trick_winners: ["x"] }), /`trick_winners`/],
    [JSON.stringify({ ...standard[0], score: { after: ["1"] } }), /`score.after`/],
    [JSON.stringify({ ...standard[0], deal: [["AS"]] }), /`deal`/],
    [JSON.stringify({ ...standard[0], bids: [{ seat: 0 }] }), /`bids`/],
  ];
  for (const [text, pattern] of cases) {
    assert.throws(() => parseJsonl(text), (error) => error instanceof RecordError && error.code === "bad_record" && pattern.test(error.message), text.slice(0, 60));
  }
  assert.doesNotThrow(() => checkRecordShape(standard[0]));
});

test("an older ladder match's two halves are two games", () => {
  const halves = standard.map((r, i) => ({ ...r, game_id: "m1", ladder: { match: "m1", half: i + 1, halves: 2 } }));
  const games = groupGames(halves);
  assert.deepEqual(games.map((g) => g.half), [1, 2]);
  const named = handOf({ ...standard[0], names: ["ada", "bot:heuristic", "fallback:random", null], seat: 0 });
  assert.deepEqual(named.names, ["You", "West (heuristic)", "North (random, fallback)", "East"]);
  assert.deepEqual(named.sides.map((s) => s.name), ["your side (North-South)", "East-West"]);
});

test("a record of its own with no deal is re-dealt from its plays when every card was seen", async () => {
  // As the page writes a hand whose check at the table did not finish: no deal, the reader's cards.
  const server = standard[0];
  const own = { ...structuredClone(server), format: "spades-client-hand/1", deal: null, seat: 2, my_cards: server.deal[2] };
  const result = await checkRecord(own);
  assert.equal(result.verdict, Verdict.VERIFIED, result.lines.join("\n"));
  assert.match(result.lines.join("\n"), /the deck being the 52 cards seen played/);
  assert.deepEqual(result.hands, server.deal.map((h) => [...h].sort((a, b) => cardNumber(a) - cardNumber(b))));
  const wrongCards = { ...own, my_cards: server.deal[1] };
  assert.equal((await checkRecord(wrongCards)).verdict, Verdict.MISMATCH);
  const missed = { ...own, plays: own.plays.slice(4), trick_winners: own.trick_winners.slice(1), tricks_seen: [...Array(12).keys()].map((i) => i + 2), missed_tricks: [1] };
  const partial = await checkRecord(missed);
  assert.equal(partial.verdict, Verdict.SEED_MATCHES);
  assert.match(partial.lines.join("\n"), /not every card of the hand was seen played/);
  assert.deepEqual(handOf(missed).tricks.map((t) => t.number), [...Array(12).keys()].map((i) => i + 2));
});
