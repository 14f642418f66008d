// The replays' hand review (review.js): a `hand_review` put on its hand (each card's note, the
// lines `spades replay --analyze` prints), and the run over a game's hands: one request at a time,
// stopped and gone on with, `review_busy` asked again, a refusal said, no connection said.
import assert from "node:assert/strict";
import { test } from "node:test";

import { handOf } from "../../../server/web/static/js/replay.js";
import { applyReview, BUSY_TRIES, costNote, reviewLines, ReviewRun } from "../../../server/web/static/js/review.js";

const PLAYS = [[0, "3C"], [1, "2C"], [2, "5C"], [3, "4C"]];

function record(number = 1) {
  return {
    format: "spades-client-hand/1", preset: "standard", options: {}, players: 4, hand_number: number,
    dealer: 3, seat: 0, seed: "5eed0042", plays: PLAYS, trick_winners: [2], tricks: [3, 3, 4, 3],
    bids: [{ seat: 0, text: "3" }, { seat: 1, text: "3" }, { seat: 2, text: "2" }, { seat: 3, text: "4" }],
  };
}

const ANSWER = { t: "hand_review", double_dummy: [4, 9], costs: [0, 0, 0, 1], budget: 60000, unanswered: 0 };

test("a card's note says what it cost", () => {
  assert.equal(costNote(0), null);
  assert.equal(costNote(1), "cost 1 trick");
  assert.equal(costNote(2), "cost 2 tricks");
  assert.equal(costNote(null), "not analysed");
});

test("a review on its hand: notes and the lines of spades replay --analyze", () => {
  const hand = handOf(record());
  applyReview(hand, ANSWER);
  assert.deepEqual(hand.tricks[0].plays.map((p) => p.note), [null, null, null, "cost 1 trick"]);
  assert.deepEqual(reviewLines(hand), [
    "Double dummy at the start of play: North-South 4 (bid 3 + 2, took 7); East-West 9 (bid 3 + 4, took 6)",
    "Cards that cost tricks: trick 1 East 4♣ −1",
    "Tricks lost by play: You 0, West 0, North 0, East 1 (total 1)",
  ]);
  const unknown = handOf(record());
  applyReview(unknown, { ...ANSWER, double_dummy: null, costs: [null, null, 0, 0], unanswered: 2 });
  assert.deepEqual(reviewLines(unknown), [
    "Double dummy at the start of play: not analysed (budget)",
    "No card cost its side a trick",
    "Tricks lost by play: You 0, West 0, North 0, East 0 (total 0)",
    "Not analysed (budget): 2 cards, a position past 60,000 searched positions",
  ]);
  assert.equal(unknown.tricks[0].plays[0].note, "not analysed");
  // With the score's sides, the sides are named as the replay names them.
  const scored = handOf({ ...record(), score: { sides: [[0, 2], [1, 3]], before: [0, 0], delta: [70, -40], after: [70, -40], bags_after: [0, 0] } });
  applyReview(scored, ANSWER);
  assert.match(reviewLines(scored)[0], /^Double dummy at the start of play: your side \(North-South\) 4 \(bid 3 \+ 2, took 7\); East-West 9/);
});

// A server the test answers by hand: each request waits until `answer(i, reply)`.
function server() {
  const asked = [];
  const pending = [];
  return {
    asked,
    request(message) {
      asked.push(message);
      return new Promise((resolve) => pending.push(resolve));
    },
    answer(reply) { pending.shift()(reply); },
  };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

test("one hand at a time; stopped, the answer on its way is kept, and a restart goes on", async () => {
  const hands = [handOf(record(1)), handOf(record(2)), handOf(record(3))];
  const srv = server();
  let changes = 0;
  const run = new ReviewRun(hands, srv.request, () => { changes += 1; });
  const first = run.start();
  await settle();
  assert.equal(srv.asked.length, 1);
  assert.equal(srv.asked[0].t, "review");
  assert.equal(srv.asked[0].hand.hand_number, 1);
  assert.equal(run.status(), "Reviewing hand 1 of 3 (0 done)…");
  srv.answer(ANSWER);
  await settle();
  assert.equal(srv.asked.length, 2);
  run.stop();
  assert.equal(run.status(), "Stopped: 1 of 3 hands reviewed.");
  // Started again before hand 2's answer came: no second request for it.
  const second = run.start();
  await settle();
  assert.equal(srv.asked.length, 2);
  srv.answer(ANSWER);
  await first;
  await settle();
  assert.equal(srv.asked.length, 3);
  srv.answer({ t: "error", code: "not_reviewable", message: "the hand's play is not finished" });
  await second;
  assert.ok(hands[0].review && hands[1].review && !hands[2].review);
  assert.deepEqual(reviewLines(hands[2]), ["Not reviewed: the hand's play is not finished"]);
  assert.equal(run.status(), "Reviewed: 3 hands.");
  assert.ok(changes > 0);
});

test("review_busy is asked again, a bounded number of times; no connection is said", async () => {
  const hands = [handOf(record(1))];
  let asked = 0;
  const waits = [];
  const busy = { t: "error", code: "review_busy", message: "the server is reviewing 2 hands", retry_ms: 5000 };
  const run = new ReviewRun(hands, async () => { asked += 1; return busy; }, () => {}, async (ms) => { waits.push(ms); });
  await run.start();
  assert.equal(asked, BUSY_TRIES + 1);
  assert.deepEqual(waits, Array(BUSY_TRIES).fill(5000));
  assert.match(run.status(), /^The server is busy \(the server is reviewing 2 hands\)\. Try again later\. 0 of 1 hands reviewed\.$/);
  const offline = new ReviewRun([handOf(record(1))], async () => null, () => {});
  await offline.start();
  assert.match(offline.status(), /^Not connected/);
});
