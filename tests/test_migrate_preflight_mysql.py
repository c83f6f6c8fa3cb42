"""`migrate` on MySQL/MariaDB refuses a database or a user it would leave half-migrated,
before it creates any table: a database whose default character set is not utf8mb4, a user
without a privilege the migrations use. A database and user made as docs/operations.md
says migrate cleanly. Each test makes its own database and user and drops them."""

import secrets
import subprocess
import sys
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.conf import settings

from tests.mariadb_server import PrivateMariaDB
from tests.processes import ROOT, child_env

pytestmark = [pytest.mark.mysql, pytest.mark.integration]

# The grant docs/operations.md gives the service's user.
DOCUMENTED_GRANT = "SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, ALTER, INDEX, REFERENCES, TRIGGER"


def _connect(**options: object):  # type: ignore[no-untyped-def]
    # Imported here: the SQLite run collects this module without the MySQL driver.
    import MySQLdb

    return MySQLdb.connect(**options)


def _admin():  # type: ignore[no-untyped-def]
    db = settings.DATABASES["default"]
    return _connect(
        host=db["HOST"] or "127.0.0.1",
        port=int(db["PORT"] or 3306),
        user=db["USER"],
        password=db["PASSWORD"] or "",
        autocommit=True,
    )


def _run(*statements: str) -> list[tuple]:
    with closing(_admin()) as connection, connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)
        return list(cursor.fetchall())


@dataclass
class Server:
    database: str
    user: str
    password: str

    def url(self, *, user: str | None = None) -> str:
        db = settings.DATABASES["default"]
        host = f"{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 3306}"
        if user is None:  # the administrator the suite runs as
            return f"mysql://{db['USER']}:{db['PASSWORD'] or ''}@{host}/{self.database}"
        return f"mysql://{user}:{self.password}@{host}/{self.database}"

    def tables(self) -> list[str]:
        rows = _run(
            "SELECT table_name FROM information_schema.tables"
            f" WHERE table_schema = '{self.database}'"
        )
        return [row[0] for row in rows]


@pytest.fixture
def server() -> Iterator[Server]:
    suffix = secrets.token_hex(4)
    made = Server(f"h8_pre_{suffix}", f"h8_app_{suffix}", secrets.token_hex(12))
    _run(f"CREATE USER '{made.user}'@'%' IDENTIFIED BY '{made.password}'")
    try:
        yield made
    finally:
        _run(f"DROP DATABASE IF EXISTS `{made.database}`", f"DROP USER IF EXISTS '{made.user}'@'%'")


def _manage(*args: str, url: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=child_env(DATABASE_URL=url, SECRET_KEY=secrets.token_urlsafe(50)),
        capture_output=True,
        text=True,
        timeout=600,
    )


def _migrate(url: str) -> subprocess.CompletedProcess:
    return _manage("migrate", "--no-input", url=url)


def test_migrate_refuses_a_latin1_database_before_creating_any_table(server: Server) -> None:
    _run(f"CREATE DATABASE `{server.database}` CHARACTER SET latin1")

    result = _migrate(server.url())

    assert result.returncode != 0
    assert "utf8mb4" in result.stderr
    assert f"ALTER DATABASE `{server.database}` CHARACTER SET utf8mb4" in result.stderr
    assert server.tables() == []


def test_migrate_refuses_a_user_without_trigger_before_creating_any_table(server: Server) -> None:
    _run(
        f"CREATE DATABASE `{server.database}` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci",
        "GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, ALTER, INDEX, REFERENCES"
        f" ON `{server.database}`.* TO '{server.user}'@'%'",
    )

    result = _migrate(server.url(user=server.user))

    assert result.returncode != 0
    assert "lacks TRIGGER" in result.stderr
    assert f"GRANT {DOCUMENTED_GRANT} ON `{server.database}`.* TO '{server.user}'@'%'" in (
        result.stderr
    )
    assert server.tables() == []


def _granted_through_a_role(server: Server, privileges: str) -> subprocess.CompletedProcess:
    """`check --database default` as a user who holds `privileges` through its default
    role, itself through a role it holds (MariaDB lists an enabled role's grants)."""
    role, inner = (f"h8_{name}_{server.user.rsplit('_', 1)[1]}" for name in ("role", "inner"))
    _run(
        f"CREATE DATABASE `{server.database}` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci",
        f"CREATE ROLE {role}",
        f"CREATE ROLE {inner}",
        f"GRANT {privileges} ON `{server.database}`.* TO {inner}",
        f"GRANT {inner} TO {role}",
        f"GRANT {role} TO '{server.user}'@'%'",
        f"SET DEFAULT ROLE {role} FOR '{server.user}'@'%'",
    )
    try:
        return _manage("check", "--database", "default", url=server.url(user=server.user))
    finally:
        _run(f"DROP ROLE IF EXISTS {role}", f"DROP ROLE IF EXISTS {inner}")


def test_a_user_granted_everything_through_its_roles_may_migrate(server: Server) -> None:
    result = _granted_through_a_role(server, DOCUMENTED_GRANT)

    assert result.returncode == 0, result.stderr
    if _mariadb():
        assert "database." not in result.stderr
    else:  # MySQL lists the user's own grants only: it can only warn
        assert "database.W001" in result.stderr


def test_a_user_whose_roles_lack_trigger_is_refused(server: Server) -> None:
    result = _granted_through_a_role(
        server, "SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, ALTER, INDEX, REFERENCES"
    )

    assert "lacks TRIGGER" in result.stderr
    if _mariadb():
        assert result.returncode != 0
        assert "database.E003" in result.stderr
    else:  # MySQL lists the user's own grants only: it can only warn
        assert "database.W001" in result.stderr


def _mariadb() -> bool:
    return "mariadb" in _run("SELECT VERSION()")[0][0].lower()


@pytest.mark.slow
def test_a_database_and_user_made_as_documented_migrate(server: Server) -> None:
    _run(
        f"CREATE DATABASE `{server.database}` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci",
        f"GRANT {DOCUMENTED_GRANT} ON `{server.database}`.* TO '{server.user}'@'%'",
    )

    result = _migrate(server.url(user=server.user))

    assert result.returncode == 0, result.stderr
    triggers = _run(
        "SELECT trigger_name FROM information_schema.triggers"
        f" WHERE trigger_schema = '{server.database}'"
    )
    assert {"case_library_change_ins", "case_library_on_delete"} <= {row[0] for row in triggers}


class BinaryLoggingMariaDB(PrivateMariaDB):
    """A private server (the shared one's settings are not the test's to change) that
    writes a binary log, as a primary with replicas does."""

    def binary_log_options(self) -> list[str]:
        return [f"--log-bin={self.directory / 'binlog'}", "--server-id=1"]


@pytest.mark.slow
def test_with_binary_logging_migrate_refuses_until_trigger_creators_are_trusted(
    tmp_path: Path,
) -> None:
    database = BinaryLoggingMariaDB(tmp_path)
    database.install()
    database.start()
    try:
        database.sql(
            "CREATE DATABASE h8_binlog CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;"
            " CREATE USER 'h8_app'@'%' IDENTIFIED BY 'h8-secret';"
            f" GRANT {DOCUMENTED_GRANT} ON h8_binlog.* TO 'h8_app'@'%'"
        )
        url = f"mysql://h8_app:h8-secret@127.0.0.1:{database.port}/h8_binlog"

        refused = _migrate(url)
        database.sql("SET GLOBAL log_bin_trust_function_creators = 1")
        private = _connect(host="127.0.0.1", port=database.port, user="root")
        with closing(private), private.cursor() as cursor:
            cursor.execute("SHOW TABLES FROM h8_binlog")
            made_by_the_refused_migrate = cursor.fetchall()
        migrated = _migrate(url)
    finally:
        database.kill()

    assert refused.returncode != 0
    assert "Binary logging is on" in refused.stderr
    assert "SET GLOBAL log_bin_trust_function_creators = 1" in refused.stderr
    assert not made_by_the_refused_migrate
    assert migrated.returncode == 0, migrated.stderr
