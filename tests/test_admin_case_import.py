"""The admin's "Import cases" page."""

import html
import json

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from caselibrary.models import CaseLibrary
from tests.factories import FaultCategoryFactory
from tests.page_text import text

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_in_english")]

URL = "/admin/caselibrary/caselibrary/import/"
ROW = {"title": "DNS 解析超时", "rootCause": "CoreDNS 副本不足", "solution": "扩容 CoreDNS"}


@pytest.fixture(autouse=True)
def _taxonomy() -> None:
    FaultCategoryFactory(code="GENERAL")


def upload(name: str, content: bytes, **extra: object) -> dict:
    return {"file": SimpleUploadedFile(name, content), **extra}


def test_the_case_list_links_the_import_page(admin_client) -> None:
    assert URL in admin_client.get("/admin/caselibrary/caselibrary/").content.decode()
    assert admin_client.get(URL).status_code == 200


def test_uploading_a_jsonl_file_imports_it_once(admin_client) -> None:
    content = (json.dumps(ROW, ensure_ascii=False) + "\n").encode()

    first = admin_client.post(URL, upload("cases.jsonl", content), follow=True)
    again = admin_client.post(URL, upload("cases.jsonl", content), follow=True)

    assert "1 case created, 0 updated, 0 unchanged." in text(first)
    assert "0 cases created, 0 updated, 1 unchanged." in text(again)
    case = CaseLibrary.objects.get()
    assert (case.title, case.source_type, case.created_by) == ("DNS 解析超时", "MANUAL", "admin")


def test_a_dry_run_upload_writes_nothing(admin_client) -> None:
    content = (json.dumps(ROW, ensure_ascii=False) + "\n").encode()

    response = admin_client.post(URL, upload("cases.jsonl", content, dry_run="on"), follow=True)

    assert "Dry run: 1 case would be created" in text(response)
    assert not CaseLibrary.objects.exists()


def test_a_bad_row_is_shown_with_its_line_and_nothing_is_written(admin_client) -> None:
    content = b"title,rootCause,solution\nok,ok,ok\n=1+1,x,y\n"

    response = admin_client.post(URL, upload("cases.csv", content))

    assert response.status_code == 400
    assert "cases.csv:3: title looks like a spreadsheet formula" in text(response)
    assert not CaseLibrary.objects.exists()


def test_a_file_of_another_kind_is_refused(admin_client) -> None:
    response = admin_client.post(URL, upload("cases.xlsx", b"PK\x03\x04"))

    assert "Upload a .jsonl, .csv or .md file." in text(response)


def test_a_100_mb_upload_is_refused_before_it_is_read(admin_client) -> None:
    big = b'{"title": "x", "rootCause": "y", "solution": "z"}\n' * (100 * 2**20 // 50)

    response = admin_client.post(URL, upload("cases.jsonl", big))

    assert response.status_code == 413
    assert "The file is too large: the limit is 10 MB." in text(response)
    assert not CaseLibrary.objects.exists()


@pytest.mark.parametrize(("group", "allowed"), [("curator", True), ("reviewer", False)])
def test_only_curators_may_import(group, allowed) -> None:
    user = get_user_model().objects.create_user(f"ops.{group}", is_staff=True)
    user.groups.add(Group.objects.get(name=group))
    client = Client()
    client.force_login(user)
    content = (json.dumps(ROW, ensure_ascii=False) + "\n").encode()

    response = client.post(URL, upload("cases.jsonl", content))

    assert (response.status_code == 302) is allowed
    assert CaseLibrary.objects.exists() is allowed


def test_the_upload_still_needs_the_csrf_token(admin_user) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(admin_user)
    content = (json.dumps(ROW, ensure_ascii=False) + "\n").encode()

    response = client.post(URL, upload("cases.jsonl", content))

    assert response.status_code == 403
    assert not CaseLibrary.objects.exists()


def test_uploading_a_markdown_runbook_makes_its_case(admin_client) -> None:
    from tests.processes import ROOT

    runbook = ROOT / "tests" / "import_runbooks" / "jvm-old-gen-filling-up.md"

    response = admin_client.post(URL, upload(runbook.name, runbook.read_bytes()), follow=True)

    assert "1 case created" in text(response)
    case = CaseLibrary.objects.get()
    assert (case.title, case.error_code) == (
        "JVM 老年代持续上涨、Full GC 频繁：JvmMemoryFillingUp",
        "JvmMemoryFillingUp",
    )


def test_two_different_runbooks_uploaded_under_one_name_are_two_cases(admin_client) -> None:
    from tests.processes import ROOT

    books = sorted((ROOT / "tests" / "import_runbooks").glob("*.md"))[:2]
    for book in books:
        admin_client.post(URL, upload("README.md", book.read_bytes()), follow=True)
    admin_client.post(URL, upload("README.md", books[0].read_bytes()), follow=True)

    assert CaseLibrary.objects.count() == 2


def test_a_runbook_without_a_heading_is_refused_with_its_line(admin_client) -> None:
    response = admin_client.post(URL, upload("notes.md", "\n\n只是笔记\n".encode()))

    assert response.status_code == 400
    assert "notes.md:3: no title" in text(response)


def line(row: dict) -> str:
    return json.dumps(row, ensure_ascii=False) + "\n"


# A bad file of each kind, with what the page says of it in the console's two languages.
# Where the file has a good row too, nothing of it is imported either.
BAD_FILES = {
    "not UTF-8": (
        "gbk.csv",
        "title,rootCause,solution\n磁盘满,日志,清理\n".encode("gbk"),
        "gbk.csv:2: 不是 UTF-8 文本（偏移 25 处的字节 0xb4）；请将文件另存为 UTF-8",
        "gbk.csv:2: not UTF-8 text (byte 0xb4 at offset 25); save the file as UTF-8",
    ),
    "no title": (
        "bad.jsonl",
        (line(ROW) + line({"rootCause": "根因", "solution": "处理"})).encode(),
        "bad.jsonl:2: title: 该字段是必填项。",
        "bad.jsonl:2: title: This field is required.",
    ),
    "blank title": (
        "bad.jsonl",
        line({**ROW, "title": " "}).encode(),
        "bad.jsonl:1: title: 该字段不能为空。",
        "bad.jsonl:1: title: This field may not be blank.",
    ),
    "unknown category": (
        "cases.jsonl",
        (line(ROW) + line({**ROW, "title": "另一个", "faultCategory": "X"})).encode(),
        "cases.jsonl:2: faultCategory “X” 不在故障分类中",
        'cases.jsonl:2: faultCategory "X" is not in the taxonomy',
    ),
    "unknown column": (
        "cases.csv",
        b"title,rootCause,solution,severity\na,b,c,high\n",
        "cases.csv:1: 未知的列：severity",
        "cases.csv:1: unknown column(s): severity",
    ),
    "formula": (
        "cases.csv",
        b"title,rootCause,solution\nok,ok,ok\n=1+1,x,y\n",
        "cases.csv:3: title 看起来是电子表格公式（'=1+1'）；若要作为文本保留，请在单元格开头加 '",
        "cases.csv:3: title looks like a spreadsheet formula ('=1+1'); "
        "start the cell with ' to keep it as text",
    ),
    "runbook without a solution": (
        "disk.md",
        "# 磁盘满\n\n## 根因\n日志未轮转\n".encode(),
        "disk.md: 没有处理步骤章节（处理步骤 / 解决方案 / solution）",
        "disk.md: no solution section (处理步骤 / 解决方案 / solution)",
    ),
    "runbook without a title": (
        "notes.md",
        "\n\n只是笔记\n".encode(),
        "notes.md:3: 没有标题：运维手册应以 '# ' 标题开头",
        "notes.md:3: no title: a runbook starts with a '# ' heading",
    ),
}


def shown(response) -> str:  # type: ignore[no-untyped-def]
    return html.unescape(text(response))


@pytest.mark.parametrize("kind", BAD_FILES)
def test_a_bad_file_is_explained_in_the_consoles_language(admin_client, settings, kind) -> None:
    name, content, chinese, english = BAD_FILES[kind]

    settings.LANGUAGE_CODE = "zh-hans"  # the console's default
    in_chinese = admin_client.post(URL, upload(name, content))
    settings.LANGUAGE_CODE = "en"
    in_english = admin_client.post(URL, upload(name, content))

    assert (in_chinese.status_code, in_english.status_code) == (400, 400)
    assert chinese in shown(in_chinese)
    assert english not in shown(in_chinese)
    assert english in shown(in_english)
    assert not CaseLibrary.objects.exists()
