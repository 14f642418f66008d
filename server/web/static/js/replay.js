// Replays: a finished game's hand records turned into what the replay view steps through (hands,
// tricks, bids, the hand's score) and each hand's deal re-checked from its seed. Pure: no DOM, no
// storage; the view is replay_view.js, the page's own records come from journal.js.
//
// It reads both formats `spades replay` reads (client/replay.py): the page's and the terminal
// client's own record, `spades-client-hand/1` (docs/client.md), and the server's `spades-hand/1`
// (docs/hand-records.md), as `spades-server export` and `spades ladder records` write them, one
// JSON object a line. Names and sides are said as `spades replay` says them (engine/seat_names.py):
// by compass point and who sat there, `West (heuristic)`, the reader's own seat `You`.

import { bidLabel } from "./actions.js";
import { cardNumber, cardText, sortCards } from "./cards.js";
import { bytesToHex, deal, hexToBytes, sha256, Verdict } from "./verify.js";

export const SERVER_FORMAT = "spades-hand/1";
export const CLIENT_FORMAT = "spades-client-hand/1";
// A file is read whole into memory: a game's records are a few KB a hand, so 16 MB is thousands of
// hands (a whole server's `export --all`); anything bigger is refused before it is read.
export const MAX_FILE_BYTES = 16 * 1024 * 1024;
export const MAX_RECORDS = 10000;

// A record or a file that cannot be replayed; `code` as the protocol's errors have one.
export class RecordError extends Error {
  constructor(message, code = "bad_record") {
    super(message);
    this.code = code;
  }
}

// ---------------------------------------------------------------- reading records

// The records of a JSON Lines text, each checked for the fields the replay reads. Throws
// RecordError naming the line and the field.
export function parseJsonl(text) {
  const records = [];
  const lines = String(text).split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (!line) continue;
    let record;
    try {
      record = JSON.parse(line);
    } catch {
      throw new RecordError(`line ${i + 1} is not JSON`);
    }
    checkRecordShape(record, `line ${i + 1}`);
    records.push(record);
    if (records.length > MAX_RECORDS) throw new RecordError(`more than ${MAX_RECORDS} hand records: split the file`, "too_large");
  }
  if (!records.length) throw new RecordError("the file holds no hand records");
  return records;
}

const isInt = (x) => Number.isInteger(x);
const isCard = (x) => typeof x === "string" && cardNumber(x) !== 99;
const isHex = (x) => typeof x === "string" && /^([0-9a-f]{2})+$/.test(x);

// Throws RecordError(`${where}: ...`) unless `record` has the shape the replay reads.
export function checkRecordShape(record, where = "the record") {
  const bad = (what) => { throw new RecordError(`${where}: ${what}`); };
  if (!record || typeof record !== "object" || Array.isArray(record)) bad("not a JSON object");
  if (record.format !== SERVER_FORMAT && record.format !== CLIENT_FORMAT) bad(`not a hand record (${SERVER_FORMAT} or ${CLIENT_FORMAT})`);
  const players = record.players;
  if (!isInt(players) || players < 2 || players > 4) bad("`players` is not 2, 3 or 4");
  const isSeat = (s) => isInt(s) && s >= 0 && s < players;
  if (!isInt(record.hand_number) || record.hand_number < 1) bad("`hand_number` is not a positive integer");
  if (record.dealer !== undefined && !isSeat(record.dealer)) bad("`dealer` is not a seat");
  if (record.seat !== undefined && record.seat !== null && !isSeat(record.seat)) bad("`seat` is not a seat");
  const plays = record.plays ?? [];
  if (!Array.isArray(plays) || !plays.every((p) => Array.isArray(p) && p.length === 2 && isSeat(p[0]) && isCard(p[1]))) bad("`plays` is not a list of [seat, card]");
  const winners = record.trick_winners ?? [];
  if (!Array.isArray(winners) || !winners.every(isSeat)) bad("`trick_winners` is not a list of seats");
  for (const key of ["tricks_seen", "missed_tricks"]) {
    const numbers = record[key] ?? [];
    if (!Array.isArray(numbers) || !numbers.every((n) => isInt(n) && n >= 1)) bad(`\`${key}\` is not a list of trick numbers`);
  }
  const bids = record.bids ?? [];
  if (!Array.isArray(bids) || !bids.every((b) => b && typeof b === "object" && isSeat(b.seat) && (typeof b.text === "string" || isInt(b.bid)))) bad("`bids` is not a list of {seat, bid} or {seat, text}");
  for (const key of ["passes", "exchanges"]) {
    const moves = record[key] ?? [];
    if (!Array.isArray(moves) || !moves.every((t) => t && isSeat(t.giver) && isSeat(t.receiver) && (t.cards === null || t.cards === undefined || (Array.isArray(t.cards) && t.cards.every(isCard))))) bad(`\`${key}\` is not a list of {giver, receiver, cards}`);
  }
  const dealt = record.deal;
  if (dealt !== undefined && dealt !== null && !(Array.isArray(dealt) && dealt.length === players && dealt.every((h) => Array.isArray(h) && h.every(isCard)))) bad("`deal` is not a list of each seat's cards");
  const score = record.score ?? {};
  if (typeof score !== "object" || Array.isArray(score)) bad("`score` is not an object");
  if (score.sides !== undefined && !(Array.isArray(score.sides) && score.sides.every((s) => Array.isArray(s) && s.every(isSeat)))) bad("`score.sides` is not a list of sides");
  for (const key of ["before", "delta", "after", "bags_after"]) {
    if (score[key] !== undefined && !(Array.isArray(score[key]) && score[key].every(isInt))) bad(`\`score.${key}\` is not a list of integers`);
  }
  if (record.notes !== undefined && !(Array.isArray(record.notes) && record.notes.every((n) => typeof n === "string"))) bad("`notes` is not a list of strings");
  for (const key of ["seed", "commitment"]) {
    if (record[key] !== undefined && record[key] !== null && typeof record[key] !== "string") bad(`\`${key}\` is not a string`);
  }
}

// Records grouped into games, in the order each game first appears: by `game_id`, and an older
// ladder match's halves apart (each half is a game of its own, from scores 0). Hands in order.
export function groupGames(records) {
  const games = new Map();
  for (const record of records) {
    const half = record.ladder && typeof record.ladder === "object" ? record.ladder.half : undefined;
    const key = `${record.game_id ?? ""}\u0000${half ?? ""}`;
    if (!games.has(key)) games.set(key, { gameId: String(record.game_id || "?"), half: half ?? null, records: [] });
    games.get(key).records.push(record);
  }
  return [...games.values()].map((g) => ({ ...g, records: [...g.records].sort((a, b) => a.hand_number - b.hand_number) }));
}

// ---------------------------------------------------------------- names, as engine/seat_names.py

const DIRECTIONS = ["South", "West", "North", "East"];

export function seatWord(seat, players) {
  return players === 4 && seat >= 0 && seat < 4 ? DIRECTIONS[seat] : `seat ${seat}`;
}

// Who sat there, shortly: a built-in bot by its kind, the fallback as `heuristic, fallback`.
export function who(player) {
  if (!player) return "";
  const text = String(player);
  if (text.startsWith("bot:")) return text.slice(4);
  if (text.startsWith("fallback:")) return `${text.slice(9)}, fallback`;
  if (text.startsWith("house:")) return text.slice(6);
  return text;
}

export function seatLabel(seat, players, player) {
  const word = seatWord(seat, players);
  const shown = who(player);
  return shown ? `${word} (${shown})` : word;
}

export function sideWord(seats, players) {
  const ordered = [...seats].sort((a, b) => a - b);
  if (players === 4 && ordered.join() === "0,2") return "North-South";
  if (players === 4 && ordered.join() === "1,3") return "East-West";
  return ordered.map((s) => seatWord(s, players)).join("+");
}

// Where a seat is drawn: the reader's own seat (or South) at the bottom, the others clockwise.
export function position(seat, players, base) {
  const offset = (seat - (base ?? 0) + players) % players;
  if (players === 4) return ["bottom", "left", "top", "right"][offset];
  if (players === 3) return ["bottom", "left", "right"][offset];
  return ["bottom", "top"][offset];
}

// ---------------------------------------------------------------- a hand as the replay shows it

// One record as { number, players, seat, names, bids, passes, tricks, claimed, missed, score,
// sides, notes, deal, record }. Each trick is { number, leader, winner, plays: [{ seat, card,
// note }] }: `note` is what the hand's review (review.js: "cost 2 tricks") says of the card,
// shown beside it and read with it; null until the hand is reviewed.
export function handOf(record) {
  const players = record.players;
  const seat = Number.isInteger(record.seat) ? record.seat : null;
  const accounts = Array.isArray(record.names) ? record.names : [];
  const names = [...Array(players).keys()].map((s) => (s === seat ? "You" : seatLabel(s, players, accounts[s])));
  const plays = record.plays || [];
  const winners = record.trick_winners || [];
  const numbers = Array.isArray(record.tricks_seen) && record.tricks_seen.length ? record.tricks_seen : null;
  const tricks = [];
  for (let i = 0; i + players <= plays.length; i += players) {
    const at = i / players;
    const trick = plays.slice(i, i + players).map(([s, card]) => ({ seat: s, card, note: null }));
    tricks.push({ number: numbers ? numbers[at] ?? at + 1 : at + 1, leader: trick[0].seat, winner: winners[at] ?? null, plays: trick });
  }
  const score = record.score || {};
  const sides = Array.isArray(score.sides) ? score.sides : [];
  return {
    number: record.hand_number,
    game: String(record.game || "spades"),
    players,
    seat,
    dealer: Number.isInteger(record.dealer) ? record.dealer : 0,
    names,
    bids: (record.bids || []).map((b) => ({ seat: b.seat, text: typeof b.text === "string" ? b.text : bidLabel({ ...b, tricks: b.bid }) })),
    passes: [...(record.passes || []), ...(record.exchanges || [])].map((t) => ({ giver: t.giver, receiver: t.receiver, cards: t.cards ?? null })),
    tricks,
    // After a claim (or the tricks a player did not see) the winners run on past the plays.
    claimed: winners.slice(tricks.length),
    missed: record.missed_tricks || [],
    tricksWon: Array.isArray(record.tricks) ? record.tricks : null,
    sides: sides.map((side, i) => ({
      seats: side,
      name: sideName(side, players, seat),
      before: score.before?.[i] ?? null,
      delta: score.delta?.[i] ?? null,
      after: score.after?.[i] ?? null,
      bags: score.bags_after?.[i] ?? null,
    })),
    notes: record.notes || [],
    deal: Array.isArray(record.deal) ? record.deal.map(sortCards) : null,
    checkedAtTable: typeof record.verified === "string" ? record.verified : null,
    record,
  };
}

function sideName(side, players, seat) {
  const word = sideWord(side, players);
  if (seat !== null && side.includes(seat)) return side.length === 1 ? "You" : `your side (${word})`;
  return word;
}

// A trick in words: "West 5♣, North K♣, East 2♣, You A♣ → You".
export function trickText(hand, trick) {
  // A card's note (what the review says it cost) is read with it.
  const plays = trick.plays.map((p) => `${hand.names[p.seat]} ${cardText(p.card)}${p.note ? ` (${p.note})` : ""}`).join(", ");
  return trick.winner === null ? plays : `${plays} → ${hand.names[trick.winner]}`;
}

// The game's summary for a list: its date, players, final scores, sides, and the checks.
export function gameSummary(records) {
  const last = records[records.length - 1];
  const hand = handOf(last);
  return {
    gameId: String(last.game_id || "?"),
    game: hand.game,
    hands: records.length,
    names: hand.names,
    sides: hand.sides.map((s) => s.name),
    scores: hand.sides.map((s) => s.after),
    savedAt: typeof last.saved_at === "string" ? last.saved_at : null,
  };
}

// ---------------------------------------------------------------- stepping through

// A position in a game: hand index and trick index. Next and previous trick run on across hands.
export class Cursor {
  constructor(hands, hand = 0, trick = 0) {
    this.hands = hands;
    this.hand = Math.max(0, Math.min(hand, hands.length - 1));
    this.trick = 0;
    this.goTrick(trick);
  }

  get current() { return this.hands[this.hand]; }
  get lastTrick() { return Math.max(0, this.current.tricks.length - 1); }
  goTrick(index) { this.trick = Math.max(0, Math.min(index, this.lastTrick)); }

  nextTrick() {
    if (this.trick < this.lastTrick) this.trick += 1;
    else if (this.hand < this.hands.length - 1) { this.hand += 1; this.trick = 0; }
    else return false;
    return true;
  }

  previousTrick() {
    if (this.trick > 0) this.trick -= 1;
    else if (this.hand > 0) { this.hand -= 1; this.trick = this.lastTrick; }
    else return false;
    return true;
  }

  nextHand() {
    if (this.hand >= this.hands.length - 1) return false;
    this.hand += 1;
    this.trick = 0;
    return true;
  }

  previousHand() {
    if (this.hand === 0 && this.trick === 0) return false;
    if (this.trick === 0) this.hand -= 1;
    this.trick = 0;
    return true;
  }

  get atStart() { return this.hand === 0 && this.trick === 0; }
  get atEnd() { return this.hand === this.hands.length - 1 && this.trick >= this.lastTrick; }
}

// ---------------------------------------------------------------- the deal check

// The deck to re-deal and what to compare the deal with, or why this page does not re-deal the hand.
// The page's shuffle (verify.js) is the engine's, tested against it for a whole deck dealt out four
// ways (four-handed Spades, Hearts); variants that set cards aside, deal face up, give the dealer
// more, draw from a stock or deal by hand type are re-dealt by the engine only (`spades replay`).
// A record with no deal (the page's or the terminal client's own, when its check at the table did
// not finish) is re-dealt from its plays when they are the whole deck: every card seen played.
export function redealPlan(record) {
  if (record.players !== 4) return { why: `a ${record.players}-handed deal` };
  if (record.hand_type) return { why: `a ${record.hand_type} hand` };
  for (const key of ["set_aside", "discarded"]) if (Array.isArray(record[key]) && record[key].length) return { why: `cards ${key.replace("_", " ")}` };
  if (Array.isArray(record.face_up) && record.face_up.some((h) => Array.isArray(h) && h.length)) return { why: "cards dealt face up" };
  const dealt = record.deal;
  if (Array.isArray(dealt)) {
    const cards = dealt.flat();
    if (new Set(cards).size !== cards.length || !dealt.every((h) => h.length === dealt[0].length)) return { why: "hands of different sizes" };
    return { deck: cards, dealt };
  }
  const played = (record.plays || []).map((p) => p[1]);
  if ((record.missed_tricks || []).length || played.length !== 52 || new Set(played).size !== 52) return { why: "not every card of the hand was seen played" };
  return { deck: played, dealt: null };
}

// { verdict, lines, hands } for one record: SHA-256 of the seed against the commitment, then (where
// the page can) the deal re-dealt from the seed and compared with the record's (and with the
// reader's own cards as dealt), and every card played found in the hand of the seat that played it
// (or passed to it). `hands`: every seat's cards as re-dealt.
export async function checkRecord(record) {
  const lines = [];
  if (!isHex(record.seed)) {
    return { verdict: record.seed ? Verdict.MISMATCH : Verdict.UNCHECKED, lines: [record.seed ? "the seed is not hex" : "no seed recorded: not checked"] };
  }
  if (!isHex(record.commitment)) return { verdict: Verdict.UNCHECKED, lines: ["no commitment recorded: the seed alone proves nothing"] };
  const digest = bytesToHex(await sha256(hexToBytes(record.seed)));
  if (digest !== record.commitment) {
    return { verdict: Verdict.MISMATCH, lines: [`SHA-256 of the seed is ${digest.slice(0, 16)}…, not the commitment ${record.commitment.slice(0, 16)}…`] };
  }
  lines.push(`seed matches the commitment ${digest.slice(0, 16)}…`);
  const plan = redealPlan(record);
  if (plan.why) {
    lines.push(`the deal is not re-dealt on this page (${plan.why}): \`spades replay\` re-deals it with the engine`);
    return { verdict: Verdict.SEED_MATCHES, lines };
  }
  const dealer = Number.isInteger(record.dealer) ? record.dealer : 0;
  const hands = await deal(hexToBytes(record.seed), plan.deck, dealer, record.players);
  const problems = [];
  if (plan.dealt) {
    hands.forEach((hand, s) => {
      const recorded = sortCards(plan.dealt[s]);
      if (recorded.join(" ") !== hand.join(" ")) problems.push(`the seed deals seat ${s} ${hand.map(cardText).join(" ")}, the record says ${recorded.map(cardText).join(" ")}`);
    });
  }
  const seat = record.seat;
  if (Array.isArray(record.my_cards) && Number.isInteger(seat) && sortCards(record.my_cards).join(" ") !== hands[seat].join(" ")) {
    problems.push(`the cards dealt to this seat were ${sortCards(record.my_cards).map(cardText).join(" ")}, the seed deals ${hands[seat].map(cardText).join(" ")}`);
  }
  if (problems.length) return { verdict: Verdict.MISMATCH, lines: [...lines, ...problems], hands };
  lines.push(plan.dealt ? `re-dealt from the seed: the ${hands.length} hands are the record's` : "re-dealt from the seed, the deck being the 52 cards seen played");
  // A card played must have been dealt to its player, or passed (exchanged) to it.
  const sources = hands.map((_, s) => new Set([s]));
  for (const t of [...(record.passes || []), ...(record.exchanges || [])]) sources[t.receiver].add(t.giver);
  const plays = record.plays || [];
  for (const [player, card] of plays) {
    if (![...sources[player]].some((s) => hands[s].includes(card))) problems.push(`seat ${player} played ${cardText(card)}, which the seed did not deal to it`);
  }
  if (problems.length) return { verdict: Verdict.MISMATCH, lines: [...lines, ...problems], hands };
  if (plays.length) lines.push(`all ${plays.length} cards played were dealt to the seats that played them`);
  return { verdict: Verdict.VERIFIED, lines, hands };
}
