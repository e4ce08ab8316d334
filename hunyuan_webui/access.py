"""Who may use the API and how much: API keys, per-key rate limits, and the UI login list.

Keys come from ``--api-keys`` (comma-separated, default limits) and ``--api-keys-file`` (one key a
line: ``key [requests_per_minute] [chars_per_day]``). With no keys configured the API is open, as
it is on 127.0.0.1 by default. Limits are kept in memory per process: a sliding one-minute window
for requests and a UTC-day counter for characters; both answer 429 with ``Retry-After``.
Keys are never logged: callers are identified by a short hash.
"""

from __future__ import annotations

import collections
import hashlib
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from fastapi import Request

from hunyuan_webui.errors import AuthError, InputError, RateLimitError
from hunyuan_webui.settings import Settings


@dataclass(frozen=True)
class KeyPolicy:
    requests_per_minute: int  # 0 = unlimited
    chars_per_day: int  # 0 = unlimited


@dataclass(frozen=True)
class Caller:
    key_id: str | None  # a short hash of the key, safe to log
    policy: KeyPolicy


OPEN = Caller(None, KeyPolicy(0, 0))


class AccessControl:
    def __init__(self, keys: dict[str, KeyPolicy]) -> None:
        self.keys = keys
        self._lock = threading.Lock()
        self._recent: dict[str, collections.deque[float]] = collections.defaultdict(collections.deque)
        self._chars: dict[tuple[str, str], int] = {}

    @classmethod
    def from_settings(cls, settings: Settings) -> AccessControl:
        default = KeyPolicy(settings.rate_limit_rpm, settings.rate_limit_chars_per_day)
        keys: dict[str, KeyPolicy] = {}
        for key in (settings.api_keys or "").split(","):
            if key.strip():
                keys[key.strip()] = default
        if settings.api_keys_file:
            keys.update(_read_key_file(Path(settings.api_keys_file), default))
        return cls(keys)

    @property
    def enabled(self) -> bool:
        return bool(self.keys)

    # -- FastAPI dependency -----------------------------------------------------------------------
    def dependency(self, request: Request) -> Caller:
        header = request.headers.get("authorization", "")
        key = header[7:].strip() if header.lower().startswith("bearer ") else None
        key = key or request.headers.get("x-api-key")
        return self.check_key(key, request)

    def check_key(self, key: object, request: Request | None = None) -> Caller:
        """The caller behind ``key`` (any JSON value a client sent), or 401."""
        if not self.enabled:
            return OPEN
        if not key:
            raise AuthError("An API key is required: send 'Authorization: Bearer <key>'.")
        if not isinstance(key, str) or key not in self.keys:
            raise AuthError("Unknown API key.")
        caller = Caller(hashlib.sha256(key.encode()).hexdigest()[:10], self.keys[key])
        if request is not None:
            request.state.caller = caller.key_id
        self._count_request(caller)
        return caller

    def _count_request(self, caller: Caller) -> None:
        limit = caller.policy.requests_per_minute
        if not limit or caller.key_id is None:
            return
        now = time.monotonic()
        with self._lock:
            window = self._recent[caller.key_id]
            while window and now - window[0] >= 60:
                window.popleft()
            if len(window) >= limit:
                retry = 60 - (now - window[0])
                raise RateLimitError(f"Rate limit: {limit} requests per minute for this key.",
                                     retry_after=retry)
            window.append(now)

    def charge(self, caller: Caller, chars: int) -> None:
        """Count ``chars`` against the key's daily allowance, or refuse with 429. Keys without a
        character limit are counted too, so that usage can be reported (DeepL's /v2/usage)."""
        limit = caller.policy.chars_per_day
        if caller.key_id is None:
            return
        now = datetime.now(UTC)
        day = now.strftime("%Y-%m-%d")
        with self._lock:
            used = self._chars.get((caller.key_id, day), 0)
            if limit and used + chars > limit:
                tomorrow = (now + timedelta(days=1)).replace(hour=0, minute=0, second=0,
                                                             microsecond=0)
                raise RateLimitError(
                    f"Daily limit: {limit:,} characters for this key ({used:,} used today).",
                    retry_after=(tomorrow - now).total_seconds())
            self._chars[(caller.key_id, day)] = used + chars

    def chars_today(self, caller: Caller) -> int:
        """Characters this key has used today (UTC), as counted by :meth:`charge`."""
        if caller.key_id is None:
            return 0
        day = datetime.now(UTC).strftime("%Y-%m-%d")
        with self._lock:
            return self._chars.get((caller.key_id, day), 0)


def _read_key_file(path: Path, default: KeyPolicy) -> dict[str, KeyPolicy]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise InputError(f"Cannot read --api-keys-file {path}: {exc.strerror}.") from None
    keys = {}
    for number, line in enumerate(lines, 1):
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        try:
            rpm = int(fields[1]) if len(fields) > 1 else default.requests_per_minute
            chars = int(fields[2]) if len(fields) > 2 else default.chars_per_day
        except ValueError:
            raise InputError(f"{path}:{number}: expected 'key [requests_per_minute] "
                             f"[chars_per_day]'.") from None
        keys[fields[0]] = KeyPolicy(rpm, chars)
    return keys


def ui_auth(settings: Settings) -> list[tuple[str, str]] | None:
    """The UI's login list from --auth and --auth-file, or None when the UI is open."""
    pairs: list[str] = [p for p in (settings.auth or "").split(",") if p.strip()]
    if settings.auth_file:
        try:
            pairs += [ln for ln in Path(settings.auth_file).read_text(encoding="utf-8").splitlines()
                      if ln.strip() and not ln.lstrip().startswith("#")]
        except OSError as exc:
            raise InputError(f"Cannot read --auth-file {settings.auth_file}: {exc.strerror}.") from None
    users = []
    for pair in pairs:
        user, sep, password = pair.strip().partition(":")
        if not sep or not user or not password:
            raise InputError("Each login must look like 'user:password'.")
        users.append((user, password))
    return users or None
