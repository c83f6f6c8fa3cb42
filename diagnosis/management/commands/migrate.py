"""Django's `migrate`, waiting on MySQL/MariaDB as a migration needs rather than as a
request does: its DDL waits MIGRATE_LOCK_WAIT_TIMEOUT seconds at most for a table's
metadata lock (every query on that table queues behind the wait, so a long transaction
holding it stalled the service, and the migration then died at the request's read
timeout), and a statement may run MIGRATE_READ_TIMEOUT seconds (an index built on a large
table). Elsewhere it is Django's own command, ending as every command of the project
does (diagnosis/management/commands/_base.py): a mistake as one line, a stop as one."""

from typing import Any

from django.conf import settings
from django.core.management.base import CommandError
from django.core.management.commands import migrate
from django.db import OperationalError, connections

from diagnosis.management.commands._base import ServiceCommand

# MySQL's and MariaDB's error: a lock (here a table's metadata lock) not had in time.
LOCK_WAIT_TIMEOUT = 1205


class Command(ServiceCommand, migrate.Command):
    def handle(self, *args: Any, **options: Any) -> None:
        connection = connections[options["database"]]
        if connection.vendor != "mysql":
            super().handle(*args, **options)
            return
        kept = connection.settings_dict["OPTIONS"]
        waits = f"lock_wait_timeout={settings.MIGRATE_LOCK_WAIT_TIMEOUT}"
        connection.settings_dict["OPTIONS"] = {
            **kept,
            "init_command": f"{kept['init_command']}, {waits}"
            if "init_command" in kept
            else f"SET {waits}",
            "read_timeout": settings.MIGRATE_READ_TIMEOUT,
            "write_timeout": settings.MIGRATE_READ_TIMEOUT,
        }
        connection.close()  # opened by the checks: connected again with these options
        try:
            super().handle(*args, **options)
        except OperationalError as error:
            if error.args[:1] != (LOCK_WAIT_TIMEOUT,):
                raise
            raise CommandError(
                f"A migration waited {settings.MIGRATE_LOCK_WAIT_TIMEOUT} s for a table that "
                "another session holds (a long transaction, or one left open) and was not "
                "applied; those before it are. Find the session (SHOW PROCESSLIST; "
                "information_schema.innodb_trx), let it end, and run migrate again "
                "(MIGRATE_LOCK_WAIT_TIMEOUT sets the wait)."
            ) from None
        finally:
            connection.close()
            connection.settings_dict["OPTIONS"] = kept
