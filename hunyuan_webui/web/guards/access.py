"""Who may use the app and how much: one policy for every way in.

The ways in are the JSON API (``/v1/*``), the LibreTranslate routes, the page and its own
endpoints (``/gradio_api/*``, which gradio_client calls too), and whatever is added later.
:meth:`AccessControl.route_kind` sorts a path into one of four kinds and :class:`AccessControl` says what each
kind needs; :class:`hunyuan_webui.web.guards.gatekeeper.Gatekeeper` applies it to every request in one place.

- **open** routes (health, readiness, metrics, the language lists, the API docs) need nothing.
- **api** routes need a key when keys are configured (``Authorization: Bearer <key>`` or
  ``X-API-Key``); LibreTranslate's two **body_key** routes may carry it as ``api_key`` instead.
- **page** routes need the UI login when ``--auth`` is set (Gradio's own check). With keys and
  no login they need a key too, unless ``--open-page`` opens them to anyone who can reach the app.

Keys come from ``--api-keys`` (comma-separated, default limits) and ``--api-keys-file`` (one key a
line: ``key [requests_per_minute] [chars_per_day]``). Page visitors without a key are limited by
``--visitor-rpm`` and ``--visitor-chars-per-day``, counted per login name, else per address.
Limits are kept in memory per process: a sliding one-minute window for requests and a UTC-day
counter for characters; both answer 429 with ``Retry-After``. Keys and names are never logged:
callers are identified by a short hash.
"""

from __future__ import annotations

import collections
import hashlib
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from hunyuan_webui.errors import AuthError, InputError, RateLimitError
from hunyuan_webui.settings import Settings
from hunyuan_webui.web.fonts import FONT_ROUTES

RouteKind = Literal["open", "api", "body_key", "page"]
# The app's own open routes (its API docs, the page's fonts); each protocol names its own open and
# body-key routes (:data:`hunyuan_webui.web.protocols.PROTOCOLS`), handed to ``from_settings``.
BASE_OPEN_ROUTES = frozenset({"/docs", "/docs/oauth2-redirect", "/redoc",
                              "/openapi.json"}) | FONT_ROUTES
KEY_REQUIRED = "An API key is required: send 'Authorization: Bearer <key>'."
PAGE_CLOSED = ("This translator's page needs an API key (send 'Authorization: Bearer <key>'). "
               "Its operator can open the page with --open-page or put it behind --auth.")


@dataclass(frozen=True)
class KeyPolicy:
    requests_per_minute: int  # 0 = unlimited
    chars_per_day: int  # 0 = unlimited


@dataclass(frozen=True)
class Caller:
    key_id: str | None  # a short hash of the key or visitor, safe to log; None = nobody to count
    policy: KeyPolicy
    kind: Literal["key", "visitor", "open"] = "key"


OPEN = Caller(None, KeyPolicy(0, 0), "open")


def key_in(headers: Mapping[str, str]) -> str | None:
    """The API key a request carries in its headers, if any."""
    scheme, _, token = headers.get("authorization", "").partition(" ")
    key = token.strip() if scheme.lower() in ("bearer", "deepl-auth-key") else None
    return key or headers.get("x-api-key") or None


class AccessControl:
    def __init__(self, keys: dict[str, KeyPolicy], visitors: KeyPolicy = KeyPolicy(0, 0), *,
                 login: bool = False, open_page: bool = False,
                 protocols: Iterable[Any] = (), page_prefixes: tuple[str, ...] = ()) -> None:
        self.keys = keys
        # From each protocol (``open_routes``, ``key_in_body``): read, never written here.
        self.open_routes = BASE_OPEN_ROUTES.union(*(p.open_routes for p in protocols))
        self.key_in_body = frozenset().union(*(p.key_in_body for p in protocols))
        self.key_in_body_prefixes = tuple(x for p in protocols for x in p.key_in_body_prefixes)
        self.page_prefixes = page_prefixes  # pages beside the Gradio one (a class's): its policy
        self.visitors = visitors
        self.login = login
        self.open_page = open_page
        self._lock = threading.Lock()
        self._recent: dict[str, collections.deque[float]] = collections.defaultdict(collections.deque)
        self._chars: dict[tuple[str, str], int] = {}

    @classmethod
    def from_settings(cls, settings: Settings, protocols: Iterable[Any] = (),
                      page_prefixes: tuple[str, ...] = ()) -> AccessControl:
        """The policy the flags describe; ``protocols``: the app's protocols (their open and
        body-key routes), for :meth:`route_kind`."""
        default = KeyPolicy(settings.rate_limit_rpm, settings.rate_limit_chars_per_day)
        keys: dict[str, KeyPolicy] = {}
        for key in (settings.api_keys or "").split(","):
            if key.strip():
                keys[key.strip()] = default
        if settings.api_keys_file:
            keys.update(_read_key_file(Path(settings.api_keys_file), default))
        return cls(keys, KeyPolicy(settings.visitor_rpm, settings.visitor_chars_per_day),
                   login=ui_auth(settings) is not None, open_page=settings.open_page,
                   protocols=protocols, page_prefixes=page_prefixes)

    def route_kind(self, path: str, is_api: bool) -> RouteKind:
        """The kind of ``path`` (without the root path); ``is_api``: one of the JSON app's own
        routes matches it (everything else belongs to the page mounted at ``/``)."""
        if path in self.open_routes:
            return "open"
        if path in self.key_in_body or (is_api and path.startswith(self.key_in_body_prefixes)):
            return "body_key"
        if any(path == p or path.startswith(p + "/") for p in self.page_prefixes):
            return "page"  # only a room's teacher secret writes to it (web/classroom)
        return "api" if is_api else "page"

    @property
    def enabled(self) -> bool:
        return bool(self.keys)

    @property
    def page_needs_key(self) -> bool:
        """Keys are configured and neither a login nor --open-page opens the page."""
        return self.enabled and not self.login and not self.open_page

    def identify(self, key: object) -> Caller:
        """The caller behind ``key`` (any JSON value a client sent), or 401; counts nothing."""
        if not self.enabled:
            return OPEN
        if not key:
            raise AuthError(KEY_REQUIRED)
        if not isinstance(key, str) or key not in self.keys:
            raise AuthError("Unknown API key.")
        return Caller(_short_hash(key), self.keys[key])

    def check_key(self, key: object) -> Caller:
        """:meth:`identify`, then count one request against the key's per-minute limit."""
        caller = self.identify(key)
        self.count(caller)
        return caller

    def visitor(self, name: str) -> Caller:
        """A page visitor without a key: its login name, else its address."""
        return Caller("v-" + _short_hash(name), self.visitors, "visitor")

    def page_caller(self, request: Any) -> Caller:
        """Who a page event (a ``gr.Request``) is counted against: the key the Gatekeeper
        accepted for it, else the visitor."""
        state = getattr(request, "state", None)
        caller = getattr(state, "caller", None) if state is not None else None
        if isinstance(caller, Caller) and caller.kind == "key":
            return caller
        client = getattr(request, "client", None)
        name = getattr(request, "username", None) or getattr(client, "host", None) or "unknown"
        return self.visitor(str(name))

    def admit(self, caller: Caller, chars: int) -> None:
        """One more translation of ``chars`` characters for ``caller``, or 429."""
        self.count(caller)
        self.charge(caller, chars)

    def count(self, caller: Caller) -> None:
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
                raise RateLimitError(f"Rate limit: {limit} requests per minute for this "
                                     f"{_whose(caller)}.", retry_after=retry)
            window.append(now)

    def charge(self, caller: Caller, chars: int) -> None:
        """Count ``chars`` against the caller's daily allowance, or refuse with 429. Callers
        without a character limit are counted too, so that usage can be reported (/v2/usage)."""
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
                    f"Daily limit: {limit:,} characters for this {_whose(caller)} ({used:,} used "
                    f"today).", retry_after=(tomorrow - now).total_seconds())
            self._chars[(caller.key_id, day)] = used + chars

    def chars_today(self, caller: Caller) -> int:
        """Characters this key has used today (UTC), as counted by :meth:`charge`."""
        if caller.key_id is None:
            return 0
        day = datetime.now(UTC).strftime("%Y-%m-%d")
        with self._lock:
            return self._chars.get((caller.key_id, day), 0)


class LoginThrottle:
    """Failed sign-ins per key (:class:`~hunyuan_webui.web.guards.security.LoginGuard` counts one user
    name at one address): the first ``free`` cost nothing, then each one doubles the wait before
    the next attempt (1 s, 2 s, 4 s ... up to ``max_wait``). A success clears the record; a quiet
    ``forget_after`` seconds does too."""

    def __init__(self, free: int = 5, max_wait: float = 300.0, forget_after: float = 900.0) -> None:
        self.free, self.max_wait, self.forget_after = free, max_wait, forget_after
        self._lock = threading.Lock()
        self._failures: dict[str, tuple[int, float]] = {}  # key -> (count, last failure)

    def wait(self, key: str) -> float:
        """Seconds before ``key`` may try again (0 = now)."""
        now = time.monotonic()
        with self._lock:
            count, last = self._failures.get(key, (0, now))
            if now - last > self.forget_after:
                self._failures.pop(key, None)
                return 0.0
        if count < self.free:
            return 0.0
        delay = min(self.max_wait, 2.0 ** (count - self.free))
        return max(0.0, last + delay - now)

    def failed(self, key: str) -> None:
        now = time.monotonic()
        with self._lock:
            if len(self._failures) > 10_000:  # bounded: forget the quiet ones first
                for old in [a for a, (_, t) in self._failures.items()
                            if now - t > self.forget_after]:
                    del self._failures[old]
            count, _ = self._failures.get(key, (0, now))
            self._failures[key] = (count + 1, now)

    def succeeded(self, key: str) -> None:
        with self._lock:
            self._failures.pop(key, None)


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:10]


def _whose(caller: Caller) -> str:
    return "visitor" if caller.kind == "visitor" else "key"


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
