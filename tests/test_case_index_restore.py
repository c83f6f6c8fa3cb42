"""A backup restored into the database while the serving processes keep running: the
index log starts again below the entry each process applied last, and the cases indexed
after the restore must still be found."""

import sqlite3

import pytest
from django.db import connection

from caselibrary.embedding import embed_query
from caselibrary.models import CaseIndexLog, CaseLibrary
from caselibrary.search_backends.base import get_backend
from caselibrary.services.index import case_index_build
from tests.case_index_reads import found_ids
from tests.factories import CaseLibraryFactory, FaultCategoryFactory

pytestmark = [pytest.mark.sqlite, pytest.mark.django_db(transaction=True)]


def backup() -> sqlite3.Connection:
    """The database as `sqlite3 db.sqlite3 ".backup FILE"` copies it (the sqlite3
    command's own backup API): every table, the triggers and the AUTOINCREMENT counters."""
    connection.ensure_connection()
    dump = sqlite3.connect(":memory:")
    connection.connection.backup(dump)
    return dump


def restore(dump: sqlite3.Connection) -> None:
    """The backup copied back over the live database, the service still running."""
    dump.backup(connection.connection)


def nearest_in_meaning(query: str) -> list[str]:
    """The cases whose passages the process's held vectors rank nearest to `query` (on
    SQLite the full-text half of a search reads the database itself; this half, and on
    MariaDB both, read what the process holds)."""
    found = get_backend().dense(embed_query(query), 5)
    return list(dict.fromkeys(pid.rpartition(":")[0] for pid, _ in found))


def indexed_case(title: str) -> str:
    case = CaseLibraryFactory(title=title, error_code=None)
    case_index_build()
    return case.case_id


def reindexed(case_id: str, by: str) -> None:
    """The case edited where the search does not look: indexed again, its passages kept."""
    CaseLibrary.objects.filter(case_id=case_id).update(updated_by=by)
    case_index_build()


def test_a_case_indexed_after_a_restore_is_found_by_a_process_that_ran_before_it(
    settings,
) -> None:
    settings.CASE_SEARCH_REFRESH_SECONDS = 0
    FaultCategoryFactory(code="DEPENDENCY")
    kafka = indexed_case("Kafka consumer lag keeps growing")
    assert found_ids("kafka consumer lag growing") == [kafka]  # the process loaded it
    dump = backup()
    for n in range(3):
        reindexed(kafka, by=f"ops.curator{n}")
    found_ids("kafka consumer lag growing")  # the process applied the log past the dump
    applied = CaseIndexLog.objects.order_by("-seq").values_list("seq", flat=True).first()

    restore(dump)
    disk = indexed_case("磁盘写满：/var/log 日志未轮转")

    assert CaseIndexLog.objects.get(case_id=disk).seq < applied  # the log started again
    assert found_ids("日志把磁盘写满了") == [disk]
    assert nearest_in_meaning("日志把磁盘写满了")[0] == disk


def test_a_restore_whose_log_passed_the_process_again_is_still_picked_up(settings) -> None:
    # More cases indexed after the restore than the process had applied past the dump,
    # before it refreshes: the log's newest entry is past the process's again.
    settings.CASE_SEARCH_REFRESH_SECONDS = 0
    FaultCategoryFactory(code="DEPENDENCY")
    kafka = indexed_case("Kafka consumer lag keeps growing")
    assert found_ids("kafka consumer lag growing") == [kafka]
    dump = backup()
    reindexed(kafka, by="ops.curator")
    found_ids("kafka consumer lag growing")

    restore(dump)
    settings.CASE_SEARCH_REFRESH_SECONDS = 3600  # the process does not look meanwhile
    disk = indexed_case("磁盘写满：/var/log 日志未轮转")
    for n in range(3):
        indexed_case(f"Redis maxmemory eviction storm {n}")
    settings.CASE_SEARCH_REFRESH_SECONDS = 0

    assert found_ids("日志把磁盘写满了") == [disk]
    assert nearest_in_meaning("日志把磁盘写满了")[0] == disk


def test_a_case_the_restore_took_away_is_no_longer_held(settings) -> None:
    settings.CASE_SEARCH_REFRESH_SECONDS = 0
    FaultCategoryFactory(code="DEPENDENCY")
    indexed_case("Kafka consumer lag keeps growing")
    dump = backup()
    nginx = indexed_case("Nginx upstream timeout on gateway")
    assert nginx in get_backend().vectors()

    restore(dump)
    indexed_case("磁盘写满：/var/log 日志未轮转")

    assert nginx not in get_backend().vectors()


def test_a_log_pruned_past_what_the_process_applied_reloads_nothing_and_misses_nothing(
    settings,
) -> None:
    settings.CASE_SEARCH_REFRESH_SECONDS = 0
    FaultCategoryFactory(code="DEPENDENCY")
    indexed_case("Kafka consumer lag keeps growing")
    indexed_case("Nginx upstream timeout on gateway")
    held = get_backend().vectors()
    CaseIndexLog.objects.all().delete()  # an hour without indexing: the indexer prunes

    assert get_backend().vectors() is held
    disk = indexed_case("磁盘写满：/var/log 日志未轮转")

    assert get_backend().vectors() is held  # the new entry applied, nothing reloaded
    assert nearest_in_meaning("日志把磁盘写满了")[0] == disk


def test_a_refresh_with_nothing_new_reads_the_log_once(
    settings, django_assert_max_num_queries
) -> None:
    settings.CASE_SEARCH_REFRESH_SECONDS = 0
    FaultCategoryFactory(code="DEPENDENCY")
    indexed_case("Kafka consumer lag keeps growing")
    get_backend().vectors()

    with django_assert_max_num_queries(1):
        get_backend().vectors()
