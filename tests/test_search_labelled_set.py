"""The runbook library and its labelled questions hold what the search quality report assumes.

Fast and engine-free: every expected key names a runbook or a demo case, each kind of question
has its minimum count, a paraphrase shares no key term with its answer, a no-answer question
carries no code that any case carries, every runbook parses into a case, and the long ones
are long.
"""

import json
import re
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from caselibrary.alert_names import find_alert_names
from caselibrary.error_codes import error_code_key, find_error_codes
from caselibrary.runbooks import Runbook, read_runbook

ROOT = Path(__file__).resolve().parent.parent
RUNBOOKS = ROOT / "tests" / "search_quality" / "runbooks"
QUERIES = ROOT / "tests" / "search_quality" / "runbook_queries.json"
DEMO_CASES = ROOT / "feedback" / "demo" / "cases.json"

MINIMUMS = {
    "cross_language": 45,
    "paraphrase": 45,
    "long_runbook": 35,
    "no_answer": 50,
}
MINIMUM_ALERT_OR_CODE = 20
MINIMUM_QUESTIONS = 220
MINIMUM_RUNBOOKS = 40
MINIMUM_LONG_RUNBOOKS = 12

# Words a title and a question may share without sharing a key term.
STOPWORDS = frozenset(
    {
        "the",
        "and",
        "for",
        "with",
        "from",
        "after",
        "has",
        "not",
        "yet",
        "are",
        "was",
        "but",
        "into",
        "its",
        "than",
        "been",
        "while",
        "because",
        "before",
        "during",
        "inside",
        "between",
        "every",
        "few",
        "too",
        "use",
        "new",
        "cannot",
        "all",
    }
)
_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
_CJK_RUN = re.compile(r"[\u4e00-\u9fff]+")


@cache
def runbooks() -> dict[str, Runbook]:
    return {path.stem: read_runbook(path) for path in sorted(RUNBOOKS.glob("*.md"))}


@cache
def demo_cases() -> dict[str, dict]:
    return {case["key"]: case for case in json.loads(DEMO_CASES.read_text(encoding="utf-8"))}


@cache
def questions() -> list[dict]:
    return json.loads(QUERIES.read_text(encoding="utf-8"))


def title_of(key: str) -> str:
    if key in runbooks():
        return runbooks()[key].title
    return demo_cases()[key]["title"]


def text_of(key: str) -> str:
    if key in runbooks():
        return (RUNBOOKS / f"{key}.md").read_text(encoding="utf-8")
    case = demo_cases()[key]
    return "\n".join(str(case.get(name) or "") for name in ("title", "root_cause", "solution"))


def code_keys(text: str) -> set[str]:
    return {error_code_key(code) for code in [*find_error_codes(text), *find_alert_names(text)]}


def latin_words(text: str) -> set[str]:
    words = {word.casefold().strip("'-") for word in _LATIN_WORD.findall(text)}
    return {word for word in words if len(word) >= 3 and word not in STOPWORDS}


def cjk_bigrams(text: str) -> set[str]:
    return {run[i : i + 2] for run in _CJK_RUN.findall(text) for i in range(len(run) - 1)}


def is_long(text: str) -> bool:
    """Three pages: 1,500 English words, or 2,500 Chinese characters and words together."""
    latin = len(_LATIN_WORD.findall(text))
    cjk = sum(len(run) for run in _CJK_RUN.findall(text))
    return latin >= 1500 or cjk + latin >= 2500


def test_the_library_has_enough_runbooks_in_both_languages_and_enough_long_ones():
    texts = {key: (RUNBOOKS / f"{key}.md").read_text(encoding="utf-8") for key in runbooks()}
    chinese = [key for key, text in texts.items() if len(_CJK_RUN.findall(text)) > 20]

    assert len(texts) >= MINIMUM_RUNBOOKS
    assert MINIMUM_RUNBOOKS * 2 // 5 <= len(chinese) <= len(texts) * 3 // 5
    assert sum(is_long(text) for text in texts.values()) >= MINIMUM_LONG_RUNBOOKS


def test_no_runbook_key_is_also_a_demo_case_key():
    assert not set(runbooks()) & set(demo_cases())


@pytest.mark.parametrize("key", sorted(path.stem for path in RUNBOOKS.glob("*.md")))
def test_every_runbook_parses_into_a_case_with_title_root_cause_and_solution(key):
    runbook = runbooks()[key]

    assert runbook.title
    assert runbook.description
    assert runbook.root_cause
    assert runbook.solution
    assert len(runbook.title) <= 255


def test_the_question_set_has_its_size_and_every_kind_its_minimum():
    kinds = Counter(question["kind"] for question in questions())

    assert len(questions()) >= MINIMUM_QUESTIONS
    for kind, minimum in MINIMUMS.items():
        assert kinds[kind] >= minimum, kind
    assert kinds["alert"] + kinds["code"] >= MINIMUM_ALERT_OR_CODE
    assert set(kinds) <= {*MINIMUMS, "alert", "code"}


def test_every_question_is_well_formed_and_expects_only_keys_that_exist():
    known = set(runbooks()) | set(demo_cases())
    texts = [question["query"] for question in questions()]

    assert len(texts) == len(set(texts)), "a question is asked twice"
    for question in questions():
        assert set(question) == {"query", "lang", "expect", "kind"}
        assert question["lang"] in {"zh", "en"}
        assert question["query"].strip()
        assert set(question["expect"]) <= known, question["query"]
        assert bool(question["expect"]) == (question["kind"] != "no_answer"), question["query"]


def test_a_question_is_written_in_the_language_it_says():
    for question in questions():
        chinese = len(cjk_bigrams(question["query"])) >= 2
        assert chinese == (question["lang"] == "zh"), question["query"]


def test_a_cross_language_question_asks_in_the_other_language_of_its_answer():
    for question in questions():
        if question["kind"] != "cross_language":
            continue
        for key in question["expect"]:
            answer_is_chinese = bool(_CJK_RUN.search(title_of(key)))
            assert answer_is_chinese == (question["lang"] == "en"), question["query"]


def test_a_paraphrase_shares_no_code_alert_name_or_title_word_with_its_answer():
    for question in questions():
        if question["kind"] != "paraphrase":
            continue
        query = question["query"]
        for key in question["expect"]:
            title = title_of(key)
            assert not code_keys(query) & code_keys(text_of(key)), (query, key)
            assert not latin_words(query) & latin_words(title), (query, key)
            assert not cjk_bigrams(query) & cjk_bigrams(title), (query, key)


def test_a_long_runbook_question_is_answered_by_a_long_runbook():
    for question in questions():
        if question["kind"] == "long_runbook":
            for key in question["expect"]:
                assert key in runbooks(), question["query"]
                assert is_long((RUNBOOKS / f"{key}.md").read_text(encoding="utf-8")), key


def test_an_alert_or_code_question_carries_a_code_of_its_answer():
    for question in questions():
        if question["kind"] in {"alert", "code"}:
            asked = code_keys(question["query"])
            assert asked, question["query"]
            for key in question["expect"]:
                assert asked & code_keys(text_of(key)), (question["query"], key)
            if question["kind"] == "alert":
                assert find_alert_names(question["query"]), question["query"]


def test_a_no_answer_question_carries_no_code_that_any_case_carries():
    carried = set()
    for key in [*runbooks(), *demo_cases()]:
        carried |= code_keys(text_of(key))
    for question in questions():
        if question["kind"] == "no_answer":
            assert not code_keys(question["query"]) & carried, question["query"]
