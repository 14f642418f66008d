// The page's reducer over the protocol document's whole-hand walk-through (docs/protocol.md,
// "A whole hand, step by step"), and the actions it offers.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { actionLabel, bidLabel, classify, matchChoice } from "../../../server/web/static/js/actions.js";
import { TableState } from "../../../server/web/static/js/state.js";
import { checkHand, Verdict } from "../../../server/web/static/js/verify.js";

const fixtures = JSON.parse(readFileSync(process.env.SPADES_FIXTURES, "utf8"));

test("the walk-through's messages keep the picture true", async () => {
  const messages = fixtures.walkthrough;
  const state = new TableState(messages.find((m) => m.t === "snapshot").table);
  let now = 0;
  let cardsSeen = 0;
  let mine = 0;
  for (const msg of messages) {
    now += 100;
    state.apply(msg, now);
    if (msg.t === "hand_dealt") {
      assert.equal(state.hand().length, 13);
      assert.equal(state.evidence.commitment, msg.commitment);
    }
    if (msg.t === "your_turn") {
      assert.equal(state.turn.version, msg.version);
      assert.ok(state.acting().includes(0));
    }
    if (msg.t === "card_played") {
      cardsSeen += 1;
      assert.equal(state.view.played.length, cardsSeen);
      if (msg.seat === 0) {
        mine += 1;
        assert.ok(!state.hand().includes(msg.card));
      }
    }
    if (msg.t === "turn") assert.deepEqual(Object.keys(state.clocks).map(Number), msg.to_act);
  }
  // (Tricks 3 to 12 are left out of the document, so the hand still holds what they used.)
  assert.equal(state.hand().length, 13 - mine);
  assert.equal(state.turn, null);
  assert.deepEqual(state.view.scores, [19, 4, 2, 1]);
  assert.deepEqual(state.gameOver.winners, [3]);
  assert.equal(state.lastScored.hand_number, 1);
  // The hand's result keeps the hand's bids (the next deal clears the view's), and the log lists
  // every play by name with its suit symbol, and each hand's points (issue 39).
  assert.deepEqual(state.lastScored.bids, state.scored[0].bids);
  assert.equal(state.lastScored.bids.length, 4);
  const plays = messages.filter((m) => m.t === "card_played");
  const first = plays[0];
  assert.ok(state.log.some((line) => /^(You play|West plays|North plays|East plays) (10|[2-9JQKA])[♣♦♥♠]\.$/.test(line)), state.log.join("\n"));
  assert.equal(state.log.filter((line) => / plays? /.test(line)).length, plays.length);
  assert.ok(state.log.some((line) => line.includes(first.card[1] === "S" ? "♠" : first.card[1] === "H" ? "♥" : first.card[1] === "D" ? "♦" : "♣")));
  assert.ok(state.log.some((line) => /^Hand 1 scored: .*\+19 \(19\)/.test(line)), state.log.join("\n"));
  // The walk-through leaves tricks 3 to 12 out: the seed is checked against the commitment, and
  // the result says the deal itself was not recomputed.
  const pending = state.pendingChecks;
  assert.equal(pending.length, 1);
  const result = await checkHand(pending[0].evidence, pending[0].seed);
  assert.equal(result.verdict, Verdict.SEED_MATCHES, result.lines.join("\n"));
  // Positions around the table, as seen from seat 0.
  assert.deepEqual([0, 1, 2, 3].map((s) => state.position(s)), ["bottom", "left", "top", "right"]);
  assert.deepEqual([0, 1, 2, 3].map((s) => state.place(s)), ["You", "West", "North", "East"]);
});

test("seat_status marks a dropped seat, how long it is held, and its return", () => {
  const state = new TableState("t1");
  state.apply({ t: "snapshot", table: "t1", version: 3, seat: 0, view: { players: 4, version: 3 } }, 0);
  state.apply({ t: "seat_status", table: "t1", seat: 2, connected: false, hold_ms: 120000 }, 1000);
  assert.deepEqual(state.seatStatus[2], { connected: false, holdUntil: 121000 });
  assert.match(state.log.at(-1), /North lost the connection; the seat is held for 120 s/);
  state.apply({ t: "seat_status", table: "t1", seat: 2, connected: true }, 5000);
  assert.equal(state.seatStatus[2].connected, true);
  assert.match(state.log.at(-1), /North is back/);
});

test("a resync at the turn's own version leaves the decision open; a later one ends it", () => {
  const state = new TableState("t1");
  const view = { players: 4, version: 3, hand: ["2C", "3C"] };
  state.apply({ t: "snapshot", table: "t1", version: 3, seat: 0, view }, 0);
  state.apply({ t: "your_turn", table: "t1", version: 3, seat: 0, legal: [{ kind: "play", card: "2C" }], deadline_ms: 30000, bank_ms: 0 }, 0);
  assert.equal(state.turn.version, 3);
  state.apply({ t: "snapshot", table: "t1", version: 3, seat: 0, view }, 10);
  assert.equal(state.turn.version, 3);
  state.apply({ t: "snapshot", table: "t1", version: 4, seat: 0, view: { ...view, version: 4 } }, 20);
  assert.equal(state.turn, null);
});

test("a message for another table changes nothing", () => {
  const state = new TableState("t1");
  assert.equal(state.apply({ t: "card_played", table: "t2", version: 3, seat: 1, card: "2C", trick_number: 1 }, 0), false);
  assert.deepEqual(state.view, {});
});

test("the legal list becomes cards to play, buttons, and choices of cards", () => {
  const bids = classify([{ kind: "bid", tricks: 0, blind: false }, { kind: "bid", tricks: 0, blind: true }, { kind: "bid", tricks: 4, blind: false }, { kind: "look" }]);
  assert.deepEqual(bids.buttons.map(actionLabel), ["Nil", "Blind nil", "4", "Look at my cards"]);
  assert.equal(bids.plays.size, 0);
  const plays = classify([{ kind: "play", card: "QS" }, { kind: "play", card: "2H" }]);
  assert.deepEqual([...plays.plays], ["QS", "2H"]);
  const pass = classify([{ kind: "pass", cards: ["2C", "3C", "4C"] }, { kind: "pass", cards: ["2C", "3C", "AS"] }]);
  assert.deepEqual(pass.choice.sizes, [3]);
  assert.equal(matchChoice(pass.choice, ["AS", "2C", "3C"]), pass.choice.actions[1]);
  assert.equal(matchChoice(pass.choice, ["AS", "2C"]), null);
  assert.equal(bidLabel({ tricks: 7, blind: true }), "Blind 7");
  assert.equal(bidLabel({ tricks: 0, moe: "little" }), "Little Moe");
});
