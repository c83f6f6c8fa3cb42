"""Remove old sessions that have no feedback and no case, with their facts."""

import re
import sys
from datetime import timedelta
from typing import Any

from django.core.management.base import CommandError, CommandParser
from tqdm import tqdm

from diagnosis.management.commands._base import ServiceCommand
from feedback.retention import MAX_AGE_DAYS, PURGE_BATCH, sessions_purge

_AGE = re.compile(r"\A(\d+)([dh])\Z")
_NEGATIVE = re.compile(r"-\.?\d")


def parse_age(value: str) -> timedelta:
    """ "180d" or "12h"."""
    if value.strip().startswith("-"):
        raise CommandError(
            f'--older-than wants a number of days or hours, e.g. "180d", got {value!r}: '
            "an age is never negative"
        )
    match = _AGE.match(value.strip())
    if not match:
        raise CommandError(
            f'--older-than wants a number of days or hours, e.g. "180d", got {value!r}'
        )
    if int(match.group(1)) == 0:
        raise CommandError(
            f'--older-than wants a number of days or hours, e.g. "180d", got {value!r}: '
            "at least 1h (an age of nothing would remove every session it may)"
        )
    number, unit = int(match.group(1)), match.group(2)
    days = number if unit == "d" else number / 24
    if days > MAX_AGE_DAYS:
        raise CommandError(
            f"--older-than must be at most {MAX_AGE_DAYS}d ({MAX_AGE_DAYS * 24}h), got {value!r}"
        )
    return timedelta(days=number) if unit == "d" else timedelta(hours=number)


class Command(ServiceCommand):
    help = (
        "Remove sessions created before --older-than (e.g. 180d) that have no feedback and "
        "no case, with their tool invocations and case searches, in short batches."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        # argparse reads "-5d" as an option, not --older-than's value, and says only
        # "expected one argument": a value starting with "-" and a digit is a value here
        # (as Python 3.13's argparse reads it), which parse_age refuses by name.
        parser._negative_number_matcher = _NEGATIVE  # type: ignore[attr-defined]
        parser.add_argument(
            "--older-than",
            required=True,
            metavar="AGE",
            help=(
                "remove the sessions created more than AGE ago that have no feedback and no "
                f'case; AGE in days or hours, e.g. "180d" or "36h" (at most {MAX_AGE_DAYS}d)'
            ),
        )
        parser.add_argument("--dry-run", action="store_true", help="count, remove nothing")
        parser.add_argument(
            "--batch",
            type=int,
            default=PURGE_BATCH,
            help=f"sessions per transaction ({PURGE_BATCH})",
        )

    removed = 0

    def stopped_line(self) -> str:
        return (
            f"Stopped. At least {self.removed} session(s) removed; run purge_sessions "
            "again to remove the rest."
        )

    def handle(
        self, *args: Any, older_than: str, dry_run: bool, batch: int, **options: Any
    ) -> None:
        if batch < 1:
            raise CommandError("--batch must be at least 1")
        # A count of the sessions removed so far, in a terminal only (a cron job's log
        # would fill with its redraws): a long purge prints nothing else until it ends.
        with tqdm(unit="session", desc="removed", disable=dry_run or None, file=sys.stderr) as bar:

            def removed(so_far: int) -> None:
                # Told after each batch commits; also for the line a stopped run ends with.
                self.removed = so_far
                bar.update(so_far - bar.n)

            result = sessions_purge(
                older_than=parse_age(older_than), dry_run=dry_run, batch=batch, progress=removed
            )
        verb = "would be removed" if dry_run else "removed"
        self.stdout.write(f"{result.sessions} session(s) created before {result.cutoff} {verb}.")
