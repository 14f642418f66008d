"""Match-making: its invariants over arbitrary entrants (hypothesis), partner rotation, and how long
a match waits for a twin."""

import dataclasses
import itertools

import trio
from hypothesis import given, settings
from hypothesis import strategies as st

from server.accounts import Account
from server.config import ServerConfig
from server.ladder.entrants import Entrant
from server.ladder.scheduler import (
    Candidate,
    SchedulerSettings,
    form_matches,
    pairing_key,
    pairings,
)
from server.ladder.service import LadderService
from server.ladder.settings import LadderSettings

NAMES = [f"e{i}" for i in range(24)]


@st.composite
def candidates(draw: st.DrawFn) -> list[Candidate]:
    count = draw(st.integers(0, 24))
    out = []
    for index in range(count):
        out.append(
            Candidate(
                entrant=NAMES[index],
                # Few accounts for many entrants: the same account shows up twice now and then.
                account=draw(st.integers(0, 30)),
                mu=draw(st.floats(0, 50, allow_nan=False)),
                sigma=draw(st.floats(0.5, 9, allow_nan=False)),
                played=draw(st.integers(0, 20)),
                recent_partners=tuple(draw(st.lists(st.sampled_from(NAMES), max_size=4))),
            )
        )
    return out


@settings(max_examples=60, deadline=None)
@given(candidates(), st.integers(0, 2**32))
def test_invariants(pool: list[Candidate], seed: int) -> None:
    matches = form_matches(pool, seed=seed)
    seated = [c for m in matches for c in m.seats]
    # Never one account in two seats, in one match or across the round's matches.
    assert len({c.account for c in seated}) == len(seated)
    # Everyone seated came from the pool; the round fills every table it can.
    assert all(c in pool for c in seated)
    assert len(matches) == len({c.account for c in pool}) // 4
    # Deterministic given the seed.
    assert form_matches(pool, seed=seed) == matches
    memory = SchedulerSettings().partner_memory
    for match in matches:
        chosen = pairing_key(match.teams, memory)
        best = min(pairing_key(p, memory) for p in pairings([c for t in match.teams for c in t]))
        assert chosen[0] == best[0]  # no avoidable repeated partnership


@settings(max_examples=40, deadline=None)
@given(candidates(), st.integers(0, 2**32))
def test_whoever_played_least_plays(pool: list[Candidate], seed: int) -> None:
    by_account: dict[int, list[Candidate]] = {}
    for c in pool:
        by_account.setdefault(c.account, []).append(c)
    if len(by_account) < 4:
        return
    fewest = min(c.played for c in pool)
    seated = [c for m in form_matches(pool, seed=seed) for c in m.seats]
    assert min(c.played for c in seated) == fewest


def test_close_ratings_sit_together() -> None:
    pool = [Candidate(f"low{i}", i, mu=10.0 + i * 0.1) for i in range(4)]
    pool += [Candidate(f"high{i}", 10 + i, mu=40.0 + i * 0.1) for i in range(4)]
    for match in form_matches(pool, seed=1):
        names = {c.entrant[:3] for c in match.seats}
        assert len(names) == 1, match.entrants


def test_partners_rotate_over_three_matches_of_the_same_four() -> None:
    pool = {n: Candidate(n, i) for i, n in enumerate("abcd")}
    seen: set[frozenset[str]] = set()
    for round_ in range(3):
        (match,) = form_matches(list(pool.values()), seed=round_)
        for team in match.teams:
            pair = frozenset(c.entrant for c in team)
            assert pair not in seen, f"round {round_} repeats {sorted(pair)}"
            seen.add(pair)
            a, b = (c.entrant for c in team)
            for me, partner in ((a, b), (b, a)):
                old = pool[me]
                pool[me] = Candidate(
                    me, old.account, recent_partners=(partner, *old.recent_partners)
                )
    assert len(seen) == 6  # all of the C(4, 2) partnerships, each once


def test_partners_sit_opposite() -> None:
    (match,) = form_matches([Candidate(n, i) for i, n in enumerate("abcd")], seed=5)
    seats = match.seats
    assert {seats[0], seats[2]} == set(match.teams[0])
    assert {seats[1], seats[3]} == set(match.teams[1])
    assert sorted(itertools.chain(*[[c.entrant for c in t] for t in match.teams])) == list("abcd")


# ---------------------------------------------------------------- waiting for a twin


async def test_a_match_waits_a_little_for_a_twin_only_while_others_play(
    autojump_clock: trio.abc.Clock,
) -> None:
    ladder = LadderSettings(twin_wait=3.0)
    config = dataclasses.replace(ServerConfig(), ladder_settings=ladder)
    service = LadderService(None, None, config)  # type: ignore[arg-type]  # neither is used here
    for i in range(8):
        service.entrants[i] = Entrant(Account(i, f"e{i}", True, False), None)
    # Nobody else plays (a lone bot with the house bots): a lone match never waits.
    assert not service._hold_for_twin(1, room=4)
    # Two matches pair up; so do four. No room for a second table: no waiting either.
    service.entrants[0].busy = True
    assert not service._hold_for_twin(2, room=4)
    assert not service._hold_for_twin(1, room=1)
    # Others are playing: the odd match waits, up to twin_wait, then starts alone.
    assert service._hold_for_twin(1, room=4)
    await trio.sleep(2.0)
    assert service._hold_for_twin(3, room=4)
    await trio.sleep(1.5)
    assert not service._hold_for_twin(1, room=4)
    assert service._hold_for_twin(1, room=4)  # the next one waits afresh
