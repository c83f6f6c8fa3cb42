"""System checks of a MySQL/MariaDB database before `migrate` changes it.

MySQL and MariaDB cannot roll back DDL: a migration that fails halfway leaves the tables it
made behind, and the next `migrate` stops at them (1050 Table '…' already exists) until an
operator drops them by hand. The two common mistakes are caught here, before anything is
created: a database whose default character set is not utf8mb4 (the first Chinese row
fails with 1366 Incorrect string value, after the tables were made in that character set),
and a user without a privilege the migrations use (caselibrary 0010 creates triggers).

Registered with the `database` tag, so they run when a command names a database:
`migrate` runs every check on the database it migrates before it does anything else
(`migrate --skip-checks` skips them, as `call_command` does), and so does
`check --database default`. The SQLite database is not looked at.
"""

import re
from typing import Any

from django.core.checks import CheckMessage, Error, Tags, Warning, register
from django.db import connections

# What the migrations (and unapplying them, on the way back from a release) run: tables
# created, altered and dropped, indexes, the case library's triggers (CREATE/DROP
# TRIGGER, caselibrary/triggers.py at every migrate), and the data migrations' rows.
NEEDED = ("SELECT", "INSERT", "UPDATE", "DELETE", "CREATE", "DROP", "ALTER", "INDEX", "TRIGGER")
# MySQL 8 wants REFERENCES to create a foreign key; MariaDB has it but never asks for it.
NEEDED_ON_MYSQL = ("REFERENCES",)
# The grant documented in docs/operations.md, named in every hint so one GRANT fixes it all.
GRANT = "SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, ALTER, INDEX, REFERENCES, TRIGGER"
COLLATION = "utf8mb4_unicode_ci"

_GRANT_ON = re.compile(r"^GRANT (?P<privileges>.+?) ON (?P<level>\S+) TO ")
_DATABASE_LEVEL = re.compile(r"^`(?P<name>(?:[^`]|``)+)`\.\*$")


def _pattern(name: str) -> re.Pattern[str]:
    """A database name of a GRANT as the server matches it: % and _ are wildcards there,
    a backslash makes the next character literal."""
    parts, chars = [], iter(name)
    for char in chars:
        if char == "\\":
            parts.append(re.escape(next(chars, "\\")))
        elif char == "%":
            parts.append(".*")
        elif char == "_":
            parts.append(".")
        else:
            parts.append(re.escape(char))
    return re.compile("".join(parts), re.DOTALL)


def held_privileges(
    grants: list[str], database: str, *, roles_listed: bool = False
) -> tuple[set[str], set[str], bool]:
    """From the lines of SHOW GRANTS: the privileges held on every table of `database`,
    the global ones (*.*), and whether some line (a role granted, a partial revoke) may
    change them in a way these lines do not show. `roles_listed`: the lines hold the
    enabled roles' own grants too (MariaDB's SHOW GRANTS for the session), so a role
    granted hides nothing that counts: one not enabled gives migrate nothing either."""
    on_database: set[str] = set()
    on_server: set[str] = set()
    unknown = False
    for line in grants:
        found = _GRANT_ON.match(line)
        if not found:
            # `GRANT role TO user`, or MySQL's partial revokes (`REVOKE … ON db.* FROM`).
            hides = ("REVOKE ",) if roles_listed else ("GRANT ", "REVOKE ")
            unknown = unknown or line.startswith(hides)
            continue
        names = {p.strip().upper() for p in found["privileges"].split(",")}
        if names & {"ALL", "ALL PRIVILEGES"}:
            names |= {*NEEDED, *NEEDED_ON_MYSQL, "SUPER"}
        level = found["level"]
        if level == "*.*":
            on_server |= names
            on_database |= names
            continue
        named = _DATABASE_LEVEL.match(level)
        if named and _pattern(named["name"].replace("``", "`")).fullmatch(database):
            on_database |= names
        # Table and column grants cannot create the tables to come: not counted.
    return on_database, on_server, unknown


def _quoted_account(account: str) -> str:
    user, _, host = account.rpartition("@")
    return f"'{user}'@'{host}'"


@register(Tags.database)
def mysql_ready_to_migrate(
    app_configs: Any = None, databases: Any = None, **kwargs: Any
) -> list[CheckMessage]:
    problems: list[CheckMessage] = []
    for alias in databases or ():
        connection = connections[alias]
        if connection.vendor == "mysql":
            problems += _mysql_problems(connection)
    return problems


def _mysql_problems(connection: Any) -> list[CheckMessage]:
    # SQL of the server's own: its variables and SHOW GRANTS are no table the ORM reads.
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT DATABASE(), CURRENT_USER(), @@character_set_database,"
            " @@character_set_connection, @@log_bin, @@log_bin_trust_function_creators"
        )
        database, account, charset, connection_charset, log_bin, trusted = cursor.fetchone()
        # MariaDB's SHOW GRANTS for the session lists the enabled roles' grants as well
        # (nested ones included); MySQL's lists only the user's own.
        mariadb = connection.mysql_is_mariadb
        cursor.execute("SHOW GRANTS" if mariadb else "SHOW GRANTS FOR CURRENT_USER()")
        grants = [row[0] for row in cursor.fetchall()]
    problems: list[CheckMessage] = []
    if charset != "utf8mb4":
        problems.append(
            Error(
                f"The database {database} makes new tables in {charset}, not utf8mb4: "
                "migrate would create tables that refuse Chinese text "
                "(1366 Incorrect string value).",
                hint=f"As an administrator: ALTER DATABASE `{database}` CHARACTER SET utf8mb4 "
                f"COLLATE {COLLATION}; then migrate again (docs/operations.md, Production).",
                id="database.E001",
            )
        )
    if connection_charset != "utf8mb4":
        problems.append(
            Error(
                f"The connection to {database} speaks {connection_charset}, not utf8mb4: "
                "Chinese text and emoji would not reach the database intact.",
                hint="DATABASES OPTIONS charset must be utf8mb4, as config/settings.py sets it.",
                id="database.E002",
            )
        )
    user = _quoted_account(account)
    on_database, on_server, unknown = held_privileges(grants, database, roles_listed=mariadb)
    needed = NEEDED if mariadb else NEEDED + NEEDED_ON_MYSQL
    missing = [p for p in needed if p not in on_database]
    if missing:
        problem = Warning if unknown else Error
        maybe = " unless a role it holds grants them" if unknown else ""
        problems.append(
            problem(
                f"The database user {user} lacks {', '.join(missing)} on {database}{maybe}: "
                "migrate would stop halfway, and MySQL/MariaDB cannot take back the tables "
                "it made before (the case library's migrations create triggers).",
                hint=f"As an administrator: GRANT {GRANT} ON `{database}`.* TO {user}; "
                "then migrate again (docs/operations.md, Production).",
                id="database.W001" if unknown else "database.E003",
            )
        )
    if log_bin and not trusted and "SUPER" not in on_server:
        problem = Warning if unknown else Error
        maybe = " unless a role it holds grants it" if unknown else ""
        problems.append(
            problem(
                f"Binary logging is on and the database user {user} lacks SUPER{maybe}: "
                "the server refuses to create the case library's triggers (1419).",
                hint="As an administrator: SET GLOBAL log_bin_trust_function_creators = 1, "
                "and log_bin_trust_function_creators = 1 under [mysqld] in the server's "
                "configuration so that a restart keeps it (a managed database: its "
                "parameter group); then migrate again.",
                id="database.W002" if unknown else "database.E004",
            )
        )
    return problems
