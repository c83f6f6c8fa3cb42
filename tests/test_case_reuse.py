"""Case reuse outcomes: hits, the feedback of the sessions that found a case, staleness."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from caselibrary.models import CaseReuse
from caselibrary.services.index import case_index_build
from caselibrary.services.outcomes import case_outcomes_sweep
from diagnosis.models import DiagnosisSession
from feedback.services import feedback_submit
from tests.factories import CaseLibraryFactory, DiagnosisSessionFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def case(db):  # type: ignore[no-untyped-def]
    case = CaseLibraryFactory(
        title="Pod CrashLoopBackOff: missing secret after a namespace move",
        error_code="CrashLoopBackOff",
    )
    case_index_build()
    return case


def session_that_found(api, session_id: str, query: str = "CrashLoopBackOff in prod") -> None:  # type: ignore[no-untyped-def]
    DiagnosisSessionFactory(session_id=session_id)
    api.post("/api/cases/search", {"query": query, "sessionId": session_id}, format="json")
    api.post(
        f"/api/sessions/{session_id}/complete",
        {"status": "SUCCESS", "answer": "根因：secret 缺失。"},
        format="json",
    )


def test_feedback_on_a_session_that_found_a_case_is_counted_on_the_case(
    api, case, django_capture_on_commit_callbacks
) -> None:
    session_that_found(api, "a")
    session_that_found(api, "b")

    with django_capture_on_commit_callbacks(execute=True):
        feedback_submit(session_id="a", feedback="useful")
        feedback_submit(session_id="b", feedback="not_useful")
    case_outcomes_sweep()  # the scheduled task, once a minute

    reuse = CaseReuse.objects.get(case=case)
    assert (reuse.l0_hits, reuse.sessions_useful, reuse.sessions_not_useful) == (2, 1, 1)
    assert reuse.useful_rate == 0.5
    assert reuse.stale is False


def test_changed_feedback_is_recounted_not_added(
    api, case, django_capture_on_commit_callbacks
) -> None:
    session_that_found(api, "a")

    with django_capture_on_commit_callbacks(execute=True):
        feedback_submit(session_id="a", feedback="useful")
        feedback_submit(session_id="a", feedback="not_useful")
        feedback_submit(session_id="a", feedback="not_useful")
    case_outcomes_sweep()

    reuse = CaseReuse.objects.get(case=case)
    assert (reuse.sessions_useful, reuse.sessions_not_useful) == (0, 1)


def test_a_case_found_often_and_rated_not_useful_is_stale(
    api, case, settings, django_capture_on_commit_callbacks
) -> None:
    settings.CASE_STALE_MIN_RATED = 3
    for n, value in enumerate(["not_useful", "useful", "not_useful"]):
        session_that_found(api, f"s{n}")
        with django_capture_on_commit_callbacks(execute=True):
            feedback_submit(session_id=f"s{n}", feedback=value)
        case_outcomes_sweep()

    assert CaseReuse.objects.get(case=case).stale is True


def test_a_session_that_searched_twice_is_counted_once(
    api, case, django_capture_on_commit_callbacks
) -> None:
    session_that_found(api, "twice")
    DiagnosisSessionFactory(session_id="other")
    api.post(
        "/api/cases/search", {"query": "pod crashloopbackoff", "sessionId": "other"}, format="json"
    )
    api.post(
        "/api/cases/search",
        {"query": "missing secret namespace", "sessionId": "other"},
        format="json",
    )
    api.post("/api/sessions/other/complete", {"status": "SUCCESS", "answer": "a"}, format="json")

    with django_capture_on_commit_callbacks(execute=True):
        feedback_submit(session_id="other", feedback="not_useful")
    case_outcomes_sweep()

    assert CaseReuse.objects.get(case=case).sessions_not_useful == 1


def test_feedback_on_a_session_that_found_nothing_touches_no_case(
    case, django_capture_on_commit_callbacks
) -> None:
    DiagnosisSessionFactory(session_id="plain", succeeded=True)

    with django_capture_on_commit_callbacks(execute=True):
        feedback_submit(session_id="plain", feedback="not_useful")
    case_outcomes_sweep()

    assert not CaseReuse.objects.exists()


def test_the_case_list_shows_reuse_and_filters_stale_cases(
    admin_client, api, case, django_capture_on_commit_callbacks
) -> None:
    fresh = CaseLibraryFactory(title="never found")
    CaseReuse.objects.create(
        case=case, l0_hits=4, l1_hits=2, sessions_useful=1, sessions_not_useful=5, stale=True
    )
    url = reverse("admin:caselibrary_caselibrary_changelist")

    page = admin_client.get(url).content.decode()
    stale = admin_client.get(url, {"reuse": "stale"}).content.decode()
    never = admin_client.get(url, {"reuse": "never"}).content.decode()

    assert 'title="L0 4 · L1 2">6<' in page
    assert "17% (1/6)" in page
    assert case.title in stale and fresh.title not in stale
    assert fresh.title in never and case.title not in never


def test_the_case_detail_shows_its_reuse(admin_client, case) -> None:
    CaseReuse.objects.create(case=case, l0_hits=1, sessions_useful=1)

    page = admin_client.get(
        reverse("admin:caselibrary_caselibrary_change", args=[case.pk])
    ).content.decode()

    assert "100% (1/1)" in page


def test_the_sweep_only_recounts_cases_of_sessions_rated_since_it_last_ran(
    api, case, django_capture_on_commit_callbacks
) -> None:
    session_that_found(api, "early")
    feedback_submit(session_id="early", feedback="useful")
    a_minute_ago = timezone.now() - timedelta(minutes=1)
    DiagnosisSession.objects.filter(session_id="early").update(feedback_at=a_minute_ago)
    assert case_outcomes_sweep() == 1
    assert case_outcomes_sweep() == 0  # nothing rated since

    session_that_found(api, "late")
    feedback_submit(session_id="late", feedback="not_useful")

    assert case_outcomes_sweep() == 1
    reuse = CaseReuse.objects.get(case=case)
    assert (reuse.sessions_useful, reuse.sessions_not_useful) == (1, 1)


def test_feedback_itself_costs_no_case_bookkeeping(api, case, django_assert_num_queries) -> None:
    session_that_found(api, "fast")

    # The conditional UPDATE of not_useful, and nothing after it.
    with django_assert_num_queries(1):
        feedback_submit(session_id="fast", feedback="not_useful")


def test_a_rating_given_days_after_the_search_is_counted_on_the_case(api, case) -> None:
    from caselibrary.models import CaseSearch

    case_outcomes_sweep()  # the sweep has run before, as it does every minute
    session_that_found(api, "slow-reader")
    CaseSearch.objects.filter(session_id="slow-reader").update(
        created_at=timezone.now() - timedelta(days=8)
    )

    feedback_submit(session_id="slow-reader", feedback="not_useful")
    case_outcomes_sweep()

    assert CaseReuse.objects.get(case=case).sessions_not_useful == 1


def test_found_at_least_once_lists_only_cases_with_hits(admin_client, api, case) -> None:
    from caselibrary.models import CaseReuse as Reuse

    zeroed = CaseLibraryFactory(title="merged away: its counts went to the case kept")
    Reuse.objects.create(case=zeroed)  # a row with no hits, as a merge leaves one
    session_that_found(api, "found-it")
    url = reverse("admin:caselibrary_caselibrary_changelist")

    assert Reuse.objects.get(case=case).l0_hits == 1
    hit = admin_client.get(url, {"reuse": "hit"}).content.decode()
    never = admin_client.get(url, {"reuse": "never"}).content.decode()

    assert case.title in hit and zeroed.title not in hit
    assert zeroed.title in never and case.title not in never
