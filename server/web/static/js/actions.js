// Words for the actions a `your_turn` lists (docs/protocol.md, "Action"). The page only ever sends
// back one of the server's own legal actions, unchanged.

import { cardText, sameCards } from "./cards.js";

export function bidLabel(bid) {
  const flags = [];
  let main;
  if (bid.moe === "little") main = "Little Moe";
  else if (bid.moe === "big") main = "Big Moe";
  else if (bid.ten_for_200) main = "10 for 200";
  else if (bid.tricks === 0) main = bid.double_nil ? "Double nil" : "Nil";
  else main = String(bid.tricks);
  if (bid.blind) main = `Blind ${main.toLowerCase() === "nil" ? "nil" : main}`;
  if (bid.no_trumps) flags.push("no trumps");
  if (bid.bemo === "bemo") flags.push("bemo");
  if (bid.bemo === "big_bemo") flags.push("big bemo");
  return flags.length ? `${main} (${flags.join(", ")})` : main;
}

export function actionLabel(action) {
  switch (action.kind) {
    case "bid": return bidLabel(action);
    case "look": return "Look at my cards";
    case "play": return `Play ${cardText(action.card)}`;
    case "claim": return "Claim the rest";
    case "deficient": return "Show a deficient hand (redeal)";
    case "keep_drawn": return action.keep ? "Keep the drawn card" : "Take the next card";
    case "pass": return "Pass";
    case "exchange": return "Give";
    case "discard": return "Set aside";
    default: return action.kind;
  }
}

const CHOOSING = new Set(["pass", "exchange", "discard"]);

// Sorts a turn's legal actions into what the page shows: cards to play, buttons, and a choice of
// cards (pass, exchange, discard) with the sizes it may have.
export function classify(legal) {
  const plays = new Set();
  const buttons = [];
  const choices = [];
  for (const action of legal) {
    if (action.kind === "play") plays.add(action.card);
    else if (CHOOSING.has(action.kind)) choices.push(action);
    else buttons.push(action);
  }
  let choice = null;
  if (choices.length) {
    const cards = new Set(choices.flatMap((a) => a.cards || []));
    const sizes = [...new Set(choices.map((a) => (a.cards || []).length))].sort((a, b) => a - b);
    choice = { kind: choices[0].kind, actions: choices, cards, sizes };
  }
  return { plays, buttons, choice };
}

// The legal choosing action whose cards are exactly `selected`, if any.
export function matchChoice(choice, selected) {
  if (!choice) return null;
  return choice.actions.find((a) => sameCards(a.cards || [], selected)) || null;
}
