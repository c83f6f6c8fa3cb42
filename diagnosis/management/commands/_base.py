"""What every command of this project promises: a mistake ends as one line on stderr.

A wrong argument, a database that is unreachable or not migrated, a setting that is
missing, a file that cannot be written: each becomes a CommandError, which Django prints
as a single line with a non-zero exit status (the full traceback with --traceback).
Django skips this module when it lists commands (its name starts with an underscore).
"""

from typing import Any, NoReturn

from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DatabaseError


class ServiceCommand(BaseCommand):
    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        parser = super().create_parser(prog_name, subcommand, **kwargs)

        def error(message: str) -> NoReturn:
            # argparse would print the whole usage block above the one line that matters.
            if not parser.called_from_command_line:
                raise CommandError(f"Error: {message}")
            parser.exit(2, f"{parser.prog}: error: {message} (see --help)\n")

        parser.error = error  # type: ignore[method-assign]
        return parser

    def execute(self, *args: Any, **options: Any) -> Any:
        try:
            return super().execute(*args, **options)
        except CommandError:
            raise
        except ImproperlyConfigured as exc:
            raise CommandError(f"Configuration error: {exc}") from exc
        except DatabaseError as exc:
            raise CommandError(database_problem(exc)) from exc
        except OSError as exc:
            raise CommandError(first_line(exc)) from exc


def database_problem(exc: DatabaseError) -> str:
    return (
        f"The database is not ready ({first_line(exc)}): check DATABASE_URL, "
        "and run `python manage.py migrate` on a new database."
    )


def first_line(exc: BaseException) -> str:
    text = str(exc).strip() or exc.__class__.__name__
    return text.splitlines()[0]
