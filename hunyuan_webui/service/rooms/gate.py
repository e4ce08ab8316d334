"""What one address (or one signed-in teacher) may do to the classes: abuse kept out.

- **Opening classes**: at most :attr:`RoomLimits.creates_per_minute` a minute and
  :attr:`RoomLimits.rooms_per_teacher` open at once per teacher: a signed-in user (or API key)
  where there is one, else the address. One client can no longer take every room of the server.
- **Guessing codes**: a code that names no class counts against the address that asked. Past
  :attr:`RoomLimits.wrong_codes_per_minute` in a minute, every code lookup from that address is
  refused (429, ``too_many_wrong_codes``) for a wait that doubles at each new refusal within the
  hour (:data:`BLOCK_FIRST_S` up to :data:`BLOCK_MOST_S`), whatever code it names: the answer says
  nothing of which codes exist. A teacher's own key still opens the teacher's room.

The address is the socket's peer (a proxy's forwarded address only with
``--forwarded-allow-ips``). The counts live in the room's store, so that every process behind one
Redis counts together.
"""

from __future__ import annotations

import time
from typing import Any

from hunyuan_webui.service.rooms.errors import TooManyRoomsError, WrongCodesError

BLOCK_FIRST_S = 5.0
BLOCK_MOST_S = 900.0
STRIKES_WINDOW_S = 3600.0


class Gate:
    def __init__(self, bus: Any, limits: Any) -> None:
        self.bus, self.limits = bus, limits

    # -- opening classes --------------------------------------------------------------------------
    def creating(self, owner: str | None) -> None:
        """One more class opened by ``owner`` (None: the server itself, never limited)."""
        if owner is None:
            return
        mine = sum(1 for meta in self.bus.open_rooms() if meta.get("owner") == owner)
        if mine >= self.limits.rooms_per_teacher:
            raise TooManyRoomsError(
                f"You already have {mine} classes open (the most is "
                f"{self.limits.rooms_per_teacher}); end one first.", retry_after=300)
        if self.bus.hits(f"create:{owner}", 60) > self.limits.creates_per_minute:
            raise TooManyRoomsError("Too many classes opened in a minute; wait a minute.",
                                    retry_after=60)

    # -- guessing codes ---------------------------------------------------------------------------
    def blocked(self, address: str | None) -> float:
        """Seconds this address must still wait before looking up a code (0: none)."""
        if not address:
            return 0.0
        until = self.bus.marked(f"block:{address}")
        return max(0.0, until - time.time()) if until else 0.0

    def check(self, address: str | None) -> None:
        if wait := self.blocked(address):
            raise self._refusal(wait)

    def missed(self, address: str | None) -> None:
        """``address`` named a code that is no class: counted, and refused once too many."""
        if not address:
            return
        if self.bus.hits(f"miss:{address}", 60) <= self.limits.wrong_codes_per_minute:
            return
        strikes = self.bus.hits(f"strike:{address}", STRIKES_WINDOW_S)
        wait = min(BLOCK_MOST_S, BLOCK_FIRST_S * 2 ** (strikes - 1))
        self.bus.mark(f"block:{address}", time.time() + wait, wait)
        raise self._refusal(wait)

    def _refusal(self, wait: float) -> WrongCodesError:
        return WrongCodesError(f"Too many wrong class codes from this device; wait {wait:.0f} s "
                               "and check the code with your teacher.", retry_after=wait)
