// Checking a hand's deal after the fact, as the terminal client does (client/verify.py): the seed
// revealed after the hand must hash (SHA-256: Web Crypto, or sha256.js where the browser withholds
// it) to the commitment sent before the deal;
// then the deal is recomputed from the seed with the documented shuffle (docs/protocol.md, "Fair
// deals") and compared with what this browser saw: its own cards as dealt, and every card played
// by the seat it was dealt to (or a seat that passed or exchanged cards to it).
//
// The deck is the set of cards the hand used. When every trick was seen and every card was
// played (four-handed Spades, Hearts), that set is known exactly; otherwise (a variant that sets
// cards aside or draws from a stock, a claim, a hand joined midway) only the commitment is checked
// and the result says so.

import { cardNumber, sortCards } from "./cards.js";
import { sha256Bytes } from "./sha256.js";

export const Verdict = {
  VERIFIED: "verified", // the seed matches and the recomputed deal matches what was seen
  SEED_MATCHES: "seed matches", // the seed matches the commitment; the deal was not recomputed
  MISMATCH: "MISMATCH",
  UNCHECKED: "unchecked", // no commitment was seen before the deal
};

// Web Crypto when the browser offers it (https pages, localhost); the page's own SHA-256 over plain
// http on a LAN, where browsers withhold it.
export function hashName() {
  const c = globalThis.crypto;
  return c && c.subtle ? "Web Crypto" : "the page's own SHA-256";
}

export function hexToBytes(hex) {
  if (!/^([0-9a-f]{2})+$/.test(hex)) return null;
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

export function bytesToHex(bytes) {
  return Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("");
}

export async function sha256(bytes) {
  const c = globalThis.crypto;
  if (c && c.subtle) return new Uint8Array(await c.subtle.digest("SHA-256", bytes));
  return sha256Bytes(bytes);
}

// The random stream: SHA-256(seed || counter as 8 bytes big-endian), read as u64 big-endian words.
async function* words(seed) {
  for (let counter = 0n; ; counter++) {
    const input = new Uint8Array(seed.length + 8);
    input.set(seed);
    new DataView(input.buffer).setBigUint64(seed.length, counter);
    const block = await sha256(input);
    const view = new DataView(block.buffer);
    for (let offset = 0; offset < 32; offset += 8) yield view.getBigUint64(offset);
  }
}

const SPACE = 1n << 64n;

// The engine's shuffle (engine/deal.py): Fisher-Yates with unbiased draws by rejection.
export async function shuffled(seed, deck) {
  const cards = [...deck];
  const stream = words(seed);
  for (let i = cards.length - 1; i > 0; i--) {
    const n = BigInt(i + 1);
    const limit = SPACE - (SPACE % n);
    let word;
    do word = (await stream.next()).value; while (word >= limit);
    const j = Number(word % n);
    [cards[i], cards[j]] = [cards[j], cards[i]];
  }
  return cards;
}

// Card i of the shuffled deck goes to seat (dealer + 1 + i) mod players.
export async function deal(seed, deck, dealer, players) {
  const order = await shuffled(seed, [...deck].sort((a, b) => cardNumber(a) - cardNumber(b)));
  const hands = Array.from({ length: players }, () => []);
  order.forEach((card, i) => hands[(dealer + 1 + i) % players].push(card));
  return hands.map(sortCards);
}

// evidence: { hand, dealer, seat, players, commitment, myCards (as dealt, or null),
//             plays: [[seat, card]] (each trick seen), transfers: [[giver, receiver]],
//             deckCards: every card played this hand }
export async function checkHand(evidence, seedHex) {
  const lines = [];
  const seed = hexToBytes(seedHex);
  if (!seed) return { verdict: Verdict.MISMATCH, lines: [`the revealed seed ${seedHex} is not hex`] };
  if (!evidence || !evidence.commitment) {
    return { verdict: Verdict.UNCHECKED, lines: ["no commitment was seen before this deal (joined during the hand)"] };
  }
  const digest = bytesToHex(await sha256(seed));
  if (digest !== evidence.commitment) {
    return {
      verdict: Verdict.MISMATCH,
      lines: [`SHA-256 of the seed is ${digest.slice(0, 16)}…, but the server committed to ${evidence.commitment.slice(0, 16)}… before the deal`],
    };
  }
  lines.push(`seed matches the commitment ${digest.slice(0, 16)}… sent before the deal`);
  const deck = knownDeck(evidence);
  if (!deck) {
    lines.push("the deal was not recomputed: not every card of this hand was seen played");
    return { verdict: Verdict.SEED_MATCHES, lines };
  }
  const hands = await deal(seed, deck, evidence.dealer, evidence.players);
  const problems = compare(evidence, hands);
  if (problems.length) return { verdict: Verdict.MISMATCH, lines: [...lines, ...problems], hands };
  if (evidence.myCards) lines.push(`the seed deals your ${evidence.myCards.length} cards exactly`);
  lines.push(`all ${evidence.plays.length} cards seen played were dealt to the seats that played them`);
  return { verdict: Verdict.VERIFIED, lines, hands };
}

// The deck is every card played this hand (`deckCards`, the view's `played` at its end) when that
// is a whole deck: distinct, and as many as the seats' dealt hands together.
function knownDeck(evidence) {
  const played = evidence.deckCards || [];
  const cards = new Set(played);
  if (!cards.size || cards.size !== played.length || cards.size % evidence.players) return null;
  if (evidence.myCards && evidence.myCards.length * evidence.players !== cards.size) return null;
  if (evidence.plays.some(([, card]) => !cards.has(card))) return null;
  return [...cards];
}

function compare(evidence, hands) {
  const problems = [];
  const seat = evidence.seat;
  if (evidence.myCards && seat !== null && seat !== undefined) {
    const dealt = hands[seat];
    const mine = sortCards(evidence.myCards);
    if (mine.join(" ") !== dealt.join(" ")) {
      problems.push(`the cards you were dealt are not the seed's deal for your seat: got ${mine.join(" ")}, expected ${dealt.join(" ")}`);
    }
  }
  const sources = hands.map((_, s) => new Set([s]));
  for (const [giver, receiver] of evidence.transfers) if (sources[receiver]) sources[receiver].add(giver);
  for (const [player, card] of evidence.plays) {
    const allowed = sources[player] || new Set([player]);
    if (![...allowed].some((s) => hands[s] && hands[s].includes(card))) {
      problems.push(`seat ${player} played ${card}, which the seed did not deal to it`);
    }
  }
  return problems;
}
