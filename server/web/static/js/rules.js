// A rules panel's lines from the engine's one table of option descriptions (engine/option_docs.py,
// carried by /presets.json as `options` and `option_order`): the options of this game that matter
// under its other options, each with its value in words. The same lines as the engine's
// `rule_lines` (tests/web/js/rules.test.mjs checks them against it).

// `value` of one option as a player reads it (engine/option_docs.py `value_words`).
export function valueWords(doc, option, value) {
  if (value === true) return "yes";
  if (value === false) return "no";
  if (Array.isArray(value)) return value.map((item) => valueWords(doc, option, item)).join(", ") || "none";
  const said = (doc.words || {})[String(value)];
  if (said !== undefined) return said;
  if (option === "first_dealer") return `seat ${value}`;
  if (Number.isInteger(value)) {
    const unit = Math.abs(value) === 1 ? (doc.unit || "").slice(0, -1) : doc.unit || ""; // 1 point
    return `${value} ${unit}`.trim();
  }
  return String(value).replaceAll("_", " ");
}

// Whether `option` matters in a game of `options` (every option by name): its game, the other
// options it needs (`when`: each of them one of the values listed), and a list that lists something
// where it must (`omit_empty`).
export function applies(doc, options, option) {
  if (!doc.games.includes(String(options.game ?? "spades"))) return false;
  if (doc.omit_empty && !(options[option] || []).length) return false;
  return Object.entries(doc.when || {}).every(([name, values]) => values.some((v) => v === options[name]));
}

// [{ option, label, value, about }] for a game of `options` (a whole ruleset: a preset's options
// with a table's overrides on top), in the engine's order.
export function ruleLines(options, docs, order) {
  const lines = [];
  for (const option of order || []) {
    const doc = docs[option];
    if (!doc || !(option in options) || !applies(doc, options, option)) continue;
    lines.push({ option, label: doc.label, value: valueWords(doc, option, options[option]), about: doc.about });
  }
  return lines;
}
