"""Running import_cases on files a test writes, over the taxonomy its rows are filed under."""

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from tests.factories import FaultCategoryFactory


@pytest.fixture(autouse=True)
def _taxonomy() -> None:
    for code in ("GENERAL", "DATABASE", "NETWORK"):
        FaultCategoryFactory(code=code)


def run(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("import_cases", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def failing(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    with pytest.raises(CommandError):
        call_command("import_cases", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def jsonl(path: Path, *rows: dict) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


ROW = {
    "title": "MySQL 主从延迟导致读到旧数据",
    "rootCause": "从库 IO 线程落后，Seconds_Behind_Master 持续 > 300",
    "solution": "1. 检查大事务\n2. 开启并行复制",
    "faultCategory": "DATABASE",
    "errorCode": "ERROR 1205",
}
