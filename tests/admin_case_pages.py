"""The case-library admin's list address and a small library to curate."""

import pytest

from tests.factories import CaseLibraryFactory, DiagnosisSessionFactory

LIST = "/admin/caselibrary/caselibrary/"


@pytest.fixture
def library():  # type: ignore[no-untyped-def]
    auto = CaseLibraryFactory(
        title="Auto general",
        source_type="AUTO",
        created_by="system",
        updated_by="system",
        diagnosis=DiagnosisSessionFactory(session_id="s-auto", useful=True),
    )
    regretted = CaseLibraryFactory(
        title="Auto regretted",
        source_type="AUTO",
        fault_category="NETWORK",
        diagnosis=DiagnosisSessionFactory(session_id="s-regret", not_useful=True),
    )
    manual = CaseLibraryFactory(
        title="Manual database", fault_category="DATABASE", error_code="ORA-00060"
    )
    return {"auto": auto, "regretted": regretted, "manual": manual}
