"""The engine's errors: each carries a machine code and a sentence a person understands."""


class EngineError(Exception):
    """Base of every error the engine raises on purpose."""

    code: str = "engine_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NotationError(EngineError, ValueError):
    """Text that is not valid card (or other) notation. Nothing was changed."""

    code = "bad_notation"

    def __init__(self, text: str, hint: str) -> None:
        super().__init__(f"{text!r} is not a card: {hint}")
        self.text = text


class RulesetError(EngineError, ValueError):
    """An option is unknown, out of range, or conflicts with another. `option` names it."""

    code = "bad_ruleset"

    def __init__(self, option: str, message: str) -> None:
        super().__init__(f"{option}: {message}")
        self.option = option


class IllegalAction(EngineError):
    """An action the rules do not allow now. The game state is unchanged.

    `code` is stable and machine-readable (e.g. `must_follow_suit`, `spades_not_broken`,
    `not_your_turn`); `message` is the sentence shown to the player ("must follow suit: you hold hearts").
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class RecordError(EngineError, ValueError):
    """A hand record that is malformed, or whose replay does not reproduce what it says."""

    code = "bad_record"
