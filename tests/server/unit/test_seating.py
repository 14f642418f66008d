"""The seating rules (server.seating.decide_join): pure, on plain seat states and recording peers."""

from protocol.errors import ErrorCode
from server.accounts import Account
from server.seating import How, NothingToResume, Refusal, Seated, SeatState, decide_join
from tests.server.unit.peers import RecordingPeer

ADA = Account(1, "ada", False, False)
BOB = Account(2, "bob", False, False)


def join(seats: list[SeatState], peer: RecordingPeer, account: Account, **kw: object) -> object:
    options: dict[str, object] = {
        "wanted": None,
        "takeover": False,
        "reattach": False,
        "open_for_players": True,
    }
    options.update(kw)
    return decide_join(seats, peer=peer, account=account, **options)  # type: ignore[arg-type]


def test_a_second_live_connection_of_the_account_does_not_take_the_seat() -> None:
    first, second = RecordingPeer("first"), RecordingPeer("second")
    seats = [SeatState(account=ADA, holder=first), SeatState()]
    refused = join(seats, second, ADA)
    assert isinstance(refused, Refusal) and refused.code is ErrorCode.SEAT_HELD
    # A login's resume leaves it alone too, and says so by doing nothing.
    assert isinstance(join(seats, second, ADA, reattach=True), NothingToResume)
    # Asked for, it is taken over, and the old holder is named so it can be told.
    moved = join(seats, second, ADA, takeover=True)
    assert moved == Seated(0, How.TAKEN_OVER, previous=first)


def test_a_seat_whose_holder_is_gone_goes_back_to_the_account() -> None:
    gone, back = RecordingPeer("gone"), RecordingPeer("back")
    gone.connected = False  # closed, though its table has not heard yet
    seats = [SeatState(), SeatState(account=ADA, holder=gone)]
    assert join(seats, back, ADA, reattach=True) == Seated(1, How.RETURNED)
    held = [SeatState(), SeatState(account=ADA, holder=None, dropped_at=1.0)]
    assert join(held, back, ADA, open_for_players=False) == Seated(1, How.RETURNED)


def test_the_same_connection_joining_again_is_a_resync() -> None:
    me = RecordingPeer("me")
    seats = [SeatState(), SeatState(account=ADA, holder=me)]
    assert join(seats, me, ADA, wanted=0) == Seated(1, How.SAME)


def test_table_full_before_seat_taken_and_the_policy_first() -> None:
    peer = RecordingPeer("p")
    taken = [SeatState(account=BOB, holder=RecordingPeer("bob")), SeatState()]
    refused = join(taken, peer, ADA, wanted=0)
    assert isinstance(refused, Refusal) and refused.code is ErrorCode.SEAT_TAKEN
    assert "free: [1]" in refused.message
    assert join(taken, peer, ADA) == Seated(1, How.NEW)
    full = [SeatState(account=BOB), SeatState(account=BOB)]
    for wanted in (None, 0, 7):
        refused = join(full, peer, ADA, wanted=wanted)
        assert isinstance(refused, Refusal) and refused.code is ErrorCode.TABLE_FULL, wanted
    started = [SeatState(), SeatState()]
    refused = join(started, peer, ADA, open_for_players=False, wanted=0)
    assert isinstance(refused, Refusal) and refused.code is ErrorCode.TABLE_FULL
    policy = Refusal(ErrorCode.TABLE_FULL, "the match's")
    assert join(taken, peer, ADA, refuse_new=lambda wanted: policy) == policy
