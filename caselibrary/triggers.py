"""The triggers that put every changed case in case_change for the indexer.

Created by a migration, and checked again after every `migrate`: on SQLite a later
migration that alters case_library rebuilds the table, and a trigger goes with the table
it was on. Creating what is missing after each migrate keeps them, whatever migrations
come later.
"""

from __future__ import annotations

from typing import Any

_ACTIONS = {
    "case_library_change_ins": "INSERT",
    # An update marks the row's old id too when it changed it: that case is gone.
    "case_library_change_upd_ids": "UPDATE",
    "case_library_change_del": "DELETE",
}
# Triggers of earlier versions, replaced by one above at the next `migrate`.
_REPLACED = ("case_library_change_upd",)


def _create(name: str, vendor: str) -> str:
    event = _ACTIONS[name]
    # Constant names only: nothing here comes from outside.
    if event == "UPDATE":
        old_id = "SELECT OLD.case_id" + ("" if vendor == "sqlite" else " FROM DUAL")  # noqa: S608
        insert = (
            "INSERT INTO case_change (case_id) SELECT NEW.case_id"
            f" UNION ALL {old_id} WHERE OLD.case_id <> NEW.case_id"
        )
    else:
        row = "OLD" if event == "DELETE" else "NEW"
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
    there = existing(connection)
    missing = [name for name in _ACTIONS if name not in there]
    with connection.cursor() as cursor:
        for name in missing:
            cursor.execute(_create(name, connection.vendor))
        # Triggers are DDL, which the ORM has no words for (as for the CREATE above);
        # the names are the constants of _REPLACED.
        for name in _REPLACED:
            if name in there:
                cursor.execute(f"DROP TRIGGER {name}")
    return missing


def after_migrate(sender: Any, using: str = "default", **kwargs: Any) -> None:
    from django.db import connections

    ensure_change_triggers(connections[using])
