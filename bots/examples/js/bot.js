#!/usr/bin/env node
// A complete bot for the Spades/Hearts table server, written from docs/protocol.md alone.
//
//   npm install
//   node bot.js --server 127.0.0.1:7777 --token TOKEN --table t1
//
// SPADES_SERVER, SPADES_TOKEN and SPADES_TABLE stand in for the three flags (the flags win), so
// `spades-server conformance -- node bots/examples/js/bot.js` runs it through the conformance kit.
//
// It speaks the protocol directly: 4-byte big-endian length frames holding one MessagePack map each,
// `hello` with the account token, `join` a table, then an `act` for every `your_turn`, choosing one
// entry of `legal` and sending back the turn's `version`. It keeps the latest snapshot view and applies
// the few events it needs (its hand and the trick in progress) so it can play sensibly:
// bid about its high cards, follow with the lowest card that still wins or else its lowest card.
// When the connection drops (or the server says `bye`) it connects again and says `hello` with its
// token: the server gives the seat back with `joined`, a `snapshot` and `your_turn`. A request
// refused `rate_limited` is sent again after `retry_ms`. It exits 0 after `game_over`, 1 on a fatal
// error (a refused token, a table that does not exist, no way back to the server), 2 on bad usage.

"use strict";

const net = require("node:net");
const { encode, decode } = require("@msgpack/msgpack");

const PROTOCOL = "1.0";
const RANKS = "23456789TJQKA";
const GIVE_UP_MS = 120000; // the server holds a dropped seat two minutes by default

function parseArgs(argv) {
  const env = process.env;
  const args = {
    server: env.SPADES_SERVER || "127.0.0.1:7777",
    token: env.SPADES_TOKEN || "",
    table: env.SPADES_TABLE || null,
  };
  for (let i = 2; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, "");
    args[key] = argv[i + 1];
  }
  if (!args.token || !args.table) {
    console.error("usage: node bot.js --server HOST:PORT --token TOKEN --table ID");
    console.error("       (or SPADES_SERVER, SPADES_TOKEN and SPADES_TABLE in the environment)");
    process.exit(2);
  }
  const at = args.server.lastIndexOf(":");
  args.host = (at >= 0 ? args.server.slice(0, at) : args.server) || "127.0.0.1";
  args.port = at >= 0 ? Number(args.server.slice(at + 1)) : 7777;
  return args;
}

// ---- framing: a u32 big-endian length, then one msgpack map ------------------------------------
class Framer {
  constructor(maxFrame) {
    this.buffer = Buffer.alloc(0);
    this.maxFrame = maxFrame;
  }
  push(chunk) {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    const messages = [];
    while (this.buffer.length >= 4) {
      const length = this.buffer.readUInt32BE(0);
      if (length === 0 || length > this.maxFrame) throw new Error(`bad frame length ${length}`);
      if (this.buffer.length < 4 + length) break;
      messages.push(decode(this.buffer.subarray(4, 4 + length)));
      this.buffer = this.buffer.subarray(4 + length);
    }
    return messages;
  }
}

function frame(message) {
  const body = Buffer.from(encode(message));
  const header = Buffer.alloc(4);
  header.writeUInt32BE(body.length, 0);
  return Buffer.concat([header, body]);
}

// ---- cards -------------------------------------------------------------------------------------
function rank(card) {
  if (card === "BJ") return 15;
  if (card === "LJ") return 14;
  return RANKS.indexOf(card[0]);
}
function suit(card) {
  return card.length === 2 && card !== "BJ" && card !== "LJ" ? card[1] : "S";
}

// ---- the bot's decisions -----------------------------------------------------------------------
function chooseBid(legal, hand) {
  const highCards = hand.filter((c) => rank(c) >= 11).length; // kings, aces (and jokers)
  const spades = hand.filter((c) => suit(c) === "S").length;
  const want = Math.max(1, highCards + Math.max(0, spades - 3));
  const plain = legal.filter((a) => a.kind === "bid" && !a.blind && !a.moe && !a.bemo && !a.no_trumps
    && !a.ten_for_200 && !a.double_nil);
  const bids = plain.length ? plain : legal.filter((a) => a.kind === "bid");
  if (!bids.length) return legal.find((a) => a.kind === "look") || legal[0];
  bids.sort((a, b) => Math.abs(a.tricks - want) - Math.abs(b.tricks - want) || b.tricks - a.tricks);
  return bids[0];
}

function beats(card, best, led, hearts) {
  if (suit(card) === suit(best)) return rank(card) > rank(best);
  return !hearts && suit(card) === "S";
}

function choosePlay(legal, view) {
  const plays = legal.filter((a) => a.kind === "play");
  if (!plays.length) return legal[0];
  const hearts = view.game === "hearts";
  plays.sort((a, b) => rank(a.card) - rank(b.card));
  const trick = view.trick || [];
  if (!trick.length) return plays[0]; // lead low
  let best = trick[0][1];
  for (const [, card] of trick) if (beats(card, best, suit(trick[0][1]), hearts)) best = card;
  if (hearts) {
    // Hearts: the highest card that still loses, else the lowest.
    const losers = plays.filter((a) => !beats(a.card, best, null, true));
    return losers.length ? losers[losers.length - 1] : plays[0];
  }
  const winners = plays.filter((a) => beats(a.card, best, null, false));
  return winners.length ? winners[0] : plays[0];
}

function choose(legal, view) {
  const kinds = new Set(legal.map((a) => a.kind));
  if (kinds.has("bid") || kinds.has("look")) {
    const look = legal.find((a) => a.kind === "look");
    return look || chooseBid(legal, view.hand || []);
  }
  if (kinds.has("play")) return choosePlay(legal, view);
  if (kinds.has("keep_drawn")) return legal.find((a) => a.keep) || legal[0];
  return legal[0]; // pass, exchange, discard: the server lists every legal choice in full
}

// ---- the connection, and coming back after a drop ----------------------------------------------
function main() {
  const args = parseArgs(process.argv);
  let view = null;
  let seated = false; // once seated, a new connection's hello gets the seat back by itself
  let backoff = 200;
  let lostSince = null;

  function connect() {
    const socket = net.createConnection({ host: args.host, port: args.port });
    const framer = new Framer(1 << 20);
    const sent = new Map(); // id -> request, to send again one refused rate_limited
    let nextId = 1;
    let expectedSeq = 1; // each connection numbers its events from 1
    let closing = false; // after a bye (ours or the server's) nothing more is sent
    let pinger = null;

    const send = (message) => {
      if (closing || socket.destroyed) return;
      if (message.t !== "pong" && message.t !== "bye" && message.id === undefined) {
        message.id = nextId++;
        sent.set(message.id, message);
        if (sent.size > 32) sent.delete(sent.keys().next().value);
      }
      socket.write(frame(message));
    };

    socket.on("connect", () => {
      send({ t: "hello", protocol: PROTOCOL, client: "example-js-bot/1.0", kind: "bot", token: args.token });
    });

    socket.on("data", (chunk) => {
      let messages;
      try {
        messages = framer.push(chunk);
      } catch (err) {
        console.error(`protocol error: ${err.message}`);
        socket.destroy();
        return;
      }
      for (const m of messages) handle(m);
    });

    socket.on("error", (err) => console.error(`connection error: ${err.message}`));

    socket.on("close", () => {
      if (pinger) clearInterval(pinger);
      if (lostSince === null) lostSince = Date.now();
      if (Date.now() - lostSince > GIVE_UP_MS) {
        console.error("could not get back to the server; giving up");
        process.exit(1);
      }
      console.error(`connection closed; reconnecting in ${backoff} ms`);
      setTimeout(connect, backoff);
      backoff = Math.min(backoff * 2, 5000);
    });

    function handle(m) {
      if (closing) return; // nothing the server sent after its bye matters
      if (m.seq !== undefined) {
        if (m.seq !== expectedSeq) console.error(`warning: seq ${m.seq}, expected ${expectedSeq}`);
        expectedSeq = m.seq + 1;
      }
      switch (m.t) {
        case "welcome": {
          lostSince = null;
          backoff = 200;
          // Waiting for players is silence on the wire: ping often enough to outlast the idle timeout.
          const idle = m.limits && m.limits.idle_timeout_ms;
          if (idle > 0) pinger = setInterval(() => send({ t: "ping" }), Math.max(100, idle / 3));
          if (!m.user) break; // the token was refused: bad_token follows
          if (!seated) send({ t: "join", table: args.table });
          break;
        }
        case "joined":
          if (m.seat !== undefined && m.seat !== null) {
            seated = true;
            console.log(`seated at ${m.table}, seat ${m.seat}`);
          }
          break;
        case "snapshot":
          view = m.view;
          break;
        case "hand_dealt":
          if (view) {
            view.hand = m.cards || [];
            view.trick = [];
            view.game = view.game || "spades";
          }
          break;
        case "hand_looked":
          if (view && m.cards) view.hand = m.cards;
          break;
        case "cards_passed":
        case "cards_exchanged":
          if (view && m.cards && m.giver === view.seat) view.hand = view.hand.filter((c) => !m.cards.includes(c));
          if (view && m.cards && m.receiver === view.seat) view.hand = view.hand.concat(m.cards);
          break;
        case "card_played":
          if (view) {
            view.trick = (view.trick || []).concat([[m.seat, m.card]]);
            if (m.seat === view.seat) view.hand = view.hand.filter((c) => c !== m.card);
          }
          break;
        case "trick_won":
          if (view) view.trick = [];
          break;
        case "your_turn":
          send({ t: "act", table: m.table, version: m.version, action: choose(m.legal, view || {}) });
          break;
        case "ping":
          send({ t: "pong", id: m.id });
          break;
        case "bye":
          // The server is closing this connection: say nothing more, hang up, and come back.
          closing = true;
          socket.end();
          break;
        case "error": {
          // A refused request was not carried out: send it again once the server says it may.
          if (m.code === "rate_limited") {
            const request = sent.get(m.id);
            sent.delete(m.id);
            if (request && request.t !== "act") {
              delete request.id;
              setTimeout(() => send(request), Math.min(m.retry_ms || 1000, 5000));
            }
            break;
          }
          // stale_version: another seat moved the game on before our answer arrived; a fresh
          // your_turn follows if we are still to act.
          if (m.code === "stale_version") break;
          console.error(`error ${m.code}: ${m.message}`);
          if (["bad_token", "no_such_table", "version_mismatch"].includes(m.code)) process.exit(1);
          break;
        }
        case "game_over":
          console.log(`game over: winners ${JSON.stringify(m.winners)}, scores ${JSON.stringify(m.scores)}`);
          socket.removeAllListeners("close");
          if (pinger) clearInterval(pinger);
          closing = true;
          socket.end(frame({ t: "bye", reason: "game over" }), () => process.exit(0));
          setTimeout(() => process.exit(0), 1000).unref();
          break;
        default:
          break; // every other message is fine to ignore
      }
    }
  }

  connect();
}

main();
