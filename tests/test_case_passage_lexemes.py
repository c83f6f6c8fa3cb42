"""`case_passage.lexemes` are SQLite's alone: FTS5 ranks them there, while MariaDB/MySQL
rank the terms in memory and store none (a quarter of each row otherwise)."""

import pytest

from caselibrary.models import CasePassage
from caselibrary.search_backends.database import lexemes
from caselibrary.selectors import cases_find
from caselibrary.services.index import case_index_build
from tests.factories import CaseLibraryFactory
from tests.migrate_to import migrate_to

BEFORE = [("caselibrary", "0012_drop_case_passage_fulltext")]
AFTER = [("caselibrary", "0013_case_passage_lexemes_only_on_sqlite")]


@pytest.fixture
def indexed(db):  # type: ignore[no-untyped-def]
    case = CaseLibraryFactory(
        title="Redis 连接数打满：maxclients reached",
        root_cause="连接池没有归还连接，客户端数到达 maxclients。",
        solution="1. 查 client list\n2. 修复连接泄漏",
    )
    case_index_build()
    return case


@pytest.mark.sqlite
def test_sqlite_stores_each_passages_lexemes_for_fts5(indexed) -> None:
    rows = list(CasePassage.objects.values_list("terms", "lexemes"))

    assert rows and all(stored == lexemes(terms) for terms, stored in rows)


@pytest.mark.mysql
def test_mariadb_stores_the_terms_and_no_lexemes_and_still_finds_the_case(indexed) -> None:
    rows = list(CasePassage.objects.values_list("terms", "lexemes"))

    assert rows and all(terms and stored == "" for terms, stored in rows)
    assert cases_find(query="redis 客户端连接数满了", limit=3).case_ids[0] == indexed.case_id


@pytest.mark.mysql
@pytest.mark.django_db(transaction=True)
def test_the_upgrade_empties_stored_lexemes_and_going_back_fills_them_again() -> None:
    CaseLibraryFactory(title="Redis 连接数打满：maxclients reached")
    case_index_build()
    # As an earlier release left them.
    for row in CasePassage.objects.all():
        CasePassage.objects.filter(id=row.id).update(lexemes=lexemes(row.terms))
    migrate_to(*BEFORE)
    try:
        migrate_to(*AFTER)
        emptied = set(CasePassage.objects.values_list("lexemes", flat=True))
        migrate_to(*BEFORE)
        filled = list(CasePassage.objects.values_list("terms", "lexemes"))
    finally:
        migrate_to()

    assert emptied == {""}
    assert filled and all(stored == lexemes(terms) for terms, stored in filled)
