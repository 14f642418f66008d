// The page's rules panels (rules.js) say what the engine's `rule_lines` says, line for line, for
// every preset and a few tables' overrides, from the same /presets.json the page reads.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { ruleLines } from "../../../server/web/static/js/rules.js";

const fixtures = JSON.parse(readFileSync(process.env.SPADES_FIXTURES, "utf8"));

test("every ruleset's panel is the engine's rule lines", () => {
  const { options: docs, option_order: order } = fixtures.presets;
  assert.ok(fixtures.rules.length > 14);
  for (const { options, lines } of fixtures.rules) {
    assert.deepEqual(ruleLines(options, docs, order), lines);
  }
});

test("a Spades panel names no Hearts option, a Hearts panel no Spades bid", () => {
  const { options: docs, option_order: order } = fixtures.presets;
  for (const preset of fixtures.presets.presets) {
    const shown = ruleLines(preset.options, docs, order).map((line) => line.option);
    if (preset.game === "spades") assert.ok(!shown.some((o) => o.startsWith("hearts_")), preset.name);
    else assert.ok(!shown.includes("nil") && shown.includes("hearts_moon"), preset.name);
  }
});
