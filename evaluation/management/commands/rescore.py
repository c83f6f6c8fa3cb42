"""Rescore finished sessions in set-based batches: for backfills and rule changes."""

import sys
import time
from datetime import date, datetime, timedelta
from datetime import time as clock
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db.models import TextField
from django.db.models.functions import Cast
from django.utils import timezone
from tqdm import tqdm

from diagnosis.models import DiagnosisSession
from diagnosis.selectors import sessions_unscored
from evaluation.services import SCORABLE_STATUSES, sessions_evaluate


class Command(BaseCommand):
    help = (
        "Score SUCCESS/FAILED sessions with the current rules, in batches (one aggregate "
        "query and a few UPDATEs per batch). Safe to interrupt and run again."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        which = parser.add_mutually_exclusive_group()
        which.add_argument("--missing", action="store_true", help="only sessions with no score")
        which.add_argument("--all", action="store_true", help="every finished session")
        parser.add_argument("--since", type=_day, help="created on or after this day (YYYY-MM-DD)")
        parser.add_argument("--until", type=_day, help="created on or before this day (YYYY-MM-DD)")
        parser.add_argument("--batch", type=int, default=1000, help="sessions per batch")
        parser.add_argument("--no-progress", action="store_true", help="no progress bar")

    def handle(self, *args: Any, **options: Any) -> None:
        if not (options["missing"] or options["all"] or options["since"] or options["until"]):
            raise CommandError("Say which sessions: --missing, --all, or --since/--until.")
        if options["batch"] < 1:
            raise CommandError("--batch must be at least 1.")
        if options["since"] and options["until"] and options["since"] > options["until"]:
            raise CommandError("--since is after --until.")
        sessions = _selection(**options)
        total = sessions.count()
        started = time.monotonic()
        scored = 0
        last_id = 0
        with tqdm(
            total=total,
            unit="session",
            disable=options["no_progress"],
            file=sys.stderr,
        ) as bar:
            while True:
                # Keyset pagination: each batch is an index range scan, and a rerun after
                # an interruption simply starts again (with --missing, where it stopped).
                batch = list(
                    sessions.filter(id__gt=last_id)
                    .order_by("id")
                    .annotate(stored=Cast("self_evaluation", TextField()))
                    .values_list("id", "session_id", "status", "stored")[: options["batch"]]
                )
                if not batch:
                    break
                # The stored scores come along (as text: no JSON decoding) so unchanged ones
                # are not written again.
                scored += sessions_evaluate(
                    sessions=[(sid, status) for _, sid, status, _ in batch],
                    current={sid: score for _, sid, _, score in batch},
                )
                last_id = batch[-1][0]
                bar.update(len(batch))
        elapsed = time.monotonic() - started
        rate = scored / elapsed if elapsed else 0.0
        self.stdout.write(f"Scored {scored} sessions in {elapsed:.1f}s ({rate:.0f}/s).")


def _day(value: str) -> date:
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise CommandError(f"not a day (YYYY-MM-DD): {value!r}") from None


def _selection(*, missing: bool, since: date | None, until: date | None, **_: Any):  # type: ignore[no-untyped-def]
    sessions = DiagnosisSession.objects.filter(status__in=SCORABLE_STATUSES)
    if missing:
        sessions = sessions_unscored(sessions)
    zone = timezone.get_current_timezone()
    if since:
        sessions = sessions.filter(created_at__gte=datetime.combine(since, clock.min, zone))
    if until:
        end = datetime.combine(until + timedelta(days=1), clock.min, zone)
        sessions = sessions.filter(created_at__lt=end)
    return sessions
