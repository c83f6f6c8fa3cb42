"""The README's curl session for agent authors works as written."""

import json
import re
import subprocess

import pytest

from diagnosis.models import ApiKey
from tests.processes import ROOT

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def _example() -> str:
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"<!-- agent-example -->\n```sh\n(.*?)```", readme, re.S)
    assert block, "README.md lost its agent example"
    return block.group(1)


def test_the_readme_curl_session_records_completes_and_reads_back(live_server) -> None:
    _, key = ApiKey.objects.create_key(name="readme", scope="agent")
    script = re.sub(r"(?m)^export BASE=.*$", f"export BASE={live_server.url}", _example())
    script = re.sub(r"(?m)^export KEY=.*$", f"export KEY={key}", script)

    result = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert result.returncode == 0, result.stderr
    replies = [json.loads(line) for line in result.stdout.replace("}{", "}\n{").splitlines()]
    started, recorded, completed, session = replies
    assert started["status"] == "RUNNING"
    assert recorded == {"sessionId": "curl-demo-1", "received": 2, "created": 2, "duplicates": 0}
    assert completed["status"] == "SUCCESS"
    assert session["answer"] == "根因：下游 payment-gateway 连接池耗尽。\n1. 扩容连接池\n2. 加熔断"
    assert [i["toolName"] for i in session["toolInvocations"]] == [
        "QueryInternalDocsTools",
        "QueryMetricsTools",
    ]
    # The suite runs tasks inline, so the score is there by the time it is read.
    assert session["selfEvaluation"]["evidence_score"] == 65
