"""The tables on MariaDB are the original system's tables, column for column.

MariaDB 10.11 is the server these run against; MySQL is not tested here."""

import pytest
from django.db import connection

from diagnosis.models import DiagnosisSession
from diagnosis.selectors import sessions_in_score_band

pytestmark = [pytest.mark.mysql, pytest.mark.django_db]

# column -> (COLUMN_TYPE, IS_NULLABLE, COLUMN_KEY)
EXPECTED = {
    "diagnosis_session": {
        "id": ("bigint(20)", "NO", "PRI"),
        "session_id": ("varchar(64)", "NO", "UNI"),
        "user_id": ("varchar(64)", "YES", ""),
        "query": ("longtext", "NO", ""),
        "status": ("varchar(16)", "NO", "MUL"),
        "answer": ("longtext", "YES", ""),
        "self_evaluation": ("json", "YES", ""),
        "feedback": ("varchar(16)", "YES", "MUL"),
        "created_at": ("datetime(6)", "NO", "MUL"),
        "updated_at": ("datetime(6)", "NO", ""),
        "finished_at": ("datetime(6)", "YES", ""),
        "feedback_at": ("datetime(6)", "YES", ""),
    },
    "tool_invocation": {
        "id": ("bigint(20)", "NO", "PRI"),
        "session_id": ("varchar(64)", "NO", "MUL"),
        "invocation_id": ("varchar(64)", "YES", ""),
        "tool_name": ("varchar(128)", "NO", ""),
        "kind": ("varchar(16)", "NO", ""),
        "status": ("varchar(16)", "NO", ""),
        "match_level": ("varchar(8)", "YES", ""),
        "hit_count": ("int(11)", "NO", ""),
        "query": ("longtext", "YES", ""),
        "error_message": ("longtext", "YES", ""),
        "duration_ms": ("int(11)", "YES", ""),
        "created_at": ("datetime(6)", "NO", ""),
    },
    "case_library": {
        "case_id": ("char(36)", "NO", "PRI"),
        "diagnosis_id": ("varchar(64)", "YES", "UNI"),
        "source_type": ("varchar(16)", "NO", "MUL"),  # the admin's source-type filter
        "fault_category": ("varchar(64)", "NO", "MUL"),
        "error_code": ("varchar(64)", "YES", "MUL"),  # case search's exact path
        "title": ("varchar(255)", "NO", ""),
        "root_cause": ("longtext", "NO", ""),
        "solution": ("longtext", "NO", ""),
        "created_by": ("varchar(64)", "NO", ""),
        "updated_by": ("varchar(64)", "NO", ""),
        "created_at": ("datetime(6)", "NO", "MUL"),
        "updated_at": ("datetime(6)", "NO", ""),
    },
}


def _columns(table: str) -> dict[str, dict[str, str]]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT column_name, column_type, is_nullable, column_key, column_comment,"
            " collation_name, column_default"
            " FROM information_schema.columns"
            " WHERE table_schema = DATABASE() AND table_name = %s",
            [table],
        )
        names = ["type", "nullable", "key", "comment", "collation", "default"]
        return {row[0]: dict(zip(names, row[1:], strict=True)) for row in cursor.fetchall()}


@pytest.mark.parametrize("table", sorted(EXPECTED))
def test_every_column_has_the_original_type_nullability_and_key(table: str) -> None:
    actual = _columns(table)
    expected = {}
    for name, (column_type, nullable, key) in EXPECTED[table].items():
        if column_type == "json":
            column_type = "longtext"  # MariaDB's JSON is LONGTEXT with a JSON_VALID check
        expected[name] = (column_type, nullable, key)
    assert {name: (c["type"], c["nullable"], c["key"]) for name, c in actual.items()} == expected


def test_self_evaluation_only_accepts_valid_json_on_mariadb() -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT check_clause FROM information_schema.check_constraints"
            " WHERE constraint_schema = DATABASE() AND table_name = 'diagnosis_session'"
        )
        clauses = [row[0] for row in cursor.fetchall()]
    assert "json_valid(`self_evaluation`)" in clauses


def test_answer_is_longtext_with_the_v008_comment() -> None:
    answer = _columns("diagnosis_session")["answer"]
    assert (answer["type"], answer["nullable"]) == ("longtext", "YES")
    assert answer["comment"] == "Agent 返回给用户的完整答案"


def test_hit_count_defaults_to_zero_in_the_database() -> None:
    assert _columns("tool_invocation")["hit_count"]["default"] == "0"


def test_kind_defaults_to_retrieval_in_the_database() -> None:
    # MariaDB quotes a text default in information_schema, MySQL does not.
    assert _columns("tool_invocation")["kind"]["default"].strip("'") == "retrieval"


def test_identifiers_compare_case_sensitively() -> None:
    assert _columns("diagnosis_session")["session_id"]["collation"] == "utf8mb4_bin"
    assert _columns("tool_invocation")["session_id"]["collation"] == "utf8mb4_bin"
    assert _columns("tool_invocation")["invocation_id"]["collation"] == "utf8mb4_bin"
    assert _columns("case_library")["diagnosis_id"]["collation"] == "utf8mb4_bin"


def _indexes(table: str) -> dict[str, tuple[bool, tuple[str, ...]]]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT index_name, non_unique, column_name FROM information_schema.statistics"
            " WHERE table_schema = DATABASE() AND table_name = %s"
            " ORDER BY index_name, seq_in_index",
            [table],
        )
        indexes: dict[str, tuple[bool, tuple[str, ...]]] = {}
        for name, non_unique, column in cursor.fetchall():
            unique, columns = indexes.get(name, (not non_unique, ()))
            indexes[name] = (unique, (*columns, column))
        return indexes


def test_unique_keys_make_sessions_invocations_and_cases_idempotent() -> None:
    assert (True, ("session_id",)) in _indexes("diagnosis_session").values()
    assert (True, ("session_id", "invocation_id")) in _indexes("tool_invocation").values()
    assert (True, ("diagnosis_id",)) in _indexes("case_library").values()


def test_indexes_serve_the_status_feedback_and_date_filters() -> None:
    indexes = set(_indexes("diagnosis_session").values())
    assert (False, ("created_at",)) in indexes
    assert (False, ("status", "created_at")) in indexes
    assert (False, ("feedback", "created_at")) in indexes


def test_bad_cases_still_unscored_are_found_through_an_index() -> None:
    indexes = set(_indexes("diagnosis_session").values())
    assert (False, ("feedback", "self_evaluation", "created_at")) in indexes
    # The admin's own query for "bad cases, score pending" can use it.
    pending = sessions_in_score_band(
        DiagnosisSession.objects.filter(feedback="not_useful").order_by("-created_at"),
        band="pending",
    )
    sql, params = pending.values("id").query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN {sql}", params)
        plan = cursor.fetchone()
    assert "idx_session_feedback_scored" in (plan[4] or "")  # possible_keys


def test_indexes_serve_the_case_library_and_bad_case_filters() -> None:
    cases = set(_indexes("case_library").values())
    assert (False, ("fault_category", "created_at")) in cases
    assert (False, ("source_type", "created_at")) in cases
    assert (False, ("state", "reviewed_at")) in set(_indexes("bad_case_review").values())


def test_tool_invocation_session_id_references_the_session() -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT referenced_table_name, referenced_column_name"
            " FROM information_schema.key_column_usage"
            " WHERE table_schema = DATABASE() AND table_name = 'tool_invocation'"
            " AND column_name = 'session_id' AND referenced_table_name IS NOT NULL"
        )
        assert list(cursor.fetchall()) == [("diagnosis_session", "session_id")]
