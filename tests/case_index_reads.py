"""Writing a manual case and reading the case-search index back: what it finds, what waits."""

from caselibrary.models import CaseChange, CaseLibrary
from caselibrary.selectors import cases_find
from caselibrary.services.cases import case_create_manual


def manual_case(**fields: str) -> CaseLibrary:
    return case_create_manual(
        created_by="ops.curator",
        title=fields.get("title", "Redis maxmemory 触发大量 key 淘汰"),
        root_cause=fields.get("root_cause", "maxmemory-policy allkeys-lru，热点 key 被淘汰"),
        solution=fields.get("solution", "1. 扩容 2. 调整 maxmemory"),
        fault_category="DEPENDENCY",
        error_code=fields.get("error_code"),
    )


def found_ids(query: str) -> list[str]:
    return cases_find(query=query, limit=5).case_ids


def changed() -> list[str]:
    return list(CaseChange.objects.order_by("seq").values_list("case_id", flat=True))
