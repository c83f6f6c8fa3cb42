"""Load a realistic demo data set: a month of an SRE team's questions to the agent."""

import logging
from typing import Any

from django.conf import settings
from django.core.management.base import CommandError

from diagnosis.management.commands._base import ServiceCommand
from feedback.demo.loader import demo_data_load


class Command(ServiceCommand):
    help = (
        "Load demo sessions, tool invocations, scores, feedback and cases (idempotent; DEBUG only)."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--count", type=int, default=300)

    def handle(self, *args: Any, count: int, verbosity: int, **options: Any) -> None:
        # Hundreds of made-up sessions and dozens of cases in a production library would be
        # found by the agents' searches and counted by every report.
        if not settings.DEBUG:
            raise CommandError(
                "load_demo_data only runs with DEBUG=1: it adds made-up sessions and cases "
                "that agents would find."
            )
        if count < 1:
            raise CommandError("--count must be at least 1.")
        # The services log each feedback and case they record: hundreds of lines that bury
        # this command's one-line summary (`make run` prints the admin login after it).
        # -v 2 shows them.
        quieted = logging.root.manager.disable
        if verbosity < 2:
            logging.disable(max(quieted, logging.INFO))
        try:
            loaded = demo_data_load(count=count)
        finally:
            logging.disable(quieted)
        self.stdout.write(
            f"Demo data: {loaded.sessions_added} sessions added, "
            f"{loaded.sessions_present} already present; "
            f"{loaded.cases} library cases and {loaded.searches} sessions that search them "
            "added."
        )
