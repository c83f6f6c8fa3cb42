"""A runbook's every section reaches its case, as the search-quality evaluation reads it:
the solution first, then each other section under its own heading."""

import io
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from caselibrary.models import CaseLibrary
from caselibrary.runbooks import case_texts, field_for_heading, parse_runbook, read_runbook
from tests.factories import FaultCategoryFactory
from tests.search_quality.evaluate import RUNBOOKS, load_runbook_cases

TESTS = Path(__file__).resolve().parent
PROMETHEUS_OPERATOR = TESTS / "import_runbooks" / "prometheus-operator-kube-pod-crash-looping.md"

WITH_EXTRA_SECTIONS = """# 支付网关 502 激增

## 现象
网关返回大量 502。

## 影响范围
支付成功率下降到 80%。

## 根因
上游连接池耗尽。

## 处理步骤
扩大连接池并滚动重启。

## Verification
502 比例回到 0.1% 以下。

## 回滚

## Rollback
`helm rollback payment-gateway`.
"""


def test_every_section_is_kept_after_the_solution_under_its_own_heading():
    runbook = parse_runbook(WITH_EXTRA_SECTIONS, source="gw.md")

    root_cause, solution = case_texts(runbook)

    assert root_cause == "网关返回大量 502。\n\n上游连接池耗尽。"
    assert solution == (
        "扩大连接池并滚动重启。\n\n"
        "## 影响范围\n\n支付成功率下降到 80%。\n\n"
        "## Verification\n\n502 比例回到 0.1% 以下。\n\n"
        "## Rollback\n\n`helm rollback payment-gateway`."
    )


def test_a_runbook_without_a_solution_section_has_its_other_sections_as_the_solution():
    runbook = parse_runbook("# Disk\n\n## Symptoms\nFull.\n\n## Notes\nAsk ops.\n", source="d.md")

    assert case_texts(runbook) == ("Full.", "## Notes\n\nAsk ops.")


def test_the_evaluation_reads_each_labelled_runbook_as_the_import_does():
    cases = {case["key"]: case for case in load_runbook_cases()}
    assert len(cases) >= 30

    for path in sorted(RUNBOOKS.glob("*.md")):
        root_cause, solution = case_texts(read_runbook(path, source=path.name))
        assert (cases[path.stem]["root_cause"], cases[path.stem]["solution"]) == (
            root_cause,
            solution,
        ), path.name


@pytest.mark.parametrize(
    ("heading", "field"),
    [
        ("Meaning", "description"),
        ("Diagnosis", "solution"),
        ("Impact", None),
        ("问题描述", "description"),
        ("故障原因", "root_cause"),
        ("根本原因", "root_cause"),
        ("Possible causes", "root_cause"),
        ("Possible cause", "root_cause"),
        ("Workaround", "solution"),
        ("应急预案", "solution"),
        ("恢复步骤", "solution"),
        ("Steps to reproduce", "description"),
        ("2. Steps to reproduce:", "description"),
        ("Steps", "solution"),
        ("Mitigation", "solution"),
    ],
)
def test_the_common_public_headings_map_to_the_case_fields(heading, field):
    assert field_for_heading(heading) == field


def test_a_prometheus_operator_runbook_maps_meaning_diagnosis_and_mitigation():
    runbook = read_runbook(PROMETHEUS_OPERATOR)

    root_cause, solution = case_texts(runbook)

    assert runbook.title == "KubePodCrashLooping"
    assert root_cause.startswith("A container of the pod keeps exiting")
    assert solution.startswith("Find the pod and the container that restarts:")
    assert "--previous" in solution and "rollout undo" in solution
    assert solution.endswith("## Impact\n\n" + dict(runbook.sections)["Impact"])


# --- The import ------------------------------------------------------------------------


@pytest.fixture
def _taxonomy() -> None:
    FaultCategoryFactory(code="GENERAL")


def run_import(path: Path) -> str:
    out = io.StringIO()
    call_command("import_cases", str(path), stdout=out, stderr=io.StringIO())
    return out.getvalue()


@pytest.mark.django_db
@pytest.mark.usefixtures("_taxonomy", "admin_in_english")
def test_the_import_keeps_every_section_of_a_runbook_that_has_a_solution(tmp_path):
    path = tmp_path / "gw.md"
    path.write_text(WITH_EXTRA_SECTIONS, "utf-8")

    run_import(path)

    case = CaseLibrary.objects.get()
    assert (case.root_cause, case.solution) == case_texts(
        parse_runbook(WITH_EXTRA_SECTIONS, source="gw.md")
    )
    assert "## Verification" in case.solution and "helm rollback" in case.solution


@pytest.mark.django_db
@pytest.mark.usefixtures("_taxonomy", "admin_in_english")
def test_a_prometheus_operator_runbook_is_imported_with_its_alert_as_code():
    out = run_import(PROMETHEUS_OPERATOR)

    assert "1 case was created" in out
    case = CaseLibrary.objects.get()
    assert case.error_code == "KubePodCrashLooping"
    assert case.solution.endswith(
        "## Impact\n\n" + dict(read_runbook(PROMETHEUS_OPERATOR).sections)["Impact"]
    )


@pytest.mark.django_db
@pytest.mark.usefixtures("_taxonomy", "admin_in_english")
def test_a_runbook_whose_other_sections_overflow_the_solution_is_refused_as_the_api_would(
    tmp_path,
):
    path = tmp_path / "long.md"
    path.write_text(
        "# 磁盘满\n\n## 根因\n日志未轮转。\n\n## 处理步骤\n清理\n\n## 附录\n"
        + "旧日志清单。" * 40_000
        + "\n",
        "utf-8",
    )
    err = io.StringIO()

    with pytest.raises(CommandError):
        call_command("import_cases", str(path), stdout=io.StringIO(), stderr=err)

    assert "solution: Ensure this field has no more than 200000 characters." in err.getvalue()
    assert not CaseLibrary.objects.exists()
