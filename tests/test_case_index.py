"""The case-search index: rebuilt after case changes, kept on disk, never in the way."""

import pytest
from django.core.management import call_command
from django.utils import timezone

from caselibrary.models import CaseIndexState, CaseLibrary
from caselibrary.search_index import holder
from caselibrary.selectors import case_index_status, cases_find
from caselibrary.services.cases import case_create_manual, case_update, cases_delete
from caselibrary.services.index import case_index_build, case_index_rebuild
from feedback.services import feedback_submit
from tests.factories import CaseLibraryFactory, DiagnosisSessionFactory

pytestmark = pytest.mark.django_db


def manual_case(**fields: str) -> CaseLibrary:
    return case_create_manual(
        created_by="ops.curator",
        title=fields.get("title", "Redis maxmemory 触发大量 key 淘汰"),
        root_cause=fields.get("root_cause", "maxmemory-policy allkeys-lru，热点 key 被淘汰"),
        solution=fields.get("solution", "1. 扩容 2. 调整 maxmemory"),
        fault_category="DEPENDENCY",
        error_code=fields.get("error_code"),
    )


def found_ids(query: str) -> list[str]:
    return cases_find(query=query, limit=5).case_ids


def test_a_new_case_is_searchable_once_its_change_commits(
    django_capture_on_commit_callbacks,
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        case = manual_case(error_code="OOMKilled")

    # Q_SYNC runs the rebuild task inline, as a worker would after the commit.
    assert found_ids("pod OOMKilled") == [case.case_id]
    assert CaseIndexState.objects.get().requested_at is None


def test_an_edit_of_the_text_or_code_reindexes_but_a_category_change_does_not(
    django_capture_on_commit_callbacks,
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        case = manual_case()
    version = case_index_status().loaded_version

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        case_update(case=case, updated_by="ops.curator", fault_category="CAPACITY")
    assert callbacks == []

    holder.forget()
    with django_capture_on_commit_callbacks(execute=True):
        case_update(case=case, updated_by="ops.curator", error_code="enospc")
    assert case_index_status().loaded_version != version
    assert found_ids("write failed: no space left on device") == [case.case_id]
    assert CaseLibrary.objects.get(pk=case.pk).error_code == "ENOSPC"


def test_a_deleted_case_leaves_the_index(django_capture_on_commit_callbacks) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        case = manual_case(error_code="ORA-01555")
        other = manual_case(title="ORA-01555 on the reporting replica", error_code="ORA-01555")
    with django_capture_on_commit_callbacks(execute=True):
        cases_delete(case_ids=[case.case_id])

    assert found_ids("ORA-01555") == [other.case_id]


def test_a_rebuild_nobody_asked_for_does_nothing() -> None:
    CaseLibraryFactory()

    assert case_index_rebuild() is None
    assert case_index_status().loaded_version is None


def test_a_rebuild_while_another_runs_leaves_the_request_for_it() -> None:
    CaseLibraryFactory()
    now = timezone.now()
    CaseIndexState.objects.filter(id=1).update(requested_at=now, building_since=now)

    assert case_index_rebuild() is None
    assert CaseIndexState.objects.get().requested_at == now  # the running build sees it


def test_a_build_that_died_long_ago_does_not_block_the_next(settings) -> None:
    CaseLibraryFactory(error_code="ERROR 1040")
    long_ago = timezone.now() - timezone.timedelta(seconds=settings.CASE_INDEX_BUILD_TIMEOUT + 5)
    CaseIndexState.objects.filter(id=1).update(requested_at=timezone.now(), building_since=long_ago)

    result = case_index_rebuild()

    assert result is not None and result.cases == 1
    state = CaseIndexState.objects.get()
    assert (state.requested_at, state.building_since, state.cases) == (None, None, 1)


def test_a_search_during_a_rebuild_answers_from_the_index_it_has() -> None:
    case = CaseLibraryFactory(error_code="ERROR 1213", title="MySQL deadlock on t_stock_lock")
    case_index_build()
    CaseIndexState.objects.filter(id=1).update(building_since=timezone.now())
    CaseLibraryFactory(error_code="ERROR 1213", title="another deadlock")

    assert found_ids("Deadlock found: ERROR 1213") == [case.case_id]


def test_the_index_survives_a_restart(case_index_dir) -> None:
    case = CaseLibraryFactory(title="Nginx 499 spikes when the upstream is slow")
    case_index_build()

    holder.forget()  # a new process: nothing loaded, only the files on disk

    assert found_ids("nginx 499 spikes slow upstream") == [case.case_id]
    assert (case_index_dir / "CURRENT").exists()


def test_old_versions_are_removed_but_the_previous_one_stays(case_index_dir) -> None:
    CaseLibraryFactory()
    versions = [case_index_build().version for _ in range(4)]

    kept = sorted(p.name for p in case_index_dir.iterdir() if p.is_dir())
    assert kept == sorted(versions[-2:])


def test_an_empty_library_has_an_index_that_finds_nothing() -> None:
    result = case_index_build()

    assert result.cases == 0
    assert cases_find(query="anything at all", limit=5).match_level == "NONE"


def test_the_command_builds_and_reports(capsys) -> None:
    CaseLibraryFactory.create_batch(3)

    call_command("case_index", "--build")
    call_command("case_index")

    out = capsys.readouterr().out
    assert "Indexed 3 cases" in out
    assert "3 cases (built" in out


def test_findability_is_checked_and_kept_for_the_overview(capsys) -> None:
    CaseLibraryFactory(title="Kafka consumer lag after a rebalance storm", error_code=None)
    CaseLibraryFactory(title="磁盘写满：/var/log 日志未轮转", error_code="ENOSPC")
    CaseLibraryFactory(title="MySQL 连接数打满", error_code="ERROR 1040")
    case_index_build()

    call_command("check_findability")

    report = CaseIndexState.objects.get().findability
    assert (report["cases"], report["with_code"]) == (3, 2)
    assert report["title_l0"] == 1.0
    assert report["code_top3"] == 1.0
    assert "3 cases checked" in capsys.readouterr().out


def test_findability_without_an_index_says_to_build_one() -> None:
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="case_index --build"):
        call_command("check_findability")


def test_searches_return_the_same_cases_in_the_same_order_every_time() -> None:
    for n in range(6):
        CaseLibraryFactory(
            title=f"Redis 延迟抖动 {n}", root_cause="慢查询 KEYS *", solution="禁用 KEYS"
        )
    case_index_build()
    first = found_ids("redis 延迟抖动 慢查询")

    holder.forget()
    case_index_build()

    assert found_ids("redis 延迟抖动 慢查询") == first
    assert first == sorted(first)  # equal scores rank in case-id order on every database


def test_a_session_search_still_works_with_no_index(api) -> None:
    DiagnosisSessionFactory(session_id="early")
    CaseLibraryFactory(error_code="HTTP 503")

    body = api.post(
        "/api/cases/search",
        {"query": "HTTP 503 from the gateway", "sessionId": "early"},
        format="json",
    ).json()

    assert body["matchLevel"] == "L0"


def test_a_case_made_by_useful_feedback_is_searchable_after_the_commit(
    django_capture_on_commit_callbacks,
) -> None:
    DiagnosisSessionFactory(
        session_id="origin",
        succeeded=True,
        query="inventory-api 连接数打满 Too many connections",
        answer="根因：连接池配置过大。解决：1. 调小 maximum-pool-size",
    )

    with django_capture_on_commit_callbacks(execute=True):
        case_id = feedback_submit(session_id="origin", feedback="useful").case_id

    assert found_ids("inventory-api 连接数打满 Too many connections") == [case_id]


def test_a_library_indexed_in_shards_answers_as_one(tmp_path) -> None:
    from caselibrary.search_index import CaseIndex, CaseText, build, current_version

    cases = [
        CaseText(f"{n:04d}", f"Redis 延迟抖动 {n}", "慢查询 KEYS *", "禁用 KEYS", None)
        for n in range(7)
    ] + [
        CaseText(
            "0100", "Kafka consumer lag after a rebalance storm", "poll timeout", "tune", None
        ),
        CaseText("0101", "MySQL 锁等待超时", "长事务", "kill", "ERROR 1205"),
    ]
    results = {}
    for shard_size in (100, 2):
        directory = tmp_path / str(shard_size)
        build(cases, directory, shard_size=shard_size)
        index = CaseIndex(directory / current_version(directory))
        results[shard_size] = [
            [f.case_id for f in index.find(query=q, limit=3, threshold=0.35)]
            for q in ("kafka consumer lag rebalance", "ERROR 1205", "MySQL 锁等待超时", "nothing")
        ]
        assert len(index.shards) == (1 if shard_size == 100 else 5)

    assert results[2] == results[100] == [["0100"], ["0101"], ["0101"], []]


def test_an_automatic_case_indexes_its_answer_once_not_as_cause_and_solution() -> None:
    from caselibrary.search_index import CaseText, case_terms

    answer = "连接池耗尽 connection pool exhausted"
    same = CaseText("c1", "订单超时", answer, answer + "\n", None)
    distinct = CaseText("c2", "订单超时", answer, "扩容连接池", None)

    terms = case_terms(same)

    assert terms.count("exhausted") == 1
    assert case_terms(distinct).count("exhausted") == 1
    assert len(case_terms(distinct)) > len(terms)
