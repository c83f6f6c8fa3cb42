"""POST /api/cases/search: a question whose words no case holds, or that names in lower case
what no case mentions, gets no similar case."""

import pytest

from caselibrary.search_engine import unknown_names
from caselibrary.services.index import case_index_build
from tests.factories import CaseLibraryFactory

pytestmark = pytest.mark.django_db

URL = "/api/cases/search"


@pytest.fixture
def library(db):  # type: ignore[no-untyped-def]
    cases = {
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
        "election": CaseLibraryFactory(
            title="Kafka controller election keeps flapping between brokers",
            fault_category="DEPENDENCY",
            error_code=None,
            root_cause=(
                "The brokers lose their ZooKeeper session in long GC pauses, so the controller "
                "and the partition leaders are elected again and again."
            ),
            solution="1. Shorten the GC pauses\n2. Raise zookeeper.session.timeout.ms",
        ),
        "lock": CaseLibraryFactory(
            title="MySQL 锁等待超时导致下单失败",
            fault_category="DATABASE",
            error_code="ERROR 1205",
            root_cause="长事务持有 t_order 行锁不释放，其他事务等待锁超时后报错。",
            solution="1. 查 information_schema.innodb_trx 找到长事务\n2. kill 该连接",
        ),
    }
    case_index_build()
    return cases


def search(api, **body):  # type: ignore[no-untyped-def]
    return api.post(URL, body, format="json")


@pytest.mark.parametrize("query", ["qwertyzork", "blorfsql wibblelock", "mysqlzork blorf"])
def test_a_question_of_words_no_case_holds_finds_nothing(api, library, query: str) -> None:
    body = search(api, query=query, explain=True).json()

    assert body["matchLevel"] == "NONE"
    assert body["hits"] == []


def test_a_question_sharing_no_word_with_its_case_but_a_glossary_counterpart_finds_it(
    api, library
) -> None:
    # Not one of its words is in the library: the Chinese case holds their counterparts.
    body = search(api, query="database lock wait timeout").json()

    assert body["matchLevel"] == "L1"
    assert body["hits"][0]["caseId"] == library["lock"].case_id


@pytest.mark.parametrize(
    ("query", "name"),
    [
        ("MongoDB replica set election keeps flapping", "MongoDB"),
        ("mongodb replica set election keeps flapping", "mongodb"),
    ],
)
def test_a_name_no_case_mentions_finds_nothing_similar_in_either_case(
    api, library, query: str, name: str
) -> None:
    body = search(api, query=query, explain=True).json()

    assert body["matchLevel"] == "NONE"
    assert body["hits"] == []
    assert body["explain"]["unknownNames"] == [name]


def test_ordinary_lower_case_words_the_library_lacks_do_not_refuse_a_similar_case(
    api, library
) -> None:
    # No case says "yesterday" or "rebalancing"; one says "rebalances".
    body = search(api, query="kafka consumer lag kept growing yesterday after rebalancing").json()

    assert body["matchLevel"] == "L1"
    assert body["hits"][0]["caseId"] == library["lag"].case_id


def test_a_lower_case_word_is_a_name_when_no_language_glossary_or_case_has_it() -> None:
    held = {"kafka", "irq", "replica", "set", "election"}

    def known_terms(terms: list[str]) -> set[str]:
        return held & set(terms)

    assert unknown_names("mongodb replica set election", known_terms) == ["mongodb"]
    # A word of a language, a glossary word, a form of a word the library holds.
    assert unknown_names("disk flapping yesterday", known_terms) == []
    assert unknown_names("inode cron", known_terms) == []
    assert unknown_names("irqs on one core", known_terms) == []


def test_a_workers_warm_up_reads_the_vocabulary_so_no_question_waits_for_it() -> None:
    from caselibrary import search_text
    from caselibrary.services.search import search_warm

    CaseLibraryFactory(title="Disk full on the database host")
    case_index_build()
    search_text._vocabulary.cache_clear()

    search_warm()

    assert search_text._vocabulary.cache_info().currsize == 1
