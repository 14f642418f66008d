// The hand's order on the screen (issue 39 item 2): suits grouped, colours alternating where the
// hand allows, ranks rising, every card kept.
import assert from "node:assert/strict";
import { test } from "node:test";

import { cardFace, displayOrder, sortCards } from "../../../server/web/static/js/cards.js";

const COLOUR = { C: "black", S: "black", D: "red", H: "red" };
const suitsOf = (cards) => cards.map((c) => c[1]).filter((s, i, all) => i === 0 || all[i - 1] !== s);

test("the hand alternates colours whenever its suits allow it", () => {
  const cases = [
    [["2C", "AS", "3D", "KH"], ["S", "H", "C", "D"]],
    [["2C", "AS", "3D"], ["S", "D", "C"]],
    [["2C", "AS", "KH"], ["S", "H", "C"]],
    [["2C", "3D", "KH"], ["H", "C", "D"]],
    [["2C", "AS"], ["S", "C"]],
    [["5H"], ["H"]],
  ];
  for (const [hand, suits] of cases) {
    const shown = displayOrder(hand);
    assert.deepEqual(suitsOf(shown), suits, hand.join(" "));
    assert.deepEqual(sortCards(shown), sortCards(hand));
  }
  // Every 1- to 4-suit hand: no two neighbouring suits share a colour that could have been split.
  for (let mask = 1; mask < 16; mask++) {
    const hand = ["C", "D", "H", "S"].filter((_, i) => mask & (1 << i)).flatMap((s) => [`9${s}`, `2${s}`, `A${s}`]);
    const groups = suitsOf(displayOrder(hand));
    const blacks = groups.filter((s) => COLOUR[s] === "black").length;
    const clashes = groups.slice(1).filter((s, i) => COLOUR[s] === COLOUR[groups[i]]).length;
    assert.equal(clashes, Math.max(0, Math.abs(blacks - (groups.length - blacks)) - 1), groups.join(""));
  }
  assert.deepEqual(displayOrder(["AS", "2S", "TS"]), ["2S", "TS", "AS"]);
  assert.deepEqual(displayOrder(["2S", "LJ", "BJ"]), ["LJ", "BJ", "2S"]);
});

test("a card's face names it and gives its suit for the corner", () => {
  assert.deepEqual(cardFace("TD"), { rank: "10", suit: "♦", letter: "D", red: true, name: "10 of diamonds" });
  assert.equal(cardFace("AS").name, "ace of spades");
});
