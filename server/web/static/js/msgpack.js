// MessagePack for the protocol's messages: nil, booleans, integers, float64, UTF-8 strings, binary,
// arrays and maps with string keys. No ext types (the protocol has none). The project's own small
// codec, so the page needs no build step and nothing from a CDN (docs/web.md, "Why no npm").
//
// encode(value) -> Uint8Array, the shortest form of every integer and keys in insertion order (the
// reference encoder's bytes for the same map); decode(bytes) -> value, which refuses trailing bytes,
// ext types, non-string keys and nesting deeper than maxDepth.

const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder("utf-8", { fatal: true });

export class MsgpackError extends Error {}

class Writer {
  constructor() {
    this.buffer = new Uint8Array(256);
    this.view = new DataView(this.buffer.buffer);
    this.length = 0;
  }
  ensure(extra) {
    if (this.length + extra <= this.buffer.length) return;
    let size = this.buffer.length * 2;
    while (size < this.length + extra) size *= 2;
    const grown = new Uint8Array(size);
    grown.set(this.buffer.subarray(0, this.length));
    this.buffer = grown;
    this.view = new DataView(grown.buffer);
  }
  byte(b) { this.ensure(1); this.buffer[this.length++] = b; }
  u16(n) { this.ensure(2); this.view.setUint16(this.length, n); this.length += 2; }
  u32(n) { this.ensure(4); this.view.setUint32(this.length, n); this.length += 4; }
  bytes(data) { this.ensure(data.length); this.buffer.set(data, this.length); this.length += data.length; }
  result() { return this.buffer.slice(0, this.length); }
}

function writeInt(w, n) {
  if (n >= 0) {
    if (n < 0x80) w.byte(n);
    else if (n < 0x100) { w.byte(0xcc); w.byte(n); }
    else if (n < 0x10000) { w.byte(0xcd); w.u16(n); }
    else if (n < 0x100000000) { w.byte(0xce); w.u32(n); }
    else { w.byte(0xcf); w.u32(Math.floor(n / 0x100000000)); w.u32(n >>> 0); }
  } else if (n >= -32) w.byte(0x100 + n);
  else if (n >= -0x80) { w.byte(0xd0); w.byte(0x100 + n); }
  else if (n >= -0x8000) { w.byte(0xd1); w.u16(0x10000 + n); }
  else if (n >= -0x80000000) { w.byte(0xd2); w.u32(0x100000000 + n); }
  else {
    const big = BigInt.asUintN(64, BigInt(n));
    w.byte(0xd3); w.u32(Number(big >> 32n)); w.u32(Number(big & 0xffffffffn));
  }
}

function writeLength(w, length, fix, fixMax, codes) {
  if (fix !== null && length <= fixMax) w.byte(fix | length);
  else if (codes[0] !== null && length < 0x100) { w.byte(codes[0]); w.byte(length); }
  else if (length < 0x10000) { w.byte(codes[1]); w.u16(length); }
  else { w.byte(codes[2]); w.u32(length); }
}

function writeValue(w, value, depth) {
  if (depth > 64) throw new MsgpackError("value nested too deeply to encode");
  if (value === null || value === undefined) w.byte(0xc0);
  else if (value === false) w.byte(0xc2);
  else if (value === true) w.byte(0xc3);
  else if (typeof value === "number") {
    if (Number.isSafeInteger(value)) writeInt(w, value);
    else { w.ensure(9); w.byte(0xcb); w.view.setFloat64(w.length, value); w.length += 8; }
  } else if (typeof value === "string") {
    const data = utf8Encoder.encode(value);
    writeLength(w, data.length, 0xa0, 31, [0xd9, 0xda, 0xdb]);
    w.bytes(data);
  } else if (value instanceof Uint8Array) {
    writeLength(w, value.length, null, 0, [0xc4, 0xc5, 0xc6]);
    w.bytes(value);
  } else if (Array.isArray(value)) {
    writeLength(w, value.length, 0x90, 15, [null, 0xdc, 0xdd]);
    for (const item of value) writeValue(w, item, depth + 1);
  } else if (typeof value === "object") {
    // Absent (undefined) fields are left out, as the reference encoder leaves out nil optionals.
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    writeLength(w, entries.length, 0x80, 15, [null, 0xde, 0xdf]);
    for (const [key, item] of entries) {
      writeValue(w, key, depth + 1);
      writeValue(w, item, depth + 1);
    }
  } else throw new MsgpackError(`cannot encode a ${typeof value}`);
}

export function encode(value) {
  const w = new Writer();
  writeValue(w, value, 0);
  return w.result();
}

class Reader {
  constructor(bytes, maxDepth) {
    this.bytes = bytes;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.pos = 0;
    this.maxDepth = maxDepth;
  }
  need(n) {
    if (this.pos + n > this.bytes.length) throw new MsgpackError("the message ends inside a value");
  }
  u8() { this.need(1); return this.bytes[this.pos++]; }
  u16() { this.need(2); const v = this.view.getUint16(this.pos); this.pos += 2; return v; }
  u32() { this.need(4); const v = this.view.getUint32(this.pos); this.pos += 4; return v; }
  take(n) { this.need(n); const v = this.bytes.subarray(this.pos, this.pos + n); this.pos += n; return v; }
  str(n) {
    try { return utf8Decoder.decode(this.take(n)); } catch { throw new MsgpackError("a string is not UTF-8"); }
  }
  array(n, depth) {
    const out = [];
    for (let i = 0; i < n; i++) out.push(this.value(depth + 1));
    return out;
  }
  map(n, depth) {
    const out = {};
    for (let i = 0; i < n; i++) {
      const key = this.value(depth + 1);
      if (typeof key !== "string") throw new MsgpackError("a map key is not a string");
      if (Object.prototype.hasOwnProperty.call(out, key)) throw new MsgpackError(`duplicate key ${key}`);
      // defineProperty: a key named "__proto__" is data, never the object's prototype.
      Object.defineProperty(out, key, { value: this.value(depth + 1), enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  value(depth) {
    if (depth > this.maxDepth) throw new MsgpackError("nested too deeply");
    const b = this.u8();
    if (b < 0x80) return b;
    if (b < 0x90) return this.map(b & 0x0f, depth);
    if (b < 0xa0) return this.array(b & 0x0f, depth);
    if (b < 0xc0) return this.str(b & 0x1f);
    if (b >= 0xe0) return b - 0x100;
    switch (b) {
      case 0xc0: return null;
      case 0xc2: return false;
      case 0xc3: return true;
      case 0xc4: return this.take(this.u8()).slice();
      case 0xc5: return this.take(this.u16()).slice();
      case 0xc6: return this.take(this.u32()).slice();
      case 0xca: { this.need(4); const v = this.view.getFloat32(this.pos); this.pos += 4; return v; }
      case 0xcb: { this.need(8); const v = this.view.getFloat64(this.pos); this.pos += 8; return v; }
      case 0xcc: return this.u8();
      case 0xcd: return this.u16();
      case 0xce: return this.u32();
      case 0xcf: { const hi = this.u32(); return hi * 0x100000000 + this.u32(); }
      case 0xd0: { const v = this.u8(); return v < 0x80 ? v : v - 0x100; }
      case 0xd1: { const v = this.u16(); return v < 0x8000 ? v : v - 0x10000; }
      case 0xd2: { const v = this.u32(); return v < 0x80000000 ? v : v - 0x100000000; }
      case 0xd3: { this.need(8); const v = this.view.getBigInt64(this.pos); this.pos += 8; return Number(v); }
      case 0xd9: return this.str(this.u8());
      case 0xda: return this.str(this.u16());
      case 0xdb: return this.str(this.u32());
      case 0xdc: return this.array(this.u16(), depth);
      case 0xdd: return this.array(this.u32(), depth);
      case 0xde: return this.map(this.u16(), depth);
      case 0xdf: return this.map(this.u32(), depth);
      default: throw new MsgpackError(`unsupported msgpack byte 0x${b.toString(16)} (ext types are not used)`);
    }
  }
}

export function decode(bytes, { maxDepth = 16 } = {}) {
  const data = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  const reader = new Reader(data, maxDepth);
  const value = reader.value(1);
  if (reader.pos !== data.length) throw new MsgpackError("bytes after the value");
  return value;
}
