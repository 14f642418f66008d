// The page's deal check against the engine (fixtures from engine/deal.py via client/verify.py).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { penaltyPoints } from "../../../server/web/static/js/cards.js";
import { checkHand, deal, Verdict } from "../../../server/web/static/js/verify.js";

const fixtures = JSON.parse(readFileSync(process.env.SPADES_FIXTURES, "utf8"));
const fromHex = (hex) => Uint8Array.from(hex.match(/../g), (b) => parseInt(b, 16));

test("the shuffle and the deal are the engine's", async () => {
  for (const d of fixtures.deals) {
    const hands = await deal(fromHex(d.seed), d.deck, d.dealer, d.hands.length);
    assert.deepEqual(hands, d.hands, `${d.preset} seed ${d.seed}`);
  }
});

function fullEvidence(d, commitment) {
  return {
    hand: 1, dealer: d.dealer, seat: 0, players: d.hands.length, commitment,
    myCards: [...d.hands[0]],
    plays: d.hands.flatMap((hand, seat) => hand.map((card) => [seat, card])),
    transfers: [], deckCards: d.hands.flat(),
  };
}

test("a whole hand seen is verified; a wrong seed, card or seat is a mismatch", async () => {
  const d = fixtures.deals[0];
  const ok = await checkHand(fullEvidence(d, d.commitment), d.seed);
  assert.equal(ok.verdict, Verdict.VERIFIED, ok.lines.join("\n"));
  const otherSeed = await checkHand(fullEvidence(d, d.commitment), "00".repeat(16));
  assert.equal(otherSeed.verdict, Verdict.MISMATCH);
  const moved = fullEvidence(d, d.commitment);
  moved.plays[0] = [1, moved.plays[0][1]]; // seat 1 "played" a card dealt to seat 0
  assert.equal((await checkHand(moved, d.seed)).verdict, Verdict.MISMATCH);
  const swapped = fullEvidence(d, d.commitment);
  swapped.myCards[0] = d.hands[1][0];
  assert.equal((await checkHand(swapped, d.seed)).verdict, Verdict.MISMATCH);
  // A Hearts pass moves cards: a card played by its receiver is no false alarm.
  const passed = fullEvidence(d, d.commitment);
  passed.plays[0] = [1, passed.plays[0][1]];
  passed.transfers = [[0, 1]];
  assert.equal((await checkHand(passed, d.seed)).verdict, Verdict.VERIFIED);
});

test("a hand not wholly seen checks the commitment only, and says so", async () => {
  const d = fixtures.deals[0];
  const partial = fullEvidence(d, d.commitment);
  partial.deckCards = partial.deckCards.slice(0, 40);
  const result = await checkHand(partial, d.seed);
  assert.equal(result.verdict, Verdict.SEED_MATCHES);
  assert.match(result.lines.at(-1), /not recomputed/);
  assert.equal((await checkHand({ ...partial, commitment: null }, d.seed)).verdict, Verdict.UNCHECKED);
  assert.equal((await checkHand(partial, "xyz")).verdict, Verdict.MISMATCH);
});

test("Hearts points per card are the engine's", () => {
  for (const [card, plain, withJack] of fixtures.penalty) {
    assert.equal(penaltyPoints([card], false), plain, card);
    assert.equal(penaltyPoints([card], true), withJack, card);
  }
});

test("the page's own SHA-256 is Web Crypto's, for every length around the block edges", async () => {
  const { sha256Bytes } = await import("../../../server/web/static/js/sha256.js");
  for (let n = 0; n < 200; n++) {
    const data = Uint8Array.from({ length: n }, (_, i) => (i * 131 + n) & 0xff);
    const expected = new Uint8Array(await crypto.subtle.digest("SHA-256", data));
    assert.deepEqual(sha256Bytes(data), expected, `length ${n}`);
  }
  assert.equal(Buffer.from(sha256Bytes(new TextEncoder().encode("abc"))).toString("hex"),
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
});

test("without Web Crypto the deal is checked all the same", async () => {
  const d = fixtures.deals[1];
  const saved = Object.getOwnPropertyDescriptor(globalThis, "crypto");
  Object.defineProperty(globalThis, "crypto", { value: undefined, configurable: true });
  try {
    const result = await checkHand(fullEvidence(d, d.commitment), d.seed);
    assert.equal(result.verdict, Verdict.VERIFIED, result.lines.join("\n"));
  } finally {
    Object.defineProperty(globalThis, "crypto", saved);
  }
});
