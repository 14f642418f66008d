// The page's picture against the engine: event streams the Python engine generated (every preset
// and a few option mixes, a seat and a spectator; tests/web/view_streams.py) fed to TableState as
// the server sends them, and after each action the picture must be the engine's own view (but for
// the legal actions, which `your_turn` gives, and what engine.view_fold.UNTOLD lists).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { cardNumber } from "../../../server/web/static/js/cards.js";
import { HANDLED_MESSAGES, TableState } from "../../../server/web/static/js/state.js";
import { foldEvent, HANDLED } from "../../../server/web/static/js/view_fold.js";

const fixtures = JSON.parse(readFileSync(process.env.SPADES_FIXTURES, "utf8"));

function comparable(view, truth) {
  const out = structuredClone(view);
  delete out.legal;
  delete out.choose_cards;
  out.to_act = [...out.to_act].sort((a, b) => a - b); // the server's `turn` lists them in seat order
  if (truth.players === 2) {
    // engine.view_fold.UNTOLD: a two-handed double nil's unseen draw and its redraw.
    if (truth.seat !== undefined && !truth.looked[truth.seat]) out.hand = null;
    if (Array.isArray(out.received)) out.received = [...out.received].sort((a, b) => cardNumber(a) - cardNumber(b));
    if (truth.bids.some((bid) => bid && bid.double_nil)) out.discards = [];
  }
  return out;
}

for (const stream of fixtures.streams) {
  test(`the picture is the engine's view: ${stream.name}, ${stream.seat === null ? "a spectator" : `seat ${stream.seat}`}`, () => {
    const state = new TableState("t1");
    state.rules = stream.rules;
    let step = 0;
    for (const { messages, view } of stream.steps) {
      for (const msg of messages) assert.ok(state.apply(msg, step * 1000), `${msg.t} not applied`);
      assert.deepEqual(comparable(state.view, view), comparable(view, view), `${stream.name}, step ${step}: ${messages.map((m) => m.t).join(" ")}`);
      step += 1;
    }
    assert.ok(state.gameOver, "the game ended");
  });
}

test("every event kind of the engine is folded, and an unknown one fails loudly", () => {
  assert.deepEqual([...HANDLED].sort(), [...fixtures.event_kinds].sort());
  for (const kind of fixtures.event_kinds) assert.ok(HANDLED_MESSAGES.includes(kind), `state.js does not take ${kind}`);
  const view = structuredClone(fixtures.streams[0].steps[0].view);
  assert.throws(() => foldEvent(view, { t: "card_vanished", version: 9 }, fixtures.streams[0].rules, 0), /card_vanished/);
  assert.deepEqual(view, fixtures.streams[0].steps[0].view);
});
