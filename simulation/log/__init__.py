"""The event log: events, their append-only log, and the SQLite store behind it."""
