"""A score and its opinion are stored as text an operator can read and search with SQL:
the factors' Chinese descriptions as themselves, not as \\u escapes (MariaDB keeps JSON as
text, so `SELECT self_evaluation` shows what was written, and `LIKE '%调用失败%'` finds
nothing in escaped text)."""

import io

import pytest
from django.core.management import call_command
from django.db import connection

from diagnosis.models import DiagnosisSession
from evaluation.services import session_evaluate, session_opinion_form
from evaluation.tasks import session_score
from tests.factories import DiagnosisSessionFactory, ToolInvocationFactory

pytestmark = pytest.mark.django_db


def stored_text(session_id: str) -> str:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT self_evaluation FROM diagnosis_session WHERE session_id = %s", [session_id]
        )
        return cursor.fetchone()[0]


def sessions_like(words: str) -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT session_id FROM diagnosis_session WHERE self_evaluation LIKE %s",
            [f"%{words}%"],
        )
        return [row[0] for row in cursor.fetchall()]


def test_a_scores_descriptions_are_found_by_an_sql_like_on_their_words() -> None:
    session = DiagnosisSessionFactory(succeeded=True, session_id="failed-calls")
    ToolInvocationFactory(session=session, status="FAILED", kind="retrieval")

    session_score("failed-calls")

    assert "\\u" not in stored_text("failed-calls")
    assert sessions_like("全部工具调用失败") == ["failed-calls"]


def test_an_opinion_kept_beside_a_new_score_stays_readable(settings) -> None:  # type: ignore[no-untyped-def]
    settings.OPINION_PROVIDER = "heuristic"
    session = DiagnosisSessionFactory(succeeded=True, session_id="with-opinion")
    ToolInvocationFactory(session=session, match_level="L0")
    session_evaluate(session_id="with-opinion")
    session_opinion_form(session_id="with-opinion", replace=True)
    ToolInvocationFactory(session=session, match_level="L1")

    session_evaluate(session_id="with-opinion")  # the rule part written again, opinion kept

    text = stored_text("with-opinion")
    assert "\\u" not in text
    assert "L0 精确匹配命中" in text
    assert '"llm_opinion"' in text


def test_a_rescore_that_changes_no_score_writes_no_session() -> None:
    session = DiagnosisSessionFactory(succeeded=True, session_id="scored-once")
    ToolInvocationFactory(session=session, status="FAILED", kind="retrieval")
    ToolInvocationFactory(session=session, match_level="L1")
    call_command("rescore", "--all", stdout=io.StringIO(), stderr=io.StringIO())
    before = DiagnosisSession.objects.values_list("updated_at", "self_evaluation").get()

    call_command("rescore", "--all", stdout=io.StringIO(), stderr=io.StringIO())

    assert DiagnosisSession.objects.values_list("updated_at", "self_evaluation").get() == before
