"""The README's OTLP example works as written, against a live server."""

import json
import re
import subprocess

import pytest

from diagnosis.models import ApiKey
from tests.processes import ROOT
from tests.test_readme import _replies

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def test_the_readme_otlp_example_makes_a_scored_session(live_server) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- otlp-walk -->\n```bash\n(.*?)```\n<!-- /otlp-walk -->", readme, re.S)
    assert block, "README.md lost its OTLP example"
    _, key = ApiKey.objects.create_key(name="readme-otlp", scope="agent")
    script = re.sub(r"(?m)^export BASE=.*$", f"export BASE={live_server.url}", block.group(1))
    script = re.sub(r"(?m)^export KEY=.*$", f"export KEY={key}", script)

    result = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert result.returncode == 0, result.stderr
    exported, session = _replies(result.stdout)
    assert exported == {}
    assert (session["sessionId"], session["status"]) == ("otlp-1", "SUCCESS")
    assert session["query"] == "order-service 大量 504，怎么排查？"
    assert session["selfEvaluation"]["evidence_score"] == 65
    assert json.dumps(session["toolInvocations"][0]["matchLevel"]) == '"L0"'
