// The profile panel's words (profile.js) for a `player_stats` reply: shares, average bags, time.
import assert from "node:assert/strict";
import { test } from "node:test";

import { profileLines } from "../../../server/web/static/js/profile.js";

const ada = {
  t: "player_stats", name: "ada", kind: "human", games: 3, wins: 1, hands: 40, contracts: 36,
  contracts_made: 29, contracts_set: 7, bags: 41, nil_tried: 3, nil_made: 2, blind_nil_tried: 1,
  blind_nil_made: 0, decisions: 560, decision_ms: 1344000, dd_hands: 31, dd_tricks_lost: 12,
};

test("the statistics in words", () => {
  assert.deepEqual(Object.fromEntries(profileLines(ada)), {
    Games: "3 (1 won)",
    Hands: "40",
    "Contracts made": "29 of 36 (81%)",
    "Contracts set": "7",
    "Average bags": "1.14",
    "Nil made": "2 of 3 (67%)",
    "Blind nil made": "0 of 1 (0%)",
    "Time a decision": "2.40 s (560 decisions)",
    "Tricks lost to play": "12 in 31 hands analysed double dummy (9 not analysed)",
  });
});

test("an account with nothing counted yet shows no division by zero", () => {
  const none = Object.fromEntries(Object.keys(ada).map((k) => [k, typeof ada[k] === "number" ? 0 : ada[k]]));
  const rows = Object.fromEntries(profileLines(none));
  assert.equal(rows["Contracts made"], "none");
  assert.equal(rows["Average bags"], "-");
  assert.equal(rows["Time a decision"], "- (0 decisions)");
});
