"""The bans in force, as this server last read them from its database: who is refused `banned`.

The operator bans an account (by name, compared without ASCII case as account names are) or an
address (an IP address or a CIDR network); `server.operator` stores each ban and updates this
list at once, and reads the database's list again every few seconds, so a ban made on another
server of the same database holds here too. Looking a peer up costs no database round trip: the
checks sit on the way in of every connection and every login.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass, field

from server.storage.rows import BanRow

ACCOUNT = "account"
ADDRESS = "address"

IpNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


def fold(name: str) -> str:
    """An account name as bans compare it: ASCII letters lowered (as SQLite's NOCASE does)."""
    return name.translate(_ASCII_LOWER)


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def network(text: str) -> str:
    """An address or network as a ban keeps it: CIDR form, host bits cleared (`192.0.2.7` is
    `192.0.2.7/32`, `2001:db8::1/64` is `2001:db8::/64`). Raises `ValueError` with a sentence if
    `text` is neither."""
    try:
        return str(ipaddress.ip_network(text.strip(), strict=False))
    except ValueError:
        raise ValueError(
            f"{text!r} is not an IP address or network (e.g. 192.0.2.7, 198.51.100.0/24)"
        ) from None


def _address_of(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        address = ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:  # a test's memory stream has no address
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


@dataclass
class BanList:
    """Every ban in force, by account and by network."""

    accounts: dict[str, BanRow] = field(default_factory=dict)
    networks: dict[IpNetwork, BanRow] = field(default_factory=dict)

    def load(self, rows: Iterable[BanRow]) -> None:
        """Replace the list with `rows` (as the database holds them)."""
        accounts: dict[str, BanRow] = {}
        networks: dict[IpNetwork, BanRow] = {}
        for row in rows:
            if row.kind == ACCOUNT:
                accounts[fold(row.target)] = row
            else:
                networks[ipaddress.ip_network(row.target, strict=False)] = row
        self.accounts, self.networks = accounts, networks

    def add(self, row: BanRow) -> None:
        if row.kind == ACCOUNT:
            self.accounts[fold(row.target)] = row
        else:
            self.networks[ipaddress.ip_network(row.target, strict=False)] = row

    def remove(self, kind: str, target: str) -> None:
        if kind == ACCOUNT:
            self.accounts.pop(fold(target), None)
        else:
            self.networks.pop(ipaddress.ip_network(target, strict=False), None)

    def rows(self) -> list[BanRow]:
        return [*self.accounts.values(), *self.networks.values()]

    def of_address(self, host: str) -> BanRow | None:
        """The ban of the network `host` is in, if any."""
        if not self.networks:
            return None
        address = _address_of(host)
        if address is None:
            return None
        for net, row in self.networks.items():
            if address.version == net.version and address in net:
                return row
        return None

    def of_account(self, name: str) -> BanRow | None:
        return self.accounts.get(fold(name)) if self.accounts else None

    def why(self, host: str, account: str | None = None) -> str | None:
        """The sentence refusing a peer at `host` (logging in to `account`, if given), or None
        if neither is banned."""
        row = self.of_address(host)
        if row is None and account is not None:
            row = self.of_account(account)
        if row is None:
            return None
        what = "this address" if row.kind == ADDRESS else f"the account {row.target}"
        said = f": {row.reason}" if row.reason else ""
        return f"{what} is banned from this server by its operator{said}"[:500]
