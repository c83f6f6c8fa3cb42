"""The disagreement queues: bad cases the tools backed well, useful answers they did not."""

import json
import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from diagnosis.models import DiagnosisSession
from tests.factories import DiagnosisSessionFactory

pytestmark = pytest.mark.django_db

BAD_CASES = reverse("admin:feedback_badcase_changelist")
UNBACKED = reverse("admin:feedback_usefulwithoutevidence_changelist")


@pytest.fixture
def sessions(db):  # type: ignore[no-untyped-def]
    return {
        "confident-wrong": DiagnosisSessionFactory(not_useful=True, evidence_score=65),
        "confident-wrong-85": DiagnosisSessionFactory(not_useful=True, evidence_score=85),
        "weak-wrong": DiagnosisSessionFactory(not_useful=True, evidence_score=20),
        "useful-unbacked": DiagnosisSessionFactory(useful=True, evidence_score=20),
        "useful-zero": DiagnosisSessionFactory(useful=True, evidence_score=0),
        "useful-backed": DiagnosisSessionFactory(useful=True, evidence_score=40),
        "useful-pending": DiagnosisSessionFactory(useful=True),
        "no-feedback-low": DiagnosisSessionFactory(succeeded=True, evidence_score=10),
    }


def listed(page: str, sessions: dict) -> set[str]:
    return {name for name, s in sessions.items() if f">{s.session_id}<" in page}


def test_the_bad_case_list_points_to_the_confident_but_wrong_queue_first(
    admin_client, sessions
) -> None:
    page = admin_client.get(BAD_CASES).content.decode()

    assert 'id="confident-but-wrong-queue"' in page
    assert "disagreement=confident" in page and "review_state=open" in page
    assert page.count('class="confident-but-wrong"') == 2


def test_the_confident_but_wrong_queue_lists_high_scored_bad_cases_only(
    admin_client, sessions
) -> None:
    page = admin_client.get(BAD_CASES, {"disagreement": "confident", "review_state": "open"})

    assert listed(page.content.decode(), sessions) == {"confident-wrong", "confident-wrong-85"}


def test_useful_without_evidence_lists_useful_answers_scored_below_40(
    admin_client, sessions
) -> None:
    page = admin_client.get(UNBACKED).content.decode()

    assert listed(page, sessions) == {"useful-unbacked", "useful-zero"}


@pytest.mark.parametrize("more", [0, 15])
def test_the_queues_take_a_fixed_number_of_queries(
    admin_client, sessions, django_assert_max_num_queries, more
) -> None:
    DiagnosisSessionFactory.create_batch(more, useful=True, evidence_score=5)
    DiagnosisSessionFactory.create_batch(more, not_useful=True, evidence_score=70)

    with django_assert_max_num_queries(6):
        assert admin_client.get(UNBACKED).status_code == 200
    with django_assert_max_num_queries(6):
        assert admin_client.get(BAD_CASES, {"disagreement": "confident"}).status_code == 200


def test_staff_without_permission_cannot_open_the_queue(staff_client, sessions) -> None:
    assert staff_client.get(UNBACKED).status_code == 403


def test_each_useful_without_evidence_row_links_its_session_and_its_case(admin_client) -> None:
    from tests.factories import CaseLibraryFactory

    with_case = DiagnosisSessionFactory(
        session_id="unbacked-with-case", useful=True, evidence_score=10
    )
    case = CaseLibraryFactory(diagnosis=with_case, source_type="AUTO")
    DiagnosisSessionFactory(session_id="unbacked-alone", useful=True, evidence_score=0)

    page = admin_client.get(UNBACKED).content.decode()

    session_url = reverse("admin:diagnosis_diagnosissession_change", args=[with_case.pk])
    case_url = reverse("admin:caselibrary_caselibrary_change", args=[case.pk])
    assert f'<a href="{session_url}">unbacked-with-case</a>' in page
    assert f'<a href="{case_url}">' in page
    assert re.search(
        r'<a href="/admin/diagnosis/diagnosissession/\d+/change/">unbacked-alone</a>', page
    )


def test_useful_without_evidence_lists_the_latest_feedback_first(admin_client) -> None:
    now = timezone.now()
    # Created oldest first, judged in another order: the queue follows the judgements.
    for name, hours_ago in (("judged-last", 1), ("judged-first", 30), ("judged-between", 5)):
        session = DiagnosisSessionFactory(session_id=name, useful=True, evidence_score=10)
        DiagnosisSession.objects.filter(pk=session.pk).update(
            feedback_at=now - timedelta(hours=hours_ago)
        )

    page = admin_client.get(UNBACKED).content.decode()

    shown = re.findall(r">(judged-[a-z]+)</a>", page)
    assert shown == ["judged-last", "judged-between", "judged-first"]


def test_useful_without_evidence_offers_no_empty_date_choice(admin_client) -> None:
    DiagnosisSessionFactory(useful=True, evidence_score=20)

    response = admin_client.get("/admin/feedback/usefulwithoutevidence/")

    choices = [str(title) for title, _params in response.context["cl"].filter_specs[0].links]
    assert len(choices) == 5  # any date, today, past 7 days, this month, this year
    assert "feedback_at__isnull" not in response.content.decode()


def test_confident_but_wrong_holds_open_bad_cases_only_in_the_list_and_its_export(
    admin_client,
) -> None:
    from tests.factories import BadCaseReviewFactory

    DiagnosisSessionFactory(session_id="confident-new", not_useful=True, evidence_score=70)
    for state in ("triaged", "resolved"):
        BadCaseReviewFactory(
            session__session_id=f"confident-{state}", session__evidence_score=70, state=state
        )
    export = reverse("admin-export", args=["bad_cases", "jsonl"])

    page = admin_client.get(BAD_CASES, {"disagreement": "confident"}).content.decode()
    lines = b"".join(admin_client.get(export, {"disagreement": "confident"}).streaming_content)

    shown = set(re.findall(r">(confident-[a-z]+)</a>", page))
    assert shown == {"confident-new", "confident-triaged"}
    exported = {line["session_id"] for line in map(json.loads, lines.decode().splitlines())}
    assert exported == {"confident-new", "confident-triaged"}
