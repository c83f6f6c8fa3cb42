"""`migrate --fake-initial` takes over a database of the original system."""

import os
import subprocess
import sys
import uuid

import pytest
from django.db import connection

from tests.processes import ROOT

pytestmark = [pytest.mark.mysql, pytest.mark.integration, pytest.mark.slow]

ORIGINAL_SCHEMA = [
    """CREATE TABLE diagnosis_session (
        id BIGINT AUTO_INCREMENT PRIMARY KEY,
        session_id VARCHAR(64) NOT NULL UNIQUE,
        user_id VARCHAR(64) NULL,
        query LONGTEXT NOT NULL,
        status VARCHAR(16) NOT NULL,
        self_evaluation JSON NULL,
        feedback VARCHAR(16) NULL,
        created_at DATETIME(6) NOT NULL,
        updated_at DATETIME(6) NOT NULL,
        finished_at DATETIME(6) NULL,
        feedback_at DATETIME(6) NULL
    ) DEFAULT CHARSET=utf8mb4""",
    """CREATE TABLE tool_invocation (
        id BIGINT AUTO_INCREMENT PRIMARY KEY,
        session_id VARCHAR(64) NOT NULL,
        invocation_id VARCHAR(64) NULL,
        tool_name VARCHAR(128) NOT NULL,
        kind VARCHAR(16) NOT NULL DEFAULT 'retrieval',
        status VARCHAR(16) NOT NULL,
        match_level VARCHAR(8) NULL,
        hit_count INT NOT NULL DEFAULT 0,
        query LONGTEXT NULL,
        error_message LONGTEXT NULL,
        duration_ms INT NULL,
        created_at DATETIME(6) NOT NULL,
        KEY idx_tool_invocation_session (session_id),
        CONSTRAINT fk_tool_invocation_session FOREIGN KEY (session_id)
            REFERENCES diagnosis_session (session_id)
    ) DEFAULT CHARSET=utf8mb4""",
    """CREATE TABLE case_library (
        case_id CHAR(36) PRIMARY KEY,
        diagnosis_id VARCHAR(64) NULL UNIQUE,
        source_type VARCHAR(16) NOT NULL,
        fault_category VARCHAR(64) NOT NULL,
        error_code VARCHAR(64) NULL,
        title VARCHAR(255) NOT NULL,
        root_cause LONGTEXT NOT NULL,
        solution LONGTEXT NOT NULL,
        created_by VARCHAR(64) NOT NULL,
        updated_by VARCHAR(64) NOT NULL,
        created_at DATETIME(6) NOT NULL,
        updated_at DATETIME(6) NOT NULL
    ) DEFAULT CHARSET=utf8mb4""",
    """INSERT INTO diagnosis_session
        (session_id, query, status, created_at, updated_at)
        VALUES ('legacy-1', '数据库连接池耗尽怎么办', 'SUCCESS', NOW(6), NOW(6))""",
]
V008 = (
    "ALTER TABLE diagnosis_session ADD COLUMN answer LONGTEXT COMMENT 'Agent 返回给用户的完整答案'"
)


@pytest.fixture
def original_database():  # type: ignore[no-untyped-def]
    name = f"adopt_{uuid.uuid4().hex[:10]}"
    with connection.cursor() as cursor:
        cursor.execute(f"CREATE DATABASE {name} CHARACTER SET utf8mb4")
    try:
        yield name
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"DROP DATABASE IF EXISTS {name}")


def _run_sql(database: str, statements: list[str]) -> None:
    with connection.cursor() as cursor:
        cursor.execute(f"USE {database}")
        try:
            for statement in statements:
                cursor.execute(statement)
        finally:
            cursor.execute(f"USE {connection.settings_dict['NAME']}")


def _query(database: str, sql: str) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql.replace("{db}", database))
        return list(cursor.fetchall())


def _migrate_fake_initial(database: str) -> subprocess.CompletedProcess:
    db = connection.settings_dict
    host = f"{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 3306}"
    url = f"mysql://{db['USER']}:{db['PASSWORD']}@{host}/{database}"
    return subprocess.run(
        [sys.executable, "manage.py", "migrate", "--fake-initial", "--noinput"],
        cwd=ROOT,
        env={**os.environ, "DATABASE_URL": url},
        capture_output=True,
        text=True,
        timeout=180,
    )


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("ran_v008", [True, False], ids=["after-V008", "before-V008"])
def test_fake_initial_adopts_the_original_tables_keeping_their_rows(
    original_database: str, ran_v008: bool
) -> None:
    _run_sql(original_database, ORIGINAL_SCHEMA + ([V008] if ran_v008 else []))

    result = _migrate_fake_initial(original_database)

    assert result.returncode == 0, result.stdout + result.stderr
    applied = {
        (app, name)
        for app, name in _query(original_database, "SELECT app, name FROM {db}.django_migrations")
    }
    assert ("diagnosis", "0001_initial") in applied
    assert ("diagnosis", "0002_v008_session_answer") in applied
    assert ("caselibrary", "0001_initial") in applied
    assert _query(
        original_database, "SELECT session_id, query, answer FROM {db}.diagnosis_session"
    ) == [("legacy-1", "数据库连接池耗尽怎么办", None)]
    comment = _query(
        original_database,
        "SELECT column_comment FROM information_schema.columns WHERE table_schema = '{db}'"
        " AND table_name = 'diagnosis_session' AND column_name = 'answer'",
    )
    assert comment == [("Agent 返回给用户的完整答案",)]
    collations = _query(
        original_database,
        "SELECT table_name, column_name, collation_name FROM information_schema.columns"
        " WHERE table_schema = '{db}' AND column_name IN ('session_id', 'diagnosis_id')"
        " ORDER BY table_name",
    )
    assert collations == [
        ("bad_case_review", "session_id", "utf8mb4_bin"),
        ("case_library", "diagnosis_id", "utf8mb4_bin"),
        ("case_search", "session_id", "utf8mb4_bin"),
        ("case_search_hit", "session_id", "utf8mb4_bin"),
        ("diagnosis_session", "session_id", "utf8mb4_bin"),
        ("feedback_entry", "session_id", "utf8mb4_bin"),
        ("otlp_span", "session_id", "utf8mb4_bin"),
        ("tool_invocation", "session_id", "utf8mb4_bin"),
    ]
    foreign_keys = _query(
        original_database,
        "SELECT table_name, constraint_name FROM information_schema.referential_constraints"
        " WHERE constraint_schema = '{db}' AND referenced_table_name = 'diagnosis_session'"
        " ORDER BY table_name",
    )
    assert [table for table, _ in foreign_keys] == [
        "bad_case_review",
        "case_search",
        "feedback_entry",
        "otlp_span",
        "tool_invocation",
    ]
    assert ("tool_invocation", "fk_tool_invocation_session") in foreign_keys
