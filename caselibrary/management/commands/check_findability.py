"""Can each case be found again? Ask every case's title (and its error code) and count."""

from typing import Any

from django.core.management.base import CommandError, CommandParser

from caselibrary.selectors import case_findability
from caselibrary.services.index import case_index_record_findability
from diagnosis.management.commands._base import ServiceCommand


class Command(ServiceCommand):
    help = (
        "Search each case's own title and error code and report the share found as an exact "
        "(L0) hit and among the top 3. The admin overview shows the latest figure of a check "
        "of every case. Fails, recording nothing, when searches answer degraded."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--sample",
            type=int,
            help="check this many cases (1 or more) spread over the library; every case without it",
        )

    def handle(self, *args: Any, sample: int | None, **options: Any) -> None:
        # 0 is refused like any other number below 1: it used to mean "every case", which
        # is what leaving --sample out says.
        if sample is not None and sample < 1:
            raise CommandError(
                f"--sample must be positive, got {sample} (leave it out to check every case)."
            )
        report = case_findability(sample=sample)
        if report is None:
            raise CommandError(
                "Nothing is indexed yet: start the worker or run `case_index --build` first."
            )
        if report["degraded_by"]:
            raise CommandError(
                "Searches answered degraded, so the check means nothing and nothing recorded "
                f"(fix the search first): {report['degraded_by']}"
            )
        # Only a check of every case is kept: the overview's figure is of the whole library.
        if sample is None:
            case_index_record_findability(report=report)
        self.stdout.write(
            f"{report['cases']} cases checked (index {report['version']}).\n"
            f"  by title:      {report['title_l0']:.1%} exact (L0), "
            f"{report['title_top3']:.1%} in the top 3\n"
            f"  by error code: {report['code_l0']:.1%} exact (L0), "
            f"{report['code_top3']:.1%} in the top 3 "
            f"({report['with_code']} cases have a code)"
        )
        if sample is not None:
            self.stdout.write(
                "A sample: not recorded (the admin overview keeps the figure of the last "
                "check of every case)."
            )
