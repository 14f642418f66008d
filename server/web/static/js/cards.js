// Card notation as the engine writes it (docs/protocol.md): rank 23456789TJQKA then suit CDHS,
// jokers LJ and BJ. Only naming and ordering live here; what is legal always comes from the server.

export const RANKS = "23456789TJQKA";
export const SUITS = "CDHS";
const SYMBOLS = { C: "♣", D: "♦", H: "♥", S: "♠" };
const SUIT_NAMES = { C: "clubs", D: "diamonds", H: "hearts", S: "spades" };

// The engine's card number: suit * 13 + rank, then the little (52) and big (53) joker.
export function cardNumber(card) {
  if (card === "LJ") return 52;
  if (card === "BJ") return 53;
  const rank = RANKS.indexOf(card[0]);
  const suit = SUITS.indexOf(card[1]);
  if (card.length !== 2 || rank < 0 || suit < 0) return 99;
  return suit * 13 + rank;
}

export function sortCards(cards) {
  return [...cards].sort((a, b) => cardNumber(a) - cardNumber(b));
}

// The hand as the player sees it: suits grouped, trumps (spades) first where that keeps the colours
// apart, and the suits ordered so that two of one colour sit side by side only when nothing else is
// left (clubs next to spades, both black, is the classic misread). Jokers lead. Ranks rise within a
// suit. Only the order on the screen: the server's hand is unchanged.
const COLOUR = { C: "black", S: "black", D: "red", H: "red" };
const PREFERENCE = ["S", "H", "C", "D"];

export function displayOrder(cards) {
  const jokers = cards.filter((c) => c === "BJ" || c === "LJ").sort().reverse();
  const present = PREFERENCE.filter((suit) => cards.some((c) => c.length === 2 && c[1] === suit));
  let best = present;
  let fewest = Infinity;
  for (const order of permutations(present)) {
    let clashes = 0;
    for (let i = 1; i < order.length; i++) if (COLOUR[order[i]] === COLOUR[order[i - 1]]) clashes += 1;
    if (clashes < fewest) {
      fewest = clashes;
      best = order;
    }
  }
  const rank = (c) => RANKS.indexOf(c[0]);
  return [...jokers, ...best.flatMap((suit) => cards.filter((c) => c.length === 2 && c[1] === suit).sort((a, b) => rank(a) - rank(b)))];
}

// Every order of `items`, the given order first (at most 4! = 24 here).
function permutations(items) {
  if (items.length <= 1) return [items];
  return items.flatMap((item, i) => permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]));
}

export function cardFace(card) {
  if (card === "BJ") return { rank: "★", suit: "J", letter: "J", red: true, name: "big joker" };
  if (card === "LJ") return { rank: "☆", suit: "J", letter: "J", red: false, name: "little joker" };
  const rank = card[0] === "T" ? "10" : card[0];
  const suit = card[1];
  const rankName = { J: "jack", Q: "queen", K: "king", A: "ace" }[card[0]] || rank;
  return {
    rank,
    suit: SYMBOLS[suit] || suit,
    letter: suit,
    red: suit === "H" || suit === "D",
    name: `${rankName} of ${SUIT_NAMES[suit] || suit}`,
  };
}

export function cardText(card) {
  const face = cardFace(card);
  return card === "BJ" || card === "LJ" ? face.name : face.rank + face.suit;
}

export function sameCards(a, b) {
  if (a.length !== b.length) return false;
  const x = sortCards(a);
  const y = sortCards(b);
  return x.every((card, i) => card === y[i]);
}

// Hearts: the points in the cards of a trick, as the engine counts them (engine/hearts_rules.py
// penalty_points; tests/web checks this table against it): 1 a heart, 13 the queen of spades,
// -10 the jack of diamonds when that option is on. Only for showing the hand's running points;
// the score itself is the server's (hand_scored).
export function penaltyPoints(cards, jackOfDiamonds) {
  let points = 0;
  for (const card of cards) {
    if (card.length === 2 && card[1] === "H") points += 1;
    else if (card === "QS") points += 13;
    else if (card === "JD" && jackOfDiamonds) points -= 10;
  }
  return points;
}
