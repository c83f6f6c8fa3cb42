"""A question asked again word for word finds, as an exact (L0) hit, the case its answer
made, however long it is: a case keeps its source question as an exact key beside its
title (the question's first 100 characters)."""

import pytest

from caselibrary.models import (
    CaseChange,
    CaseLibrary,
    CaseSearchKey,
    SourceType,
    title_from_query,
)
from caselibrary.search_text import text_key
from caselibrary.services.duplicates import case_merge_into
from caselibrary.services.index import case_index_build, case_index_pending
from tests.factories import CaseLibraryFactory, DiagnosisSessionFactory
from tests.migrate_to import migrate_to

pytestmark = pytest.mark.django_db

URL = "/api/cases/search"

LONG_QUESTION = (
    "告警 payment-service 在 prod-cn-east 集群的 p99 延迟从 200ms 升到 4s，同时数据库连接池"
    "使用率 100%，应用日志里大量 HikariPool-1 - Connection is not available, request timed "
    "out after 30000ms，上游网关开始返回 504，这是什么原因，应该先做什么？"
)


def _case_from(question: str, session_id: str) -> CaseLibrary:
    session = DiagnosisSessionFactory(session_id=session_id, query=question)
    return CaseLibraryFactory(
        source_type=SourceType.AUTO,
        diagnosis=session,
        title=title_from_query(question, session_id),
        root_cause="连接池被慢 SQL 占满，请求排队等待连接超时。",
        solution="1. 找出慢 SQL 并加索引\n2. 临时调大连接池\n3. 上游限流",
    )


def _search(api, query: str) -> dict:  # type: ignore[no-untyped-def]
    response = api.post(URL, {"query": query}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def test_a_long_question_asked_again_finds_the_case_its_answer_made_as_an_exact_hit(
    api,  # type: ignore[no-untyped-def]
) -> None:
    assert len(LONG_QUESTION) > 100
    case = _case_from(LONG_QUESTION, "origin-long")
    case_index_build()

    found = _search(api, LONG_QUESTION)

    assert found["matchLevel"] == "L0"
    assert found["hits"][0]["caseId"] == case.case_id
    assert found["hits"][0]["matchLevel"] == "L0"


def test_a_question_sharing_only_the_first_100_characters_is_no_exact_hit(
    api,  # type: ignore[no-untyped-def]
) -> None:
    _case_from(LONG_QUESTION, "origin-long")
    case_index_build()
    other = LONG_QUESTION[:100] + " 另外订单服务也出现了同样的 504，但数据库监控一切正常。"

    found = _search(api, other)

    assert all(hit["matchLevel"] != "L0" for hit in found["hits"])


def test_the_question_of_a_case_merged_into_another_finds_the_kept_case_exactly(
    api,  # type: ignore[no-untyped-def]
) -> None:
    kept = CaseLibraryFactory(title="支付服务连接池耗尽，网关 504")
    merged = _case_from(LONG_QUESTION, "origin-merged")
    case_merge_into(case_id=merged.case_id, kept_id=kept.case_id, updated_by="ops.curator")
    case_index_build()

    found = _search(api, LONG_QUESTION)

    assert found["matchLevel"] == "L0"
    assert [hit["caseId"] for hit in found["hits"]][:1] == [kept.case_id]


@pytest.mark.django_db(transaction=True)
def test_upgrading_queues_the_cases_made_from_answers_and_their_questions_become_exact_keys(
    api,  # type: ignore[no-untyped-def]
) -> None:
    case = _case_from(LONG_QUESTION, "origin-upgrade")
    CaseLibraryFactory(title="Redis 内存写满")  # written by hand: no question, not queued
    case_index_build()
    # The index as the version before kept it: the title's key only.
    CaseSearchKey.objects.filter(key=f"title:{text_key(LONG_QUESTION)}").delete()
    assert _search(api, LONG_QUESTION)["matchLevel"] != "L0"
    migrate_to(("caselibrary", "0016_case_change_case_index"))

    try:
        migrate_to(("caselibrary", "0017_reindex_for_source_questions"))
        queued = set(CaseChange.objects.values_list("case_id", flat=True))
        run = case_index_pending()
    finally:
        migrate_to()

    assert queued == {case.case_id}
    assert run.embedded == 0
    first = _search(api, LONG_QUESTION)["hits"][0]
    assert (first["caseId"], first["matchLevel"]) == (case.case_id, "L0")
