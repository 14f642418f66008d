"""Which `Host` the web port answers for: IP literals, `localhost`, and the names the operator lists.

DNS rebinding: a page on `evil.example` has its name resolve first to the attacker's server, then
(a short TTL later) to this server's LAN address. The browser still thinks it talks to
`evil.example`, so the same-origin policy lets that page read our answers and open our WebSocket
with `Origin: http://evil.example` and `Host: evil.example`: the `Origin` check alone passes, since
both name the same (foreign) site. What the attacker cannot change is the name in `Host`: it is the
name the browser was asked to load. So a request is served only when `Host` is a name this server
is known by (`--web-name`, `localhost`) or an IP address (a browser that asked for an address is on
an origin no other site shares); anything else is misdirected (421).

Pure: no sockets, no clock.
"""

from __future__ import annotations

import contextlib
import ipaddress
import re
from collections.abc import Iterable

__all__ = ["HostNames", "WebNameError", "normalise_name"]

# A DNS name as the operator may list it: dot-separated labels of letters, digits and hyphens
# (RFC 1123; underscores too, which some LAN machine names carry and browsers send), 253
# characters at most; a final dot (the root) is dropped.
_LABEL = re.compile(r"(?!-)[a-z0-9_-]{1,63}(?<!-)")
_PORT = re.compile(r"[0-9]{0,5}")
ALWAYS_SERVED = frozenset({"localhost"})


class WebNameError(ValueError):
    """A `--web-name` that is not a DNS name (the sentence says why)."""


def normalise_name(name: str) -> str:
    """`name` as it is compared with `Host`: lowercase, without a final dot, an international
    name in the ASCII form browsers send (`xn--...`). Raises `WebNameError` if it is not a DNS
    name (a port, a scheme, a path or a space in it)."""
    lowered = name.strip().lower()
    if lowered.endswith("."):
        lowered = lowered[:-1]
    if not lowered.isascii():
        with contextlib.suppress(UnicodeError):  # (then refused below, as not a DNS name)
            lowered = lowered.encode("idna").decode("ascii")
    labels = lowered.split(".")
    if not lowered or len(lowered) > 253 or not all(_LABEL.fullmatch(label) for label in labels):
        raise WebNameError(
            f"--web-name {name!r} is not a DNS name (letters, digits, hyphens and dots, "
            "no scheme, port or path: e.g. --web-name club.example)"
        )
    if _is_ip_literal(lowered):
        raise WebNameError(f"--web-name {name!r} is an address: addresses are always served")
    return lowered


def _is_ip_literal(host: str) -> bool:
    """An IPv4 dotted quad, or an IPv6 address in brackets (as URLs write it), zone allowed."""
    if host.startswith("[") and host.endswith("]"):
        inner = host[1:-1]
        try:
            return ipaddress.ip_address(inner).version == 6
        except ValueError:
            return False
    try:
        # ipaddress takes only the dotted quad for IPv4 (not "127.1" or a bare integer, which
        # some resolvers would read as an address but a browser would have rewritten first).
        return ipaddress.ip_address(host).version == 4
    except ValueError:
        return False


class HostNames:
    """The names the web port answers for; `refusal(host)` says why a `Host` is not one."""

    def __init__(self, names: Iterable[str] = (), *, listening_on: str = "") -> None:
        """`names`: the operator's (`WebNameError` for one that is not a DNS name);
        `listening_on`: the `--host` bound, served too when it is a name (the operator
        reaches the server by it) rather than an address."""
        self.names = ALWAYS_SERVED | {normalise_name(name) for name in names}
        with contextlib.suppress(WebNameError):
            self.names |= {normalise_name(listening_on)}

    def refusal(self, host: bytes | None) -> tuple[int, str] | None:
        """None when `host` (the `Host` header's value, port and all) is this server's own;
        else the status and the sentence to answer with."""
        if host is None:
            return 400, "the request has no Host header"
        text = host.decode("latin-1").strip().lower()
        name, port = text, ""
        if text.startswith("["):  # an IPv6 literal, maybe with a port after the bracket
            close = text.find("]")
            name, rest = text[: close + 1], text[close + 1 :]
            if close < 0 or (rest and not rest.startswith(":")):
                name, port = text, ""
            else:
                port = rest[1:] if rest else ""
        elif ":" in text:
            name, _, port = text.rpartition(":")
        if name.endswith("."):
            name = name[:-1]
        if _PORT.fullmatch(port) and (_is_ip_literal(name) or name in self.names):
            return None
        shown = text if len(text) <= 80 else text[:80] + "..."
        return 421, (
            f"this server does not answer for the name {shown!r}: open it by its address, "
            "as localhost, or by a name its operator lists with --web-name "
            "(any other name may be a DNS rebinding attack, a foreign page posing as this one)"
        )
