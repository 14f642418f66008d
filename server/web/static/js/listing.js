// The lobby's listing in full: `tables` replies come in pages that each fit a frame, the next one
// asked for with the cursor the last one gave (docs/protocol.md, `list_tables`).

export const MAX_PAGES = 100; // a bound, not a limit a server reaches: 100 pages of 100 tables

// `request(message)` sends one request and resolves to its reply (Connection.request).
export async function everyTable(request, maxPages = MAX_PAGES) {
  const tables = new Map();
  let cursor = null;
  for (let page = 0; page < maxPages; page += 1) {
    const reply = await request(cursor ? { t: "list_tables", cursor } : { t: "list_tables" });
    if (!reply || reply.t !== "tables") break;
    for (const info of reply.tables) tables.set(info.table, info);
    cursor = reply.next;
    if (!cursor) break;
  }
  return tables;
}
