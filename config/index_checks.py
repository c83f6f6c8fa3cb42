"""A system check that the service's tables have the keys and indexes their models declare.

`migrate --fake-initial`, which takes over the original system's database
(docs/operations.md, "Adopting the original system's MySQL database"), records the initial
migrations as applied because their tables exist: the indexes those migrations would have
made are not made. Without them the admin's filters and lists read whole tables, and a
missing unique key lets a retried request store a row twice. This check names each one the
database lacks, with the statement that creates it.

Registered with the `database` tag: `migrate` runs it on the database it migrates, and so
does `check --database default`. While a migration of the service's apps is not applied
yet, nothing is judged: it may be the one that makes a table or an index (an upgrade's
`migrate` must not be stopped by what it is about to create). An index of other columns
(the original's own) counts when it begins with the declared columns; a key counts when it
holds the same columns. An index a migration makes with a statement of its own, on one
server only (SERVER_INDEXES), is checked on that server.

The check of the case library's triggers (caselibrary/triggers.py) uses migrations_pending
below.
"""

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from django.apps import apps
from django.core.checks import CheckMessage, Error, Tags, Warning, register
from django.db import connections, models
from django.db.migrations.executor import MigrationExecutor

# The apps whose tables the service declares (not Django's, nor django-q2's).
SERVICE_APPS = ("diagnosis", "caselibrary", "feedback", "evaluation")


def _on_mariadb(connection: Any) -> bool:
    return connection.vendor == "mysql" and connection.mysql_is_mariadb


@dataclass(frozen=True)
class ServerIndex:
    """An index a migration makes with its own statement on one server, which no model
    can declare (a prefix of a JSON column)."""

    model: str  # "app_label.ModelName"
    name: str
    columns: tuple[str, ...]  # as the database lists them: a prefix's column by its name
    definition: str  # the statement's column list
    made_on: Callable[[Any], bool]


SERVER_INDEXES = (
    # diagnosis.0005: bad cases whose score is missing. MySQL 8 cannot index a JSON
    # column even by prefix, and SQLite is not given it: MariaDB only, as there.
    ServerIndex(
        model="diagnosis.DiagnosisSession",
        name="idx_session_feedback_scored",
        columns=("feedback", "self_evaluation", "created_at"),
        definition="feedback, self_evaluation(1), created_at",
        made_on=_on_mariadb,
    ),
)


@register(Tags.database)
def declared_indexes_present(
    app_configs: Any = None, databases: Any = None, **kwargs: Any
) -> list[CheckMessage]:
    problems: list[CheckMessage] = []
    for alias in databases or ():
        connection = connections[alias]
        if migrations_pending(connection):
            continue
        with connection.cursor() as cursor:
            tables = set(connection.introspection.table_names(cursor))
            for model in _service_models():
                table = model._meta.db_table
                if table not in tables:
                    continue
                constraints = connection.introspection.get_constraints(cursor, table)
                present = constraints.values()
                for wanted in _declared(model):
                    if not _covered(wanted, model, present):
                        named = _free_name(wanted, taken=set(constraints))
                        problems.append(_missing(connection, model, named))
                for index in _server_indexes(connection, model):
                    if not _server_index_covered(index, present):
                        problems.append(_server_index_missing(model, index, set(constraints)))
    return problems


def migrations_pending(connection: Any) -> bool:
    """Whether a migration of the service's apps is not applied yet on `connection`."""
    executor = MigrationExecutor(connection)
    plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    return any(migration.app_label in SERVICE_APPS for migration, _ in plan)


def _service_models() -> Iterator[type[models.Model]]:
    for label in SERVICE_APPS:
        for model in apps.get_app_config(label).get_models():
            if model._meta.managed and not model._meta.proxy:
                yield model


def _declared(model: type[models.Model]) -> Iterator[models.Index | models.UniqueConstraint]:
    """Every index and unique key of the model, a field's own as one of the Meta's."""
    table = model._meta.db_table
    for field in model._meta.local_fields:
        if field.primary_key or not field.column:
            continue
        if field.unique:
            yield models.UniqueConstraint(fields=[field.name], name=f"{table}_{field.column}_uniq")
        elif field.db_index:
            yield models.Index(fields=[field.name], name=f"{table}_{field.column}_idx")
    for index in model._meta.indexes:
        if index.fields and not index.condition:
            yield index
    for constraint in model._meta.constraints:
        unique = isinstance(constraint, models.UniqueConstraint)
        if unique and constraint.fields and constraint.condition is None:
            yield constraint


def _free_name(
    wanted: models.Index | models.UniqueConstraint, *, taken: set[str]
) -> models.Index | models.UniqueConstraint:
    """`wanted` under a name the table does not hold already: an adopted table may have an
    index of that name on other columns, and the statement would fail (1061)."""
    if wanted.name not in taken:
        return wanted
    copy = wanted.clone()
    copy.name = _unused_name(wanted.name, taken=taken)
    return copy


def _unused_name(name: str, *, taken: set[str]) -> str:
    if name not in taken:
        return name
    return next(f"{name[:60]}_{n}" for n in range(2, 100) if f"{name[:60]}_{n}" not in taken)


def _server_indexes(connection: Any, model: type[models.Model]) -> Iterator[ServerIndex]:
    for index in SERVER_INDEXES:
        if index.model == model._meta.label and index.made_on(connection):
            yield index


def _server_index_covered(index: ServerIndex, present: Any) -> bool:
    width = len(index.columns)
    return any(
        found["index"] and tuple(found["columns"][:width]) == index.columns for found in present
    )


def _server_index_missing(
    model: type[models.Model], index: ServerIndex, taken: set[str]
) -> CheckMessage:
    name = _unused_name(index.name, taken=taken)
    table = model._meta.db_table
    return Warning(
        f"{table} has no index on ({index.definition}): the lists and lookups that use it "
        "read the whole table",
        hint=f"CREATE INDEX {name} ON {table} ({index.definition})",
        obj=model,
        id="database.W003",
    )


def _columns(model: type[models.Model], wanted: models.Index | models.UniqueConstraint) -> list:
    return [model._meta.get_field(name.lstrip("-")).column for name in wanted.fields]


def _covered(
    wanted: models.Index | models.UniqueConstraint,
    model: type[models.Model],
    present: Any,
) -> bool:
    columns = _columns(model, wanted)
    if isinstance(wanted, models.UniqueConstraint):
        return any(
            (found["unique"] or found["primary_key"]) and set(found["columns"]) == set(columns)
            for found in present
        )
    return any(
        (found["index"] or found["unique"] or found["primary_key"])
        and list(found["columns"][: len(columns)]) == columns
        for found in present
    )


def _missing(
    connection: Any, model: type[models.Model], wanted: models.Index | models.UniqueConstraint
) -> CheckMessage:
    with connection.schema_editor(collect_sql=True, atomic=False) as editor:
        if isinstance(wanted, models.UniqueConstraint):
            editor.add_constraint(model, wanted)
        else:
            editor.add_index(model, wanted)
    statement = " ".join(editor.collected_sql)
    table, columns = model._meta.db_table, ", ".join(_columns(model, wanted))
    if isinstance(wanted, models.UniqueConstraint):
        return Error(
            f"{table} has no unique key on ({columns}): a retried request could store its "
            "row twice",
            hint=f"Remove the duplicate rows if any, then: {statement}",
            obj=model,
            id="database.E005",
        )
    return Warning(
        f"{table} has no index on ({columns}): the lists and lookups that use it read the "
        "whole table",
        hint=statement,
        obj=model,
        id="database.W003",
    )
