"""A case deleted by SQL (a DBA, a script, another program) goes as the ORM would delete
it: a trigger in the database does to the rows that refer to it what their foreign keys'
on_delete says, so the DELETE is not refused, and the indexer lets the case go and frees
the cases merged into it."""

import json

import pytest
from django.apps import apps as global_apps
from django.core.management.sql import emit_post_migrate_signal, emit_pre_migrate_signal
from django.db import connection, models
from django.db.migrations.state import ModelState, ProjectState
from django.utils import timezone

from caselibrary import triggers
from caselibrary.models import (
    CaseImportSource,
    CaseLibrary,
    CaseMerge,
    CaseReuse,
    CaseSearchHit,
    CaseStructuring,
)
from caselibrary.selectors import cases_find
from caselibrary.services.imports import cases_import_file
from caselibrary.services.index import case_index_build
from caselibrary.services.search import case_search
from tests.factories import CaseLibraryFactory, DiagnosisSessionFactory, FaultCategoryFactory

# Each DELETE runs on its own and commits, as a DBA's does: SQLite checks its (deferred)
# foreign keys at the commit, MariaDB at the statement.
pytestmark = pytest.mark.django_db(transaction=True)

KEPT_TITLE = "订单库锁等待超时导致下单失败"
MERGED_TITLE = "订单库锁等待超时，下单失败"


def delete_by_sql(case_id: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM case_library WHERE case_id = %s", [case_id])


def import_row(source: str, **row: str) -> str:
    """Import a file of one row; the id of its case."""
    data = (json.dumps(row, ensure_ascii=False) + "\n").encode()
    outcome = cases_import_file(data=data, source=source)
    assert outcome.created == 1, outcome.problems
    return outcome.cases[0][1]


def found_ids(query: str) -> list[str]:
    return cases_find(query=query, limit=5).case_ids


@pytest.fixture
def kept() -> tuple[str, str]:
    """A case imported from a file with a second one merged into it, found by a session's
    search, with its structuring proposal: every kind of row that refers to a case."""
    FaultCategoryFactory(code="GENERAL")
    kept_id = import_row(
        "runbooks/lock-wait.jsonl",
        title=KEPT_TITLE,
        errorCode="ERROR 1205",
        rootCause="长事务持有 t_order 行锁不释放，其他事务等待超时。",
        solution="查 innodb_trx 找到长事务并 kill，拆分大事务。",
    )
    merged_id = import_row(
        "runbooks/lock-wait-copy.jsonl",
        title=MERGED_TITLE,
        rootCause="长事务持有 t_order 的行锁不释放，其它事务等待超时。",
        solution="查 innodb_trx 找出长事务并 kill，把大事务拆小。",
        mergedInto=kept_id,
    )
    case_index_build()
    DiagnosisSessionFactory(session_id="sess-found-it")
    case_search(query="ERROR 1205 下单失败", session_id="sess-found-it")
    CaseStructuring.objects.create(
        case_id=kept_id, proposed_category="DATABASE", method="keywords", proposed_at=timezone.now()
    )
    assert CaseReuse.objects.filter(case_id=kept_id).exists()
    assert CaseImportSource.objects.filter(case_id=kept_id).exists()
    assert found_ids(MERGED_TITLE) == [kept_id]
    return kept_id, merged_id


@pytest.mark.parametrize("how", ["sql", "queryset"])
def test_a_case_deleted_by_any_path_takes_the_rows_that_cascade_with_it(
    kept: tuple[str, str], how: str
) -> None:
    kept_id, merged_id = kept

    if how == "sql":
        delete_by_sql(kept_id)
    else:
        CaseLibrary.objects.filter(case_id=kept_id).delete()

    assert not CaseLibrary.objects.filter(case_id=kept_id).exists()
    assert not CaseReuse.objects.filter(case_id=kept_id).exists()
    assert not CaseImportSource.objects.filter(case_id=kept_id).exists()
    assert not CaseStructuring.objects.filter(case_id=kept_id).exists()
    # Rows of the case's own that are no foreign key stay: a search hit outlives its case,
    # the merged case keeps its import source.
    assert CaseSearchHit.objects.filter(case_id=kept_id).exists()
    assert CaseImportSource.objects.filter(case_id=merged_id).exists()


def test_a_case_deleted_by_sql_leaves_the_index_and_frees_the_cases_merged_into_it(
    kept: tuple[str, str],
) -> None:
    kept_id, merged_id = kept

    delete_by_sql(kept_id)
    case_index_build()  # what the worker's indexer does within seconds

    assert kept_id not in found_ids("ERROR 1205 下单失败") + found_ids(KEPT_TITLE)
    assert found_ids(MERGED_TITLE) == [merged_id]
    assert not CaseMerge.objects.exists()


def test_a_reference_the_orm_sets_null_is_set_null_by_sql_too() -> None:
    # A model that refers to cases with SET_NULL, as the migrations' state would have it
    # once one is added: the trigger is made from the models, not from a list of tables.
    state = ProjectState.from_apps(global_apps)
    state.add_model(
        ModelState(
            "caselibrary",
            "CaseNote",
            [
                ("id", models.BigAutoField(primary_key=True)),
                (
                    "case",
                    models.ForeignKey("caselibrary.CaseLibrary", models.SET_NULL, null=True),
                ),
            ],
            options={"db_table": "test_case_note"},
        )
    )
    note = state.apps.get_model("caselibrary", "CaseNote")
    with connection.schema_editor() as editor:
        editor.create_model(note)
    try:
        triggers.on_delete_trigger_drop(connection)
        triggers.ensure_on_delete_trigger(connection, state.apps)
        case = CaseLibraryFactory()
        CaseReuse.objects.create(case=case)
        note.objects.create(case_id=case.case_id)

        delete_by_sql(case.case_id)

        assert list(note.objects.values_list("case_id", flat=True)) == [None]
        assert not CaseReuse.objects.exists()
    finally:
        triggers.on_delete_trigger_drop(connection)
        with connection.schema_editor() as editor:
            editor.delete_model(note)
        triggers.ensure_on_delete_trigger(connection, global_apps)


def test_a_migration_that_rebuilds_a_table_referring_to_cases_keeps_the_trigger() -> None:
    # SQLite alters a column by rebuilding the table (a copy, then renamed); it refuses
    # the rename while a trigger names the table, so migrate takes the trigger down first
    # and makes it again after.
    old = CaseReuse._meta.get_field("l0_hits")
    wider = models.BigIntegerField(default=0)
    wider.set_attributes_from_name("l0_hits")
    wider.model = CaseReuse
    emit_pre_migrate_signal(verbosity=0, interactive=False, db=connection.alias)
    with connection.schema_editor() as editor:
        editor.alter_field(CaseReuse, old, wider)
        editor.alter_field(CaseReuse, wider, old)
    emit_post_migrate_signal(verbosity=0, interactive=False, db=connection.alias)
    case = CaseLibraryFactory()
    CaseReuse.objects.create(case=case)

    delete_by_sql(case.case_id)

    assert not CaseReuse.objects.exists()


def test_a_case_referred_to_by_nothing_is_deleted_by_sql_as_before() -> None:
    case = CaseLibraryFactory()

    delete_by_sql(case.case_id)

    assert not CaseLibrary.objects.exists()
