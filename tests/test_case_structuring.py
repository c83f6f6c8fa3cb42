"""Structured cases on `useful`: error code and fault category proposed from the text by
the worker's structuring pass, the proposal recorded, and the accuracy of proposals
operators have reviewed."""

from datetime import timedelta

import pytest
from django.utils import timezone

from caselibrary.models import CaseIndexState, CaseLibrary, CaseStructuring, FaultCategory
from caselibrary.selectors import case_structuring_accuracy
from caselibrary.services.cases import (
    case_create_from_session,
    case_create_manual,
    case_update,
    cases_delete,
    cases_set_category,
)
from caselibrary.services.categories import fault_category_save
from caselibrary.services.outcomes import case_outcomes_sweep
from caselibrary.services.proposals import cases_structure_new
from caselibrary.structuring import Taxonomy, parse_keywords, propose
from diagnosis.models import DiagnosisSession
from feedback.services import feedback_submit
from tests.factories import DiagnosisSessionFactory


def _case_from(session_id: str) -> str:
    """The AUTO case `useful` would make of the session, without rating it."""
    session = DiagnosisSession.objects.get(session_id=session_id)
    return case_create_from_session(session=session).case_id


TAXONOMY = Taxonomy.build(
    [
        ("DATABASE", "数据库, 慢查询, 连接池, deadlock, slow query"),
        ("CAPACITY", "磁盘满, oom, disk full"),
        ("NETWORK", "dns, 丢包"),
    ]
)


def proposed(query: str, answer: str = "") -> tuple[str, str | None]:
    found = propose(query=query, answer=answer, taxonomy=TAXONOMY, default_category="GENERAL")
    return found.fault_category, found.error_code


def test_keywords_are_split_on_commas_semicolons_and_lines_without_repeats() -> None:
    assert parse_keywords("慢查询，死锁、deadlock; Deadlock\n slow  query ,,") == [
        "慢查询",
        "死锁",
        "deadlock",
        "slow query",
    ]


def test_the_category_with_the_most_keywords_wins() -> None:
    assert proposed("订单库慢查询", "根因：连接池耗尽，出现 deadlock；磁盘满") == (
        "DATABASE",
        None,
    )


def test_a_tie_goes_to_the_keyword_found_first() -> None:
    assert proposed("DNS 解析失败后 disk full")[0] == "NETWORK"


def test_an_ascii_keyword_must_stand_as_a_word() -> None:
    assert proposed("the room is cold")[0] == "GENERAL"
    assert proposed("pod OOM again")[0] == "CAPACITY"


def test_no_keyword_keeps_general() -> None:
    assert proposed("页面打不开", "请稍后再试") == ("GENERAL", None)


def test_the_error_code_comes_from_the_question_first_then_the_answer() -> None:
    assert proposed("ORA-01555 怎么办", "见 ERROR 1205")[1] == "ORA-01555"
    assert proposed("查询很慢", "锁等待超时 ERROR 1205，随后 ORA-01555")[1] == "ERROR 1205"
    assert proposed("pod 一直 crashloopbackoff")[1] == "CrashLoopBackOff"


@pytest.mark.parametrize(
    "answer",
    [
        "🔥 慢查询 🚒 ORA-01555 🙈",
        "慢查询\x01\x07\x1b[31m\x7f\u200b\u202e ORA-01555",
        "медленный запрос; 慢查询; الحل ORA-01555",
        "慢查询 ORA-01555 " + "x" * 3_000_000,
    ],
    ids=["emoji", "control-characters", "mixed-scripts", "huge"],
)
def test_any_unicode_and_any_size_is_structured(answer: str) -> None:
    assert proposed("问题", answer) == ("DATABASE", "ORA-01555")


# --- Through the service and the API ---------------------------------------------------


@pytest.fixture
def session(db):  # type: ignore[no-untyped-def]
    return DiagnosisSessionFactory(
        succeeded=True,
        session_id="st-1",
        query="订单库 ORA-01555 snapshot too old，怎么处理？",
        answer="根因：慢查询拖长了事务，回滚段被覆盖。\n1. 优化慢查询\n2. 调大 undo_retention",
    )


def test_useful_fills_the_error_code_and_the_category(api, session) -> None:
    response = api.post("/api/feedback", {"sessionId": "st-1", "feedback": "useful"}, format="json")

    assert list(response.json()) == ["success", "message", "caseId"]
    assert cases_structure_new() == 1
    case = CaseLibrary.objects.get(case_id=response.json()["caseId"])
    assert (case.fault_category, case.error_code) == ("DATABASE", "ORA-01555")
    proposal = CaseStructuring.objects.get(case=case)
    assert (proposal.proposed_category, proposal.proposed_error_code) == (
        "DATABASE",
        "ORA-01555",
    )


def test_a_case_with_no_match_stays_general_and_the_proposal_says_so(db) -> None:
    DiagnosisSessionFactory(succeeded=True, session_id="g-1", query="打不开", answer="稍后再试")

    case_id = _case_from("g-1")
    cases_structure_new()

    case = CaseLibrary.objects.get(case_id=case_id)
    assert (case.fault_category, case.error_code) == ("GENERAL", None)
    assert CaseStructuring.objects.get(case=case).proposed_category == "GENERAL"


def test_keywords_edited_through_the_service_apply_to_the_next_case(db) -> None:
    first = _auto_case("k-1", "证书过期")
    assert first.fault_category == "NETWORK"  # 证书 is a seeded NETWORK keyword

    network = FaultCategory.objects.get(code="NETWORK")
    fault_category_save(code="NETWORK", name=network.name, keywords="dns")
    fault_category_save(code="SECURITY", name="安全 / Security", keywords="证书, certificate")

    assert _auto_case("k-2", "证书过期").fault_category == "SECURITY"


def test_a_repeated_useful_records_one_proposal(api, session) -> None:
    for feedback in ("useful", "not_useful", "useful"):
        api.post("/api/feedback", {"sessionId": "st-1", "feedback": feedback}, format="json")
        cases_structure_new()

    assert CaseLibrary.objects.count() == 1
    assert CaseStructuring.objects.count() == 1


def test_the_seeded_taxonomy_has_keywords_for_every_category_but_general(db) -> None:
    keywords = dict(FaultCategory.objects.values_list("code", "keywords"))

    assert keywords.pop("GENERAL") == ""
    assert all(parse_keywords(words) for words in keywords.values())
    assert any("慢查询" in words for words in keywords.values())
    assert any("deadlock" in words for words in keywords.values())


def test_deleting_a_case_deletes_its_proposal(api, session) -> None:
    case_id = feedback_submit(session_id="st-1", feedback="useful").case_id
    cases_structure_new()
    assert CaseStructuring.objects.exists()

    cases_delete(case_ids=[case_id])

    assert not CaseStructuring.objects.exists()


def test_an_operator_who_saves_first_keeps_the_values_and_the_proposal_is_kept(
    api, session
) -> None:
    case_id = feedback_submit(session_id="st-1", feedback="useful").case_id
    case = CaseLibrary.objects.get(case_id=case_id)
    case_update(case=case, updated_by="ops.li", fault_category="CAPACITY")

    cases_structure_new()

    case.refresh_from_db()
    assert (case.fault_category, case.error_code) == ("CAPACITY", None)
    proposal = CaseStructuring.objects.get(case=case)
    assert (proposal.proposed_category, proposal.proposed_error_code) == (
        "DATABASE",
        "ORA-01555",
    )


def test_a_pass_structures_each_case_once_and_only_new_auto_cases(db) -> None:
    older = _auto_case("o-1", "ORA-01555 慢查询")
    CaseLibrary.objects.filter(case_id=older.case_id).update(fault_category="GENERAL")
    manual = case_create_manual(
        created_by="ops.li", title="ORA-01555 慢查询", root_cause="r", solution="s"
    )

    assert cases_structure_new() == 0  # nothing new; the manual case is the operator's

    assert CaseLibrary.objects.get(case_id=older.case_id).fault_category == "GENERAL"
    assert not CaseStructuring.objects.filter(case_id=manual.case_id).exists()


def test_cases_made_before_the_structuring_came_are_left_as_they_were(db) -> None:
    DiagnosisSessionFactory(succeeded=True, session_id="p-1", query="ORA-01555", answer="a")
    case_id = _case_from("p-1")
    CaseLibrary.objects.filter(case_id=case_id).update(
        created_at=timezone.now() - timedelta(days=1)
    )
    CaseIndexState.objects.update_or_create(id=1, defaults={"structured_until": timezone.now()})

    assert cases_structure_new() == 0
    assert CaseLibrary.objects.get(case_id=case_id).error_code is None


def test_a_structured_case_reads_as_changed_when_it_was_structured(api, session) -> None:
    case_id = feedback_submit(session_id="st-1", feedback="useful").case_id
    an_hour_ago = timezone.now() - timedelta(hours=1)
    CaseLibrary.objects.filter(case_id=case_id).update(
        created_at=an_hour_ago, updated_at=an_hour_ago
    )

    cases_structure_new()

    shown = api.get(f"/api/cases/{case_id}").json()
    case = CaseLibrary.objects.get(case_id=case_id)
    assert case.updated_at > an_hour_ago + timedelta(minutes=59)
    assert shown["updatedAt"] != shown["createdAt"]
    assert case.updated_by == "system"


def test_a_case_whose_session_is_gone_is_not_structured(db) -> None:
    DiagnosisSessionFactory(succeeded=True, session_id="gone-1", query="ORA-01555", answer="a")
    case_id = _case_from("gone-1")
    DiagnosisSession.objects.filter(session_id="gone-1").delete()

    assert cases_structure_new() == 0
    assert not CaseStructuring.objects.filter(case_id=case_id).exists()
    assert CaseLibrary.objects.get(case_id=case_id).fault_category == "GENERAL"


def test_the_outcome_sweep_structures_a_case_whose_rebuild_was_lost(db) -> None:
    DiagnosisSessionFactory(succeeded=True, session_id="l-1", query="ORA-01555", answer="a")
    case_id = _case_from("l-1")

    case_outcomes_sweep()

    assert CaseLibrary.objects.get(case_id=case_id).error_code == "ORA-01555"


# --- Accuracy ---------------------------------------------------------------------------


@pytest.fixture
def fresh_cache():  # type: ignore[no-untyped-def]
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


def _auto_case(session_id: str, query: str) -> CaseLibrary:
    """An AUTO case made from a new session and structured by the worker's pass."""
    DiagnosisSessionFactory(succeeded=True, session_id=session_id, query=query, answer="见上")
    case_id = _case_from(session_id)
    cases_structure_new()
    return CaseLibrary.objects.get(case_id=case_id)


def test_accuracy_counts_only_cases_an_operator_has_saved(db, fresh_cache) -> None:
    kept = _auto_case("a-1", "ORA-01555 慢查询")
    changed = _auto_case("a-2", "ORA-01555 慢查询")
    untouched = _auto_case("a-3", "ORA-01555 慢查询")
    code_only = _auto_case("a-4", "ORA-01555 慢查询")
    assert untouched.updated_by == "system"

    case_update(case=kept, updated_by="ops.li", title="订单库快照过旧")
    cases_set_category(case_ids=[changed.case_id], fault_category="CAPACITY", updated_by="ops.li")
    case_update(case=code_only, updated_by="ops.wang", error_code="ora-01555 ")

    accuracy = case_structuring_accuracy()

    assert (accuracy.proposed, accuracy.reviewed) == (4, 3)
    assert accuracy.category_kept == 2  # kept and code_only; changed moved to CAPACITY
    assert accuracy.code_kept == 3  # the same code, trimmed and in any case
    assert accuracy.category_rate == pytest.approx(2 / 3)


def test_accuracy_without_reviewed_cases_is_unknown(db, fresh_cache) -> None:
    _auto_case("a-1", "慢查询")

    accuracy = case_structuring_accuracy()

    assert accuracy.reviewed == 0
    assert accuracy.category_rate is None and accuracy.code_rate is None


def test_the_overview_shows_the_share_of_proposals_kept(admin_client, fresh_cache) -> None:
    kept = _auto_case("a-1", "ORA-01555 慢查询")
    changed = _auto_case("a-2", "ORA-01555 慢查询")
    case_update(case=kept, updated_by="ops.li", title="t")
    case_update(case=changed, updated_by="ops.li", fault_category="CAPACITY", error_code="")

    page = admin_client.get("/admin/overview/").content.decode()

    assert 'id="structuring-category"><span class="tile-value">50.0%</span>' in page
    assert 'id="structuring-code"><span class="tile-value">50.0%</span>' in page
