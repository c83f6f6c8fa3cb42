"""The sessions admin's list: columns, filters, search, who may see it and its language."""

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from diagnosis.models import DiagnosisSession
from diagnosis.selectors import EVIDENCE_SCORE, ScoreBand, sessions_in_score_band
from tests.admin_pages import shown_ids
from tests.admin_session_pages import LIST, change_url
from tests.conftest import on_mysql
from tests.factories import (
    DiagnosisSessionFactory,
    ToolInvocationFactory,
)
from tests.page_text import text

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]


@pytest.fixture
def mix():  # type: ignore[no-untyped-def]
    """One session of each kind an operator filters for."""
    now = timezone.now()
    sessions = {
        "running": DiagnosisSessionFactory(session_id="s-running"),
        "failed": DiagnosisSessionFactory(session_id="s-failed", failed=True, evidence_score=0),
        "pending": DiagnosisSessionFactory(session_id="s-pending", succeeded=True),
        "low": DiagnosisSessionFactory(session_id="s-low", useful=True, evidence_score=20),
        "medium": DiagnosisSessionFactory(session_id="s-medium", succeeded=True, evidence_score=50),
        "high": DiagnosisSessionFactory(session_id="s-high", not_useful=True, evidence_score=65),
    }
    old = DiagnosisSessionFactory(session_id="s-old", succeeded=True, evidence_score=30)
    DiagnosisSession.objects.filter(pk=old.pk).update(created_at=now - timedelta(days=40))
    sessions["old"] = old
    return sessions


def test_the_list_shows_id_question_status_feedback_score_and_creation(admin_client) -> None:
    DiagnosisSessionFactory(
        session_id="s-1",
        query="order-service 大量 504，网关日志显示 upstream timeout，怎么排查？" * 3,
        not_useful=True,
        evidence_score=65,
    )

    response = admin_client.get(LIST)

    assert response.status_code == 200
    assert shown_ids(response) == ["s-1"]
    page = text(response)
    # The question is cut to an excerpt; the answer is not loaded at all.
    assert "order-service 大量 504" in page and "…" in page
    assert 'class="score score-65" title="≥ 65">65</span>' in page
    assert "field-feedback" in page and "field-status" in page and "field-created_at_column" in page


def test_newest_sessions_come_first(admin_client, mix) -> None:
    ids = shown_ids(admin_client.get(LIST))

    assert ids[-1] == "s-old"
    assert ids[0] == "s-high"


@pytest.mark.parametrize("rows", [3, 30])
def test_the_list_runs_the_same_few_queries_however_many_rows(
    admin_client, django_assert_num_queries, rows
) -> None:
    for n in range(rows):
        DiagnosisSessionFactory(succeeded=True, evidence_score=n % 100, feedback="useful")

    # Django's session and user, the count, the page of rows; on MySQL/MariaDB the
    # unfiltered count first asks the table statistics for an estimate.
    with django_assert_num_queries(4 + on_mysql()):
        response = admin_client.get(LIST)

    assert len(shown_ids(response)) == rows


def test_filtered_lists_run_the_same_few_queries(
    admin_client, django_assert_num_queries, mix
) -> None:
    with django_assert_num_queries(4):
        admin_client.get(LIST, {"status__exact": "SUCCESS", "score_band": "40-64"})


@pytest.mark.parametrize(
    ("band", "expected"),
    [
        ("0", {"s-failed"}),
        ("1-39", {"s-low", "s-old"}),
        ("40-64", {"s-medium"}),
        ("65+", {"s-high"}),
        ("pending", {"s-running", "s-pending"}),
    ],
)
def test_the_score_band_filter_picks_the_band(admin_client, mix, band, expected) -> None:
    response = admin_client.get(LIST, {"score_band": band})

    assert response.status_code == 200
    assert set(shown_ids(response)) == expected


def test_every_score_lands_in_one_band_edges_included(db) -> None:
    scores = [0, 1, 39, 40, 64, 65, 100, None]
    for n, score in enumerate(scores):
        DiagnosisSessionFactory(session_id=f"edge-{n}", succeeded=True, evidence_score=score)
    DiagnosisSessionFactory(session_id="edge-8", failed=True)
    DiagnosisSessionFactory(session_id="edge-9")  # running

    found = {
        band: sorted(
            int(sid.split("-")[1])
            for sid in sessions_in_score_band(
                DiagnosisSession.objects.all(), band=band
            ).values_list("session_id", flat=True)
        )
        for band in ScoreBand.values
    }

    assert found == {
        "0": [0],
        "1-39": [1, 2],
        "40-64": [3, 4],
        "65+": [5, 6],
        "pending": [7, 9],
        "unscored": [8],
    }
    ordered = DiagnosisSession.objects.filter(status="SUCCESS").annotate(score=EVIDENCE_SCORE)
    assert [s.score for s in ordered.order_by("score", "id")] == [None, 0, 1, 39, 40, 64, 65, 100]


def test_the_score_band_filter_offers_failed_sessions_nobody_scored(admin_client, mix) -> None:
    DiagnosisSessionFactory(session_id="s-failed-unscored", failed=True)

    pending = admin_client.get(LIST, {"score_band": "pending"})
    unscored = admin_client.get(LIST, {"score_band": "unscored"})

    assert set(shown_ids(pending)) == {"s-running", "s-pending"}
    assert shown_ids(unscored) == ["s-failed-unscored"]
    assert "?score_band=unscored" in text(unscored) and "not scored" in text(unscored)


def test_an_unknown_score_band_is_refused_not_ignored(admin_client, mix) -> None:
    response = admin_client.get(LIST, {"score_band": "high"})

    assert response.status_code == 302
    assert response.url.endswith("?e=1")


def test_the_status_filter_lists_only_sessions_of_that_status(admin_client, mix) -> None:
    response = admin_client.get(LIST, {"status__exact": "FAILED"})

    assert shown_ids(response) == ["s-failed"]


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"feedback__exact": "not_useful"}, {"s-high"}),
        ({"feedback__exact": "useful"}, {"s-low"}),
        ({"feedback__isnull": "True"}, {"s-running", "s-failed", "s-pending", "s-medium", "s-old"}),
    ],
)
def test_the_feedback_filter_lists_only_sessions_with_that_feedback(
    admin_client, mix, params, expected
) -> None:
    assert set(shown_ids(admin_client.get(LIST, params))) == expected


def test_the_date_filter_leaves_out_older_sessions(admin_client, mix) -> None:
    # The "past 7 days" link of the date filter.
    today = timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0)
    response = admin_client.get(
        LIST,
        {
            "created_at__gte": str(today - timedelta(days=7)),
            "created_at__lt": str(today + timedelta(days=1)),
        },
    )

    assert response.status_code == 200
    assert "s-old" not in shown_ids(response)
    assert len(shown_ids(response)) == 6


def test_the_score_column_is_not_sortable(admin_client, mix) -> None:
    # Sorting by a value inside JSON sorts the whole table; the band filter is the way.
    page = admin_client.get(LIST).content.decode()

    assert 'class="column-score_column"' in page
    assert 'class="sortable column-score_column' not in page


def test_searching_an_exact_session_id_finds_it_by_its_key(
    admin_client, mix, count_statements
) -> None:
    DiagnosisSessionFactory(session_id="other", query="the answer mentions s-high")

    with count_statements() as statements:
        response = admin_client.get(LIST, {"q": "s-high"})

    assert shown_ids(response) == ["s-high"]
    assert not any("LIKE" in sql.upper() for sql in statements.statements)


def test_searching_words_looks_in_the_questions(admin_client, mix) -> None:
    DiagnosisSessionFactory(session_id="q-1", query="Redis 内存 打满 after deploy")
    DiagnosisSessionFactory(session_id="q-2", query="Kafka lag on orders")

    assert shown_ids(admin_client.get(LIST, {"q": "redis"})) == ["q-1"]
    assert shown_ids(admin_client.get(LIST, {"q": "内存"})) == ["q-1"]


# --- who may see it ------------------------------------------------------------------


@pytest.mark.parametrize("url", [LIST, f"{LIST}?score_band=0", f"{LIST}1/change/"])
def test_anonymous_visitors_are_sent_to_the_login(client, url) -> None:
    DiagnosisSessionFactory()

    response = client.get(url)

    assert response.status_code == 302
    assert response.url.startswith("/admin/login/")


def test_users_who_are_not_staff_are_sent_to_the_login(user_client) -> None:
    response = user_client.get(LIST)

    assert response.status_code == 302
    assert response.url.startswith("/admin/login/")


def test_staff_without_the_permission_are_refused(staff_client) -> None:
    session = DiagnosisSessionFactory()

    assert staff_client.get(LIST).status_code == 403
    assert staff_client.get(change_url(session)).status_code == 403


def test_staff_with_view_permission_see_sessions_but_no_actions(staff_client) -> None:
    from django.contrib.auth.models import Permission, User

    user = User.objects.get(username="ops.staff")
    user.user_permissions.add(Permission.objects.get(codename="view_diagnosissession"))
    session = DiagnosisSessionFactory(succeeded=True)
    ToolInvocationFactory(session=session, tool_name="VisibleTool")

    page = staff_client.get(LIST).content.decode()
    detail = staff_client.get(change_url(session)).content.decode()

    assert session.session_id in page
    assert 'name="action"' not in page
    assert "VisibleTool" in detail  # the invocations need no permission of their own
    assert "create a case from this session" not in detail


# --- language --------------------------------------------------------------------------


def test_the_admin_speaks_chinese_by_default_and_english_when_asked(admin_client, settings) -> None:
    DiagnosisSessionFactory()

    settings.LANGUAGE_CODE = "zh-hans"
    chinese = text(admin_client.get(LIST))
    settings.LANGUAGE_CODE = "en"
    english = text(admin_client.get(LIST))

    assert "诊断会话" in chinese and "证据分" in chinese
    assert "diagnosis session" in english.lower() and "evidence score" in english


# --- what a session's score and case links say --------------------------------------------


def test_a_failed_session_without_a_score_is_not_shown_as_waiting_for_one(admin_client) -> None:
    failed = DiagnosisSessionFactory(session_id="s-failed-unscored", failed=True)
    DiagnosisSessionFactory(session_id="s-waiting", succeeded=True)

    page = text(admin_client.get(LIST))
    row = re.search(r"<tr>(?:(?!</tr>).)*s-failed-unscored(?:(?!</tr>).)*</tr>", page).group()
    detail = text(admin_client.get(change_url(failed)))

    assert "not scored (failed)" in row and "pending" not in row
    assert page.count('class="score score-pending"') == 1
    assert '<span class="score score-unscored">not scored (failed)</span>' in detail


def test_a_failed_session_that_was_rescored_shows_its_score(admin_client) -> None:
    DiagnosisSessionFactory(session_id="s-failed-scored", failed=True, evidence_score=0)

    page = text(admin_client.get(LIST))

    # "not scored" alone is a choice of the score-band filter; the badge says why.
    assert 'class="score score-0"' in page and "not scored (failed)" not in page
