"""A small case library to search through POST /api/cases/search, and the search call."""

import pytest

from caselibrary.services.index import case_index_build
from tests.factories import CaseLibraryFactory

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
