"""The sessions admin: list, filters, search, read-only detail, rescore and create-case."""

import re
from datetime import timedelta

import pytest
from django.contrib.admin.models import ADDITION, LogEntry
from django.utils import timezone

from caselibrary.models import CaseLibrary
from diagnosis.models import DiagnosisSession
from diagnosis.selectors import EVIDENCE_SCORE, ScoreBand, sessions_in_score_band
from tests.admin_pages import shown_ids
from tests.conftest import on_mysql
from tests.factories import (
    CaseLibraryFactory,
    DiagnosisSessionFactory,
    ToolInvocationFactory,
    evaluation,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]

LIST = "/admin/diagnosis/diagnosissession/"


def change_url(session: DiagnosisSession) -> str:
    return f"{LIST}{session.pk}/change/"


def text(response) -> str:  # type: ignore[no-untyped-def]
    return " ".join(response.content.decode().split())


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


def test_the_detail_shows_the_answer_with_its_line_breaks_escaped(admin_client) -> None:
    session = DiagnosisSessionFactory(
        succeeded=True, answer="根因：连接池耗尽。\n1. 扩容 <script>alert(1)</script>\n2. 加熔断"
    )

    page = admin_client.get(change_url(session)).content.decode()

    assert (
        "根因：连接池耗尽。<br>1. 扩容 &lt;script&gt;alert(1)&lt;/script&gt;<br>2. 加熔断" in page
    )
    assert "<script>alert(1)" not in page


def test_the_detail_shows_the_scored_factors_as_a_table(admin_client) -> None:
    session = DiagnosisSessionFactory(
        succeeded=True,
        self_evaluation={
            "evidence_score": 20,
            "source": "rule",
            "factors": [
                {
                    "name": "has_successful_tool_call",
                    "delta": 30,
                    "description": "有成功的工具调用(2次)",
                },
                {
                    "name": "retrieval_no_hit",
                    "delta": -10,
                    "description": "<i>有检索调用但无任何命中</i>",
                },
            ],
        },
    )

    page = text(admin_client.get(change_url(session)))

    # Each factor by its label (its stored name at hand), its delta, and the stored
    # description in the operator's language (a text no rule writes, as it is).
    assert (
        '<tr><td><span class="factor-name" title="has_successful_tool_call">successful tool '
        'calls</span></td><td class="delta">+30</td><td>2 successful tool calls</td></tr>'
    ) in page
    assert (
        '<tr><td><span class="factor-name" title="retrieval_no_hit">retrieval calls without '
        'any hit</span></td><td class="delta">−10</td>'
        "<td>&lt;i&gt;有检索调用但无任何命中&lt;/i&gt;</td></tr>"
    ) in page
    assert 'class="score score-1-39"' in page and '<small title="rule">by the rules</small>' in page


def test_a_session_not_scored_yet_says_so(admin_client) -> None:
    session = DiagnosisSessionFactory(succeeded=True)

    page = text(admin_client.get(change_url(session)))

    assert "not scored yet" in page and "score-pending" in page


def test_the_detail_lists_the_tool_invocations_in_order_read_only(admin_client) -> None:
    session = DiagnosisSessionFactory(succeeded=True)
    for n in range(3):
        ToolInvocationFactory(session=session, tool_name=f"Tool{n}", query=f"ask {n}")

    page = admin_client.get(change_url(session)).content.decode()

    assert [page.index(f"Tool{n}") for n in range(3)] == sorted(
        page.index(f"Tool{n}") for n in range(3)
    )
    assert 'name="tool_invocations-0-tool_name"' not in page  # nothing editable
    assert 'name="_save"' not in page


def test_the_detail_shows_each_call_with_its_outcome_and_duration(admin_client) -> None:
    session = DiagnosisSessionFactory(succeeded=True)
    ToolInvocationFactory(
        session=session,
        tool_name="QueryErrorCodeDocs",
        status="FAILED",
        match_level=None,
        hit_count=0,
        query="ORA-01555 snapshot too old",
        error_message="upstream timed out",
        duration_ms=4321,
    )

    cells = re.findall(
        r'<tr class="invocation">(.*?)</tr>', admin_client.get(change_url(session)).content.decode()
    )

    assert len(cells) == 1
    assert re.findall(r"<td>(.*?)</td>", cells[0])[:8] == [
        "QueryErrorCodeDocs",
        "Retrieval",
        "Failed",
        "-",
        "0",
        "ORA-01555 snapshot too old",
        "upstream timed out",
        "4321",
    ]


@pytest.mark.parametrize("calls", [3, 60])
def test_the_detail_runs_the_same_queries_however_many_invocations(
    admin_client, django_assert_num_queries, calls
) -> None:
    session = DiagnosisSessionFactory(succeeded=True, evidence_score=65)
    ToolInvocationFactory.create_batch(calls, session=session)

    # Django's session and user, the session, its case (for the link), its case-library
    # searches, its invocations, its readers' feedback entries; the timeline: its spans,
    # else its invocations, and the cases its searches found.
    with django_assert_num_queries(10):
        response = admin_client.get(change_url(session))

    assert response.content.decode().count('<tr class="invocation">') == calls


def test_the_detail_cannot_be_posted(admin_client) -> None:
    session = DiagnosisSessionFactory(succeeded=True, query="original")

    response = admin_client.post(change_url(session), {"query": "changed"})

    assert response.status_code == 403
    assert DiagnosisSession.objects.get().query == "original"


def test_sessions_cannot_be_added_or_deleted_in_the_admin(admin_client) -> None:
    session = DiagnosisSessionFactory()

    assert admin_client.get(f"{LIST}add/").status_code == 403
    assert admin_client.get(f"{LIST}{session.pk}/delete/").status_code == 403
    assert "delete_selected" not in admin_client.get(LIST).content.decode()


def test_the_detail_links_to_the_case_made_from_the_session(admin_client) -> None:
    session = DiagnosisSessionFactory(useful=True)
    case = CaseLibraryFactory(diagnosis=session)

    page = admin_client.get(change_url(session)).content.decode()

    assert f"/admin/caselibrary/caselibrary/{case.pk}/change/" in page


def test_the_detail_offers_to_make_a_case_when_there_is_none(admin_client) -> None:
    session = DiagnosisSessionFactory(session_id="s-9", succeeded=True)

    page = admin_client.get(change_url(session)).content.decode()

    assert "/admin/caselibrary/caselibrary/add/?from_session=s-9" in page


# --- actions ---------------------------------------------------------------------------


def act(client, action: str, *sessions: DiagnosisSession, follow: bool = False):  # type: ignore[no-untyped-def]
    return client.post(
        LIST,
        {"action": action, "_selected_action": [s.pk for s in sessions], "index": 0},
        follow=follow,
    )


def test_rescore_scores_the_selected_sessions_from_their_facts(
    admin_client, django_capture_on_commit_callbacks
) -> None:
    finished = DiagnosisSessionFactory(succeeded=True, self_evaluation=evaluation(0))
    ToolInvocationFactory(session=finished, match_level="L0")
    running = DiagnosisSessionFactory()
    untouched = DiagnosisSessionFactory(succeeded=True)

    # The action queues the scoring after the request commits; Q_SYNC runs it inline.
    with django_capture_on_commit_callbacks(execute=True):
        response = act(admin_client, "rescore", finished, running, follow=True)

    finished.refresh_from_db()
    assert finished.self_evaluation["evidence_score"] == 65
    assert DiagnosisSession.objects.get(pk=running.pk).self_evaluation is None
    assert DiagnosisSession.objects.get(pk=untouched.pk).self_evaluation is None
    page = text(response)
    assert "1 session queued for rescoring." in page
    assert "1 session is still running and was left alone." in page


def test_rescore_refuses_a_selection_that_belongs_to_the_command(admin_client, monkeypatch) -> None:
    monkeypatch.setattr("feedback.admin.sessions.RESCORE_LIMIT", 2)
    sessions = DiagnosisSessionFactory.create_batch(3, succeeded=True)

    response = act(admin_client, "rescore", *sessions, follow=True)

    assert "manage.py rescore" in text(response)
    assert not DiagnosisSession.objects.filter(self_evaluation__isnull=False).exists()


def test_create_case_opens_a_manual_case_prefilled_from_the_session(admin_client) -> None:
    session = DiagnosisSessionFactory(
        session_id="s-7", succeeded=True, query="Q" * 150, answer="根因\n处理"
    )

    response = act(admin_client, "create_case", session)

    assert response.status_code == 302
    assert response.url == "/admin/caselibrary/caselibrary/add/?from_session=s-7"
    form = admin_client.get(response.url).context["adminform"].form
    assert form.initial["title"] == "Q" * 100
    assert form.initial["root_cause"] == form.initial["solution"] == "根因\n处理"
    assert form.initial["diagnosis"] == "s-7"


def test_create_case_saves_through_the_service_as_manual(admin_client) -> None:
    session = DiagnosisSessionFactory(session_id="s-7", succeeded=True)

    response = admin_client.post(
        "/admin/caselibrary/caselibrary/add/?from_session=s-7",
        {
            "diagnosis": "s-7",
            "title": "Pool exhausted",
            "fault_category": "DATABASE",
            "error_code": "E504",
            "root_cause": "pool",
            "solution": "grow it",
        },
    )

    assert response.status_code == 302, response.context["adminform"].form.errors
    case = CaseLibrary.objects.get()
    assert (case.source_type, case.diagnosis_id, case.created_by, case.updated_by) == (
        "MANUAL",
        session.session_id,
        "admin",
        "admin",
    )
    assert LogEntry.objects.get(object_id=case.pk).action_flag == ADDITION


def test_create_case_on_a_session_with_a_case_goes_to_that_case(admin_client) -> None:
    session = DiagnosisSessionFactory(useful=True)
    case = CaseLibraryFactory(diagnosis=session)

    response = act(admin_client, "create_case", session)

    assert response.status_code == 302
    assert response.url == f"/admin/caselibrary/caselibrary/{case.pk}/change/"
    assert CaseLibrary.objects.count() == 1


def test_create_case_wants_exactly_one_session(admin_client) -> None:
    sessions = DiagnosisSessionFactory.create_batch(2, succeeded=True)

    response = act(admin_client, "create_case", *sessions, follow=True)

    assert "Select exactly one session" in text(response)
    assert not CaseLibrary.objects.exists()


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


def test_the_detail_shows_the_opinion_factors_beside_the_rule_factors(admin_client) -> None:
    session = DiagnosisSessionFactory(succeeded=True, evidence_score=30)
    session.self_evaluation["llm_opinion"] = {
        "source": "heuristic",
        "model": "heuristic",
        "version": "1",
        "factors": [
            {"name": "has_root_cause", "value": True, "rationale": "names a cause: “根因”"},
            {"name": "hallucination_risk", "value": False, "rationale": "<b>supported</b>"},
        ],
        "created_at": "2026-12-03T12:00:00+00:00",
    }
    session.save()

    page = text(admin_client.get(change_url(session)))

    assert 'title="has_successful_tool_call"' in page
    assert (
        '<tr><td><span class="factor-name" title="has_root_cause">names a root cause</span>'
        '</td><td class="opinion-value">yes</td><td>names a cause: “根因”</td></tr>'
    ) in page
    assert (
        '<tr><td><span class="factor-name" title="hallucination_risk">risk of hallucination'
        '</span></td><td class="opinion-value">no</td><td>&lt;b&gt;supported&lt;/b&gt;</td></tr>'
    ) in page
    # Who formed it, said once, and when, as the admin shows its times.
    assert "<caption>heuristic · version 1 · Dec. 3, 2026, noon</caption>" in page


def test_a_session_without_an_opinion_says_so(admin_client) -> None:
    session = DiagnosisSessionFactory(succeeded=True, evidence_score=30)

    page = text(admin_client.get(change_url(session)))

    assert "no opinion yet" in page


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


@pytest.mark.parametrize(
    ("kind", "offered"),
    [
        ({"succeeded": True}, True),
        ({"failed": True, "answer": "partial answer before the failure"}, True),
        ({}, False),  # running
        ({"succeeded": True, "answer": ""}, False),
        ({"failed": True}, False),  # failed without an answer
    ],
)
def test_create_a_case_is_offered_only_on_a_finished_session_with_an_answer(
    admin_client, kind, offered
) -> None:
    session = DiagnosisSessionFactory(**kind)

    page = text(admin_client.get(change_url(session)))

    assert ("create a case from this session" in page) is offered


def test_the_create_case_action_refuses_a_running_session(admin_client) -> None:
    session = DiagnosisSessionFactory(session_id="s-running-7")

    response = act(admin_client, "create_case", session, follow=True)

    assert response.redirect_chain[-1][0] == LIST
    assert "Session s-running-7 has no answer to make a case of" in text(response)
    assert not CaseLibrary.objects.exists()


def test_the_detail_links_the_case_made_from_the_session(admin_client) -> None:
    session = DiagnosisSessionFactory(useful=True)
    case = CaseLibraryFactory(diagnosis=session)

    page = text(admin_client.get(change_url(session)))

    assert f'<a href="/admin/caselibrary/caselibrary/{case.pk}/change/">open the case</a>' in page
    assert "create a case from this session" not in page


def test_rescore_queues_the_finished_sessions_once_the_request_commits(
    admin_client, monkeypatch, django_capture_on_commit_callbacks
) -> None:
    # django-q2's enqueue is replaced to see what the workers would be handed.
    queued: list[tuple] = []
    monkeypatch.setattr("config.queue.async_task", lambda *args, **kw: queued.append(args))
    finished = DiagnosisSessionFactory(succeeded=True)
    failed = DiagnosisSessionFactory(failed=True)
    running = DiagnosisSessionFactory()

    with django_capture_on_commit_callbacks(execute=True):
        response = act(admin_client, "rescore", finished, failed, running, follow=True)

    [(task, session_ids)] = queued
    assert task == "evaluation.tasks.sessions_rescore"
    assert sorted(session_ids) == sorted([finished.session_id, failed.session_id])
    assert "2 sessions queued for rescoring." in text(response)
    assert "1 session is still running and was left alone." in text(response)
