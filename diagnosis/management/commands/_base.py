"""What every command of this project promises: a mistake ends as one line on stderr.

A wrong argument, a database that is unreachable or not migrated, a setting that is
missing, a file that cannot be written: each becomes a CommandError, which Django prints
as a single line with a non-zero exit status (the full traceback with --traceback).
Stopped by Ctrl-C (SIGINT) or by its supervisor (SIGTERM: systemd, a Kubernetes Job), a
command says so in one line, with what it had done where it can tell (stopped_line), and
ends with the shell's status for that signal: 130 or 143.
Django skips this module when it lists commands (its name starts with an underscore).
"""

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any, NoReturn

from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DatabaseError

# The exit status of a command stopped by a signal, as a shell gives it: 128 + its number.
STOPPED_STATUS = 128 + signal.SIGINT
TERMINATED_STATUS = 128 + signal.SIGTERM


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the command is, as Ctrl-C raises KeyboardInterrupt."""


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

    def stopped_line(self) -> str:
        """The line a stopped run ends with: what it had done, where the command can tell."""
        return "Stopped."

    def execute(self, *args: Any, **options: Any) -> Any:
        try:
            with sigterm_as_interrupt():
                return self._execute(*args, **options)
        except KeyboardInterrupt as stop:
            self.stderr.write(self.stopped_line())
            status = TERMINATED_STATUS if isinstance(stop, Terminated) else STOPPED_STATUS
            raise SystemExit(status) from None

    def _execute(self, *args: Any, **options: Any) -> Any:
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


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """While the command runs, SIGTERM raises Terminated; the previous handler after."""
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may set a handler (a command run from a thread)
        return

    def terminate(signum: int, frame: FrameType | None) -> NoReturn:
        raise Terminated

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def database_problem(exc: DatabaseError) -> str:
    return (
        f"The database is not ready ({first_line(exc)}): check DATABASE_URL, "
        "and run `python manage.py migrate` on a new database."
    )


def first_line(exc: BaseException) -> str:
    text = str(exc).strip() or exc.__class__.__name__
    return text.splitlines()[0]
