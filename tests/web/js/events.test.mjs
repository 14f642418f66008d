// The events views' words (events.js) for the contract's reply shapes (docs/protocol.md, "Events"):
// the list's line, standings, round tables, the knockout bracket, the buttons offered, the
// `event_round` notice and the Announce form's request.
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  announceRequest, bracket, endedWords, entrantName, eventActions, eventHash, eventRoute, localInputValue, myEntrant,
  ordinal, roundNotice, roundTitle, spanWords, standingRows, startWords, summaryLine, tableRows,
} from "../../../server/web/static/js/events.js";

const swiss = {
  t: "event_info",
  summary: { event: "E1", name: "Friday Swiss", format: "swiss_pairs", status: "running", starts_at: 1000, entrants: 3, rounds: 4, round: 2, boards: 3, preset: "standard" },
  entrants: [
    { key: "p1", names: ["ada", "bob"], house: false, withdrawn: false },
    { key: "p2", names: ["cy", "dee"], house: false, withdrawn: false },
    { key: "p3", names: ["house-1", "house-2"], house: true, withdrawn: false },
    { key: "p4", names: ["eve", "fay"], house: false, withdrawn: true },
  ],
  rounds: [
    { round: 1, status: "finished", tables: [
      { table_no: 1, table: "t4", seats: ["ada", "cy", "bob", "dee"], boards: [{ board: 1, ns: 140, ew: 0 }, { board: 2, ns: 0, ew: 60 }] },
    ] },
    { round: 2, status: "running", tables: [{ table_no: 1, table: null, seats: ["cy", "house-1", "dee", "house-2"], boards: [] }] },
  ],
  standings: [
    { place: 1, key: "p1", names: ["ada", "bob"], percent: 66.6667, boards: 3, margin: 80, forfeits: 0 },
    { place: 2, key: "p3", names: ["house-1", "house-2"], percent: 50, boards: 3, margin: 0, forfeits: 0 },
    { place: 3, key: "p2", names: ["cy", "dee"], percent: 33.3333, boards: 3, margin: -80, forfeits: 1 },
  ],
  matches: [],
};

test("the route: #event/E1 and nothing else", () => {
  assert.equal(eventRoute("#event/E1"), "E1");
  assert.equal(eventRoute(eventHash("E42")), "E42");
  for (const hash of ["", "#", "#event/", "#event/1", "#event/E1/x", "#table=t1&code=AB", "#event/E1x"]) assert.equal(eventRoute(hash), null, hash);
});

test("times in words", () => {
  assert.equal(spanWords(0.4), "0 s");
  assert.equal(spanWords(45), "45 s");
  assert.equal(spanWords(12 * 60), "12 min");
  assert.equal(spanWords(3 * 3600 + 5 * 60), "3 h 5 min");
  assert.equal(spanWords(2 * 3600), "2 h");
  assert.equal(spanWords(86400), "1 day");
  assert.equal(startWords(1300, 1000), "starts in 5 min");
  assert.equal(startWords(1000, 1030), "started 30 s ago");
});

test("a summary in one line, by status", () => {
  assert.equal(summaryLine(swiss.summary, 2000), "Swiss pairs · 4 rounds of 3 boards · standard · 3 entrants · running: round 2 of 4");
  const open = { ...swiss.summary, status: "registering", round: 0, entrants: 1, rounds: 1, boards: 1 };
  assert.equal(summaryLine(open, 940), "Swiss pairs · 1 round of 1 board · standard · 1 entrant · registration open, starts in 1 min");
  assert.equal(summaryLine({ ...swiss.summary, status: "finished", format: "knockout_pairs" }, 0).split(" · ").at(-1), "finished");
  assert.match(summaryLine({ ...swiss.summary, format: "swiss_individual" }, 0), /^Swiss individual · /);
  assert.match(summaryLine({ ...swiss.summary, entry: "people" }, 0), / · people only · running/);
  assert.doesNotMatch(summaryLine({ ...swiss.summary, entry: "both" }, 0), /people/);
});

test("entrants by their players, the house's marked", () => {
  assert.equal(entrantName(swiss.entrants[0]), "ada & bob");
  assert.equal(entrantName(swiss.entrants[2]), "house-1 & house-2 (house)");
  assert.equal(entrantName({ key: "h", names: ["house-1 (house)"], house: true }), "house-1 (house)");
  assert.equal(entrantName({ key: "k9", names: [] }), "k9");
});

test("standings: the server's order and numbers, worded", () => {
  assert.deepEqual(standingRows(swiss), [
    { key: "p1", place: "1", name: "ada & bob", percent: "66.7%", boards: "3", margin: "+80", forfeits: "" },
    { key: "p3", place: "2", name: "house-1 & house-2 (house)", percent: "50.0%", boards: "3", margin: "0", forfeits: "" },
    { key: "p2", place: "3", name: "cy & dee", percent: "33.3%", boards: "3", margin: "−80", forfeits: "1 forfeit" },
  ]);
});

test("a round's tables: sides by seat and each board's points", () => {
  assert.deepEqual(tableRows(swiss.rounds[0]), [
    { tableNo: 1, table: "t4", ns: "ada & bob", ew: "cy & dee", boards: ["1: 140–0", "2: 0–60"], played: 2, margin: "North-South +80" },
  ]);
  assert.deepEqual(tableRows(swiss.rounds[1])[0].boards, []);
  assert.equal(tableRows(swiss.rounds[1])[0].table, null);
});

test("knockout rounds named from the final back", () => {
  assert.deepEqual([1, 2, 3].map((r) => roundTitle(r, 3)), ["Quarter-finals", "Semi-finals", "Final"]);
  assert.equal(roundTitle(1, 5), "Round 1");
  assert.equal(roundTitle(1, 1), "Final");
});

function knockout(matches, round = 1) {
  const entrants = [1, 2, 3, 4, 5, 6, 7, 8].map((n) => ({ key: `k${n}`, names: [`a${n}`, `b${n}`], house: n === 8, withdrawn: false }));
  return {
    summary: { event: "E2", name: "KO", format: "knockout_pairs", status: "running", starts_at: 0, entrants: 8, rounds: 3, round, boards: 4, preset: "standard" },
    entrants, rounds: [], standings: [], matches,
  };
}

test("the bracket: played matches, winners, and places held for the rounds to come", () => {
  const first = [
    { round: 1, table_no: 1, a: "k1", b: "k8", won_a: 3, won_b: 1, winner: "k1" },
    { round: 1, table_no: 2, a: "k4", b: "k5", won_a: 2, won_b: 2, winner: "k5" },
    { round: 1, table_no: 3, a: "k2", b: "k7", won_a: 1, won_b: 0, winner: null },
    { round: 1, table_no: 4, a: "k3", b: "k6", won_a: 0, won_b: 0, winner: null },
  ];
  const { columns } = bracket(knockout(first));
  assert.deepEqual(columns.map((c) => [c.title, c.matches.length]), [["Quarter-finals", 4], ["Semi-finals", 2], ["Final", 1]]);
  const [m1, m2, m3] = columns[0].matches;
  assert.deepEqual(m1.sides.map((s) => [s.name, s.won, s.winner]), [["a1 & b1", 3, true], ["a8 & b8 (house)", 1, false]]);
  assert.equal(m1.decided, true);
  assert.deepEqual(m2.sides.map((s) => s.winner), [false, true]); // won on the tie-break
  assert.equal(m3.decided, false);
  assert.ok(columns[1].matches.every((m) => m.sides === null && !m.decided));
  // A later round's matches take their places, sorted by table.
  const later = bracket(knockout([...first, { round: 2, table_no: 2, a: "k2", b: "k3", won_a: 0, won_b: 0, winner: null }], 2));
  assert.deepEqual(later.columns[1].matches.map((m) => (m.sides ? m.tableNo : null)), [2, null]);
});

test("a bracket of two pairs is one final", () => {
  const info = knockout([{ round: 1, table_no: 1, a: "k1", b: "k2", won_a: 2, won_b: 1, winner: "k1" }]);
  info.summary.rounds = 1;
  const { columns } = bracket(info);
  assert.deepEqual(columns.map((c) => [c.title, c.matches.length]), [["Final", 1]]);
});

test("the buttons offered: Register, then Play and Withdraw, nothing once over", () => {
  const open = { ...swiss, summary: { ...swiss.summary, status: "registering" } };
  assert.deepEqual(eventActions(open, "gil", false), ["register"]);
  assert.deepEqual(eventActions(open, "ada", false), ["play", "withdraw"]);
  assert.deepEqual(eventActions(open, "ada", true), ["withdraw"]);
  assert.deepEqual(eventActions(swiss, "gil", false), []); // running: too late to register
  assert.deepEqual(eventActions(swiss, "bob", false), ["play", "withdraw"]);
  assert.deepEqual(eventActions(swiss, "eve", false), []); // withdrawn
  for (const status of ["finished", "cancelled"]) assert.deepEqual(eventActions({ ...swiss, summary: { ...swiss.summary, status } }, "ada", false), []);
  const hosted = { ...open, summary: { ...open.summary, host: "gil" } };
  assert.deepEqual(eventActions(hosted, "gil", false), ["register", "cancel"]); // the host may cancel
  assert.deepEqual(eventActions({ ...hosted, summary: { ...hosted.summary, host: "ada" } }, "ada", true), ["withdraw", "cancel"]);
  assert.equal(myEntrant(swiss, "dee").key, "p2");
  assert.equal(myEntrant(swiss, null), null);
});

test("a registration window not open yet: no Register, the line says when it opens", () => {
  const later = { ...swiss, summary: { ...swiss.summary, status: "registering", starts_at: 4000, registration_opens: 1000 } };
  assert.deepEqual(eventActions(later, "gil", false, 999), []);
  assert.deepEqual(eventActions(later, "gil", false, 1000), ["register"]);
  assert.match(summaryLine(later.summary, 940), /registration opens in 1 min, starts in 51 min/);
  assert.match(summaryLine(later.summary, 1000), /registration open, starts in 50 min/);
});

test("the round notice: table, partner and the count down", () => {
  const msg = { t: "event_round", event: "E1", round: 2, table: "t7", seat: 1, names: ["cy", "ada", "dee", "bob"], boards: 3, starts_in: 10 };
  assert.equal(roundNotice(msg), "Round 2: table t7, partner bob, starts in 10 s");
  assert.equal(roundNotice(msg, 3.2), "Round 2: table t7, partner bob, starts in 3 s");
  assert.equal(roundNotice(msg, 0.2), "Round 2: table t7, partner bob, starting now");
  assert.equal(roundNotice({ ...msg, names: [] }), "Round 2: table t7, starts in 10 s");
});

test("the end in a sentence, with this account's place", () => {
  const msg = { t: "event_ended", event: "E1", standings: swiss.standings };
  assert.equal(endedWords(msg, "bob"), "Event E1 is over: you placed 1st with 66.7%.");
  assert.equal(endedWords(msg, "dee"), "Event E1 is over: you placed 3rd with 33.3%.");
  assert.equal(endedWords(msg, "gil"), "Event E1 is over.");
  assert.equal(endedWords({ ...msg, cancelled: true }, "bob"), "Event E1 was cancelled.");
  assert.deepEqual([1, 2, 3, 4, 11, 12, 13, 21, 22, 101, 111].map(ordinal), ["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st", "111th"]);
});

test("the Announce form becomes an event_create, or says what is wrong", () => {
  const now = 1_700_000_000_000;
  const fields = { name: " Friday Swiss ", format: "swiss_pairs", rounds: "4", boards: "3", preset: "standard", entry: "both", start: now + 600_000 };
  assert.deepEqual(announceRequest(fields, now), {
    request: { t: "event_create", name: "Friday Swiss", format: "swiss_pairs", rounds: 4, boards: 3, starts_at: 1_700_000_600, preset: "standard" },
  });
  assert.equal(announceRequest({ ...fields, entry: "bots" }, now).request.entry, "bots");
  // A knockout's rounds follow from its field: 0, whatever the (disabled) field says.
  assert.equal(announceRequest({ ...fields, format: "knockout_pairs", rounds: "" }, now).request.rounds, 0);
  const wrong = [
    [{ name: "  " }, "Give the event a name."],
    [{ format: "ladder" }, "Choose a format."],
    [{ rounds: "0" }, "The number of rounds is a whole number, 1 or more."],
    [{ boards: "2.5" }, "The number of boards is a whole number, 1 or more."],
    [{ start: NaN }, "Choose when the event starts."],
    [{ start: now - 1 }, "The start time has passed: choose a later one."],
  ];
  for (const [change, error] of wrong) assert.deepEqual(announceRequest({ ...fields, ...change }, now), { error });
});

test("a datetime-local value is the same moment back", () => {
  const ms = Date.UTC(2026, 11, 5, 7, 30, 15);
  const value = localInputValue(ms);
  assert.match(value, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/);
  assert.equal(new Date(value).getTime(), ms);
});
