"""docs/protocol.md's ordering and precedence claims, read out of its sentences and checked against a
real server on 127.0.0.1 (the way tests/protocol/test_docs.py checks its hex and its walk-through).

Each test finds the words in the document, turns them into the list or rule they state, checks the
conformance kit holds the same list (`bots.conformance.claims`), and runs the kit's scenario with
the list read from the document against a server. So a sentence changed in the document changes
what is checked; a server that disagrees fails here with the sentence it breaks.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import trio

from bots.conformance import claims, server_lobby, server_play
from bots.conformance.report import Failed, Findings, Problem
from bots.conformance.target import Target
from protocol.errors import ErrorCode
from protocol.messages import Chat, ChatMessage, Joined, Ok, Spectate, TableClosed
from protocol.types import ChatScope, Game
from server.app import Server, local_config, running_server

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"
TEXT = DOC.read_text(encoding="utf-8")
CODES = {code.value for code in ErrorCode}


def flat(text: str) -> str:
    return " ".join(text.split())


def paragraph(lead: str) -> str:
    """The paragraph (up to the next blank line) holding `lead`, on one line."""
    start = TEXT.index(lead)
    start = TEXT.rfind("\n\n", 0, start) + 2
    end = TEXT.find("\n\n", start)
    return flat(TEXT[start:end])


def between(text: str, after: str, before: str) -> str:
    start = text.index(after) + len(after)
    return text[start : text.index(before, start)]


def without_parentheses(text: str) -> str:
    """The text with every parenthesised aside removed (nested ones too, links' targets included)."""
    out: list[str] = []
    depth = 0
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def codes_in(text: str) -> list[str]:
    """The error codes named (in backticks) outside the asides, in order, each once."""
    found: list[str] = []
    for name in re.findall(r"`([a-z_]+)`", without_parentheses(text)):
        if name in CODES and name not in found:
            found.append(name)
    return found


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[Server]:
    async with running_server(local_config(tmp_path / "server.db")) as srv:
        yield srv


async def run_scenario(
    scenario: Callable[..., Awaitable[None]], server: Server, **given: Any
) -> Findings:
    """Run a kit scenario against `server`; fail the test with the kit's own sentences."""
    findings = Findings()
    try:
        with trio.fail_after(60):
            await scenario(Target("127.0.0.1", server.port), findings, **given)
    except Failed as exc:
        findings.failures.append(Problem(exc.text, exc.section))
    assert not findings.failures, "\n".join(f"{p.text} ({p.section})" for p in findings.failures)
    return findings


# ---- "Which refusal wins" --------------------------------------------------------------------


def act_refusal_order() -> list[str]:
    text = paragraph("**Which refusal wins.**")
    return codes_in(between(text, "the first that applies is the answer:", "Nothing is applied"))


def test_the_act_refusal_order_is_read_from_the_document() -> None:
    assert act_refusal_order() == list(claims.ACT_REFUSALS)


async def test_an_act_is_refused_for_the_first_reason_in_the_documents_order(
    server: Server,
) -> None:
    await run_scenario(server_play.act_refusals, server, order=act_refusal_order())


def leave_and_chat_refusals() -> list[str]:
    text = paragraph("**Which refusal wins.**")
    sentence = between(text, "`leave` and a table `chat` answer", ".")
    assert (
        "for a table that does not exist" in sentence
        and "for one the connection is not at" in sentence
    )
    return codes_in(sentence)


def test_leave_and_chat_refusals_are_read_from_the_document() -> None:
    assert leave_and_chat_refusals() == list(claims.LEAVE_AND_CHAT_REFUSALS)


# ---- `join`'s refusals ---------------------------------------------------------------------------


def join_refusal_order() -> list[str]:
    text = paragraph("Refusals, first that applies:")
    return codes_in(
        between(text, "Refusals, first that applies:", "A connection that already holds")
    )


def test_the_join_refusal_order_is_read_from_the_document() -> None:
    assert join_refusal_order() == list(claims.JOIN_REFUSALS)


async def test_a_join_is_refused_for_the_first_reason_in_the_documents_order(
    server: Server,
) -> None:
    await run_scenario(server_lobby.join_refusals, server, order=join_refusal_order())


# ---- What follows an act, and a table chat --------------------------------------------------------


def after_act_order() -> list[str]:
    text = paragraph("A seated client receives a `snapshot`")
    sentence = without_parentheses(text[text.index("It answers `act`") :])
    sentence = sentence[sentence.index("the server answers") :]
    found = re.findall(r"`(ok|turn|your_turn)`|\b(events)\b", sentence)
    return [a or b for a, b in found]


def test_what_follows_an_act_is_read_from_the_document() -> None:
    assert after_act_order() == list(claims.AFTER_ACT)


async def test_an_act_is_answered_ok_then_its_events_then_turn_then_your_turn(
    server: Server,
) -> None:
    await run_scenario(server_play.full_hand, server, order=after_act_order())


def chat_order() -> list[str]:
    sentence = between(TEXT, "Say something in the lobby or at a table.", "\n")
    return re.findall(r"`(ok|chat_message)`", sentence)


async def test_a_table_chat_is_answered_ok_then_everyone_gets_chat_message(server: Server) -> None:
    assert chat_order() == ["ok", "chat_message"]
    await run_scenario(server_lobby.chat, server)


async def test_a_lobby_chat_is_answered_ok_then_everyone_gets_chat_message(server: Server) -> None:
    assert chat_order() == ["ok", "chat_message"]
    findings = Findings()
    async with Target("127.0.0.1", server.port).session() as visit:
        speaker = await visit.player()
        rid = await speaker.client.send(Chat(scope=ChatScope.LOBBY, text="hello, lobby"))
        reply = await speaker.client.reply_to(rid)
        assert isinstance(reply, Ok)
        early = [m for m in speaker.client.before if isinstance(m, ChatMessage)]
        findings.expect(not early, "lobby chat_message before ok", claims.CHAT)
    assert not findings.failures


# ---- Who hears lobby notices -----------------------------------------------------------------------

NOTICES = paragraph("**Who hears lobby notices.**")


def test_the_lobby_notice_rule_is_the_one_checked() -> None:
    # The kit's lobby-notices scenario checks these sentences; changing them means changing it.
    for words in (
        "`table_changed` and `table_closed` go to the connections that have sent `list_tables`, "
        "from their first one on,",
        "for the tables of the game their last `list_tables` named (every game when it named none;"
        " its `status` and `open_seats` filters shape only that listing).",
        "A connection that never listed hears none of them, except `table_closed` for a table it "
        "sits or watches at, which everyone there gets.",
    ):
        assert words in NOTICES


async def test_lobby_notices_go_to_those_that_listed_for_their_last_game(server: Server) -> None:
    await run_scenario(server_lobby.lobby_notices, server)


async def test_table_closed_reaches_those_at_the_table_who_never_listed(tmp_path: Path) -> None:
    assert "except `table_closed` for a table it sits or watches at" in NOTICES
    closes = paragraph("**When a table closes.**")
    assert "when a table still waiting for players has had nobody seated for the server's" in closes
    config = local_config(tmp_path / "ttl.db", waiting_table_ttl=0.5)
    async with running_server(config) as srv, Target("127.0.0.1", srv.port).session() as visit:
        host, watcher, elsewhere = [await visit.player() for _ in range(3)]
        table = (await host.create(Game.SPADES, "standard", bots=[1])).table
        reply = await watcher.request(Spectate(table=table))
        assert isinstance(reply, Joined)
        with trio.fail_after(20):
            closed = await watcher.client.expect(TableClosed, within=20)
        assert closed.table == table
        heard = [m for m in await elsewhere.client.barrier() if isinstance(m, TableClosed)]
        assert heard == [], "a connection that never listed, not at the table, heard table_closed"


# ---- Simultaneous decisions ------------------------------------------------------------------------

DECISION = paragraph("A seat's **decision** begins")


def test_the_decision_rule_is_the_one_checked() -> None:
    assert "so a pass already on its way when another seat passes is not refused" in DECISION
    assert "A seat is sent one `your_turn` per decision, when it begins" in DECISION


async def test_a_pass_sent_while_another_seat_passes_is_applied(server: Server) -> None:
    findings = Findings()
    try:
        await server_play.hearts_pass(Target("127.0.0.1", server.port), findings)
    except Failed as exc:
        pytest.fail(f"{exc.text} ({exc.section})")
    applied = [p for p in findings.failures if "not sent a your_turn" not in p.text]
    assert applied == [], applied


async def test_a_seat_still_deciding_is_sent_its_choices_once(server: Server) -> None:
    await run_scenario(server_play.hearts_pass, server)


# ---- A second connection of an account -----------------------------------------------------------


def test_the_seat_rules_are_the_ones_checked() -> None:
    seats = flat(between(TEXT, "### Accounts, connections and seats", "#### `register`"))
    assert "**A connection that only looks never touches a seat.**" in seats
    assert "Without `takeover`, that `join` is refused `seat_held`." in seats
    assert (
        "an `act` from any other connection, of the same account or not, is refused `not_seated`"
        in seats
    )
    assert (
        "The old holder is told at once with [`seat_lost`](#seat_lost) (`reason` `taken_over`)"
        in seats
    )


async def test_a_second_connection_of_an_account_does_not_take_its_seat(server: Server) -> None:
    await run_scenario(server_lobby.second_connection, server)


def resume_order() -> list[str]:
    handshake = flat(between(TEXT, "With a good `token`", "A `token` that matches no account"))
    sentence = between(
        handshake, "the server follows `welcome`, for each such table, with", "this is how a client"
    )
    return re.findall(r"`(joined|snapshot|turn|your_turn)`", without_parentheses(sentence))


def test_resume_order_is_read_from_the_document() -> None:
    assert resume_order() == list(claims.RESUME)


async def test_a_dropped_seat_resumes_in_the_documents_order(server: Server) -> None:
    await run_scenario(server_play.reconnect, server, resume=resume_order())


def test_the_document_states_one_rule_for_stale_versions() -> None:
    assert "An `act` carrying any version from the decision's start to the current one" in DECISION
    text = flat(TEXT)
    for words in (
        "any action whose version is not the table's current one",
        "unless `version` is the table's current one",
        "is not the table's current game version",
        "at each new version",
    ):
        assert words not in text, words
