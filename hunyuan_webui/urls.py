"""URLs as they may be shown: the one rule for keeping credentials out of logs and status pages.

A URL given on the command line (``--endpoint``, ``--redis-url``) may carry ``user:password@``.
Whatever prints or reports such a URL passes it through :func:`redact_url` first. A server
listening on every interface is shown by its LAN address (:func:`lan_ip`), which people on the
network can open, rather than 0.0.0.0; :func:`free_port` finds a port to listen on. This module
imports nothing from the package, so any module can use it without an import cycle.
"""

from __future__ import annotations

import socket
from urllib.parse import urlsplit, urlunsplit


def redact_url(url: str) -> str:
    """``url`` without any ``user:password@`` part (safe for logs and /ready)."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc="***@" + parts.netloc.rsplit("@", 1)[1]))


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nothing listens on at ``host`` now (the system's choice): for a server this
    process starts, and for the tests' and benchmarks' own. The one copy of this helper."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def lan_ip() -> str | None:
    """This machine's address on its network (no packet is sent: a UDP socket only routes)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        try:
            sock.connect(("10.255.255.255", 1))
            address = sock.getsockname()[0]
        except OSError:
            return None
    return None if address.startswith("127.") else address
