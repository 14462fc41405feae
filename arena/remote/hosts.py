"""The hosts a server lets agents call (`arena serve --bot-hosts`).

An `http` agent makes Arena send requests to its URL, and its forfeit reasons say what came back (a status, the
first bytes of an answer that is no JSON): a token holder could point one at a service that only the server can
reach and read a little of it. With `--bot-hosts`, every agent a request gives the server must call a listed host
(arena.reach says which requests): a name, compared with the URL's host name as written (not resolved; case aside), or
an address inside a listed address or network (10.0.0.5, 10.0.0.0/8, ::1). Addresses written otherwise (2130706433,
127.1) are no listed name nor an address here, so they are refused. Without the option any host may be called, as
on the command line, where whoever runs Arena chooses the agents.

An agent type declares the parameter that holds the URL it calls as `Agent.url_param` (`url` for `http`).
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

_HOST_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")


@dataclass(frozen=True)
class BotHosts:
    """Host names and networks that agents may call."""

    names: frozenset[str]
    networks: tuple[Network, ...]

    @classmethod
    def parse(cls, text: str) -> BotHosts:
        """From `--bot-hosts`' comma-separated names, addresses and networks; ValueError says what is wrong."""
        items = [item.strip() for item in text.split(",")]
        if not any(items):
            raise ValueError("give host names, addresses or networks, comma-separated (e.g. bots.example.org,10.0.0.0/8)")
        names: set[str] = set()
        networks: list[Network] = []
        for item in items:
            if not item:
                raise ValueError(f"an empty item in {text!r}")
            try:
                networks.append(ipaddress.ip_network(item, strict=False))
            except ValueError:
                if not _HOST_NAME.fullmatch(item) or item.replace(".", "").isdecimal():
                    raise ValueError(f"{item!r} is neither a host name nor an address or network (10.0.0.0/8)") from None
                names.add(item.lower())
        return cls(frozenset(names), tuple(networks))

    def allows(self, url: str) -> bool:
        """Whether the host of `url` is listed (by name, or as an address inside a listed network)."""
        host = host_of(url)
        if host is None:
            return False
        if host in self.names:
            return True
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return False
        return any(address in network for network in self.networks)

    def __str__(self) -> str:
        return ",".join([*sorted(self.names), *(str(network) for network in self.networks)])


def host_of(url: str) -> str | None:
    """The host `url` names (lower case, an IPv6 address without its brackets), or None when it names none."""
    try:
        return urlsplit(url).hostname or None
    except ValueError:
        return None
