"""The `review` request's bounds (server/reviews.py), the whole server over memory streams on trio's
autojump clock, the solver's process replaced by one the test holds: one review at a time per
connection, a cap per address and for the server, each refused `review_busy` at once; a record too
large or not reviewable refused `not_reviewable` before a slot is taken; the reader answers pings
while a review runs; a connection that goes away frees its slot and stops its review; a review past
its time answers with every cost unknown, and one out of the reply's ranges with those unknown.
Last, in real time, the real solver's process answers what the engine's review answers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import trio
import trio.testing

from engine.review import PlayedHand, Reviewer
from engine.ruleset import Ruleset
from protocol.errors import ErrorCode
from protocol.messages import Error, HandReview, Ping, Pong, Review
from server.app import Server, running_server
from server.config import Limits
from tests.server.test_review_record import finished_record
from tests.server.unit.memory import MemoryClient, MemoryListener, memory_config

RECORD = finished_record()


class HeldSolver:
    """Stands in for the solver's process: each review waits until the test lets it answer."""

    def __init__(self) -> None:
        self.started: list[dict[str, Any]] = []
        self.release = trio.Event()
        self.cancelled = 0
        self.answer: dict[str, Any] | None = {"double_dummy": [2, 11], "costs": [0] * 52}

    async def __call__(self, request: dict[str, Any], seconds: float) -> dict[str, Any] | None:
        self.started.append(request)
        try:
            await self.release.wait()
        except trio.Cancelled:
            self.cancelled += 1
            raise
        return self.answer


@asynccontextmanager
async def held_server(
    limits: Limits | None = None,
) -> AsyncIterator[tuple[Server, MemoryListener, HeldSolver]]:
    """The whole server on memory streams (`limits`, when given), its reviews run by a
    `HeldSolver` the test lets answer."""
    listener = MemoryListener()
    solver = HeldSolver()
    config = memory_config() if limits is None else memory_config(limits=limits)
    async with running_server(config, listeners=[listener]) as server:
        server.reviews.run = solver
        yield server, listener, solver


async def connected(listener: MemoryListener) -> MemoryClient:
    client = await MemoryClient.connect(listener)
    await client.hello()
    return client


def refused(reply: object, code: ErrorCode) -> Error:
    assert isinstance(reply, Error) and reply.code == code.value, reply
    return reply


async def test_one_review_a_connection_and_the_reader_goes_on(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with held_server() as (server, listener, solver):
        with trio.fail_after(30):
            client = await connected(listener)
            first = await client.send(Review(hand=RECORD))
            await trio.testing.wait_all_tasks_blocked()
            assert len(solver.started) == 1
            assert solver.started[0]["budget"] == server.config.limits.review_budget
            # The reader is not held by the review: a ping is answered, a second review refused.
            assert isinstance(await client.request(Ping()), Pong)
            busy = refused(await client.request(Review(hand=RECORD)), ErrorCode.REVIEW_BUSY)
            assert "one at a time" in busy.message
            solver.release.set()
            answer = await client.reply_to(first)
            assert isinstance(answer, HandReview)
            assert answer.double_dummy == [2, 11] and answer.costs == [0] * 52
            assert server.reviews.running == 0
            # Answered: the next one is taken.
            assert isinstance(await client.request(Review(hand=RECORD)), HandReview)
            await client.aclose()


async def test_the_address_and_the_server_have_caps(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with held_server(Limits(max_reviews=2, max_reviews_per_address=3)) as (
        server,
        listener,
        solver,
    ):
        with trio.fail_after(30):
            clients = [await connected(listener) for _ in range(3)]
            asked = [await clients[i].send(Review(hand=RECORD)) for i in range(2)]
            busy = refused(await clients[2].request(Review(hand=RECORD)), ErrorCode.REVIEW_BUSY)
            assert "as many as it may" in busy.message and busy.retry_ms
            assert server.reviews.running == 2 and server.reviews.refused_busy == 1
            solver.release.set()
            for client, rid in zip(clients, asked, strict=False):
                assert isinstance(await client.reply_to(rid), HandReview)
            for client in clients:
                await client.aclose()
    async with held_server(Limits(max_reviews=4, max_reviews_per_address=1)) as (
        server,
        listener,
        solver,
    ):
        with trio.fail_after(30):
            one, two = await connected(listener), await connected(listener)
            await one.send(Review(hand=RECORD))
            busy = refused(await two.request(Review(hand=RECORD)), ErrorCode.REVIEW_BUSY)
            assert "your address" in busy.message
            solver.release.set()
            await one.aclose()
            await two.aclose()


async def test_a_record_refused_takes_no_slot(autojump_clock: trio.testing.MockClock) -> None:
    async with held_server(Limits(review_max_bytes=6000)) as (server, listener, solver):
        with trio.fail_after(30):
            client = await connected(listener)
            large = {**RECORD, "notes": ["x" * 2000]}
            too_large = refused(await client.request(Review(hand=large)), ErrorCode.NOT_REVIEWABLE)
            assert "at most 6000" in too_large.message
            in_play = {**RECORD, "plays": RECORD["plays"][:9]}
            refused(await client.request(Review(hand=in_play)), ErrorCode.NOT_REVIEWABLE)
            other_seed = {**RECORD, "seed": "ab" * 32}
            wrong = refused(await client.request(Review(hand=other_seed)), ErrorCode.NOT_REVIEWABLE)
            assert "seed" in wrong.message
            assert solver.started == [] and server.reviews.running == 0
            await client.aclose()


async def test_a_connection_gone_frees_its_slot(autojump_clock: trio.testing.MockClock) -> None:
    async with held_server() as (server, listener, solver):
        with trio.fail_after(30):
            client = await connected(listener)
            await client.send(Review(hand=RECORD))
            await trio.testing.wait_all_tasks_blocked()
            assert server.reviews.running == 1
            await client.aclose()
            await trio.testing.wait_all_tasks_blocked()
            assert server.reviews.running == 0 and solver.cancelled == 1
            # Past its time (the runner answers None): every cost unknown, said so.
            solver.answer = None
            solver.release.set()
            again = await connected(listener)
            reply = await again.request(Review(hand=RECORD))
            assert isinstance(reply, HandReview)
            assert reply.double_dummy is None and reply.costs == [None] * 52
            assert reply.unanswered == 52
            # An answer out of the reply's ranges (a bug in the worker): unknown, still answered.
            solver.answer = {"double_dummy": [2, 99], "costs": [-1, 0, 20, 1]}
            odd = await again.request(Review(hand=RECORD))
            assert isinstance(odd, HandReview)
            assert odd.double_dummy is None and odd.costs == [None, 0, None, 1]
            assert odd.unanswered == 2
            await again.aclose()


async def test_the_solvers_process_answers_what_the_engine_reviews() -> None:
    """The real path: the server's niced `server.dd_worker` process, on a hand it reviews whole in
    about a second, answers the engine's own review, card for card. (Real time: a process runs.)"""
    record = finished_record()
    mine = Reviewer(PlayedHand.of_record(record, Ruleset.from_stored(record["ruleset"]))).run()
    listener = MemoryListener()
    async with running_server(memory_config(), listeners=[listener]) as server:
        with trio.fail_after(120):
            client = await connected(listener)
            reply = await client.request(Review(hand=record))
            assert isinstance(reply, HandReview), reply
            assert reply.double_dummy == list(mine.double_dummy or ())
            assert reply.costs == [card.cost for card in mine.cards]
            assert reply.unanswered == 0 and reply.budget == server.config.limits.review_budget
            assert server.reviews.running == 0 and server.reviews.answered == 1
            await client.aclose()
