"""A web worker started with CASE_SEARCH_WARM_ON_START loads what a search needs as it
starts, through the real gunicorn configuration (config/gunicorn.conf.py), before anyone
searches."""

import pytest

from caselibrary.services.index_pass import case_index_pending
from tests.factories import CaseLibraryFactory
from tests.processes import ROOT, child_env, post_json, start_gunicorn, stop_group, wait_for

pytestmark = [
    pytest.mark.integration,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]

WORKERS = 2


def test_each_worker_loads_the_search_as_it_starts_and_then_answers(tmp_path, api) -> None:
    CaseLibraryFactory(title="订单服务数据库连接池耗尽")
    while case_index_pending().cases:  # every change mark, earlier tests' included
        pass
    log_path = tmp_path / "gunicorn.log"
    env = child_env(CASE_SEARCH_WARM_ON_START="1")
    with log_path.open("w") as log:
        web, base = start_gunicorn(
            env, workers=WORKERS, log=log, args=("-c", str(ROOT / "config/gunicorn.conf.py"))
        )
        try:
            # Nobody has searched yet: each worker warms up on its own.
            wait_for(
                lambda: log_path.read_text().count("case search warm in") == WORKERS,
                timeout=90,
                what="every worker's warm-up",
            )
            status, body = post_json(
                f"{base}/api/cases/search", {"query": "订单服务数据库连接池耗尽"}, key=api.raw_key
            )
        finally:
            stop_group(web)

    assert "warm-up failed" not in log_path.read_text()
    assert status == 200
    assert [hit["title"] for hit in body["hits"]] == ["订单服务数据库连接池耗尽"]
