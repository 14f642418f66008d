// The page follows the listing's pages (`tables.next`) to the end, and stops at its bound.
import assert from "node:assert/strict";
import { test } from "node:test";

import { everyTable } from "../../../server/web/static/js/listing.js";

function pagedServer(total, perPage) {
  const asked = [];
  const request = async (message) => {
    asked.push(message);
    const start = message.cursor ? Number(message.cursor.slice(1)) : 0;
    const tables = [];
    for (let i = start; i < Math.min(total, start + perPage); i += 1) tables.push({ table: `t${i}` });
    const next = start + perPage < total ? `c${start + perPage}` : null;
    return { t: "tables", id: asked.length, tables, next };
  };
  return { request, asked };
}

test("every page of the listing is read, in order, each asked for with the last cursor", async () => {
  const server = pagedServer(250, 100);
  const tables = await everyTable(server.request);
  assert.equal(tables.size, 250);
  assert.deepEqual(server.asked, [{ t: "list_tables" }, { t: "list_tables", cursor: "c100" }, { t: "list_tables", cursor: "c200" }]);
});

test("the pages read are bounded", async () => {
  const server = pagedServer(10_000, 1);
  const tables = await everyTable(server.request, 5);
  assert.equal(tables.size, 5);
  assert.equal(server.asked.length, 5);
});

test("a refusal ends the listing with what was read", async () => {
  const tables = await everyTable(async () => ({ t: "error", code: "rate_limited" }));
  assert.equal(tables.size, 0);
});
