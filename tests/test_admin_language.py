"""The console speaks LANGUAGE_CODE (Chinese) whatever the browser asks, until an operator
picks English in the header; labels, factor names and the heuristic's rationales follow."""

import gettext
import json
import re
from pathlib import Path

import pytest

from evaluation.opinion import OpinionSubject, ToolFact
from evaluation.opinion.heuristic import RATIONALES, HeuristicProvider
from tests.factories import DiagnosisSessionFactory
from tests.page_text import text

pytestmark = pytest.mark.django_db

LIST = "/admin/diagnosis/diagnosissession/"
BROWSER_IN_ENGLISH = {"HTTP_ACCEPT_LANGUAGE": "en-US,en;q=0.9"}
CATALOGUE = Path(__file__).resolve().parent.parent / "locale" / "zh_Hans" / "LC_MESSAGES"


@pytest.fixture(autouse=True)
def chinese_by_default(settings) -> None:  # type: ignore[no-untyped-def]
    settings.LANGUAGE_CODE = "zh-hans"


def change_url(session) -> str:  # type: ignore[no-untyped-def]
    return f"{LIST}{session.pk}/change/"


def choose(client, language: str) -> None:  # type: ignore[no-untyped-def]
    response = client.post("/i18n/setlang/", {"language": language, "next": LIST})
    assert response.status_code == 302


def test_a_browser_asking_for_english_still_gets_the_chinese_console(admin_client) -> None:
    page = text(admin_client.get(LIST, **BROWSER_IN_ENGLISH))

    assert '<html lang="zh-hans"' in page
    assert "诊断会话" in page and "证据分" in page


def test_the_header_offers_a_language_switcher_with_the_current_language_chosen(
    admin_client,
) -> None:
    page = text(admin_client.get(LIST))

    assert '<form id="language-switcher" action="/i18n/setlang/" method="post">' in page
    assert '<option value="zh-hans" lang="zh-hans" selected>简体中文</option>' in page
    assert '<option value="en" lang="en">English</option>' in page


def test_the_login_page_offers_the_switcher_too(client) -> None:
    assert 'id="language-switcher"' in text(client.get("/admin/login/"))


def test_an_operator_who_picks_english_keeps_it_on_every_page(admin_client) -> None:
    choose(admin_client, "en")

    sessions = text(admin_client.get(LIST))
    overview = text(admin_client.get("/admin/overview/", HTTP_ACCEPT_LANGUAGE="zh-CN"))

    assert '<html lang="en"' in sessions and "evidence score" in sessions
    assert "证据分" not in sessions
    assert "Overview" in overview and "概览" not in overview


def test_picking_chinese_again_switches_back(admin_client) -> None:
    choose(admin_client, "en")
    choose(admin_client, "zh-hans")

    assert "证据分" in text(admin_client.get(LIST, **BROWSER_IN_ENGLISH))


def test_a_language_cookie_naming_no_offered_language_falls_back_to_chinese(
    admin_client, settings
) -> None:
    admin_client.cookies[settings.LANGUAGE_COOKIE_NAME] = "fr"

    assert "证据分" in text(admin_client.get(LIST))


def test_the_api_answers_in_the_contract_language_whatever_the_browser_asks(api) -> None:
    response = api.post(
        "/api/feedback",
        {"sessionId": "no-such-session", "feedback": "useful"},
        format="json",
        **BROWSER_IN_ENGLISH,
    )

    assert response.status_code == 404
    assert response.json()["message"] == "会话不存在"


# --- factors and rationales ------------------------------------------------------------


def scored_session():  # type: ignore[no-untyped-def]
    """A session scored by the rules, with the heuristic's opinion beside them."""
    docs = ToolFact("QueryInternalDocsTools", "SUCCESS", "L0", "order-service 504 runbook")
    factors = HeuristicProvider().form(
        OpinionSubject(
            query="order-service 大量 504，怎么排查？",
            answer="The root cause is a full connection pool.",
            tools=(docs,),
        )
    )
    session = DiagnosisSessionFactory(succeeded=True)
    session.self_evaluation = {
        "evidence_score": 65,
        "source": "rule",
        "factors": [
            {
                "name": "has_successful_tool_call",
                "delta": 30,
                "description": "有成功的工具调用(1次)",
            },
            {"name": "l0_exact_match", "delta": 35, "description": "L0 精确匹配命中"},
        ],
    }
    session.self_evaluation["llm_opinion"] = {
        "source": "heuristic",
        "model": "heuristic",
        "version": "1",
        "factors": factors,
        "created_at": "2026-12-03T12:00:00+00:00",
    }
    session.save()
    return session


def test_factors_are_shown_by_their_chinese_labels_with_the_stored_descriptions(
    admin_client,
) -> None:
    page = text(admin_client.get(change_url(scored_session())))

    assert (
        '<span class="factor-name" title="has_successful_tool_call">有成功的工具调用</span>'
    ) in page
    assert '<span class="factor-name" title="l0_exact_match">L0 精确匹配命中</span>' in page
    assert '<span class="factor-name" title="has_root_cause">给出根因</span>' in page
    # The stored record is shown as stored.
    assert "<td>有成功的工具调用(1次)</td>" in page


def test_factors_are_shown_by_their_english_labels_once_english_is_chosen(admin_client) -> None:
    session = scored_session()
    choose(admin_client, "en")

    page = text(admin_client.get(change_url(session)))

    assert 'title="has_successful_tool_call">successful tool calls</span>' in page
    assert '<span class="factor-name" title="hallucination_risk">risk of hallucination' in page


def test_the_heuristic_rationale_is_shown_in_the_operators_language(admin_client) -> None:
    session = scored_session()

    chinese = text(admin_client.get(change_url(session)))
    choose(admin_client, "en")
    english = text(admin_client.get(change_url(session)))

    assert "<td>指出了原因：“root cause”</td>" in chinese
    assert "<td>未提到任何工具，也未复述工具查询的内容</td>" in chinese
    assert "<td>names a cause: “root cause”</td>" in english
    # Stored as written: translation happens on the page only.
    stored = session.self_evaluation["llm_opinion"]["factors"][0]["rationale"]
    assert stored == "names a cause: “root cause”"


def test_an_opinion_from_a_model_is_shown_as_the_model_wrote_it(admin_client) -> None:
    session = DiagnosisSessionFactory(succeeded=True, evidence_score=30)
    session.self_evaluation["llm_opinion"] = {
        "source": "llm",
        "model": "some-model",
        "version": "1",
        "factors": [{"name": "has_root_cause", "value": True, "rationale": "the answer is blank"}],
        "created_at": "2026-12-03T12:00:00+00:00",
    }
    session.save()

    page = text(admin_client.get(change_url(session)))

    assert "<td>the answer is blank</td>" in page


# --- the catalogue ------------------------------------------------------------------------


def _catalogue_entries() -> dict[str, str]:
    """msgid -> msgstr of the .po file, fuzzy entries left out."""
    entries: dict[str, str] = {}
    for block in (CATALOGUE / "django.po").read_text(encoding="utf-8").split("\n\n"):
        if re.search(r"^#,.*\bfuzzy\b", block, re.MULTILINE):
            raise AssertionError(f"fuzzy entry in the catalogue:\n{block}")
        msgid = re.search(r'^msgid ((?:".*"\n)+)', block + "\n", re.MULTILINE)
        msgstr = re.search(r'^msgstr(?:\[0\])? ((?:".*"\n?)+)', block + "\n", re.MULTILINE)
        if msgid and msgstr:
            join = lambda quoted: "".join(json.loads(s) for s in quoted.split("\n") if s)  # noqa: E731
            entries[join(msgid.group(1))] = join(msgstr.group(1))
    return entries


def test_every_heuristic_rationale_has_a_chinese_translation() -> None:
    entries = _catalogue_entries()

    assert [template for template in RATIONALES if not entries.get(template)] == []


def test_the_compiled_catalogue_matches_the_source_catalogue() -> None:
    # The .mo is committed (nothing compiles it at start-up): it must say what the .po says.
    with (CATALOGUE / "django.mo").open("rb") as compiled:
        translations = gettext.GNUTranslations(compiled)
    stale = {
        msgid: msgstr
        for msgid, msgstr in _catalogue_entries().items()
        if msgid and msgstr and translations.gettext(msgid) != msgstr
    }

    assert stale == {}
