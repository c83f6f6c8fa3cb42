"""Load a realistic demo data set: a month of an SRE team's questions to the agent."""

from typing import Any

from django.core.management.base import BaseCommand

from feedback.demo.loader import demo_data_load


class Command(BaseCommand):
    help = "Load demo sessions, tool invocations, scores, feedback and cases (idempotent)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--count", type=int, default=300)

    def handle(self, *args: Any, count: int, **options: Any) -> None:
        loaded = demo_data_load(count=count)
        self.stdout.write(
            f"Demo data: {loaded.sessions_added} sessions added, "
            f"{loaded.sessions_present} already present; "
            f"{loaded.cases} library cases and {loaded.searches} sessions that search them "
            "added."
        )
