"""The migrations: every model change has one, and V008 adds `answer` to a
diagnosis_session that already holds data."""

import io

import pytest
from django.core.management import call_command
from django.db import connection

from tests.migrate_to import migrate_to

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE_V008 = [("diagnosis", "0001_initial")]
V008 = [("diagnosis", "0002_v008_session_answer")]


def _session_columns() -> list[str]:
    with connection.cursor() as cursor:
        description = connection.introspection.get_table_description(cursor, "diagnosis_session")
    return [column.name for column in description]


@pytest.fixture
def before_v008():  # type: ignore[no-untyped-def]
    apps = migrate_to(*BEFORE_V008)
    yield apps
    migrate_to()


def test_v008_keeps_every_existing_row_and_adds_answer_as_null(before_v008) -> None:  # type: ignore[no-untyped-def]
    assert "answer" not in _session_columns()
    session_model = before_v008.get_model("diagnosis", "DiagnosisSession")
    invocation_model = before_v008.get_model("diagnosis", "ToolInvocation")
    rows = [
        session_model.objects.create(
            session_id=f"legacy-{i}",
            query=f"为什么 order-service 第 {i} 次 504？",
            status="SUCCESS",
            self_evaluation={"evidence_score": 30, "source": "rule", "factors": []},
            feedback="useful" if i % 2 else None,
        )
        for i in range(5)
    ]
    invocation_model.objects.create(
        session_id="legacy-0", tool_name="QueryInternalDocsTools", status="SUCCESS"
    )
    before = {
        s.session_id: (s.query, s.status, s.self_evaluation, s.feedback, s.created_at)
        for s in session_model.objects.all()
    }

    apps = migrate_to(*V008)

    assert "answer" in _session_columns()
    migrated = apps.get_model("diagnosis", "DiagnosisSession").objects.all()
    after = {
        s.session_id: (s.query, s.status, s.self_evaluation, s.feedback, s.created_at)
        for s in migrated
    }
    assert after == before
    assert len(after) == len(rows)
    assert [s.answer for s in migrated] == [None] * len(rows)
    assert apps.get_model("diagnosis", "ToolInvocation").objects.count() == 1


def test_v008_can_be_rolled_back_which_removes_answer(before_v008) -> None:  # type: ignore[no-untyped-def]
    apps = migrate_to(*V008)
    apps.get_model("diagnosis", "DiagnosisSession").objects.create(
        session_id="kept", query="q", status="SUCCESS", answer="a"
    )

    apps = migrate_to(*BEFORE_V008)

    assert "answer" not in _session_columns()
    assert list(
        apps.get_model("diagnosis", "DiagnosisSession").objects.values_list("session_id", "query")
    ) == [("kept", "q")]


def test_every_model_change_has_its_migration() -> None:
    # A model edited without `makemigrations` (a choice, a verbose name, a field) would
    # reach a database whose schema and state tell a different story.
    out = io.StringIO()
    try:
        call_command("makemigrations", "--check", "--dry-run", stdout=out, stderr=out)
    except SystemExit:
        pytest.fail(f"a model changed without its migration:\n{out.getvalue()}")
