"""The closed loop, end to end through real processes: a useful answer becomes a case, a
real `qcluster` rebuilds the search index, a later session's search finds the case, and
that fact raises the later session's evidence score through the unchanged rules.

Runs on the database the suite runs on: a SQLite file, or a MariaDB database of its own.
"""

import json
import time
import urllib.request

import pytest
from django.conf import settings

from tests.processes import post_json, wait_for

pytestmark = [
    pytest.mark.integration,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]


def _get(url: str, key: str) -> dict:
    request = urllib.request.Request(url, headers={"Authorization": f"Api-Key {key}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def _session_with_search(base: str, key: str, session_id: str, query: str) -> dict:
    """A session whose only evidence is one case-library search; completed."""
    assert (
        post_json(f"{base}/api/sessions", {"sessionId": session_id, "query": query}, key=key)[0]
        == 201
    )
    status, found = post_json(
        f"{base}/api/cases/search", {"query": query, "sessionId": session_id}, key=key
    )
    assert status == 200, found
    status, _ = post_json(
        f"{base}/api/sessions/{session_id}/complete",
        {"status": "SUCCESS", "answer": "根因：长事务持有行锁。\n1. kill 长事务\n2. 拆分事务"},
        key=key,
    )
    assert status == 200
    return found


def _score(base: str, key: str, session_id: str) -> dict:
    url = f"{base}/api/sessions/{session_id}"
    wait_for(
        lambda: _get(url, key)["selfEvaluation"] is not None,
        timeout=60,
        what=f"the worker to score {session_id}",
    )
    return _get(url, key)


def test_a_useful_answer_found_again_raises_a_later_sessions_evidence_score(service) -> None:
    base, key = service
    question = "下单接口报 ERROR 1205 Lock wait timeout exceeded，锁等待超时怎么处理？"

    # Before anyone rated an answer useful, the library knows nothing.
    before = _session_with_search(base, key, "before", question)
    assert before["matchLevel"] == "NONE"

    # The first session's answer is rated useful: it becomes a case.
    assert (
        post_json(f"{base}/api/sessions", {"sessionId": "origin", "query": question}, key=key)[0]
        == 201
    )
    post_json(
        f"{base}/api/sessions/origin/complete",
        {
            "status": "SUCCESS",
            "answer": (
                "根因：t_order 上的长事务持有行锁，其他事务等待超过 innodb_lock_wait_timeout，"
                "报 ERROR 1205。\n解决：1. 查 innodb_trx 找到长事务并 kill\n2. 拆分大事务"
            ),
        },
        key=key,
    )
    status, body = post_json(
        f"{base}/api/feedback", {"sessionId": "origin", "feedback": "useful"}, key=key
    )
    assert status == 200
    case_id = body["caseId"]

    # The worker's indexer indexes the new case; then it is found. Asked by words of its
    # answer only: its error code finds it as soon as the worker has read the code from
    # the answer, before its passages are indexed (the model may still be loading).
    def indexed() -> bool:
        query = {"query": "长事务持有行锁，拆分大事务"}
        hits = post_json(f"{base}/api/cases/search", query, key=key)[1]["hits"]
        return case_id in [hit["caseId"] for hit in hits]

    wait_for(indexed, timeout=60, what="the worker to index the new case")
    # Each web process looks for newly indexed cases every fraction of a second.
    time.sleep(settings.CASE_SEARCH_REFRESH_SECONDS + 0.2)

    # The same question again (a case's title is its question's first 100 characters).
    exact = _session_with_search(base, key, "exact", question)
    similar = _session_with_search(base, key, "similar", "下单锁等待超时，长事务一直持有行锁")
    assert exact["matchLevel"] == "L0" and exact["hits"][0]["caseId"] == case_id
    assert similar["matchLevel"] == "L1" and similar["hits"][0]["caseId"] == case_id

    scores = {sid: _score(base, key, sid) for sid in ("before", "exact", "similar")}
    assert {sid: s["selfEvaluation"]["evidence_score"] for sid, s in scores.items()} == {
        "before": 20,  # a search that found nothing: +30 -10
        "exact": 65,  # +30 +35 (L0)
        "similar": 50,  # +30 +20 (L1)
    }
    invocation = scores["exact"]["toolInvocations"][0]
    assert (invocation["toolName"], invocation["matchLevel"], invocation["hitCount"]) == (
        "CaseLibrarySearch",
        "L0",
        len(exact["hits"]),
    )
