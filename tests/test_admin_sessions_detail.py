"""The sessions admin's read-only detail: answer, scored factors, opinions, tool invocations
and the links to a session's case."""

import re

import pytest

from diagnosis.models import DiagnosisSession
from tests.admin_session_pages import LIST, change_url
from tests.factories import (
    CaseLibraryFactory,
    DiagnosisSessionFactory,
    ToolInvocationFactory,
)
from tests.page_text import text

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]


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


def test_the_detail_links_the_case_made_from_the_session(admin_client) -> None:
    session = DiagnosisSessionFactory(useful=True)
    case = CaseLibraryFactory(diagnosis=session)

    page = text(admin_client.get(change_url(session)))

    assert f'<a href="/admin/caselibrary/caselibrary/{case.pk}/change/">open the case</a>' in page
    assert "create a case from this session" not in page
