"""Game events: one message per engine event, declared from the engine's own classes.

Each engine event class (``engine.events.EVENT_TYPES``) is the one declaration of its event; this
module turns it into the message class the decoder, the encoder and the docs read: ``t`` is the
engine's ``kind``, the docstring is the class's, and the fields are those of its ``for_seat(seat)``
map in its order, typed from the annotations (``engine.event_fields``' notations become the
protocol's named types; its ``Range``, ``Length`` and ``Doc`` are the protocol's own markers). A
secret field is optional (a seat that may not see it is not sent it) and a counted secret adds
``count``; a field with a default is optional; a
``Derived`` one is the map's field the event computes (``bid_made``'s ``text``). The envelope
(``seq``, ``table``, ``version``) comes first. So a new event is declared in the engine only, and
tests/protocol/test_engine_alignment.py holds its maps to its message over generated events.

Only the two fair-deal messages (the server's own, not the engine's) and ``BidInfo`` (a bid's wire
shape) are written here.
"""

import dataclasses
import types
import typing
from dataclasses import dataclass
from typing import Annotated, Any, Final, Literal, Union

from engine import event_fields as ef
from engine import events as ee
from engine.actions import Bid
from protocol.envelope import GameEvent, Sender, register
from protocol.schema import Doc, Length, Range
from protocol.types import Card, Cards, Digest, HandNumber, Seat, Seed, Tricks

S = Sender.SERVER
CardCount = Annotated[int, Range(0, 54)]


@dataclass(frozen=True, slots=True, kw_only=True)
class BidInfo:
    """A bid as events and views show it: ``tricks`` and ``blind`` always, variant flags when set."""

    tricks: Annotated[Tricks, Doc("tricks bid; 0 is nil")]
    blind: Annotated[bool, Doc("made before looking at the cards")] = False
    no_trumps: Annotated[bool | None, Doc('"no spade trumps" bid')] = None
    moe: Annotated[Literal["", "little", "big"] | None, Doc("a Moe bid")] = None
    bemo: Annotated[Literal["", "bemo", "big_bemo"] | None, Doc("a bemo on top of the bid")] = None
    ten_for_200: Annotated[bool | None, Doc("the 10-for-200 bid")] = None
    double_nil: Annotated[bool | None, Doc("two-handed double nil")] = None


# ---- from the engine's annotations to the protocol's ---------------------------------------------

#: The protocol's type for each `engine.event_fields.Notation` name.
NOTATIONS: Final[dict[str, Any]] = {
    "Seat": Seat,
    "Card": Card,
    "Cards": Cards,
    "HandNumber": HandNumber,
    "Digest": Digest,
    "Seed": Seed,
}
#: The protocol's structure for each engine value class an event holds.
STRUCTS: Final[dict[type, type]] = {Bid: BidInfo}
COUNT: Final = ("count", Annotated[CardCount | None, Doc("how many, for everybody else")])


def wire_type(annotation: Any) -> Any:
    """The protocol's type for an engine field's annotation (its `Doc` left out: see `field_doc`).
    Raises TypeError for a type the protocol cannot say, naming it."""
    if typing.get_origin(annotation) is Annotated:
        base, *markers = typing.get_args(annotation)
        named = [m.name for m in markers if isinstance(m, ef.Notation)]
        if named:
            if named[-1] not in NOTATIONS:
                raise TypeError(f"no protocol type for the notation {named[-1]!r}")
            out = NOTATIONS[named[-1]]
        else:
            out = wire_type(base)
        refined: list[Any] = []
        for marker in markers:
            if isinstance(marker, ef.Choices):
                out = Literal[marker.values]
            elif isinstance(marker, Range | Length):
                refined.append(marker)  # the protocol's markers are the engine's
        return Annotated[(out, *refined)] if refined else out
    origin = typing.get_origin(annotation)
    if origin is Union or origin is types.UnionType:
        options = tuple(wire_type(arg) for arg in typing.get_args(annotation))
        return Union[options]  # noqa: UP007 (a union built from a tuple at run time)
    if origin is tuple:
        args = typing.get_args(annotation)
        if len(args) == 2 and args[1] is Ellipsis:
            return types.GenericAlias(list, (wire_type(args[0]),))
        return types.GenericAlias(tuple, tuple(wire_type(arg) for arg in args))
    if annotation in (int, str, bool, type(None)):
        return annotation
    if annotation in STRUCTS:
        return STRUCTS[annotation]
    raise TypeError(f"no protocol type for {annotation!r}")


def field_doc(annotation: Any) -> str:
    """The field's sentence: its last `Doc` marker (nested `Annotated` are flattened)."""
    if typing.get_origin(annotation) is not Annotated:
        return ""
    texts = [m.text for m in typing.get_args(annotation)[1:] if isinstance(m, ef.Doc)]
    return texts[-1] if texts else ""


def _markers(annotation: Any) -> tuple[Any, ...]:
    if typing.get_origin(annotation) is Annotated:
        return tuple(typing.get_args(annotation)[1:])
    return ()


def _unclassed(annotation: Any) -> Any:
    """The annotation inside a `ClassVar[...]`, or None when it is no `ClassVar`."""
    if typing.get_origin(annotation) is typing.ClassVar:
        return typing.get_args(annotation)[0]
    return None


def message_fields(event: type[ee.Event]) -> list[tuple[str, Any, Any]]:
    """The message's fields for an engine event class, in its seat map's order: (name, annotated
    protocol type, default: `dataclasses.MISSING`, None, or `list` for an empty list)."""
    hints = typing.get_type_hints(event, include_extras=True)
    stored = {f.name: f for f in dataclasses.fields(event)}
    out: list[tuple[str, Any, Any]] = []
    for name, hint in hints.items():
        default: Any
        annotation = _unclassed(hint)
        if annotation is not None:
            if not any(isinstance(m, ef.Derived) for m in _markers(annotation)):
                continue  # kind, secret and the like: the class's, not the map's
            default = None if _optional(annotation) else dataclasses.MISSING
        elif name not in stored or any(isinstance(m, ef.Private) for m in _markers(hint)):
            continue
        else:
            annotation, f = hint, stored[name]
            default = f.default
            if name == event.secret:
                default = None
            elif default == ():
                default = list  # an empty tuple of the engine's is an empty list on the wire
        typ = wire_type(annotation)
        if default is None and not _optional(annotation):
            typ = typ | None
        out.append((name, Annotated[typ, Doc(field_doc(annotation))], default))
    if event.secret_counted:
        out.append((*COUNT, None))
    return out


def _optional(annotation: Any) -> bool:
    base = typing.get_args(annotation)[0] if typing.get_origin(annotation) is Annotated else None
    seen = base if base is not None else annotation
    origin = typing.get_origin(seen)
    return (origin is Union or origin is types.UnionType) and type(None) in typing.get_args(seen)


def declare(event: type[ee.Event]) -> type[GameEvent]:
    """The message class of an engine event class, registered under its kind."""
    specs: list[Any] = []
    for name, typ, default in message_fields(event):
        if default is dataclasses.MISSING:
            specs.append((name, typ))
        elif default is list:
            specs.append((name, typ, dataclasses.field(default_factory=list)))
        else:
            specs.append((name, typ, dataclasses.field(default=default)))
    cls = dataclasses.make_dataclass(
        event.__name__,
        specs,
        bases=(GameEvent,),
        namespace={"__doc__": event.__doc__, "__module__": __name__},
        frozen=True,
        slots=True,
        kw_only=True,
    )
    return register(event.kind, S)(cls)


#: Message classes by engine event ``kind``, in the engine's order (not the two fair-deal messages).
GAME_EVENT_TYPES: Final[dict[str, type[GameEvent]]] = {
    kind: declare(event) for kind, event in ee.EVENT_TYPES.items()
}
# Each is also this module's attribute by its class name (`protocol.game_events.CardPlayed`).
globals().update({cls.__name__: cls for cls in GAME_EVENT_TYPES.values()})


@register("deal_commitment", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class DealCommitment(GameEvent):
    """Sent before each deal: SHA-256 of the seed the server has drawn for it (see Fair deals)."""

    hand_number: Annotated[HandNumber, Doc("the hand about to be dealt")]
    commitment: Annotated[Digest, Doc("SHA-256 of the seed's bytes, hex")]


@register("deal_seed", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class DealSeed(GameEvent):
    """Sent after each hand (a dead deal included): the seed committed to before it was dealt."""

    hand_number: Annotated[HandNumber, Doc("the hand")]
    seed: Annotated[Seed, Doc("the seed's bytes, hex; SHA-256 of them is the commitment")]


if typing.TYPE_CHECKING:
    # The event messages are made at import, one per engine event: to a type checker each is any
    # class (its fields are the engine's declaration's, checked by the tests, not by mypy).
    def __getattr__(name: str) -> Any: ...
