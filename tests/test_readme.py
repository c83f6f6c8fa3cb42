"""The README's five-minute walk works as written, against a live server."""

import json
import re
import subprocess

import pytest

from caselibrary.models import CaseIndexState, CaseLibrary
from diagnosis.models import ApiKey
from tests.processes import ROOT

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def _walk() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- walk -->\n```bash\n(.*?)```\n<!-- /walk -->", readme, re.S)
    assert block, "README.md lost its walk"
    return block.group(1)


def _replies(output: str) -> list[dict]:
    """The JSON documents curl printed one after another."""
    decoder, replies, at = json.JSONDecoder(), [], 0
    while at < len(output):
        if output[at].isspace():
            at += 1
            continue
        reply, at = decoder.raw_decode(output, at)
        replies.append(reply)
    return replies


def test_the_readme_walk_scores_rates_makes_a_case_and_finds_it(live_server) -> None:
    # The database as `migrate` leaves it (a transactional test starts from a flushed one).
    CaseIndexState.objects.get_or_create(id=1)
    _, key = ApiKey.objects.create_key(name="readme", scope="full")
    # Only the two lines that name the server and the key change: the curl lines run as
    # they are written.
    script = re.sub(r"(?m)^export BASE=.*$", f"export BASE={live_server.url}", _walk())
    script = re.sub(r"(?m)^export KEY=.*$", f"export KEY={key}", script)

    result = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert result.returncode == 0, result.stderr
    started, recorded, completed, scored, rated, second, search = _replies(result.stdout)
    assert (started["sessionId"], started["status"]) == ("walk-1", "RUNNING")
    assert (recorded["received"], recorded["created"]) == (2, 2)
    assert completed["status"] == "SUCCESS"
    assert scored["selfEvaluation"]["evidence_score"] == 65
    assert [i["toolName"] for i in scored["toolInvocations"]] == [
        "QueryInternalDocsTools",
        "QueryMetricsTools",
    ]
    case = CaseLibrary.objects.get(diagnosis_id="walk-1")
    assert rated == {"success": True, "message": "反馈已记录", "caseId": case.case_id}
    assert second["status"] == "RUNNING"
    assert search["hits"][0]["caseId"] == case.case_id
    assert search["matchLevel"] == "L0"  # "大量 504" is an HTTP 504, the case's code
