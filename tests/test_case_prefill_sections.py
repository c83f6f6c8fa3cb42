"""A case made by hand from a session starts with the answer split into its root-cause
and solution sections, when the answer has them (headed `## 根因` or led by a
`根因分析：` / `Root cause:` line); otherwise with the whole answer in both. The AUTO case
made on `useful` feedback keeps SPEC §4's rule: the whole answer in both."""

import pytest

from caselibrary.answer_sections import split_answer
from caselibrary.models import CaseLibrary
from caselibrary.selectors import case_draft_from_session
from feedback.demo.sessions import demo_sessions
from feedback.services import feedback_submit
from tests.factories import DiagnosisSessionFactory

SESSIONS = "/admin/diagnosis/diagnosissession/"

CAUSE_ZH = "product-catalog 的老年代被本地缓存占满，Full GC 频繁且回收不掉。"
STEPS_ZH = "1. 先对一个实例摘流后保留现场，再重启恢复服务。\n2. 用 MAT 分析 dump。"
NOTE_ZH = "说明：本次未检索到直接相关的内部文档，建议人工复核。"
DEMO_ZH = f"根因分析：\n{CAUSE_ZH}\n\n处理建议：\n{STEPS_ZH}\n\n{NOTE_ZH}"

CAUSE_EN = "One large transaction on the primary: the replica applies it on one thread."
STEPS_EN = "1. Pause the remaining batches.\n2. Enable parallel replication."
DEMO_EN = f"Root cause:\n{CAUSE_EN}\n\nRecommended steps:\n{STEPS_EN}"


def prefill(answer: str) -> tuple[str, str]:
    draft = case_draft_from_session(
        session_id=DiagnosisSessionFactory(succeeded=True, answer=answer).session_id
    )
    assert draft is not None
    return draft["root_cause"], draft["solution"]


# --- Split: the sections an answer has ---------------------------------------------------


@pytest.mark.django_db
def test_a_chinese_answer_with_labelled_sections_prefills_each_field_with_its_section() -> None:
    root_cause, solution = prefill(DEMO_ZH)

    assert root_cause == CAUSE_ZH
    # What follows the solution (a note, references) stays with it.
    assert solution == f"{STEPS_ZH}\n\n{NOTE_ZH}"


@pytest.mark.django_db
def test_an_english_answer_with_labelled_sections_prefills_each_field_with_its_section() -> None:
    assert prefill(DEMO_EN) == (CAUSE_EN, STEPS_EN)


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param("## 根因\n连接池耗尽。\n\n## 处理步骤\n1. 扩容连接池。", id="headings"),
        pytest.param(
            "### 1. 根本原因\n连接池耗尽。\n### 2. 解决方案\n1. 扩容连接池。",
            id="numbered-headings",
        ),
        pytest.param(
            "## 问题原因：\n连接池耗尽。\n## 修复建议\n1. 扩容连接池。", id="headings-with-colons"
        ),
        pytest.param("**根因：** 连接池耗尽。\n**建议：**\n1. 扩容连接池。", id="bold-labels"),
        pytest.param(
            "**根因**：连接池耗尽。\n**处理建议**：\n1. 扩容连接池。",
            id="bold-labels-outside-colons",
        ),
        pytest.param("原因分析：连接池耗尽。\n处理步骤：\n1. 扩容连接池。", id="labels"),
    ],
)
def test_sections_are_found_by_markdown_heading_or_by_a_leading_label(answer: str) -> None:
    sections = split_answer(answer)

    assert sections is not None
    assert (sections.root_cause, sections.solution) == ("连接池耗尽。", "1. 扩容连接池。")


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param(
            "## Root cause\nThe pool is exhausted.\n## Fix\n1. Grow the pool.", id="headings"
        ),
        pytest.param("Cause: The pool is exhausted.\nRemediation:\n1. Grow the pool.", id="labels"),
        pytest.param(
            "**Root Cause:** The pool is exhausted.\n\n**Next steps:**\n1. Grow the pool.",
            id="bold-labels",
        ),
        pytest.param(
            "ROOT CAUSE:\nThe pool is exhausted.\nSolution:\n1. Grow the pool.", id="upper-case"
        ),
    ],
)
def test_english_labels_are_found_however_they_are_cased(answer: str) -> None:
    sections = split_answer(answer)

    assert sections is not None
    assert (sections.root_cause, sections.solution) == (
        "The pool is exhausted.",
        "1. Grow the pool.",
    )


def test_text_before_the_first_section_stays_with_the_root_cause() -> None:
    answer = "订单写入失败，已定位。\n\n根因：连接池耗尽。\n处理建议：扩容连接池。"

    sections = split_answer(answer)

    assert sections is not None
    assert sections.root_cause == "订单写入失败，已定位。\n\n连接池耗尽。"
    assert sections.solution == "扩容连接池。"


def test_emphasis_after_a_bold_label_stays_in_the_text() -> None:
    sections = split_answer("**根因**：**连接池**耗尽。\n**处理建议**：扩容。")

    assert sections is not None
    assert sections.root_cause == "**连接池**耗尽。"


def test_other_headings_and_labels_stay_in_the_section_they_are_in() -> None:
    answer = (
        "## 根因\n连接池耗尽。\n### 证据\n活跃连接 200/200。\n"
        "## 处理建议\n扩容连接池。\n## 参考资料\nRunbook RB-101。"
    )

    sections = split_answer(answer)

    assert sections is not None
    assert sections.root_cause == "连接池耗尽。\n### 证据\n活跃连接 200/200。"
    assert sections.solution == "扩容连接池。\n## 参考资料\nRunbook RB-101。"


def test_several_sections_of_one_field_are_joined_in_order() -> None:
    answer = "根因：连接池太小。\n处理建议：扩容。\n根因：慢查询占住连接。\n处理建议：加索引。"

    sections = split_answer(answer)

    assert sections is not None
    assert sections.root_cause == "连接池太小。\n\n慢查询占住连接。"
    assert sections.solution == "扩容。\n\n加索引。"


def test_headings_and_labels_inside_a_code_block_are_text() -> None:
    answer = "根因：连接池耗尽。\n处理建议：\n```yaml\n# 处理\nsolution: grow\n根因：x\n```\n完成。"

    sections = split_answer(answer)

    assert sections is not None
    assert sections.root_cause == "连接池耗尽。"
    assert sections.solution == "```yaml\n# 处理\nsolution: grow\n根因：x\n```\n完成。"


def test_windows_line_endings_split_the_same() -> None:
    sections = split_answer(DEMO_EN.replace("\n", "\r\n"))

    assert sections is not None
    assert (sections.root_cause, sections.solution) == (CAUSE_EN, STEPS_EN)


# --- Not split: the whole answer in both, as before -------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param("根因\n处理", id="words-without-a-colon-or-heading"),
        pytest.param("根因：死锁。", id="a-root-cause-alone"),
        pytest.param("处理建议：重启。", id="a-solution-alone"),
        pytest.param("原因在于连接池配置过小：最大连接数为 10。\n建议：扩容。", id="a-sentence"),
        pytest.param("根因：\n处理建议：扩容。", id="an-empty-root-cause"),
        pytest.param("根因：连接池耗尽。\n处理建议：", id="an-empty-solution"),
        pytest.param("```\n根因：x\n处理建议：y\n```", id="labels-only-in-code"),
        pytest.param("", id="empty"),
    ],
)
def test_an_answer_without_both_sections_is_not_split(answer: str) -> None:
    assert split_answer(answer) is None


@pytest.mark.django_db
def test_an_answer_without_sections_prefills_both_fields_with_all_of_it() -> None:
    answer = "连接池耗尽，扩容后恢复。\n建议后续观察。"

    assert prefill(answer) == (answer, answer)


# --- Through the admin, and the AUTO case left alone -------------------------------------


@pytest.mark.django_db
def test_the_sessions_create_case_action_opens_the_form_with_the_demo_answer_split(
    admin_client,
) -> None:
    demo = demo_sessions(1)[0]
    assert demo.session_id == "demo-0001"
    session = DiagnosisSessionFactory(
        session_id=demo.session_id, query=demo.query, succeeded=True, answer=demo.answer
    )

    response = admin_client.post(
        SESSIONS, {"action": "create_case", "_selected_action": [session.pk], "index": 0}
    )
    initial = admin_client.get(response.url).context["adminform"].form.initial

    assert initial["root_cause"].startswith("product-catalog 的老年代被本地缓存占满")
    assert "处理建议" not in initial["root_cause"] and "jmap" not in initial["root_cause"]
    assert initial["solution"].startswith("1. 先对一个实例摘流")
    assert (
        "根因分析" not in initial["solution"]
        and "老年代被本地缓存占满" not in (initial["solution"])
    )


@pytest.mark.django_db
def test_the_auto_case_made_on_useful_feedback_keeps_the_whole_answer_in_both_fields() -> None:
    session = DiagnosisSessionFactory(succeeded=True, answer=DEMO_ZH)

    feedback_submit(session_id=session.session_id, feedback="useful")

    case = CaseLibrary.objects.get(diagnosis_id=session.session_id)
    assert case.root_cause == case.solution == DEMO_ZH
