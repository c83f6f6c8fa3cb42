"""docs/api.md tells API clients, by hand, which reasons a feedback may give and how long a
comment or a correction may be. These tests hold that table to the service's rules: a
reason added, renamed, reordered or removed, or a limit changed, fails here instead of
leaving the document telling clients something the service no longer does."""

import re

from feedback.body import FREE_TEXT_LIMITS
from feedback.models import FeedbackReason
from tests.processes import ROOT

API_DOC = ROOT / "docs" / "api.md"
SECTION = "### Reasons, comments, corrections, and feedback from the browser"


def doc_field_rows() -> dict[str, str]:
    """The field table of the reasons section: each field's value cell, by field name."""
    text = API_DOC.read_text(encoding="utf-8")
    assert text.count(SECTION) == 1, f"{API_DOC.name}: expected one section {SECTION!r}"
    section = text.split(SECTION, 1)[1].split("\n#", 1)[0]
    rows = re.findall(r"^\| `(\w+)` \| (.*) \|$", section, re.M)
    assert len({field for field, _ in rows}) == len(rows), f"{API_DOC.name}: a field twice"
    return dict(rows)


def doc_reasons() -> list[str]:
    """The reason codes the doc lists, in its order: the code spans before the remark."""
    cell = doc_field_rows()["reason"]
    listed = cell.split("(", 1)[0]
    return re.findall(r"`([^`]+)`", listed)


def doc_limit(field: str) -> str:
    """A free-text field's limit as the doc writes it ("up to 2,000 characters")."""
    found = re.findall(r"up to ([\d,]+) characters", doc_field_rows()[field])
    assert len(found) == 1, f"{API_DOC.name}: expected one limit for {field}, found {found}"
    return found[0]


def test_the_api_doc_lists_the_reasons_the_service_accepts_in_the_service_s_order() -> None:
    assert doc_reasons() == FeedbackReason.values


def test_the_api_doc_gives_the_comment_and_correction_limits_the_service_applies() -> None:
    assert set(FREE_TEXT_LIMITS) <= set(doc_field_rows())
    for field, limit in FREE_TEXT_LIMITS.items():
        assert doc_limit(field) == f"{limit:,}", field
