// The page's connection: the protocol over one WebSocket (docs/protocol.md, "WebSocket": one binary
// message per msgpack body, no length prefix), with request ids and reply matching, the event
// `seq` check, pings while idle, and reconnecting with the saved token after a drop.

import { decode, encode } from "./msgpack.js";

export const PROTOCOL = "1.0";
export const CLIENT = "spades-web/1";
const REPLY_TYPES = new Set(["welcome", "registered", "logged_in", "tables", "table_created", "joined", "ok", "error", "pong", "standings", "matches", "entrant", "player_stats", "hand_review", "event_list", "event_info", "hand_records"]);
const BACKOFF_MS = [500, 1000, 2000, 4000, 8000];

export class Connection {
  // handlers: { onOpen(welcome, helloError), onMessage(msg), onStatus(text), onFatal(error) };
  // storage: where the token lives (the browser's localStorage).
  constructor(url, handlers, storage) {
    this.url = url;
    this.handlers = handlers;
    this.storage = storage;
    this.ws = null;
    this.nextId = 1;
    this.waiting = new Map(); // id -> resolve
    this.seq = 0;
    this.attempt = 0;
    this.welcome = null;
    this.stopped = false;
    this.pingTimer = null;
    this.retryTimer = null;
    this.helloId = null;
  }

  get token() { return this.storage.getItem("spades.token"); }
  set token(value) {
    if (value) this.storage.setItem("spades.token", value);
    else this.storage.removeItem("spades.token");
  }

  start() {
    this.stopped = false;
    clearTimeout(this.retryTimer);
    const ws = new WebSocket(this.url);
    ws.binaryType = "arraybuffer";
    this.ws = ws;
    this.seq = 0;
    this.welcome = null;
    ws.onopen = () => {
      this.handlers.onStatus("connecting");
      const hello = { t: "hello", id: this.nextId++, protocol: PROTOCOL, client: CLIENT, kind: "human" };
      if (this.token) hello.token = this.token;
      this.helloId = hello.id;
      this.sendRaw(hello);
    };
    ws.onmessage = (event) => {
      if (ws !== this.ws) return;
      let msg;
      try {
        msg = decode(new Uint8Array(event.data));
      } catch (error) {
        this.drop(`the server sent a message this page cannot read (${error.message})`);
        return;
      }
      if (msg === null || typeof msg !== "object" || typeof msg.t !== "string") return;
      this.receive(msg);
    };
    ws.onclose = (event) => {
      if (ws !== this.ws) return;
      this.lost(event.reason || "connection lost");
    };
    ws.onerror = () => {};
  }

  receive(msg) {
    if (msg.seq !== undefined && !REPLY_TYPES.has(msg.t)) {
      if (msg.seq !== this.seq + 1) {
        // A gap: something was missed. Reconnect and resync from a fresh snapshot.
        this.drop(`missed events (seq ${this.seq} then ${msg.seq})`);
        return;
      }
      this.seq = msg.seq;
    }
    if (msg.t === "welcome" && msg.id === this.helloId) {
      this.welcome = msg;
      this.attempt = 0;
      this.startPings(msg.limits);
      this.handlers.onStatus("connected");
      this.handlers.onOpen(msg);
      return;
    }
    if (msg.t === "error" && msg.id === this.helloId && !this.welcome) {
      this.stopped = true;
      this.handlers.onFatal(msg);
      return;
    }
    if (msg.t === "ping") {
      this.sendRaw({ t: "pong", id: msg.id });
      return;
    }
    if (msg.t === "bye") {
      this.handlers.onStatus("the server said goodbye: " + (msg.reason || ""));
      return;
    }
    if (REPLY_TYPES.has(msg.t) && msg.id !== undefined && msg.id !== null && this.waiting.has(msg.id)) {
      const resolve = this.waiting.get(msg.id);
      this.waiting.delete(msg.id);
      resolve(msg);
      if (msg.t === "pong") return;
    }
    this.handlers.onMessage(msg);
  }

  sendRaw(msg) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) this.ws.send(encode(msg));
  }

  // Send a request; resolves with its reply (`error` included), or with null if the connection
  // drops first.
  request(msg) {
    const id = this.nextId++;
    const full = { ...msg, id };
    return new Promise((resolve) => {
      if (!this.ws || this.ws.readyState !== WebSocket.OPEN || !this.welcome) {
        resolve(null);
        return;
      }
      this.waiting.set(id, resolve);
      this.sendRaw(full);
    });
  }

  startPings(limits) {
    clearInterval(this.pingTimer);
    const idle = (limits && limits.idle_timeout_ms) || 60000;
    const every = Math.max(2000, Math.min(30000, idle / 3));
    this.pingTimer = setInterval(() => this.request({ t: "ping" }), every);
  }

  // The connection is gone (or we drop it): answer every waiting request with null, then retry.
  lost(reason) {
    clearInterval(this.pingTimer);
    for (const resolve of this.waiting.values()) resolve(null);
    this.waiting.clear();
    this.ws = null;
    this.welcome = null;
    if (this.stopped) return;
    const delay = BACKOFF_MS[Math.min(this.attempt, BACKOFF_MS.length - 1)];
    this.attempt += 1;
    this.handlers.onStatus(`reconnecting… (${reason})`);
    this.retryTimer = setTimeout(() => this.start(), delay);
  }

  drop(reason) {
    const ws = this.ws;
    if (ws) {
      ws.onclose = null;
      ws.close();
    }
    this.lost(reason);
  }

  // Reconnect at once (the browser says it is online again).
  retryNow() {
    if (!this.ws && !this.stopped) {
      clearTimeout(this.retryTimer);
      this.start();
    }
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    if (this.ws) {
      this.sendRaw({ t: "bye" });
      this.ws.close();
    }
  }
}
