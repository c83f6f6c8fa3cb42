"""The overview page: rates, the score split by feedback, sessions per day, work queues."""

import html
import itertools
import re
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.utils import timezone

from diagnosis.models import DiagnosisSession
from feedback.selectors import feedback_overview
from tests.admin_pages import member_of, shown_ids
from tests.factories import BadCaseReviewFactory, CaseLibraryFactory, DiagnosisSessionFactory
from tests.page_text import text

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]

URL = "/admin/overview/"


@pytest.fixture(autouse=True)
def _fresh_cache():  # type: ignore[no-untyped-def]
    cache.clear()
    yield
    cache.clear()


def backdate(session: DiagnosisSession, days: int) -> None:
    DiagnosisSession.objects.filter(pk=session.pk).update(
        created_at=timezone.now() - timedelta(days=days)
    )


@pytest.fixture
def month():  # type: ignore[no-untyped-def]
    """Seven sessions this month, one from two months ago."""
    DiagnosisSessionFactory.create_batch(2, useful=True, evidence_score=65)
    backdate(DiagnosisSessionFactory(useful=True, evidence_score=50), days=3)
    DiagnosisSessionFactory(not_useful=True, evidence_score=0)
    DiagnosisSessionFactory(succeeded=True, evidence_score=20)
    DiagnosisSessionFactory(failed=True)
    DiagnosisSessionFactory()  # still running
    backdate(DiagnosisSessionFactory(not_useful=True, evidence_score=65), days=60)


def test_the_overview_shows_feedback_and_bad_case_rates(admin_client, month) -> None:
    response = admin_client.get(URL)

    assert response.status_code == 200
    overview = response.context["overview"]
    assert (overview.sessions, overview.finished, overview.useful, overview.not_useful) == (
        7,
        6,
        3,
        1,
    )
    page = text(response)
    assert '<span class="tile-value">66.7%</span>' in page  # 4 of 6 finished gave feedback
    assert '<span class="tile-value">25.0%</span>' in page  # 1 of those 4 was not useful
    assert "4 of 6 finished sessions" in page


def test_the_score_distribution_is_split_by_feedback(admin_client, month) -> None:
    response = admin_client.get(URL)

    bands = {
        b.band: (b.useful, b.not_useful, b.no_feedback) for b in response.context["overview"].bands
    }
    assert bands == {
        "0": (0, 1, 0),
        "1-39": (0, 0, 1),
        "40-64": (1, 0, 0),
        "65+": (2, 0, 0),
        "pending": (0, 0, 1),  # the running one
        "unscored": (0, 0, 1),  # the failed one
    }
    page = response.content.decode()
    svg = re.search(r'<svg id="score-chart".*?</svg>', page, re.S).group(0)
    assert svg.count("<rect") == 18  # six bands, three kinds of feedback
    assert "<title>pending · no feedback: 33% (1)</title>" in svg
    assert "<title>not scored · no feedback: 33% (1)</title>" in svg
    assert "<title>≥ 65 · useful: 67% (2)</title>" in svg
    assert "<title>0 · not useful: 100% (1)</title>" in svg


def test_a_score_band_links_to_the_sessions_its_row_counts(admin_client, month) -> None:
    response = admin_client.get(URL)
    links = {label: url for label, _split, url in response.context["band_rows"]}

    listed = admin_client.get(links["≥ 65"])

    assert listed.status_code == 200
    assert len(shown_ids(listed)) == 2  # not the 65 from two months ago


# A row of the score table as the operator sees it: the band's link and label, then the
# sessions with each kind of feedback.
_BAND_ROW = re.compile(
    r'<tr><td><a href="([^"]+)">([^<]+)</a></td><td>(\d+)</td><td>(\d+)</td><td>(\d+)</td></tr>'
)


def test_every_band_row_counts_the_sessions_its_link_lists(admin_client) -> None:
    DiagnosisSessionFactory.create_batch(3, failed=True)  # failed, nobody scored them
    DiagnosisSessionFactory(failed=True, evidence_score=0)  # failed, scored on request
    DiagnosisSessionFactory.create_batch(2)  # still running
    DiagnosisSessionFactory(succeeded=True)  # finished, its score on the way
    DiagnosisSessionFactory(not_useful=True)  # given feedback before its score
    DiagnosisSessionFactory(useful=True, evidence_score=50)
    DiagnosisSessionFactory(not_useful=True, evidence_score=70)
    backdate(DiagnosisSessionFactory(failed=True), days=40)  # outside the window
    backdate(DiagnosisSessionFactory(), days=40)

    page = text(admin_client.get(URL))

    rows = {
        label: (html.unescape(url), sum(map(int, counts)))
        for url, label, *counts in _BAND_ROW.findall(page)
    }
    listed = {label: len(shown_ids(admin_client.get(url))) for label, (url, _n) in rows.items()}
    assert {label: n for label, (_url, n) in rows.items()} == listed
    assert listed == {"0": 1, "1–39": 0, "40–64": 1, "≥ 65": 1, "pending": 4, "not scored": 3}
    sessions = re.search(
        r'<span class="tile-value">(\d+)</span><span class="tile-label">sessions<', page
    )
    assert sum(listed.values()) == int(sessions.group(1)) == 10


def test_sessions_per_day_are_drawn_stacked_by_feedback(admin_client, month) -> None:
    response = admin_client.get(URL)

    days = response.context["overview"].per_day
    assert len(days) == 30
    assert days[-1].day == timezone.localdate()
    assert (days[-1].useful, days[-1].not_useful, days[-1].no_feedback) == (2, 1, 3)
    assert (days[-4].useful, days[-4].total) == (1, 1)
    svg = re.search(r'<svg id="day-chart".*?</svg>', response.content.decode(), re.S).group(0)
    assert svg.count("<rect") == 4  # today: three kinds; three days ago: one


@pytest.mark.parametrize("days", [7, 30, 90])
def test_every_day_of_the_window_gets_its_own_sessions(admin_client, days) -> None:
    for n in range(days):
        for _ in range(n % 3 + 1):
            backdate(DiagnosisSessionFactory(useful=True), days=n)

    per_day = admin_client.get(URL, {"days": days}).context["overview"].per_day

    assert [d.day for d in per_day] == [
        timezone.localdate() - timedelta(days=n) for n in range(days - 1, -1, -1)
    ]
    assert [d.useful for d in per_day] == [n % 3 + 1 for n in range(days - 1, -1, -1)]


@pytest.mark.parametrize("days", [7, 30, 90])
def test_the_day_labels_are_evenly_spaced_and_end_on_today(admin_client, days) -> None:
    page = admin_client.get(URL, {"days": days}).content.decode()
    svg = re.search(r'<svg id="day-chart".*?</svg>', page, re.S).group(0)
    xs = [float(x) for x in re.findall(r'class="x-label" x="([\d.]+)"', svg)]

    assert re.findall(r">(\d\d-\d\d)</text>", svg)[-1] == timezone.localdate().strftime("%m-%d")
    gaps = [b - a for a, b in itertools.pairwise(xs)]
    assert max(gaps) - min(gaps) < 1  # none closer to its neighbour than the others


def test_the_window_can_be_widened(admin_client, month) -> None:
    overview = admin_client.get(URL, {"days": 90}).context["overview"]

    assert (overview.days, overview.sessions, overview.not_useful) == (90, 8, 2)
    assert len(overview.per_day) == 90


def test_an_unknown_window_falls_back_to_thirty_days(admin_client, month) -> None:
    for days in ("365", "abc"):
        assert admin_client.get(URL, {"days": days}).context["overview"].days == 30


def test_work_queues_count_everything_still_to_do(admin_client, month) -> None:
    CaseLibraryFactory.create_batch(2)  # GENERAL: awaiting curation
    CaseLibraryFactory(fault_category="DATABASE")
    BadCaseReviewFactory(state="resolved")
    BadCaseReviewFactory(state="triaged")

    response = admin_client.get(URL)

    overview = response.context["overview"]
    # Open: the two from the month fixture (one 60 days old) and the triaged one.
    assert overview.open_bad_cases == 3
    assert overview.cases_awaiting_curation == 2
    page = response.content.decode()
    assert 'href="/admin/feedback/badcase/?review_state=open"' in page
    assert 'href="/admin/caselibrary/caselibrary/?still_general=yes"' in page


def test_an_empty_database_shows_dashes_not_errors(admin_client) -> None:
    response = admin_client.get(URL)

    assert response.status_code == 200
    assert '<span class="tile-value">–</span>' in text(response)


def test_the_numbers_are_cached_briefly(admin_client, month, django_assert_num_queries) -> None:
    admin_client.get(URL)
    DiagnosisSessionFactory(useful=True)

    # Django's session and user, the case-search state row (one primary-key read) and the
    # oldest change waiting for the indexer: the numbers come from the cache.
    with django_assert_num_queries(4):
        response = admin_client.get(URL)

    assert response.context["overview"].sessions == 7


@pytest.mark.parametrize("more", [0, 20])
def test_the_numbers_take_a_fixed_number_of_queries(
    admin_client, month, django_assert_num_queries, more
) -> None:
    DiagnosisSessionFactory.create_batch(more, not_useful=True, evidence_score=50)

    # Session and user; counts per day; running; a score sample per kind of feedback;
    # cases awaiting curation; bad cases and resolved reviews; the structuring's accuracy;
    # the case-search state row and the oldest change waiting for the indexer.
    with django_assert_num_queries(13):
        admin_client.get(URL, {"days": 90})


def test_the_score_distribution_of_a_busy_window_is_drawn_from_a_sample(
    admin_client, month, monkeypatch
) -> None:
    monkeypatch.setattr("feedback.selectors.SCORE_SAMPLE", 2)

    response = admin_client.get(URL)

    overview = response.context["overview"]
    assert overview.sampled
    per_kind = [
        sum(getattr(b, kind) for b in overview.bands)
        for kind in ("useful", "not_useful", "no_feedback")
    ]
    assert per_kind == [2, 1, 2]
    # The newest two useful sessions are the two scored 65 today, not the one of 3 days ago.
    assert {b.band: b.useful for b in overview.bands}["65+"] == 2
    assert "Drawn from the latest 2 sessions of each kind." in text(response)
    assert overview.useful == 3  # the rates still count every session


def test_the_overview_rejects_windows_it_does_not_offer() -> None:
    with pytest.raises(ValueError):
        feedback_overview(days=365)


def test_the_admin_index_links_to_the_overview(admin_client) -> None:
    page = admin_client.get("/admin/").content.decode()

    assert f'href="{URL}"' in page


def test_staff_who_may_read_the_lists_reach_the_overview() -> None:
    # Staff outside every group get 403 (tests/test_admin_dashboard_permissions.py).
    assert member_of("viewer").get(URL).status_code == 200


@pytest.mark.parametrize("visitor", ["client", "user_client"])
def test_anonymous_and_non_staff_are_sent_to_the_login(request, visitor) -> None:
    response = request.getfixturevalue(visitor).get(URL)

    assert response.status_code == 302
    assert response.url.startswith("/admin/login/")


def test_the_overview_speaks_chinese_by_default(admin_client, settings) -> None:
    settings.LANGUAGE_CODE = "zh-hans"

    page = text(admin_client.get(URL))

    assert "概览" in page and "反馈率" in page and "证据分能区分有用和无用的答案吗？" in page
    assert ">待评分</a>" in page and ">未评分</a>" in page  # the two rows without a score
    assert "未评分：执行失败，只有有人重新评分时才会评分。" in page
