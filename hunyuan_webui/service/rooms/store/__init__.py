"""Where a class's rooms and event log live: in this process's memory (:mod:`.bus`) or in Redis,
shared by every process (:mod:`.redis_bus`, with :mod:`.copies` to write a room back into a Redis
that came back empty)."""
