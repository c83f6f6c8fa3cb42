"""64 users press "useful" on the same answer at the same moment, through real gunicorn
workers on the suite's database (a SQLite file or MariaDB): one case, and every one of
them gets its id."""

import json
import threading
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.processes import post_json

pytestmark = [
    pytest.mark.integration,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]

USERS = 64


def test_sixty_four_concurrent_useful_requests_make_one_case_with_one_id(service) -> None:
    base, key = service
    assert post_json(f"{base}/api/sessions", {"sessionId": "race", "query": "q"}, key=key)[0] == 201
    done = {"status": "SUCCESS", "answer": "根因：连接池耗尽。"}
    assert post_json(f"{base}/api/sessions/race/complete", done, key=key)[0] == 200
    barrier = threading.Barrier(USERS)

    def press(_: int) -> tuple[int, dict]:
        barrier.wait(timeout=30)
        return post_json(
            f"{base}/api/feedback", {"sessionId": "race", "feedback": "useful"}, key=key
        )

    with ThreadPoolExecutor(max_workers=USERS) as pool:
        results = list(pool.map(press, range(USERS)))

    assert [status for status, _ in results] == [200] * USERS, results
    case_ids = {body["caseId"] for _, body in results}
    assert len(case_ids) == 1
    request = urllib.request.Request(
        f"{base}/api/cases", headers={"Authorization": f"Api-Key {key}"}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        library = json.loads(response.read())
    assert [case["caseId"] for case in library["results"]] == list(case_ids)
