"""django-q2 tasks of the feedback app (thin: each calls one service)."""

from feedback.retention import sessions_purge_scheduled


def sessions_purge_task() -> int | None:
    """Daily: the retention purge, when SESSION_RETENTION_DAYS is set."""
    return sessions_purge_scheduled()
