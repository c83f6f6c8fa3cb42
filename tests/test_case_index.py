"""The case-search index: every change marked by the database, indexed one case at a
time by the indexer, picked up by each serving process, never rebuilt whole."""

import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.utils import timezone

from caselibrary import embedding
from caselibrary.models import CaseChange, CaseIndexState, CaseLibrary, CasePassage
from caselibrary.search_backends import database
from caselibrary.search_backends.base import get_backend
from caselibrary.search_text import search_terms
from caselibrary.selectors import case_index_status, cases_find
from caselibrary.services.cases import case_update, cases_delete
from caselibrary.services.index import (
    INDEXER_LEASE_SECONDS,
    case_index_build,
    case_indexer_run,
    cases_mark_for_reindex,
)
from caselibrary.services.index_pass import case_index_pending
from feedback.services import feedback_submit
from tests.case_index_reads import changed, found_ids, manual_case
from tests.factories import CaseLibraryFactory, DiagnosisSessionFactory, FaultCategoryFactory

pytestmark = pytest.mark.django_db


def test_a_new_case_is_searchable_once_its_change_commits(
    django_capture_on_commit_callbacks,
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        case = manual_case(error_code="OOMKilled")

    # Q_SYNC runs the indexer task inline, as a worker would after the commit.
    assert found_ids("pod OOMKilled") == [case.case_id]
    assert changed() == []


def test_every_way_of_writing_a_case_marks_it_for_the_indexer() -> None:
    saved = CaseLibraryFactory()
    bulk = CaseLibrary.objects.bulk_create([CaseLibraryFactory.build(), CaseLibraryFactory.build()])
    CaseChange.objects.all().delete()

    saved.title = "新标题"
    saved.save()
    CaseLibrary.objects.filter(case_id=bulk[0].case_id).update(solution="重启")
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO case_library (case_id, source_type, fault_category, title, root_cause,"
            " solution, created_by, updated_by, created_at, updated_at)"
            " VALUES (%s, 'MANUAL', 'GENERAL', 'SQL', 'x', 'y', 'sql', 'sql', %s, %s)",
            ["00000000-0000-4000-8000-000000000001", timezone.now(), timezone.now()],
        )
        cursor.execute("DELETE FROM case_library WHERE case_id = %s", [bulk[1].case_id])

    assert changed() == [
        saved.case_id,
        bulk[0].case_id,
        "00000000-0000-4000-8000-000000000001",
        bulk[1].case_id,
    ]


def assert_a_case_whose_id_sql_changes_is_found_by_its_new_id_only() -> None:
    case = manual_case(error_code="OOMKilled")
    case_index_build()
    new_id = "00000000-0000-4000-8000-000000000002"

    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE case_library SET case_id = %s WHERE case_id = %s", [new_id, case.case_id]
        )
    case_index_pending()

    assert found_ids("pod OOMKilled") == [new_id]
    assert not CasePassage.objects.filter(case_id=case.case_id).exists()


def test_a_case_whose_id_sql_changes_is_found_by_its_new_id_only() -> None:
    assert_a_case_whose_id_sql_changes_is_found_by_its_new_id_only()


@pytest.mark.django_db(transaction=True)
def test_migrate_replaces_the_update_trigger_of_an_earlier_version() -> None:
    # A database migrated before: its update trigger marked the new id only.
    earlier = "INSERT INTO case_change (case_id) VALUES (NEW.case_id)"
    each_row = (
        " BEGIN " + earlier + "; END"
        if connection.vendor == "sqlite"
        else " FOR EACH ROW " + earlier
    )
    with connection.cursor() as cursor:
        cursor.execute("DROP TRIGGER case_library_change_upd_ids")
        cursor.execute(
            "CREATE TRIGGER case_library_change_upd AFTER UPDATE ON case_library" + each_row
        )

    call_command("migrate", verbosity=0)

    # A test of its own transaction: the taxonomy may have been flushed by one before.
    FaultCategoryFactory(code="DEPENDENCY")
    assert_a_case_whose_id_sql_changes_is_found_by_its_new_id_only()


def test_an_edit_of_the_text_is_embedded_again_but_a_category_change_is_not() -> None:
    case = manual_case()
    case_index_build()

    case_update(case=case, updated_by="ops.curator", fault_category="CAPACITY")
    unchanged = case_index_pending()
    case_update(case=case, updated_by="ops.curator", solution="3. 开启 lazyfree")
    edited = case_index_pending()

    assert (unchanged.cases, unchanged.embedded) == (1, 0)
    assert (edited.cases, edited.embedded) == (1, 1)
    texts = CasePassage.objects.filter(case_id=case.case_id).values_list("text", flat=True)
    assert "3. 开启 lazyfree" in texts


def test_a_deleted_case_leaves_the_index(django_capture_on_commit_callbacks) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        case = manual_case(error_code="OOMKilled")
    with django_capture_on_commit_callbacks(execute=True):
        cases_delete(case_ids=[case.case_id])

    assert found_ids("pod OOMKilled") == []
    assert not CasePassage.objects.filter(case_id=case.case_id).exists()


def test_a_serving_process_picks_up_what_the_indexer_wrote(settings) -> None:
    settings.CASE_SEARCH_REFRESH_SECONDS = 0
    first = CaseLibraryFactory(title="Kafka consumer lag keeps growing", error_code=None)
    case_index_build()
    assert found_ids("kafka consumer lag growing") == [first.case_id]  # vectors now loaded

    second = CaseLibraryFactory(title="磁盘写满：/var/log 日志未轮转", error_code=None)
    case_index_build()
    CaseLibrary.objects.filter(case_id=first.case_id).delete()
    case_index_build()

    assert found_ids("日志把磁盘写满了") == [second.case_id]
    held = get_backend().vectors()
    assert first.case_id not in held and second.case_id in held  # the deleted case's vectors
    lexical = get_backend().lexical(search_terms("kafka consumer lag keeps growing"), 5)
    assert first.case_id not in {pid.rpartition(":")[0] for pid, _ in lexical}  # its terms too


def test_only_one_indexer_runs_at_a_time() -> None:
    CaseLibraryFactory()
    CaseIndexState.objects.update_or_create(id=1, defaults={"building_since": timezone.now()})

    assert case_indexer_run(seconds=0) is None
    assert len(changed()) == 1  # left for the indexer that holds the lease


def test_a_reindex_in_an_open_transaction_with_the_index_held_refuses_at_once() -> None:
    # Each test runs inside a transaction: the worker's indexer could never see the
    # changes it waits for, so waiting would never end.
    CaseLibraryFactory()
    CaseIndexState.objects.update_or_create(id=1, defaults={"building_since": timezone.now()})

    with pytest.raises(CommandError, match="commit first, then index"):
        call_command("reindex_cases", "--all", stdout=io.StringIO(), stderr=io.StringIO())


def test_an_indexer_that_died_does_not_block_the_next() -> None:
    CaseLibraryFactory()
    long_ago = timezone.now() - timezone.timedelta(seconds=INDEXER_LEASE_SECONDS + 5)
    CaseIndexState.objects.update_or_create(id=1, defaults={"building_since": long_ago})

    assert case_indexer_run(seconds=0) == 1
    assert CaseIndexState.objects.get().building_since is None


def test_searches_keep_answering_while_the_library_is_reindexed() -> None:
    case = CaseLibraryFactory(title="Kafka consumer lag keeps growing", error_code=None)
    case_index_build()
    CasePassage.objects.update(model="an-older-model")  # as after a model upgrade

    assert cases_mark_for_reindex(everything=False) == 1
    # Marked, not yet re-indexed: the old passages still answer by their terms.
    assert found_ids("kafka consumer lag") == [case.case_id]
    call_command("reindex_cases")
    assert set(CasePassage.objects.values_list("model", flat=True)) == {embedding.EMBEDDING_MODEL}
    assert found_ids("kafka consumer lag growing") == [case.case_id]


def test_the_reindex_command_reports_what_it_did(capsys) -> None:
    CaseLibraryFactory.create_batch(3)
    case_index_build()

    call_command("reindex_cases", "--all")

    assert "Re-indexed 3 case(s) (3 marked)." in capsys.readouterr().out


def test_the_index_command_indexes_what_waits_and_reports(capsys) -> None:
    CaseLibraryFactory.create_batch(3)

    call_command("case_index", "--build")
    call_command("case_index")

    out = capsys.readouterr().out
    assert "Indexed 3 changed case(s)." in out
    assert f"3 cases indexed with {embedding.EMBEDDING_MODEL}" in out
    assert case_index_status(waiting=True).requested_at is None


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

    get_backend().forget()  # another process, loading afresh

    assert first
    assert found_ids("redis 延迟抖动 慢查询") == first


def test_a_session_search_works_before_anything_is_indexed(api) -> None:
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


def test_an_automatic_case_indexes_its_answer_once_not_as_cause_and_solution() -> None:
    case = CaseLibraryFactory(title="支付超时", root_cause="同一段回答", solution="同一段回答")
    case_index_build()

    kinds = CasePassage.objects.filter(case_id=case.case_id).values_list("kind", flat=True)
    assert sorted(kinds) == ["root_cause", "title"]


def test_a_long_runbook_is_found_by_its_one_matching_section() -> None:
    sections = "\n\n".join(
        f"## 第 {n} 步：检查无关的子系统 {n}\n\n" + "查看监控面板上的各项指标是否正常。" * 12
        for n in range(8)
    )
    runbook = CaseLibraryFactory(
        title="支付服务运维手册",
        error_code=None,
        root_cause="支付服务的日常巡检与故障处理。",
        solution=sections + "\n\n## 证书过期\n\n"
        "网关 TLS 证书过期会导致全部 HTTPS 请求握手失败，用 cert-manager 续签。",
    )
    CaseLibraryFactory(
        title="CPU 使用率飙高", error_code=None, root_cause="死循环", solution="重启"
    )
    case_index_build()

    assert CasePassage.objects.filter(case_id=runbook.case_id, kind="section").count() >= 8
    found = cases_find(query="网关证书过期，HTTPS 握手失败", limit=3, explain=True)
    assert found.case_ids[0] == runbook.case_id
    assert "证书过期" in found.matches[0].explain["passage"]["text"]


def test_a_process_loads_every_passage_of_a_case_read_over_two_batches(monkeypatch) -> None:
    first = CaseLibraryFactory(title="Kafka consumer lag keeps growing", error_code=None)
    second = CaseLibraryFactory(title="磁盘写满：/var/log 日志未轮转", error_code=None)
    case_index_build()
    stored = CasePassage.objects.count()
    assert stored >= 4  # a title, a root cause and a solution each

    monkeypatch.setattr(database, "LOAD_BATCH", stored // 2 - 1)  # a case split in two
    get_backend().forget()

    assert len(get_backend().vectors()) == stored
    assert found_ids("kafka consumer lag growing")[0] == first.case_id
    assert found_ids("日志把磁盘写满了")[0] == second.case_id


def test_an_import_committed_at_once_queues_one_indexer_task_where_no_worker_runs(
    tmp_path, monkeypatch, django_capture_on_commit_callbacks
) -> None:
    from django_q.models import OrmQ

    monkeypatch.setattr("django_q.conf.Conf.SYNC", False)  # queued for a worker, none runs
    rows = [
        {"title": f"Kafka 消费延迟 {n}", "rootCause": "重平衡风暴", "solution": "调大会话超时"}
        for n in range(20)
    ]
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")

    with django_capture_on_commit_callbacks(execute=True):
        call_command("import_cases", str(path), stdout=io.StringIO(), stderr=io.StringIO())

    assert CaseLibrary.objects.count() == 20
    assert OrmQ.objects.count() == 1
    assert len(changed()) == 20  # each case is marked; the one task indexes them all
