"""What stands around every route: who may call (access, gatekeeper, visitor files), request
limits and deadlines (middleware, security), compression and metrics."""
