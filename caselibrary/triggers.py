"""The triggers on case_library: those that put every changed case in case_change for
the indexer, and the one that deletes a case's dependent rows as the ORM would.

The change triggers were created by a migration and are checked again after every
`migrate`: on SQLite a later migration that alters case_library rebuilds the table, and a
trigger goes with the table it was on. Creating what is missing after each migrate keeps
them, whatever migrations come later.

The on-delete trigger does, before a case row is deleted by any path (raw SQL included),
what the ORM's on_delete does to the rows that refer to it: the database's own foreign
keys are plain ones (Django keeps CASCADE and SET_NULL in Python), so a DELETE of a case
that a search found or that was imported was refused. It is made from the models at the
end of every `migrate` and taken down at its start: SQLite refuses to rebuild a table
that a trigger names, and a new reference to cases is then covered too.

A restore can leave them all out: `check --database default` names the ones missing
(case_triggers_present, registered when the app's ready() imports this module).

Written in SQL because neither the ORM nor the schema editor has a trigger operation:
there is no ORM way to weigh it against. Only names from the models' metadata, quoted by
the connection, go into the statements; no value does.
"""

from __future__ import annotations

from typing import Any

from django.core.checks import CheckMessage, Tags, Warning, register
from django.db import connections, models

from config.index_checks import migrations_pending

_ACTIONS = {
    "case_library_change_ins": "INSERT",
    # An update marks the row's old id too when it changed it: that case is gone.
    "case_library_change_upd_ids": "UPDATE",
    "case_library_change_del": "DELETE",
}
# Triggers of earlier versions, replaced by one above at the next `migrate`.
_REPLACED = ("case_library_change_upd",)
_MYSQL_COLUMNS = "case_id, changed_at"
_MYSQL_AT = ", UTC_TIMESTAMP(6)"


def _create(name: str, vendor: str) -> str:
    event = _ACTIONS[name]
    # When the case changed, in UTC as Django reads it. MySQL/MariaDB's column default
    # (CURRENT_TIMESTAMP) is in the session's time zone, and an operator's own client has
    # the server's: UTC_TIMESTAMP is UTC in any session. SQLite's default is UTC already.
    columns, at = ("case_id", "") if vendor == "sqlite" else (_MYSQL_COLUMNS, _MYSQL_AT)
    # Constant names only: nothing here comes from outside.
    if event == "UPDATE":
        old_id = f"SELECT OLD.case_id{at}" + ("" if vendor == "sqlite" else " FROM DUAL")  # noqa: S608
        insert = (
            f"INSERT INTO case_change ({columns}) SELECT NEW.case_id{at}"
            f" UNION ALL {old_id} WHERE OLD.case_id <> NEW.case_id"
        )
    else:
        row = "OLD" if event == "DELETE" else "NEW"
        insert = f"INSERT INTO case_change ({columns}) VALUES ({row}.case_id{at})"  # noqa: S608
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


def change_triggers_replace(connection: Any) -> list[str]:
    """Drop the change triggers and create them as _create makes them now (a migration
    does, when _create changed what they write); the names created."""
    with connection.cursor() as cursor:
        # The names are the constants above.
        for name in (*_ACTIONS, *_REPLACED):
            cursor.execute(f"DROP TRIGGER IF EXISTS {name}")
    return ensure_change_triggers(connection)


ON_DELETE = "case_library_on_delete"


def _relations_to(model: type[models.Model]) -> list[Any]:
    # The relations Django's delete collector follows from a row of `model`
    # (django.db.models.deletion.get_candidate_relations_to_delete).
    return [
        f
        for f in model._meta.get_fields(include_hidden=True)
        if f.auto_created and not f.concrete and (f.one_to_one or f.one_to_many)
    ]


def _on_delete_statements(case: type[models.Model], quote: Any) -> list[str]:
    """What the ORM's on_delete does to the rows referring to the case OLD, in SQL."""
    statements = []
    for relation in _relations_to(case):
        child, action = relation.related_model, relation.on_delete
        if action in (models.PROTECT, models.RESTRICT, models.DO_NOTHING):
            continue  # the foreign key refuses the delete, or the row is left as it is
        # A trigger cannot write the table it is on (MariaDB), nor does it follow a
        # cascade further than one table: neither is needed yet, and both are said here.
        if child._meta.db_table == case._meta.db_table or (
            action is models.CASCADE and _relations_to(child)
        ):
            raise ValueError(f"{relation.field}: a case's on-delete trigger cannot follow it")
        # Names from the models' metadata, quoted; the only value is the deleted row's key.
        table, column = quote(child._meta.db_table), quote(relation.field.column)
        where = f"WHERE {column} = OLD.{quote(relation.field.target_field.column)}"
        if action is models.CASCADE:
            statements.append(f"DELETE FROM {table} {where}")  # noqa: S608
        elif action is models.SET_NULL:
            statements.append(f"UPDATE {table} SET {column} = NULL {where}")  # noqa: S608
        else:
            name = getattr(action, "__name__", action)
            raise ValueError(f"{relation.field}: on_delete {name} has no SQL here")
    return statements


def on_delete_trigger_drop(connection: Any) -> None:
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TRIGGER IF EXISTS {ON_DELETE}")


def ensure_on_delete_trigger(connection: Any, apps: Any) -> bool:
    """Create the on-delete trigger for the models of `apps` (the migrations' state) when
    it is missing; whether it was created."""
    if "case_library" not in connection.introspection.table_names():
        return False  # not migrated this far yet
    statements = _on_delete_statements(
        apps.get_model("caselibrary", "CaseLibrary"), connection.ops.quote_name
    )
    if not statements or ON_DELETE in existing(connection):
        return False
    body = "BEGIN " + "; ".join(statements) + "; END"
    each_row = "" if connection.vendor == "sqlite" else "FOR EACH ROW "
    with connection.cursor() as cursor:
        cursor.execute(f"CREATE TRIGGER {ON_DELETE} BEFORE DELETE ON case_library {each_row}{body}")
    return True


def missing_triggers(connection: Any) -> list[str]:
    """The triggers on case_library that `migrate` makes (after_migrate) and the database
    lacks: a restore may have left them out. None before the migration that makes
    case_change."""
    from django.apps import apps as global_apps

    if "case_change" not in connection.introspection.table_names():
        return []
    wanted = list(_ACTIONS)
    case = global_apps.get_model("caselibrary", "CaseLibrary")
    if _on_delete_statements(case, connection.ops.quote_name):
        wanted.append(ON_DELETE)
    there = existing(connection)
    return [name for name in wanted if name not in there]


@register(Tags.database)
def case_triggers_present(
    app_configs: Any = None, databases: Any = None, **kwargs: Any
) -> list[CheckMessage]:
    """A system check (`check --database default`, `migrate --check`): the triggers on
    case_library, without which no edit is indexed again. A restore may leave them out
    (a dump made without them, or loaded by a user the server would not let create them),
    and nothing else would tell. A warning, not an error: `migrate` runs the checks
    first, and an error would stop the one command that makes them again."""
    problems: list[CheckMessage] = []
    for alias in databases or ():
        connection = connections[alias]
        if migrations_pending(connection):
            continue
        missing = missing_triggers(connection)
        if missing:
            problems.append(
                Warning(
                    f"case_library lacks the trigger(s) {', '.join(missing)}: the cases "
                    "written from now on (edits, imports, deletes) are never indexed again "
                    "and searches keep finding them as they were",
                    hint="python manage.py migrate makes them again (at every run, with no "
                    "migration to apply too); then python manage.py reindex_cases --all "
                    "indexes the cases written meanwhile (docs/operations.md, Backups)",
                    id="database.W006",
                )
            )
    return problems


def before_migrate(sender: Any, using: str = "default", **kwargs: Any) -> None:
    from django.db import connections

    on_delete_trigger_drop(connections[using])


def after_migrate(sender: Any, using: str = "default", **kwargs: Any) -> None:
    from django.apps import apps as global_apps
    from django.db import connections

    connection = connections[using]
    ensure_change_triggers(connection)
    # The state the migrations left (`flush` sends none: the models are that state then).
    ensure_on_delete_trigger(connection, kwargs.get("apps") or global_apps)
