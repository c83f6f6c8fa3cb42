"""The feedback widget keeps its own copy of the service's rules for a feedback body: the
reasons a reader may choose (with a label for each in every language it speaks) and how
long a comment or a correction may be. These tests hold that copy to the service's, and
to what the OpenAPI schema tells API clients: a reason added, renamed or removed on the
service, or a limit changed, fails here instead of leaving readers without a choice the
service has, with one it refuses, or with a box that takes text it will not keep. The last
test, in Chromium, shows a page on an older copy of the widget: the service refuses the
retired reason, and the reader can still choose another and send."""

import json
import re

import pytest
import yaml
from playwright.sync_api import expect
from rest_framework.test import APIClient

from config.https_required import HTTPS_REQUIRED_MESSAGE
from diagnosis.models import DiagnosisSession
from feedback.body import FREE_TEXT_LIMITS, INVALID_REASON, InvalidFeedbackBody, feedback_body_from
from feedback.models import FeedbackEntry, FeedbackReason
from feedback.services import SESSION_HAS_NO_ANSWER, SESSION_STILL_RUNNING
from tests.factories import DiagnosisSessionFactory
from tests.processes import ROOT
from tests.test_admin_browser import browser, finish  # noqa: F401
from tests.test_feedback_widget_browser import chat_page, open_widget  # noqa: F401

WIDGET = ROOT / "feedback" / "static" / "diagnosis-feedback.js"
# The widget's constant for each free-text field of the body.
WIDGET_LIMITS = {"comment": "COMMENT_MAX", "correction": "CORRECTION_MAX"}


def _one(pattern: str, text: str, what: str) -> re.Match[str]:
    found = list(re.finditer(pattern, text, re.M | re.S))
    assert len(found) == 1, f"{WIDGET.name}: expected one {what}, found {len(found)}"
    return found[0]


def _source() -> str:
    return WIDGET.read_text(encoding="utf-8")


def widget_reasons() -> list[str]:
    listed = _one(r"^  var REASONS = (\[[^\]]*\]);$", _source(), "REASONS list").group(1)
    return json.loads(listed)


def widget_limit(name: str) -> int:
    return int(_one(rf"^  var {name} = (\d+);$", _source(), name).group(1))


def _text_table() -> str:
    return _one(r"^  var TEXT = \{$(.*?)^  \};$", _source(), "TEXT table").group(1)


def widget_languages() -> list[str]:
    return re.findall(r"^    (\w+): \{$", _text_table(), re.M)


def widget_reason_labels(lang: str) -> dict[str, str]:
    """The `reasons` labels of one language, every line of the block accounted for."""
    table = _one(rf"^    {lang}: \{{$(.*?)^    \}},?$", _text_table(), f"{lang} text").group(1)
    block = _one(r"^      reasons: \{$(.*?)^      \},?$", table, f"{lang} reasons").group(1)
    lines = [line.strip() for line in block.splitlines() if line.strip()]
    entries = [re.fullmatch(r'(\w+): "([^"\\]*)",?', line) for line in lines]
    unread = [line for line, entry in zip(lines, entries, strict=True) if entry is None]
    assert not unread, f"{WIDGET.name}: {lang} reason labels this test cannot read: {unread}"
    pairs = [(entry.group(1), entry.group(2)) for entry in entries if entry]
    assert len({code for code, _ in pairs}) == len(pairs), f"{lang}: a reason labelled twice"
    return dict(pairs)


def test_the_widget_offers_the_reasons_the_service_accepts_in_the_service_s_order() -> None:
    admin_choices = [code for code, _ in FeedbackEntry._meta.get_field("reason").choices]

    assert widget_reasons() == FeedbackReason.values
    assert widget_reasons() == admin_choices


def test_every_reason_the_widget_offers_passes_the_feedback_body_rules() -> None:
    for reason in widget_reasons():
        body = {"sessionId": "s-1", "feedback": "not_useful", "reason": reason}

        assert feedback_body_from(body).reason == reason


def test_every_reason_has_a_label_in_each_language_the_widget_speaks() -> None:
    assert widget_languages() == ["zh", "en"]
    for lang in widget_languages():
        labels = widget_reason_labels(lang)
        unlabelled = [code for code in widget_reasons() if not labels.get(code, "").strip()]
        not_offered = sorted(set(labels) - set(widget_reasons()))

        assert not unlabelled, f"{lang}: no label for {unlabelled}"
        assert not not_offered, f"{lang}: labels for reasons not offered: {not_offered}"


def test_the_widget_limits_each_free_text_box_to_the_service_s_limit() -> None:
    assert set(WIDGET_LIMITS) == set(FREE_TEXT_LIMITS), "a free-text field the widget lacks"
    for field, constant in WIDGET_LIMITS.items():
        limit = widget_limit(constant)
        body = {"sessionId": "s-1", "feedback": "not_useful", "reason": "other"}

        assert limit == FREE_TEXT_LIMITS[field], f"{constant} is not the service's {field} limit"
        assert getattr(feedback_body_from({**body, field: "字" * limit}), field) == "字" * limit
        with pytest.raises(InvalidFeedbackBody):
            feedback_body_from({**body, field: "字" * (limit + 1)})


@pytest.mark.django_db
def test_the_openapi_schema_tells_api_clients_the_widget_s_reasons_and_limits() -> None:
    response = APIClient().get("/api/schema", HTTP_ACCEPT="application/vnd.oai.openapi")
    schema = yaml.safe_load(response.content)
    body = schema["paths"]["/api/feedback"]["post"]["requestBody"]["content"]["application/json"]
    body = body["schema"]
    if "$ref" in body:
        body = schema["components"]["schemas"][body["$ref"].rsplit("/", 1)[-1]]
    fields = body["properties"]

    assert [code for code in fields["reason"]["enum"] if code] == widget_reasons()
    for field, constant in WIDGET_LIMITS.items():
        limit = widget_limit(constant)
        stated = re.findall(r"\d[\d,]*", fields[field].get("description", ""))

        assert fields[field]["maxLength"] == limit, f"the schema's {field} maxLength"
        assert all(int(n.replace(",", "")) == limit for n in stated), f"{field}: {stated}"


@pytest.mark.browser
@pytest.mark.parametrize(
    ("lang", "open_label", "message", "other_reason", "send", "thanks"),
    [
        ("zh", "没用", INVALID_REASON, "其他", "提交反馈", "感谢反馈，运维同学会复核这个回答。"),
        (
            "en",
            "Not useful",
            "The feedback was not accepted.",
            "Other",
            "Send feedback",
            "Thank you: the operations team will review this answer.",
        ),
    ],
)
def test_a_reason_the_service_no_longer_knows_is_refused_and_the_reader_can_choose_another(
    browser,  # noqa: F811
    live_server,
    chat_page,  # noqa: F811
    lang,
    open_label,
    message,
    other_reason,
    send,
    thanks,
) -> None:
    # A page still serving an older copy of the widget, with a reason since retired.
    DiagnosisSessionFactory(session_id=f"stale-{lang}", succeeded=True)
    page = open_widget(browser, live_server, chat_page, f"stale-{lang}", lang=lang)
    page.get_by_role("button", name=open_label).click()
    stale = page.get_by_role("radio").first
    stale.evaluate("radio => { radio.value = 'retired_reason'; }")

    stale.check()
    page.get_by_role("button", name=send).click()

    alert = page.get_by_role("alert")
    expect(alert).to_have_text(message)
    expect(alert).to_be_focused()
    expect(page.get_by_role("button", name=re.compile("重试|Try again"))).to_have_count(0)
    assert DiagnosisSession.objects.get(session_id=f"stale-{lang}").feedback is None

    page.get_by_role("radio", name=other_reason).check()
    page.get_by_role("button", name=send).click()

    expect(page.get_by_role("status")).to_have_text(thanks)
    assert FeedbackEntry.objects.get(session_id=f"stale-{lang}").reason == "other"
    finish(page, f"feedback-widget-retired-reason-then-other-{lang}")


def test_the_widget_knows_the_service_s_two_conflicts_by_their_messages() -> None:
    found = _one(r"^  var CONFLICTS = \{$(.*?)^  \};$", _source(), "CONFLICTS table").group(1)
    causes = dict(re.findall(r'^    "([^"]*)": "(\w+)",?$', found, re.M))

    assert causes == {SESSION_STILL_RUNNING: "running", SESSION_HAS_NO_ANSWER: "noAnswer"}


def test_the_widget_knows_the_service_s_https_refusal_by_its_message() -> None:
    found = _one(r'var HTTPS_REQUIRED = "([^"]*)";', _source(), "HTTPS_REQUIRED")

    assert found.group(1) == HTTPS_REQUIRED_MESSAGE
