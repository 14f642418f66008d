"""Game abuse: out of turn, cards not held, another seat's cards, acting for another seat, stale and
replayed versions, bids the preset does not allow, claims where claims are not played. Every one is
refused with its code, and the game is exactly as it was (the seat's snapshot does not change)."""

from __future__ import annotations

from typing import Any

import trio

from protocol.messages import (
    Act,
    BidMade,
    CardPlayed,
    CreateTable,
    Error,
    Join,
    Joined,
    Ok,
    Snapshot,
    Spectate,
    TableCreated,
    YourTurn,
)
from protocol.types import Action, ActionKind, Game
from tests.hostile.peer import Peer, round_trip, welcomed
from tests.hostile.proc import ServerProcess


class Seated:
    """A client at a seat, with the cards it was told about."""

    def __init__(self, peer: Peer, table: str, seat: int) -> None:
        self.peer = peer
        self.table = table
        self.seat = seat

    async def snapshot(self) -> Snapshot:
        """Join again (same account, same seat): the server answers `joined` and a fresh snapshot.
        Joining goes through the table's inbox, after every action sent before it."""
        reply = await self.peer.request(Join(table=self.table))
        assert isinstance(reply, Joined) and reply.seat == self.seat, reply
        return await self.peer.expect(Snapshot)

    async def refused(self, action: Action | dict[str, Any], version: int) -> Error:
        """Send an `act` (a raw action map is sent as is) and return the error that answers it."""
        rid = self.peer.next_id()
        if isinstance(action, Action):
            await self.peer.send(Act(id=rid, table=self.table, version=version, action=action))
        else:
            await self.peer.send_map(
                {"t": "act", "id": rid, "table": self.table, "version": version, "action": action}
            )
        reply = await self.peer.reply_to(rid)
        assert isinstance(reply, Error), f"{action} at version {version} was accepted: {reply}"
        assert reply.message
        return reply


async def replay_refusal(actor: Seated) -> str:
    """What an act replayed after it was applied is refused with (docs/protocol.md, "Which refusal
    wins"): `stale_version` if the seat must decide again (its new decision began later), else
    `not_your_turn` (it has no decision open)."""
    view = (await actor.snapshot()).view
    to_act = view["to_act"]
    assert isinstance(to_act, list)
    return "stale_version" if actor.seat in to_act else "not_your_turn"


async def next_turn(peers: list[Seated]) -> tuple[Seated, YourTurn]:
    """The next `your_turn` that reaches one of `peers` (other messages are skipped)."""
    found: list[tuple[Seated, YourTurn]] = []
    async with trio.open_nursery() as nursery:

        async def watch(seated: Seated) -> None:
            turn = await seated.peer.expect(YourTurn)
            found.append((seated, turn))
            nursery.cancel_scope.cancel()

        for seated in peers:
            nursery.start_soon(watch, seated)
    # Two turns may land in the same instant (a simultaneous phase): keep the later ones queued.
    for seated, turn in found[1:]:
        seated.peer.pending.appendleft(turn)
    return found[0]


def play(card: str) -> Action:
    return Action(kind=ActionKind.PLAY, card=card)


def bid(tricks: int, blind: bool = False) -> Action:
    return Action(kind=ActionKind.BID, tricks=tricks, blind=blind)


async def test_every_kind_of_game_abuse_is_refused_and_changes_nothing(
    shared_server: ServerProcess, fresh_name: str
) -> None:
    with trio.fail_after(90):
        a_peer = await welcomed(shared_server.port, fresh_name + "a")
        b_peer = await welcomed(shared_server.port, fresh_name + "b")
        outsider = await welcomed(shared_server.port, fresh_name + "c")
        created = await a_peer.request(
            CreateTable(game=Game.SPADES, preset="standard", bots=[2, 3], sit=0)
        )
        assert isinstance(created, TableCreated), created
        table = created.table
        joined = await b_peer.request(Join(table=table, seat=1))
        assert isinstance(joined, Joined), joined
        a, b = Seated(a_peer, table, 0), Seated(b_peer, table, 1)
        watcher = await outsider.request(Spectate(table=table))
        assert isinstance(watcher, Joined)

        # ---- bidding
        actor, turn = await next_turn([a, b])
        assert turn.legal[0].kind is ActionKind.BID, turn
        other = b if actor is a else a
        version = turn.version
        before = await actor.snapshot()
        assert before.version == version
        legal_bids = {(x.tricks, bool(x.blind)) for x in turn.legal if x.kind is ActionKind.BID}

        # Out of turn: the other human seat bids on the actor's version.
        assert (await other.refused(bid(3), version)).code == "not_your_turn"
        # Acting for another seat: an action naming the actor's seat is still the sender's own.
        error = await other.refused({"kind": "bid", "tricks": 3, "seat": actor.seat}, version)
        assert error.code == "not_your_turn"
        # Nobody at the table: an outsider (a spectator holds no seat), and a table that does not
        # exist (docs/protocol.md, "Which refusal wins").
        assert (await Seated(outsider, table, 0).refused(bid(3), version)).code == "not_seated"
        missing = await Seated(outsider, "nosuchtable", 0).refused(bid(3), 0)
        assert missing.code == "no_such_table"
        # Stale and future versions.
        for wrong in (version - 1, version + 1, 0):
            if wrong != version:
                assert (await actor.refused(bid(3), wrong)).code == "stale_version"
        # Bids the preset does not allow: out of range for the wire, out of range for the rules,
        # blind when the preset offers no blind bid.
        assert (await actor.refused({"kind": "bid", "tricks": 19}, version)).code == "invalid_field"
        assert (await actor.refused({"kind": "bid", "tricks": -1}, version)).code == "invalid_field"
        assert (14, False) not in legal_bids
        error = await actor.refused(bid(14), version)
        assert error.code == "illegal_action" and error.detail, error
        if not any(blind for _tricks, blind in legal_bids):
            error = await actor.refused(bid(0, blind=True), version)
            assert error.code == "illegal_action" and error.detail, error
        # The wrong kind of action for the phase, and a claim where the preset plays none.
        hand = before.view["hand"]
        assert isinstance(hand, list) and hand
        error = await actor.refused(play(hand[0]), version)
        assert error.code == "illegal_action" and error.detail, error
        error = await actor.refused(Action(kind=ActionKind.CLAIM), version)
        assert error.code == "illegal_action" and error.detail, error
        # Nothing happened.
        after = await actor.snapshot()
        assert after.version == before.version
        assert after.view == before.view

        # A legal bid, then the very same act replayed: applied once, refused once.
        choice = turn.legal[0]
        rid = actor.peer.next_id()
        replay = Act(id=rid, table=table, version=version, action=choice)
        await actor.peer.send(replay)
        assert isinstance(await actor.peer.reply_to(rid), Ok)
        await actor.peer.send(replay)
        replayed = await actor.peer.reply_to(rid)
        assert isinstance(replayed, Error), replayed
        assert replayed.code == await replay_refusal(actor), replayed
        # The spectator's events were queued before the `ok`; a ping now comes after them.
        await round_trip(outsider)
        bids_seen = [
            m
            for m in outsider.received
            if isinstance(m, BidMade) and m.seat == actor.seat and m.table == table
        ]
        assert len(bids_seen) == 1, bids_seen

        # ---- play: keep bidding legally until someone must play a card
        for _ in range(20):
            actor, turn = await next_turn([a, b])
            if turn.legal[0].kind is ActionKind.PLAY:
                break
            await actor.peer.request(Act(table=table, version=turn.version, action=turn.legal[0]))
        assert turn.legal[0].kind is ActionKind.PLAY, turn
        other = b if actor is a else a
        version = turn.version
        before = await actor.snapshot()
        theirs = (await other.snapshot()).view["hand"]
        mine = before.view["hand"]
        assert isinstance(mine, list) and isinstance(theirs, list)
        legal_cards = {x.card for x in turn.legal if x.kind is ActionKind.PLAY}

        # A card another seat holds, and a card that is in nobody's hand (no jokers in this deck).
        error = await actor.refused(play(theirs[0]), version)
        assert error.code == "illegal_action" and error.detail == "card_not_in_hand", error
        # The refusal does not say who holds the card.
        other_name = fresh_name + ("b" if other is b else "a")
        assert other_name not in error.message and "seat" not in error.message, error
        error = await actor.refused(play("BJ"), version)
        assert error.code == "illegal_action", error
        # A card of its own it may not play now (spades not broken, or not following suit).
        unplayable = [card for card in mine if card not in legal_cards]
        if unplayable:
            error = await actor.refused(play(unplayable[0]), version)
            assert error.code == "illegal_action" and error.detail, error
        # The other seat plays its own card out of turn; a bid in the play phase.
        assert (await other.refused(play(theirs[0]), version)).code == "not_your_turn"
        error = await actor.refused(bid(3), version)
        assert error.code == "illegal_action" and error.detail, error
        assert (await actor.refused(play(mine[0]), version - 1)).code == "stale_version"
        after = await actor.snapshot()
        assert after.view == before.view and after.version == before.version

        # One legal card, replayed: played once.
        rid = actor.peer.next_id()
        card_act = Act(id=rid, table=table, version=version, action=turn.legal[0])
        await actor.peer.send(card_act)
        assert isinstance(await actor.peer.reply_to(rid), Ok)
        await actor.peer.send(card_act)
        replayed = await actor.peer.reply_to(rid)
        assert isinstance(replayed, Error), replayed
        assert replayed.code == await replay_refusal(actor), replayed
        played = (await actor.snapshot()).view["played"]
        assert isinstance(played, list)
        assert played.count(turn.legal[0].card) == 1

        # The spectator saw that card played once, and never a hand.
        await round_trip(outsider)
        seen_cards = [m.card for m in outsider.received if isinstance(m, CardPlayed)]
        assert turn.legal[0].card is not None
        assert seen_cards.count(turn.legal[0].card) == 1
        # Every card it saw was really played in this hand: `played` is the hand's whole set, read
        # after the spectator's round trip (the built-in seats may have played on meanwhile).
        played_since = (await actor.snapshot()).view["played"]
        assert isinstance(played_since, list)
        assert all(card in played_since for card in seen_cards), (seen_cards, played_since)
        views = [m.view for m in outsider.received if isinstance(m, Snapshot)]
        assert views and all(view.get("hand") is None for view in views)
        quiet = [m for m in outsider.received if isinstance(m, Error)]
        assert [e.code for e in quiet] == ["not_seated", "no_such_table"], quiet


def strong(turn: YourTurn) -> Action:
    """Bid 4, or play the highest legal card (spades last): win tricks, so as to lead."""
    plays = [x for x in turn.legal if x.kind is ActionKind.PLAY]
    if plays:
        return plays[-1]
    bids = [x for x in turn.legal if x.kind is ActionKind.BID and x.tricks == 4 and not x.blind]
    return bids[0] if bids else turn.legal[0]


async def test_claims_that_do_not_hold_gain_nothing(
    shared_server: ServerProcess, fresh_name: str
) -> None:
    """TRAM with the `exposed` penalty (docs: `claim_made`): a claim is judged against every play
    of the others. One that does not hold is not a free win: the claimer's cards are laid open and
    play goes on. A claim when not on lead, or a second claim in the hand, is refused
    (`illegal_action`, `bad_claim`) and changes nothing."""
    from protocol.messages import ClaimMade, HandScored

    with trio.fail_after(90):
        peer = await welcomed(shared_server.port, fresh_name)
        created = await peer.request(
            CreateTable(
                game=Game.SPADES,
                preset="standard",
                options={"tram": True, "tram_penalty": "exposed", "target_score": 500},
                bots=[1, 2, 3],
                sit=0,
            )
        )
        assert isinstance(created, TableCreated), created
        me = Seated(peer, created.table, 0)
        claim = Action(kind=ActionKind.CLAIM)
        refused_mid_trick = False
        for _ in range(600):
            turn = await peer.expect(YourTurn)
            kinds = {x.kind for x in turn.legal}
            if ActionKind.PLAY in kinds and ActionKind.CLAIM not in kinds and not refused_mid_trick:
                before = await me.snapshot()
                error = await me.refused(claim, turn.version)
                assert (error.code, error.detail) == ("illegal_action", "bad_claim"), error
                assert (await me.snapshot()).view == before.view
                refused_mid_trick = True
            if ActionKind.CLAIM in kinds and refused_mid_trick:
                break
            await peer.request(Act(table=me.table, version=turn.version, action=strong(turn)))
        else:
            raise AssertionError("never on lead with a claim to make")
        ok = await peer.request(Act(table=me.table, version=turn.version, action=claim))
        assert isinstance(ok, Ok), ok
        made = await peer.expect(ClaimMade)
        assert made.seat == 0 and made.version == turn.version + 1
        if made.held:
            # Rare (a hand that wins every trick); then it must have taken them all.
            scored = await peer.expect(HandScored)
            assert scored.tricks[0] + scored.tricks[2] >= len(made.cards)
            return
        assert made.penalty == "exposed" and made.cards
        # Play goes on; a second claim in this hand is refused and changes nothing.
        for _ in range(60):
            turn = await peer.expect(YourTurn)
            if turn.legal[0].kind is ActionKind.PLAY:
                break
            await peer.request(Act(table=me.table, version=turn.version, action=turn.legal[0]))
        assert ActionKind.CLAIM not in {x.kind for x in turn.legal}
        before = await me.snapshot()
        assert before.view["exposed"][0] == [c for c in made.cards if c in before.view["hand"]]
        error = await me.refused(claim, turn.version)
        assert error.code == "illegal_action" and error.detail == "bad_claim", error
        after = await me.snapshot()
        assert after.view == before.view and after.version == before.version
