// The replays' hand review (issue 42): for each hand, the tricks each side could make double dummy
// at the start of play beside its bid and what it took, and what each card played cost its side.
// The page cannot solve (the solver is the engine's, in Python): each hand's record is sent to the
// server (`review`, docs/protocol.md "Hand review"), one at a time, and its `hand_review` is put on
// the hand: the words here are `spades replay --analyze`'s (client/review.py). No DOM: the view is
// replay_view.js; the unit tests call these without a page.

import { cardText } from "./cards.js";

// How often a hand refused `review_busy` (the server's or the address's reviews all taken) is
// asked again, at the `retry_ms` the server gave, before the review stops and says so.
export const BUSY_TRIES = 5;

const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

// What goes in a card's note slot: the tricks it cost, "not analysed" when its position was past
// the server's budget (or its time), nothing for a card that kept the best result.
export function costNote(cost) {
  if (cost === null || cost === undefined) return "not analysed";
  return cost > 0 ? `cost ${plural(cost, "trick")}` : null;
}

// Put a `hand_review` on its hand: `hand.review` and each play's note.
export function applyReview(hand, answer) {
  const costs = Array.isArray(answer.costs) ? answer.costs : [];
  hand.review = { doubleDummy: answer.double_dummy ?? null, costs, unanswered: answer.unanswered ?? 0, budget: answer.budget ?? 0 };
  let k = 0;
  for (const trick of hand.tricks) {
    for (const play of trick.plays) {
      play.note = k < costs.length ? costNote(costs[k]) : null;
      play.cost = k < costs.length ? costs[k] : undefined;
      k += 1;
    }
  }
}

// The review's lines for a hand, as `spades replay --analyze` words them (client/review.py):
// the double-dummy tricks against the bids and what was taken, the cards that cost tricks, the
// tricks each seat's play lost, and what was not analysed. A hand not reviewed: its sentence.
export function reviewLines(hand) {
  if (typeof hand.reviewError === "string") return [`Not reviewed: ${hand.reviewError}`];
  const review = hand.review;
  if (!review) return [];
  const lines = [];
  if (review.doubleDummy === null) {
    lines.push("Double dummy at the start of play: not analysed (budget)");
  } else {
    const parts = [0, 1].map((side) => {
      // The score's name for the side (`your side (North-South)`), as the replay says it.
      const named = hand.sides.find((s) => s.seats.includes(side));
      const name = named ? named.name : side === 0 ? "North-South" : "East-West";
      const said = hand.bids.filter((b) => b.seat % 2 === side).map((b) => b.text).join(" + ");
      const took = hand.tricksWon ? hand.tricksWon.filter((_, s) => s % 2 === side).reduce((a, b) => a + b, 0) : "?";
      return `${name} ${review.doubleDummy[side]} (${said ? `bid ${said}, ` : ""}took ${took})`;
    });
    lines.push(`Double dummy at the start of play: ${parts.join("; ")}`);
  }
  const costly = [];
  const lost = [0, 0, 0, 0];
  for (const trick of hand.tricks) {
    for (const play of trick.plays) {
      if (play.cost > 0) {
        costly.push(`trick ${trick.number} ${hand.names[play.seat]} ${cardText(play.card)} −${play.cost}`);
        lost[play.seat] += play.cost;
      }
    }
  }
  lines.push(costly.length ? `Cards that cost tricks: ${costly.join(", ")}` : "No card cost its side a trick");
  const total = lost.reduce((a, b) => a + b, 0);
  lines.push(`Tricks lost by play: ${lost.map((n, s) => `${hand.names[s]} ${n}`).join(", ")} (total ${total})`);
  if (review.unanswered) {
    lines.push(`Not analysed (budget): ${plural(review.unanswered, "card")}, a position past ${review.budget.toLocaleString("en")} searched positions`);
  }
  return lines;
}

// One review of a replay's hands, a hand at a time, stoppable. `request(message)` resolves with the
// reply (an `error` too) or null when not connected; `changed()` is called after each step.
// `wait(ms)` is the pause before asking again after `review_busy` (a test may pass its own).
export class ReviewRun {
  constructor(hands, request, changed, wait = (ms) => new Promise((resolve) => setTimeout(resolve, ms))) {
    this.hands = hands;
    this.request = request;
    this.changed = changed;
    this.wait = wait;
    this.running = false;
    this.stopped = false;
    this.problem = ""; // why the review stopped by itself (not connected, the server busy)
    this.current = null; // the index of the hand being reviewed
    this.inFlight = null; // its request, kept when stopped: a restart waits for its answer
  }

  get done() { return this.hands.filter((h) => h.review || typeof h.reviewError === "string").length; }
  get total() { return this.hands.length; }
  get finished() { return this.done === this.total; }

  stop() {
    if (!this.running) return;
    this.stopped = true;
    this.running = false;
    this.changed();
  }

  async start() {
    if (this.running) return;
    this.running = true;
    this.stopped = false;
    this.problem = "";
    // A run stopped while its request was out may still be waiting for the answer when a new one
    // starts: the old one then only puts that answer on its hand, and the new one goes on.
    const run = (this.generation = (this.generation || 0) + 1);
    const live = () => this.running && run === this.generation;
    this.changed();
    // Bounded: each pass reviews a hand (or stops); a hand is asked at most BUSY_TRIES + 1 times.
    for (let i = 0; i < this.hands.length && live(); i++) {
      const hand = this.hands[i];
      if (hand.review || typeof hand.reviewError === "string") continue;
      this.current = i;
      this.changed();
      let answer = null;
      for (let tries = 0; tries <= BUSY_TRIES; tries++) {
        if (!this.inFlight || this.inFlight.hand !== i) this.inFlight = { hand: i, reply: this.request({ t: "review", hand: hand.record }) };
        const asked = this.inFlight;
        answer = await asked.reply;
        if (this.inFlight === asked) this.inFlight = null;
        if (!answer || answer.t !== "error" || answer.code !== "review_busy" || tries === BUSY_TRIES || !live()) break;
        await this.wait(answer.retry_ms || 2000);
      }
      if (answer && answer.t === "hand_review") applyReview(hand, answer);
      else if (answer && answer.t === "error" && answer.code !== "review_busy") hand.reviewError = answer.message || answer.code;
      if (!live()) break;
      if (!answer) {
        this.problem = "Not connected: the review is the server's. Try again once the page is connected.";
        break;
      }
      if (answer.t === "error" && answer.code === "review_busy") {
        this.problem = `The server is busy (${answer.message}). Try again later.`;
        break;
      }
      this.changed();
    }
    if (run === this.generation) {
      this.current = null;
      this.running = false;
    }
    this.changed();
  }

  // What the progress line says.
  status() {
    const { done, total } = this;
    if (this.running) return `Reviewing hand ${this.current === null ? done + 1 : this.current + 1} of ${total} (${done} done)…`;
    if (this.problem) return `${this.problem} ${done} of ${total} hands reviewed.`;
    if (this.stopped) return `Stopped: ${done} of ${total} hands reviewed.`;
    if (this.finished) return `Reviewed: ${plural(total, "hand")}.`;
    return "";
  }
}
