"""Build the case library's search index now, or say what the current one holds."""

from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import CommandError, CommandParser

from caselibrary.selectors import case_index_status
from caselibrary.services.index import case_index_build
from diagnosis.management.commands._base import ServiceCommand


class Command(ServiceCommand):
    help = (
        "Build the case-search index from the case library (a task does this after every "
        "change; run it on a machine whose index directory is not shared, or after a restore)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--build", action="store_true", help="build it now")

    def handle(self, *args: Any, build: bool, **options: Any) -> None:
        if build:
            try:
                result = case_index_build()
            except ValidationError as error:
                raise CommandError("; ".join(error.messages)) from None
            self.stdout.write(
                f"Indexed {result.cases} cases ({result.terms} terms) in {result.seconds:.1f}s: "
                f"version {result.version}."
            )
            return
        status = case_index_status()
        if status.loaded_version is None:
            self.stdout.write("No index is built yet: run with --build.")
        else:
            self.stdout.write(
                f"Version {status.loaded_version}: {status.loaded_cases} cases "
                f"(built {status.built_at:%Y-%m-%d %H:%M:%S} in {status.build_seconds:.1f}s)."
            )
        if status.requested_at:
            self.stdout.write(f"A rebuild is waiting (asked at {status.requested_at:%H:%M:%S}).")
