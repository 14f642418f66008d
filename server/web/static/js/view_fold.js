// The engine's fold of events into a seat's view (engine/view_fold.py and each event's `fold` in
// engine/events.py), in JavaScript for the page: what each event tells a seat (or a spectator)
// about the view (the engine's `to_dict()` shape, docs/protocol.md "Game views"). Pure: it changes
// the view it is given and nothing else. The Python fold is property-tested against the engine's
// views; this one is tested against the same engine on generated event streams of every preset
// (tests/web/js/view_fold.test.mjs, its fixtures from tests/web/test_page_logic.py). A new event
// kind must be added here and in its class in engine/events.py (its `fold`): `foldEvent` throws on
// a kind it does not know, and the test lists the engine's kinds.
//
// `rules` is the table's ruleset as `/presets.json` gives it (the preset's options with the table's
// own): `game`, `players`, `deck`, `blind_nil_exchange`, `hearts_jack_of_diamonds`.

import { penaltyPoints, sortCards } from "./cards.js";

// How many tricks a hand has (engine.ruleset.Ruleset.tricks_per_hand).
export function tricksPerHand(rules) {
  const players = Number(rules.players);
  if (rules.game === "spades") return players === 3 ? 17 : 13;
  return Math.floor(52 / players);
}

const without = (cards, gone) => cards.filter((c) => !gone.includes(c));
const union = (cards, more) => sortCards([...new Set([...cards, ...more])]);
const count = (msg) => (msg.cards ? msg.cards.length : Number(msg.count || 0));

// The blind nil exchanges the bids call for, in order (engine.view_fold.exchanges).
export function exchanges(rules, bids, dealer) {
  if (!Number(rules.blind_nil_exchange || 0) || !(rules.game === "spades" && Number(rules.players) === 4)) return [];
  const n = bids.length;
  const out = [];
  for (let step = 1; step <= n; step++) {
    const seat = (dealer + step) % n;
    const bid = bids[seat];
    if (bid && bid.blind && bid.tricks === 0) {
      const partner = (seat + 2) % 4;
      if (!out.some((pair) => pair.includes(partner))) out.push([seat, partner]);
    }
  }
  return out;
}

// The seats the rest of the tricks go to after a claim, in turn (engine.claims.claim_award).
export function claimAward(claimer, held, penalty, bids, sides) {
  if (held) return [claimer];
  if (penalty !== "forfeit_tricks") return [];
  const mine = sides.find((side) => side.includes(claimer)) || [claimer];
  const opponents = [...bids.keys()].filter((seat) => !mine.includes(seat));
  const notNil = opponents.filter((seat) => !bids[seat] || bids[seat].tricks !== 0 || bids[seat].moe);
  return notNil.length ? notNil : opponents;
}

function afterBids(view, rules) {
  if (view.bids.includes(null)) return;
  view.phase = exchanges(rules, view.bids, view.dealer).length ? "exchanging" : "playing";
}

function startBidding(view, rules) {
  view.phase = "bidding";
  afterBids(view, rules);
}

const FOLDS = {
  hand_dealt(view, msg, rules, seat) {
    const n = Number(view.players);
    const hidden = msg.hidden || [];
    const sizes = Array(n).fill(n === 2 ? 0 : tricksPerHand(rules));
    if (rules.deck === "jokers") sizes[msg.dealer] += 2;
    const direction = msg.pass_direction ?? null;
    let phase = "bidding";
    if (rules.game === "hearts") phase = direction !== null && direction !== "none" ? "passing" : "playing";
    else if (n === 2) phase = "drawing";
    else if (rules.deck === "jokers") phase = "discarding";
    Object.assign(view, {
      phase, hand_number: msg.hand_number, dealer: msg.dealer, hand_type: msg.hand_type || "",
      bids: Array(n).fill(null), hand_sizes: sizes,
      face_up: msg.face_up && msg.face_up.length ? msg.face_up.map((c) => sortCards(c)) : Array.from({ length: n }, () => []),
      exposed: Array.from({ length: n }, () => []),
      looked: [...Array(n).keys()].map((s) => !hidden.includes(s)),
      leader: -1, trick: [], trick_number: 1, last_trick: [], last_winner: -1, tricks: Array(n).fill(0),
      played: [], broken: false, discards: [], pass_direction: direction ?? "",
      points: rules.game === "hearts" ? Array(n).fill(0) : [],
    });
    if (seat !== null) Object.assign(view, { hand: msg.cards ? sortCards(msg.cards) : null, given: [], received: [], drawn: null });
  },

  hand_looked(view, msg, rules, seat) {
    view.looked[msg.seat] = true;
    if (msg.seat === seat && msg.cards) {
      const before = view.hand || [];
      const taken = msg.cards.filter((c) => !before.includes(c));
      if (Number(rules.players) === 2 && view.hand !== null && taken.length) {
        // Two-handed double nil: the redraw's cards left the face-up discard pile.
        view.received = sortCards(taken);
        view.discards = without(view.discards, taken);
      }
      view.hand = sortCards(msg.cards);
    }
  },

  card_drawn(view, msg, rules, seat) {
    if (msg.seat === seat && msg.card) view.drawn = msg.card;
  },

  draw_resolved(view, msg, rules, seat) {
    view.hand_sizes[msg.seat] += 1;
    view.discards = union(view.discards, [msg.discarded]);
    if (msg.seat === seat) {
      view.drawn = null;
      if (msg.taken) view.hand = union(view.hand || [], [msg.taken]);
    }
    if (view.hand_sizes.every((size) => size === tricksPerHand(rules))) {
      view.looked = view.looked.map(() => true);
      if (view.bids.some((bid) => bid && bid.double_nil)) view.phase = "discarding";
      else startBidding(view, rules);
    }
  },

  cards_discarded(view, msg, rules, seat) {
    if (Number(rules.players) === 2) {
      if (msg.seat === seat && msg.cards && msg.cards.length) view.hand = without(view.hand || [], msg.cards);
      const n = Number(view.players);
      const order = [...Array(n).keys()].map((step) => (view.dealer + step + 1) % n);
      const doubles = order.filter((s) => view.bids[s] && view.bids[s].double_nil);
      if (!doubles.length || msg.seat === doubles[doubles.length - 1]) startBidding(view, rules);
      return;
    }
    view.hand_sizes[msg.seat] -= count(msg);
    if (msg.seat === seat && msg.cards) view.hand = without(view.hand || [], msg.cards);
    startBidding(view, rules);
  },

  bid_made(view, msg, rules) {
    view.bids[msg.seat] = { ...msg.bid, text: msg.text };
    if (view.phase !== "drawing") afterBids(view, rules);
  },

  cards_given(view, msg, rules, seat) {
    if (msg.seat === seat && msg.cards) view.given = [...msg.cards];
    if (view.game === "hearts") {
      // A Hearts pass lies face down, out of the hand, until every seat has passed.
      view.hand_sizes[msg.seat] -= count(msg);
      if (msg.seat === seat && msg.cards) view.hand = without(view.hand || [], msg.cards);
    }
  },

  cards_exchanged(view, msg, rules, seat) {
    const n = count(msg);
    view.hand_sizes[msg.giver] -= n;
    view.hand_sizes[msg.receiver] += n;
    if (msg.cards) {
      if (msg.giver === seat) {
        view.given = [...msg.cards];
        view.hand = without(view.hand || [], msg.cards);
      }
      if (msg.receiver === seat) {
        view.received = [...msg.cards];
        view.hand = union(view.hand || [], msg.cards);
      }
    }
    const pairs = exchanges(rules, view.bids, view.dealer);
    const last = pairs[pairs.length - 1];
    if (last && last[0] === msg.receiver && last[1] === msg.giver) view.phase = "playing";
  },

  cards_passed(view, msg, rules, seat) {
    view.hand_sizes[msg.receiver] += count(msg);
    if (msg.cards && msg.receiver === seat) {
      view.received = sortCards(msg.cards);
      view.hand = union(view.hand || [], msg.cards);
    }
    if (msg.cards && msg.giver === seat) view.given = [...msg.cards];
    view.phase = "playing";
  },

  card_played(view, msg, rules, seat) {
    if (!view.trick.length) view.leader = msg.seat;
    view.phase = "playing";
    view.trick = [...view.trick, [msg.seat, msg.card]];
    view.trick_number = msg.trick_number;
    view.played = union(view.played, [msg.card]);
    view.hand_sizes[msg.seat] -= 1;
    for (const name of ["face_up", "exposed"]) {
      const cards = view[name][msg.seat];
      if (cards && cards.includes(msg.card)) view[name][msg.seat] = without(cards, [msg.card]);
    }
    if (msg.seat === seat && Array.isArray(view.hand)) view.hand = without(view.hand, [msg.card]);
  },

  spades_broken(view) {
    view.broken = true;
  },

  trick_won(view, msg, rules) {
    Object.assign(view, {
      last_trick: msg.plays.map((p) => [p[0], p[1]]), last_winner: msg.seat, trick: [], leader: msg.seat,
      trick_number: Math.min(msg.trick_number + 1, tricksPerHand(rules)),
    });
    view.tricks[msg.seat] += 1;
    if (view.game === "hearts") view.points[msg.seat] += penaltyPoints(msg.plays.map((p) => p[1]), Boolean(rules.hearts_jack_of_diamonds));
  },

  claim_made(view, msg, rules) {
    if (!msg.held && msg.penalty === "exposed") view.exposed[msg.seat] = sortCards(msg.cards);
    const awarded = claimAward(msg.seat, msg.held, msg.penalty || "", view.bids, view.sides);
    const remaining = tricksPerHand(rules) - view.tricks.reduce((a, b) => a + b, 0);
    if (awarded.length && remaining > 0) view.last_winner = awarded[(remaining - 1) % awarded.length];
  },

  deal_declared_dead(view, msg) {
    Object.assign(view, { phase: "dealing", dealer: msg.next_dealer, leader: -1 });
  },

  hand_scored(view, msg, rules) {
    Object.assign(view, {
      phase: "dealing", leader: -1, dealer: (view.dealer + 1) % Number(view.players),
      trick_number: tricksPerHand(rules), tricks: [...msg.tricks], scores: [...msg.after], bags: [...msg.bags_after],
    });
  },

  game_over(view, msg) {
    // The last hand's `hand_scored` passed the deal on; a game that is over keeps its dealer.
    if (view.phase === "dealing") view.dealer = (view.dealer - 1 + Number(view.players)) % Number(view.players);
    Object.assign(view, { phase: "game_over", winners: [...msg.winners] });
  },
};

// Every event kind the fold applies.
export const HANDLED = Object.freeze(Object.keys(FOLDS));

// Whether a view is whole enough to fold events into (a snapshot's view from the server is).
export function foldable(view) {
  return Array.isArray(view.hand_sizes) && Array.isArray(view.bids) && Array.isArray(view.trick) && typeof view.phase === "string";
}

// The view after one event (a wire map: its kind is `t`), changed in place; `seat` is the view's
// seat (null for a spectator). Events do not say who acts next: `to_act` empties until the `turn`.
export function foldEvent(view, msg, rules, seat) {
  const fold = FOLDS[msg.t];
  if (!fold) throw new Error(`the view fold does not know the event ${JSON.stringify(msg.t)}`);
  view.to_act = [];
  if (seat !== null) {
    view.legal = [];
    view.choose_cards = [];
  }
  if (Number.isInteger(msg.version)) view.version = msg.version;
  fold(view, msg, rules, seat);
}

// The view after a `turn`: who must act, at which version; in play before a trick's first card the
// one seat to act is its leader.
export function foldTurn(view, version, toAct) {
  view.version = version;
  view.to_act = [...toAct];
  if (view.phase === "playing" && !(view.trick || []).length && toAct.length === 1) view.leader = toAct[0];
}
