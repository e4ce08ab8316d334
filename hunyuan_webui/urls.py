"""URLs as they may be shown: the one rule for keeping credentials out of logs and status pages.

A URL given on the command line (``--endpoint``, ``--redis-url``) may carry ``user:password@``.
Whatever prints or reports such a URL passes it through :func:`redact_url` first. This module
imports nothing from the package, so any module can use it without an import cycle.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit


def redact_url(url: str) -> str:
    """``url`` without any ``user:password@`` part (safe for logs and /ready)."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc="***@" + parts.netloc.rsplit("@", 1)[1]))
