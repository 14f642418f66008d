"""What the client carries out of a hand: its journal record, and what it has seen of the hand in
play, kept on disk so a /quit, a crash or a restart of the client loses none of it.

Plain data in, plain data out (the table state calls these; client/journal.py does the files):
`hand_record` is the `spades-client-hand/1` record of a finished hand; `progress` is the
`spades-client-progress/1` object of the hand in play (the last view, the commitments, the deal
check's evidence and the record being gathered), and `read_progress` takes it back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from client.journal import CLIENT_FORMAT
from client.results import HandSummary
from client.verify import DealCheck, HandEvidence, Verdict
from engine.ruleset import Ruleset
from protocol import messages as m
from protocol.types import TableInfo

PROGRESS_FORMAT = "spades-client-progress/1"


def empty_pending() -> dict[str, Any]:
    """The journal record being gathered during a hand: bids, passes, and each trick seen."""
    return {"bids": [], "passes": [], "tricks": []}


@dataclass
class HandWitness:
    """What this client saw of the hand in play, as the events came: the commitments, the deal
    check's evidence (client/verify.py) and the journal record being gathered (`pending`)."""

    commitments: dict[int, str] = field(default_factory=dict)
    evidence: HandEvidence | None = None
    pending: dict[str, Any] | None = None

    def dealt(
        self, hand_number: int, dealer: int, seat: int | None, digest: str, cards: Any
    ) -> None:
        self.commitments.setdefault(hand_number, digest)
        self.evidence = HandEvidence(
            hand_number=hand_number,
            dealer=dealer,
            seat=seat,
            commitment=self.commitments.get(hand_number),
            my_cards=tuple(cards) if cards is not None else None,
        )
        self.pending = empty_pending()

    def joined(
        self,
        hand_number: int,
        dealer: int,
        seat: int | None,
        digest: str,
        transfers: list[tuple[int, int]],
    ) -> None:
        """Joined or resumed during a hand: the snapshot carries the deal's commitment, so the
        hand can still be checked when its seed is revealed (the cards as dealt are unknown unless
        we saw the deal ourselves; every card seen played from now on is checked)."""
        self.commitments.setdefault(hand_number, digest)
        evidence = self.evidence
        if evidence is None or evidence.hand_number != hand_number:
            self.evidence = HandEvidence(
                hand_number=hand_number,
                dealer=dealer,
                seat=seat,
                commitment=digest,
                transfers=transfers,
                joined_midway=True,
            )
            self.pending = empty_pending()
        else:
            if evidence.commitment is None:
                evidence.commitment = digest
            # Back after an absence: a pass or exchange may have been made meanwhile.
            evidence.transfers.extend(t for t in transfers if t not in evidence.transfers)

    def looked(self, cards: list[str]) -> None:
        if self.evidence is not None and self.evidence.my_cards is None:
            self.evidence.my_cards = tuple(cards)

    def bid(self, seat: int, text: str) -> None:
        if self.pending is not None:
            self.pending["bids"].append({"seat": seat, "text": text})

    def moved(self, giver: int, receiver: int, cards: list[str] | None) -> None:
        if self.evidence is not None:
            self.evidence.transfers.append((giver, receiver))
        if self.pending is not None:
            self.pending["passes"].append({"giver": giver, "receiver": receiver, "cards": cards})

    def played(self, seat: int, card: str) -> None:
        if self.evidence is not None:
            self.evidence.plays.append((seat, card))

    def trick(self, number: int, plays: list[list[Any]], winner: int) -> None:
        # Each trick_won carries its whole trick, so the record survives missed card_played.
        if self.pending is not None:
            self.pending["tricks"].append({"number": number, "plays": plays, "winner": winner})

    def evidence_of(self, hand_number: int, seat: int | None) -> HandEvidence:
        evidence = self.evidence
        if evidence is None or evidence.hand_number != hand_number:
            return HandEvidence(hand_number, 0, seat)
        return evidence

    def progress(self, table: str, seat: int | None, view: dict[str, Any]) -> dict[str, Any]:
        return progress(
            table,
            seat,
            view,
            commitments=self.commitments,
            evidence=self.evidence,
            pending=self.pending,
        )

    def take_back(self, found: Progress) -> None:
        self.commitments.update(found.commitments)
        if found.evidence is not None:
            self.evidence, self.pending = found.evidence, found.pending


@dataclass(frozen=True, slots=True)
class TableFacts:
    """What the record says about the table besides the hand."""

    table: str
    game: str
    info: TableInfo | None
    ruleset: Ruleset | None
    players: int
    names: list[str | None]
    seat: int | None


def hand_record(
    facts: TableFacts,
    evidence: HandEvidence,
    pending: dict[str, Any] | None,
    *,
    seed: str,
    scored: m.HandScored,
    result: DealCheck,
) -> dict[str, Any]:
    """The finished hand in the `spades-client-hand/1` shape (client/journal.py)."""
    pending = pending or empty_pending()
    tricks = sorted(pending["tricks"], key=lambda t: int(t["number"]))
    seen = {int(t["number"]) for t in tricks}
    missed = [n for n in range(1, max(seen, default=0) + 1) if n not in seen]
    info = facts.info
    return {
        "format": CLIENT_FORMAT,
        "game_id": facts.table,
        "game": facts.game,
        "preset": info.preset if info else None,
        "options": dict(info.options) if info else {},
        "ruleset": facts.ruleset.to_dict() if facts.ruleset else None,
        "players": facts.players,
        "names": facts.names,
        "seat": facts.seat,
        "hand_number": scored.hand_number,
        "dealer": evidence.dealer,
        "seed": seed,
        "commitment": evidence.commitment,
        "deal": [list(h) for h in result.deal] if result.deal else None,
        "my_cards": list(evidence.my_cards) if evidence.my_cards else None,
        "bids": pending["bids"],
        "passes": pending["passes"],
        "plays": [play for trick in tricks for play in trick["plays"]],
        "trick_winners": [trick["winner"] for trick in tricks],
        "tricks_seen": [trick["number"] for trick in tricks],
        "missed_tricks": missed,  # tricks played while the client was not connected
        "tricks": list(scored.tricks),
        "score": {
            "sides": [list(s) for s in scored.sides],
            "before": list(scored.before),
            "delta": list(scored.delta),
            "after": list(scored.after),
            "bags_after": list(scored.bags_after),
        },
        "notes": list(scored.notes),
        "verified": result.verdict.value,
    }


def seen_hands(records: list[dict[str, Any]]) -> tuple[list[HandSummary], dict[int, DealCheck]]:
    """The scores rows and deal checks of the hands an earlier run saw (unreadable ones skipped)."""
    rows: dict[int, HandSummary] = {}
    checks: dict[int, DealCheck] = {}
    for record in records:
        try:
            row = HandSummary.from_record(record)
        except (KeyError, TypeError, ValueError):
            continue
        rows[row.hand_number] = row
        verdict = str(record.get("verified") or "")
        if verdict in {v.value for v in Verdict}:
            line = "checked when the hand ended, in an earlier run of the client"
            checks[row.hand_number] = DealCheck(row.hand_number, Verdict(verdict), (line,))
    return [rows[n] for n in sorted(rows)], checks


def progress(
    table: str,
    seat: int | None,
    view: dict[str, Any],
    *,
    commitments: dict[int, str],
    evidence: HandEvidence | None,
    pending: dict[str, Any] | None,
) -> dict[str, Any]:
    """The hand in play as this client has seen it (JSON-ready)."""
    return {
        "format": PROGRESS_FORMAT,
        "table": table,
        "seat": seat,
        "view": view,
        "commitments": {str(k): v for k, v in commitments.items()},
        "pending": pending,
        "evidence": None
        if evidence is None
        else {
            "hand_number": evidence.hand_number,
            "dealer": evidence.dealer,
            "seat": evidence.seat,
            "commitment": evidence.commitment,
            "my_cards": list(evidence.my_cards) if evidence.my_cards is not None else None,
            "plays": [list(p) for p in evidence.plays],
            "transfers": [list(t) for t in evidence.transfers],
            "joined_midway": evidence.joined_midway,
        },
    }


@dataclass(frozen=True, slots=True)
class Progress:
    """A progress file read back."""

    seat: int | None
    view: dict[str, Any]
    commitments: dict[int, str]
    evidence: HandEvidence | None
    pending: dict[str, Any] | None


def read_progress(data: object, table: str) -> Progress | None:
    """A progress object for this table, or None if it is not one (or not this table's)."""
    if not isinstance(data, dict) or data.get("format") != PROGRESS_FORMAT:
        return None
    view = data.get("view")
    if not isinstance(view, dict) or data.get("table") != table:
        return None
    seat = data.get("seat")
    try:
        commitments = {int(k): str(v) for k, v in (data.get("commitments") or {}).items()}
        raw, pending = data.get("evidence"), data.get("pending")
        evidence = None
        if isinstance(raw, dict) and isinstance(pending, dict):
            evidence = HandEvidence(
                hand_number=int(raw["hand_number"]),
                dealer=int(raw["dealer"]),
                seat=raw["seat"] if isinstance(raw.get("seat"), int) else None,
                commitment=raw.get("commitment"),
                my_cards=tuple(raw["my_cards"]) if raw.get("my_cards") else None,
                plays=[(int(s), str(c)) for s, c in raw.get("plays") or []],
                transfers=[(int(g), int(r)) for g, r in raw.get("transfers") or []],
                joined_midway=bool(raw.get("joined_midway")),
            )
            pending = {key: list(pending.get(key) or []) for key in empty_pending()}
        else:
            pending = None
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    return Progress(seat if isinstance(seat, int) else None, view, commitments, evidence, pending)
