"""Markdown runbooks become cases: title, mapped sections, codes, a stable content hash."""

import pytest

from caselibrary.runbooks import (
    TITLE_MAX_LENGTH,
    RunbookError,
    field_for_heading,
    parse_runbook,
    read_runbook,
)

CHINESE = """# 订单服务 KubePodCrashLooping：启动时连不上配置中心

适用于 order-service 的所有环境。

## 一、现象：
- 告警 KubePodCrashLooping 持续 10 分钟，pod 状态 CrashLoopBackOff

## 2. 可能原因
配置中心地址写错。

## 处理步骤
### 1. 确认日志
```bash
# 看上一次崩溃的日志
kubectl logs order-service-0 --previous
```
### 2. 修正配置
改回正确的地址后滚动重启。

## 影响范围
下单全部失败。
"""

ENGLISH = """Redis replica lag runbook
=========================

### Symptoms
RedisReplicationBroken fires.

### Root Cause:
The backlog is too small.

### Resolution
Raise `repl-backlog-size`.

### Escalation
Page the cache on-call.
"""


def test_a_chinese_runbook_maps_its_sections_to_the_case_fields():
    runbook = parse_runbook(CHINESE, source="runbooks/order.md")

    assert runbook.title == "订单服务 KubePodCrashLooping：启动时连不上配置中心"
    assert runbook.description.startswith("适用于 order-service")
    assert "CrashLoopBackOff" in runbook.description
    assert runbook.root_cause == "配置中心地址写错。"
    assert "kubectl logs order-service-0 --previous" in runbook.solution
    assert "改回正确的地址" in runbook.solution
    assert runbook.extra_sections == [("影响范围", "下单全部失败。")]


def test_every_section_is_kept_in_order_and_a_shell_comment_is_not_a_heading():
    runbook = parse_runbook(CHINESE, source="order.md")

    assert [heading for heading, _ in runbook.sections] == [
        "一、现象：",
        "2. 可能原因",
        "处理步骤",
        "影响范围",
    ]
    assert "# 看上一次崩溃的日志" in runbook.solution


def test_an_english_runbook_with_an_underlined_title_and_deeper_headings():
    runbook = parse_runbook(ENGLISH, source="redis.md")

    assert runbook.title == "Redis replica lag runbook"
    assert runbook.description == "RedisReplicationBroken fires."
    assert runbook.root_cause == "The backlog is too small."
    assert runbook.solution == "Raise `repl-backlog-size`."
    assert runbook.extra_sections == [("Escalation", "Page the cache on-call.")]


def test_codes_and_alert_names_are_found_in_the_whole_text():
    runbook = parse_runbook(CHINESE, source="order.md")

    assert runbook.alert_names == ["KubePodCrashLooping"]
    assert runbook.error_codes == ["KubePodCrashLooping", "CrashLoopBackOff"]
    assert runbook.error_code == "KubePodCrashLooping"


@pytest.mark.parametrize(
    ("heading", "field"),
    [
        ("现象", "description"),
        ("告警描述：", "description"),
        ("1. 症状", "description"),
        ("SYMPTOMS", "description"),
        ("Description", "description"),
        ("根因分析", "root_cause"),
        ("三、可能原因", "root_cause"),
        ("原因分析:", "root_cause"),
        ("Root cause", "root_cause"),
        ("(2) Cause", "root_cause"),
        ("排查步骤", "solution"),
        ("解决方案 / Solution", "solution"),
        ("处置", "solution"),
        ("解决", "solution"),
        ("解决办法", "solution"),
        ("Step 4: Remediation", "solution"),
        ("Resolution:", "solution"),
        ("steps", "solution"),
        ("影响范围", None),
        ("Escalation", None),
        ("PromQL", None),
        ("Rollback", None),
        ("Causeway notes", None),
    ],
)
def test_headings_map_to_fields_in_either_language(heading, field):
    assert field_for_heading(heading) == field


def test_a_runbook_without_a_title_heading_names_the_file_and_line():
    with pytest.raises(RunbookError) as raised:
        parse_runbook("\n\n## 现象\n磁盘满了\n", source="runbooks/disk.md")

    assert raised.value.source == "runbooks/disk.md"
    assert raised.value.line == 3
    assert str(raised.value).startswith("runbooks/disk.md:3: ")


def test_an_empty_file_and_a_title_only_in_a_code_block_are_refused():
    with pytest.raises(RunbookError):
        parse_runbook("", source="empty.md")
    with pytest.raises(RunbookError):
        parse_runbook("```\n# not a title\n```\n", source="code.md")


def test_an_overlong_title_is_cut_to_the_case_limit_at_a_word():
    runbook = parse_runbook("# " + "disk full again " * 40 + "\n## Cause\nlogs\n", source="x.md")

    assert len(runbook.title) <= TITLE_MAX_LENGTH
    assert runbook.title.endswith("…")
    assert runbook.title.startswith("disk full again")


def test_the_content_hash_ignores_line_ends_and_trailing_spaces_but_not_words():
    first = parse_runbook(ENGLISH, source="a.md")
    same = parse_runbook("\ufeff" + ENGLISH.replace("\n", "  \r\n") + "\n\n", source="b.md")
    changed = parse_runbook(ENGLISH.replace("too small", "too big"), source="a.md")

    assert first.content_hash == same.content_hash
    assert first.content_hash != changed.content_hash
    assert len(first.content_hash) == 64


def test_front_matter_is_skipped_before_the_title():
    runbook = parse_runbook("---\nowner: sre\n---\n# Title here\n## Fix\ndo it\n", source="f.md")

    assert runbook.title == "Title here"
    assert runbook.solution == "do it"


def test_a_file_that_is_not_utf8_is_refused_with_its_line(tmp_path):
    path = tmp_path / "gbk.md"
    path.write_bytes("# 标题\n\n## 现象\n".encode() + "磁盘满".encode("gbk"))

    with pytest.raises(RunbookError) as raised:
        read_runbook(path)

    assert raised.value.line == 4
    assert "UTF-8" in raised.value.message


def test_html_comments_are_no_part_of_the_case_but_stay_in_code_samples():
    text = (
        "<!-- markdownlint-disable MD013 -->\n"
        "# Disk full on order-db\n"
        "<!-- owner: dba team, see KubePodCrashLooping runbook -->\n"
        "## Symptoms\n"
        "Writes fail. <!-- TODO screenshot --> Reads work.\n"
        "<!--\n"
        "## Solution\n"
        "an old fix nobody should follow\n"
        "-->\n"
        "## Fix\n"
        "Free space: `echo '<!-- kept -->'`\n"
        "```html\n"
        "<!-- a comment in a sample -->\n"
        "```\n"
    )

    runbook = parse_runbook(text, source="disk.md")

    assert runbook.title == "Disk full on order-db"
    assert runbook.description == "Writes fail.  Reads work."
    assert "old fix" not in runbook.solution
    assert runbook.solution.startswith("Free space: `echo '<!-- kept -->'`")
    assert "<!-- a comment in a sample -->" in runbook.solution
    assert "KubePodCrashLooping" not in runbook.alert_names
    assert [heading for heading, _ in runbook.sections] == ["Symptoms", "Fix"]


def test_a_comment_before_the_title_is_not_the_line_a_missing_title_is_reported_at():
    with pytest.raises(RunbookError) as raised:
        parse_runbook("<!-- generated -->\n\nno heading here\n", source="f.md")

    assert raised.value.line == 3
