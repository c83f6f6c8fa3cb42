"""How similar cases are ordered: the fused ranking, raised by the question's words a case
holds. Two runbooks of the labelled set each time, indexed by the service's own indexer
and searched with the real model and the backend's own lexical ranking."""

import pytest

from caselibrary.search_engine import L1, rank_cases
from tests.search_quality.evaluate import case_id_of, index_library, load_library

pytestmark = pytest.mark.django_db

# A question, the runbook that answers it (it holds most of the question's words), and
# one that the two rankings together place above it.
QUESTIONS = [
    (
        "同一天装的那批 worker 一起掉线，机器上的代理说 Unauthorized，CSR 一直 Pending",
        "kubelet-client-cert-expired",
        "websocket-disconnect-60s",
    ),
    (
        "pipelines die mid-morning when fetching node:20 from the public registry, "
        "retry hours later works",
        "ci-dockerhub-rate-limit",
        "es-cluster-red-unassigned-shards",
    ),
]


def similar_order(question: str, keys: dict[str, str]) -> list[str]:
    ranked = rank_cases(query=question, limit=3)
    return [keys[hit.case_id] for hit in ranked.candidates if hit.match_level == L1]


def two_runbooks(*wanted: str) -> dict[str, str]:
    library = [case for case in load_library() if case["key"] in wanted]
    index_library(library)
    return {case_id_of(case["key"]): case["key"] for case in library}


@pytest.mark.parametrize(("question", "right", "other"), QUESTIONS)
def test_the_case_holding_the_questions_words_ranks_first(question, right, other) -> None:
    keys = two_runbooks(right, other)

    assert similar_order(question, keys) == [right, other]


@pytest.mark.parametrize(("question", "right", "other"), QUESTIONS)
def test_without_the_coverage_weight_the_fused_order_stands(
    question, right, other, settings
) -> None:
    settings.CASE_SEARCH_COVERAGE_WEIGHT = 0
    keys = two_runbooks(right, other)

    assert similar_order(question, keys) == [other, right]
