"""How the migrate preflight (config/database_checks.py) reads SHOW GRANTS, and that it
leaves SQLite alone. The refusals themselves run against MariaDB in
tests/test_migrate_preflight_mysql.py."""

import pytest

from config.database_checks import NEEDED, held_privileges, mysql_ready_to_migrate

APP = "TO `app`@`%`"


def test_a_database_grant_counts_for_that_database_only() -> None:
    grants = [f"GRANT USAGE ON *.* {APP}", f"GRANT SELECT, TRIGGER ON `diagnosis`.* {APP}"]

    assert held_privileges(grants, "diagnosis") == (
        {"USAGE", "SELECT", "TRIGGER"},
        {"USAGE"},
        False,
    )
    assert held_privileges(grants, "diagnosis2")[0] == {"USAGE"}


def test_all_privileges_on_the_server_hold_every_needed_one_and_super() -> None:
    grants = [f"GRANT ALL PRIVILEGES ON *.* {APP} WITH GRANT OPTION"]

    on_database, on_server, _ = held_privileges(grants, "diagnosis")

    assert set(NEEDED) <= on_database
    assert "SUPER" in on_server


def test_a_wildcard_database_grant_matches_as_the_server_matches_it() -> None:
    grants = [f"GRANT ALL PRIVILEGES ON `diag\\_%`.* {APP}"]

    assert "TRIGGER" in held_privileges(grants, "diag_prod")[0]
    assert "TRIGGER" not in held_privileges(grants, "diagXprod")[0]


def test_table_and_proxy_grants_are_not_counted() -> None:
    grants = [
        f"GRANT TRIGGER ON `diagnosis`.`case_library` {APP}",
        f"GRANT PROXY ON ''@'%' {APP}",
    ]

    assert held_privileges(grants, "diagnosis") == (set(), set(), False)


@pytest.mark.parametrize(
    "line",
    [f"GRANT `app_role` {APP}", "REVOKE TRIGGER ON `diagnosis`.* FROM `app`@`%`"],
    ids=["role", "partial revoke"],
)
def test_a_role_or_a_revoke_makes_the_grants_uncertain(line: str) -> None:
    assert held_privileges([f"GRANT USAGE ON *.* {APP}", line], "diagnosis")[2] is True


def test_with_the_enabled_roles_grants_listed_a_role_hides_nothing() -> None:
    grants = [
        f"GRANT `app_role` {APP}",
        f"GRANT USAGE ON *.* {APP}",
        "GRANT SELECT, TRIGGER ON `diagnosis`.* TO `app_role`",
    ]

    on_database, _, unknown = held_privileges(grants, "diagnosis", roles_listed=True)

    assert {"SELECT", "TRIGGER"} <= on_database
    assert unknown is False


@pytest.mark.sqlite
def test_sqlite_is_not_looked_at() -> None:
    assert mysql_ready_to_migrate(databases=["default"]) == []
