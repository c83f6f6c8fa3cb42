"""The fault-category keywords are read from the database by every structuring pass: a
keyword saved by any process (another web worker, a shell, a migration) applies to the
next new case, with nothing kept in this process to go stale."""

import pytest

from caselibrary.models import CaseLibrary, FaultCategory
from caselibrary.selectors import fault_category_taxonomy
from caselibrary.services.cases import case_create_from_session
from caselibrary.services.proposals import cases_structure_new
from tests.factories import DiagnosisSessionFactory

pytestmark = pytest.mark.django_db


def _structured_category(session_id: str, query: str) -> str:
    session = DiagnosisSessionFactory(
        succeeded=True, session_id=session_id, query=query, answer="已处理"
    )
    case = case_create_from_session(session=session)
    cases_structure_new()
    return CaseLibrary.objects.get(case_id=case.case_id).fault_category


def test_a_keyword_written_to_the_table_directly_applies_to_the_next_case() -> None:
    assert _structured_category("t-1", "证书过期") == "NETWORK"

    # What another process's save looks like from here: a changed row, no call.
    FaultCategory.objects.filter(code="NETWORK").update(keywords="dns")
    FaultCategory.objects.create(code="SECURITY", name="安全", keywords="证书")

    assert _structured_category("t-2", "证书过期") == "SECURITY"


def test_a_structuring_pass_reads_the_taxonomy_in_one_query(
    django_assert_max_num_queries,
) -> None:
    with django_assert_max_num_queries(1):
        taxonomy = fault_category_taxonomy()
    assert "NETWORK" in {code for code, _ in taxonomy.categories}
    assert "GENERAL" not in {code for code, _ in taxonomy.categories}
