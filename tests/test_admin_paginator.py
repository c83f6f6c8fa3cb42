"""The changelist paginator: exact below the cap, "cap+" above it, estimated when unfiltered
on MySQL/MariaDB — and never a COUNT(*) over the whole table."""

from datetime import timedelta

import pytest
from django.contrib.admin import site
from django.db import connection
from django.db.models import Func, IntegerField, Value
from django.test import RequestFactory
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from config.admin_paginator import CountKind, EstimatedCountPaginator
from diagnosis.models import DiagnosisSession
from feedback.admin.sessions import DiagnosisSessionAdmin
from tests.admin_pages import shown_ids
from tests.datasets import generate_sessions
from tests.factories import DiagnosisSessionFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]


class SmallCap(EstimatedCountPaginator):
    cap = 5


def test_a_count_below_the_cap_is_exact() -> None:
    DiagnosisSessionFactory.create_batch(4)

    paginator = SmallCap(DiagnosisSession.objects.order_by("id"), 2)

    assert (paginator.count, paginator.count_kind, paginator.count_label) == (4, "exact", "4")
    assert paginator.count_is_exact
    assert paginator.num_pages == 2


def test_a_filtered_count_stops_at_the_cap_and_says_so(count_statements) -> None:
    DiagnosisSessionFactory.create_batch(8, status="FAILED")

    paginator = SmallCap(DiagnosisSession.objects.filter(status="FAILED").order_by("id"), 2)
    with count_statements() as counted:
        count = paginator.count

    assert (count, paginator.count_kind, paginator.count_label) == (6, CountKind.AT_LEAST, "5+")
    assert not paginator.count_is_exact
    # One read, of at most cap + 1 rows.
    [sql] = counted.statements
    assert "LIMIT 6" in sql.upper()


def test_the_count_is_cached_for_the_page_load(count_statements) -> None:
    DiagnosisSessionFactory.create_batch(3)
    paginator = SmallCap(DiagnosisSession.objects.filter(status="RUNNING").order_by("id"), 2)

    with count_statements() as counted:
        paginator.count, paginator.count_label, paginator.num_pages, paginator.page(2)

    # The count's read, once, and the page's keys (its rows are read when shown).
    assert len(counted.statements) == 2


@pytest.mark.sqlite
def test_unfiltered_on_sqlite_is_a_capped_count_too(count_statements) -> None:
    DiagnosisSessionFactory.create_batch(7)

    paginator = SmallCap(DiagnosisSession.objects.order_by("id"), 2)
    with count_statements() as counted:
        assert paginator.count_label == "5+"

    assert "LIMIT 6" in counted.statements[0].upper()


def test_the_changelist_shows_the_capped_count(admin_client, monkeypatch) -> None:
    monkeypatch.setattr(EstimatedCountPaginator, "cap", 5)
    DiagnosisSessionFactory.create_batch(7, status="FAILED")

    page = admin_client.get(
        "/admin/diagnosis/diagnosissession/", {"status__exact": "FAILED"}
    ).content.decode()

    assert "5+ diagnosis sessions" in " ".join(page.split())


def test_a_search_shows_the_capped_count_of_results(admin_client, monkeypatch) -> None:
    monkeypatch.setattr(EstimatedCountPaginator, "cap", 5)
    DiagnosisSessionFactory.create_batch(7, query="disk full on db-3")

    page = admin_client.get("/admin/diagnosis/diagnosissession/", {"q": "disk"}).content.decode()

    assert "5+ results" in " ".join(page.split())


@pytest.mark.mysql
@pytest.mark.django_db(transaction=True)
def test_unfiltered_on_mysql_is_estimated_from_table_statistics(count_statements) -> None:
    generate_sessions(300, prefix="est")
    with connection.cursor() as cursor:
        # Fresh statistics; ANALYZE commits, hence the transactional test.
        cursor.execute("ANALYZE TABLE diagnosis_session")

    paginator = SmallCap(DiagnosisSession.objects.order_by("-created_at"), 50)
    with count_statements() as counted:
        count = paginator.count

    assert paginator.count_kind == CountKind.ESTIMATE
    assert paginator.count_label.startswith("≈ ")
    # InnoDB samples pages: an estimate, in the right neighbourhood.
    assert 100 <= count <= 900
    assert [sql for sql in counted.statements if "COUNT(" in sql.upper()] == []
    assert "information_schema.TABLES" in counted.statements[0]


@pytest.mark.mysql
@pytest.mark.django_db(transaction=True)
def test_a_small_table_on_mysql_is_counted_not_estimated() -> None:
    generate_sessions(3, prefix="small")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE TABLE diagnosis_session")

    paginator = SmallCap(DiagnosisSession.objects.order_by("-created_at"), 50)

    assert (paginator.count, paginator.count_kind) == (3, CountKind.EXACT)


@pytest.mark.mysql
def test_a_count_that_takes_too_long_on_mysql_is_given_up() -> None:
    DiagnosisSessionFactory.create_batch(3)

    class Impatient(EstimatedCountPaginator):
        seconds = 0.01

    # SLEEP(0.05) per row stands in for a scan of a million rows: reliably too slow.
    slow = (
        DiagnosisSession.objects.alias(
            pause=Func(Value(0.05), function="SLEEP", output_field=IntegerField())
        )
        .filter(pause=0)
        .order_by("id")
    )
    paginator = Impatient(slow, 50)

    assert (paginator.count_kind, paginator.count_label) == (CountKind.UNCOUNTED, "uncounted")
    assert paginator.count == Impatient.cap + 1
    # The transaction the test runs in is still usable.
    assert DiagnosisSession.objects.count() == 3


@pytest.mark.mysql
def test_the_count_time_limit_is_the_servers(count_statements) -> None:
    DiagnosisSessionFactory.create_batch(2)

    with count_statements() as counted:
        assert (
            EstimatedCountPaginator(
                DiagnosisSession.objects.filter(status="RUNNING").order_by("id"), 5
            ).count
            == 2
        )

    [sql] = counted.statements
    assert "max_statement_time=1.0" in sql or "MAX_EXECUTION_TIME(1000)" in sql


def test_the_changelist_says_when_it_did_not_count(admin_client, monkeypatch) -> None:
    monkeypatch.setattr("config.admin_paginator.capped_keys", lambda *a, **k: None)
    DiagnosisSessionFactory.create_batch(3, status="FAILED")

    page = admin_client.get(
        "/admin/diagnosis/diagnosissession/", {"status__exact": "FAILED"}
    ).content.decode()

    assert "uncounted diagnosis sessions" in " ".join(page.split())


def test_on_a_deep_page_the_count_reaches_ten_pages_past_it(monkeypatch) -> None:
    monkeypatch.setattr(EstimatedCountPaginator, "cap", 5)
    DiagnosisSessionFactory.create_batch(40, status="FAILED")
    failed = DiagnosisSession.objects.filter(status="FAILED").order_by("id")

    first = EstimatedCountPaginator(failed, 2)
    deep = EstimatedCountPaginator(failed, 2, page_number=4)

    assert first.count_label == "5+"
    assert deep.count_label == "28+"  # (page 4 + 10 pages) x 2 per page
    assert deep.num_pages == 15


def test_a_deep_page_of_the_changelist_can_be_opened(admin_client, monkeypatch) -> None:
    monkeypatch.setattr(EstimatedCountPaginator, "cap", 5)
    monkeypatch.setattr(DiagnosisSessionAdmin, "list_per_page", 2)
    DiagnosisSessionFactory.create_batch(12, status="FAILED")

    response = admin_client.get(
        "/admin/diagnosis/diagnosissession/", {"status__exact": "FAILED", "p": "5"}
    )

    assert response.status_code == 200
    assert "12 diagnosis sessions" in " ".join(response.content.decode().split())


def test_a_search_that_matches_nothing_reads_the_questions_once(admin_client) -> None:
    DiagnosisSessionFactory.create_batch(3, query="disk full on db-3")

    with CaptureQueriesContext(connection) as captured:
        page = admin_client.get("/admin/diagnosis/diagnosissession/", {"q": "nowhere-zzyzx"})

    text = " ".join(page.content.decode().split())
    assert "0 results" in text
    assert 'class="field-session_id"' not in text
    searched = [q["sql"] for q in captured.captured_queries if "%nowhere-zzyzx%" in q["sql"]]
    # The count, which said "none"; not the page's rows after it.
    assert len(searched) <= 1


def test_a_search_that_matches_lists_what_it_matched(admin_client) -> None:
    matched = DiagnosisSessionFactory(query="disk full on db-3")
    DiagnosisSessionFactory(query="cpu high on web-1")

    page = admin_client.get("/admin/diagnosis/diagnosissession/", {"q": "disk full"})

    text = " ".join(page.content.decode().split())
    assert "1 result" in text
    assert matched.session_id in text


def test_the_list_shows_the_sessions_it_counted(admin_user) -> None:
    kept = DiagnosisSessionFactory(query="zzyzx stays")
    changed = DiagnosisSessionFactory(query="zzyzx goes")
    request = RequestFactory().get("/admin/diagnosis/diagnosissession/", {"q": "zzyzx"})
    request.user = admin_user

    changelist = DiagnosisSessionAdmin(DiagnosisSession, site).get_changelist_instance(request)
    # Between the count and the page's rows: one match stops matching, one more starts.
    DiagnosisSession.objects.filter(pk=changed.pk).update(query="something else")
    DiagnosisSessionFactory(query="zzyzx arrives")

    # The rows are the ones counted that still match: not a second search's.
    assert [s.session_id for s in changelist.result_list] == [kept.session_id]


def test_each_page_of_a_filtered_list_shows_its_sessions_latest_first(
    admin_client, monkeypatch
) -> None:
    monkeypatch.setattr(DiagnosisSessionAdmin, "list_per_page", 3)
    now = timezone.now()
    useful = []
    for minutes in range(7, 0, -1):
        session = DiagnosisSessionFactory(feedback="useful")
        DiagnosisSessionFactory()  # newer, without feedback: not listed
        DiagnosisSession.objects.filter(pk=session.pk).update(
            created_at=now - timedelta(minutes=minutes)
        )
        useful.append(session.session_id)
    latest_first = useful[::-1]

    pages = [
        shown_ids(
            admin_client.get(
                "/admin/diagnosis/diagnosissession/", {"feedback__exact": "useful", "p": p}
            )
        )
        for p in (1, 2, 3)
    ]

    assert pages == [latest_first[0:3], latest_first[3:6], latest_first[6:7]]


@pytest.mark.parametrize(
    "url",
    [
        "/admin/diagnosis/diagnosissession/",
        "/admin/feedback/badcase/",
        "/admin/caselibrary/caselibrary/",
    ],
)
@pytest.mark.parametrize("page", ["368934881474191032", "99999999999999999999"])
def test_a_page_number_past_any_table_shows_a_one_page_list(admin_client, url, page) -> None:
    # A hand-edited URL: the count's reach grows with the page asked for, and a page this
    # far made a limit the database cannot take (a 500 with its SQL error). A list of one
    # page shows that page whatever page is asked for, as Django's does.
    DiagnosisSessionFactory(not_useful=True)

    response = admin_client.get(url, {"p": page})

    assert response.status_code == 200


@pytest.mark.parametrize("page", ["368934881474191032", "99999999999999999999"])
def test_a_page_number_past_any_table_reopens_a_longer_list(
    admin_client, monkeypatch, page
) -> None:
    monkeypatch.setattr(DiagnosisSessionAdmin, "list_per_page", 2)
    DiagnosisSessionFactory.create_batch(3)

    response = admin_client.get("/admin/diagnosis/diagnosissession/", {"p": page})

    assert response.status_code == 302
    assert response["Location"].endswith("?e=1")
