"""The triggers that put every changed case in case_change for the indexer.

Created by a migration, and checked again after every `migrate`: on SQLite a later
migration that alters case_library rebuilds the table, and a trigger goes with the table
it was on. Creating what is missing after each migrate keeps them, whatever migrations
come later.
"""

from __future__ import annotations

from typing import Any

_ACTIONS = {
    "case_library_change_ins": ("INSERT", "NEW"),
    "case_library_change_upd": ("UPDATE", "NEW"),
    "case_library_change_del": ("DELETE", "OLD"),
}


def _create(name: str, vendor: str) -> str:
    event, row = _ACTIONS[name]
    # Constant names from _ACTIONS only: nothing here comes from outside.
    insert = f"INSERT INTO case_change (case_id) VALUES ({row}.case_id)"  # noqa: S608
    if vendor == "sqlite":
        return f"CREATE TRIGGER {name} AFTER {event} ON case_library BEGIN {insert}; END"
    return f"CREATE TRIGGER {name} AFTER {event} ON case_library FOR EACH ROW {insert}"


def existing(connection: Any) -> set[str]:
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
        else:
            cursor.execute(
                "SELECT trigger_name FROM information_schema.triggers"
                " WHERE trigger_schema = DATABASE()"
            )
        return {row[0] for row in cursor.fetchall()}


def ensure_change_triggers(connection: Any) -> list[str]:
    """Create the change triggers that are missing; the names created."""
    if "case_change" not in connection.introspection.table_names():
        return []  # not migrated this far yet
    missing = [name for name in _ACTIONS if name not in existing(connection)]
    with connection.cursor() as cursor:
        for name in missing:
            cursor.execute(_create(name, connection.vendor))
    return missing


def drop_change_triggers(connection: Any) -> None:
    with connection.cursor() as cursor:
        for name in _ACTIONS:
            cursor.execute(f"DROP TRIGGER IF EXISTS {name}")


def after_migrate(sender: Any, using: str = "default", **kwargs: Any) -> None:
    from django.db import connections

    ensure_change_triggers(connections[using])
