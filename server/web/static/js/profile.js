// A player's profile: the statistics the server counted from the hands it stored (the `stats`
// request, docs/protocol.md "Player statistics"), looked up by name from the lobby (or your own)
// and drawn in the lobby's profile panel, or opened in a dialog by clicking a player's name
// wherever the page shows one (`playerLink`). The numbers are the server's; this module only words
// them (`profileLines`, which the unit tests call without a page).

import { $, fill, h } from "./dom.js";

function share(part, whole) {
  return whole ? `${part} of ${whole} (${Math.round((100 * part) / whole)}%)` : "none";
}

// The statistics in words: [label, value] rows, in the order the panel shows them.
export function profileLines(stats) {
  const s = stats;
  const bags = s.contracts ? (s.bags / s.contracts).toFixed(2) : "-";
  const mean = s.decisions ? `${(s.decision_ms / s.decisions / 1000).toFixed(2)} s` : "-";
  return [
    ["Games", `${s.games} (${s.wins} won)`],
    ["Hands", String(s.hands)],
    ["Contracts made", share(s.contracts_made, s.contracts)],
    ["Contracts set", String(s.contracts_set)],
    ["Average bags", bags],
    ["Nil made", share(s.nil_made, s.nil_tried)],
    ["Blind nil made", share(s.blind_nil_made, s.blind_nil_tried)],
    ["Time a decision", `${mean} (${s.decisions} decisions)`],
    ["Tricks lost to play", `${s.dd_tricks_lost ?? 0} in ${s.dd_hands ?? 0} hands analysed double dummy (${s.hands - (s.dd_hands ?? 0)} not analysed)`],
  ];
}

// Ask for `name`'s statistics (null: your own) and draw them, or the server's refusal, in `panel`
// (the lobby's, or the dialog a clicked name opens); its heading gets the id `titleId`.
export async function showProfile(request, name, panel = $("profile"), titleId = "profile-title") {
  panel.hidden = false;
  fill(panel, h("p", {}, "Looking up…"));
  const reply = await request(name ? { t: "stats", name } : { t: "stats" });
  if (!reply) {
    fill(panel, h("p", { class: "error" }, "Not connected: try again once the page is back."));
  } else if (reply.t === "error") {
    fill(panel, h("p", { class: "error", role: "alert" }, reply.message || reply.code));
  } else {
    fill(
      panel,
      h("h3", { id: titleId }, `${reply.name} (${reply.kind === "bot" ? "bot" : "person"})`),
      h("dl", { class: "profile-stats" }, profileLines(reply).map(([label, value]) => [h("dt", {}, label), h("dd", {}, value)])),
    );
  }
}

// A player's name as the page shows it anywhere (a seat at the table, the game-over dialog, the
// lobby's list): a button that opens that account's profile (`account`: its account name, which
// a built-in bot's shown name is not).
export function playerLink(account, text) {
  return h("button", { type: "button", class: "player-link", dataset: { player: account }, "aria-label": `${text}: profile` }, text);
}

// The dialog a clicked name opens, over whatever screen is up; Close (or Escape) gives the focus
// back to the name.
function openProfileDialog(request, account, opener) {
  const dialog = $("profile-dialog");
  dialog.hidden = false;
  dialog.returnFocus = opener;
  showProfile(request, account, $("profile-dialog-body"), "profile-dialog-name");
  requestAnimationFrame(() => $("profile-dialog-close").focus());
}

function closeProfileDialog() {
  const dialog = $("profile-dialog");
  if (dialog.hidden) return false;
  dialog.hidden = true;
  const back = dialog.returnFocus;
  dialog.returnFocus = null;
  if (back && back.isConnected) back.focus();
  return true;
}

// Wire the lobby's profile form, and every player's name (`playerLink`) to the dialog: `request`
// sends a request and resolves with its reply.
export function setUpProfile(request) {
  $("profile-form").addEventListener("submit", (event) => {
    event.preventDefault();
    showProfile(request, $("profile-name").value.trim());
  });
  $("profile-mine").addEventListener("click", () => showProfile(request, null));
  document.addEventListener("click", (event) => {
    const link = event.target && event.target.closest ? event.target.closest("button.player-link[data-player]") : null;
    if (link) openProfileDialog(request, link.dataset.player, link);
  });
  $("profile-dialog-close").addEventListener("click", closeProfileDialog);
  // Before the page's own Escape (which clears a selection at the table): this one closes the dialog.
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && closeProfileDialog()) event.stopImmediatePropagation();
  }, true);
}
