// The page's msgpack codec against every example of docs/protocol.md (the fixtures are written by
// tests/web/test_page_logic.py from the document and the reference encoder).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { decode, encode, MsgpackError } from "../../../server/web/static/js/msgpack.js";

const fixtures = JSON.parse(readFileSync(process.env.SPADES_FIXTURES, "utf8"));
const fromHex = (hex) => Uint8Array.from(hex.match(/../g), (b) => parseInt(b, 16));
const toHex = (bytes) => Buffer.from(bytes).toString("hex");

test("every documented example decodes to its map and encodes to its exact bytes", () => {
  assert.ok(fixtures.examples.length > 50);
  for (const example of fixtures.examples) {
    const decoded = decode(fromHex(example.body));
    assert.deepEqual(decoded, example.map, example.map.t);
    assert.deepEqual(Object.keys(decoded), Object.keys(example.map)); // wire order kept
    if (!example.floats) assert.equal(toHex(encode(example.map)), example.body, example.map.t);
  }
});

test("integers take their shortest form, as the reference encoder writes them", () => {
  for (const [value, hex] of fixtures.integers) assert.equal(toHex(encode(value)), hex, String(value));
  for (const [value, hex] of fixtures.integers) assert.equal(decode(fromHex(hex)), value);
});

test("bad input is refused, never half-read", () => {
  for (const hex of ["c1", "d40102", "81a174", "8101a0", "a2ff", "9100c0c0", "82a174a0a174a0"]) {
    assert.throws(() => decode(fromHex(hex)), MsgpackError, hex);
  }
  // Too deep.
  assert.throws(() => decode(fromHex("91".repeat(40) + "c0")), MsgpackError);
  // "__proto__" is a key like any other.
  const odd = decode(encode(JSON.parse('{"__proto__": 1, "t": "x"}')));
  assert.equal(Object.getPrototypeOf(odd), Object.prototype);
});
