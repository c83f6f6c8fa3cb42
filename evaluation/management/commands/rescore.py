"""Rescore finished sessions in set-based batches: for backfills and rule changes."""

import sys
import time
from argparse import ArgumentTypeError
from datetime import date, datetime, timedelta
from datetime import time as clock
from typing import Any

from django.core.management.base import CommandError, CommandParser
from django.db.models import Q, TextField
from django.db.models.expressions import RawSQL
from django.utils import timezone
from tqdm import tqdm

from diagnosis.management.commands._base import ServiceCommand
from diagnosis.models import DiagnosisSession
from diagnosis.selectors import sessions_scored_before, sessions_unscored
from evaluation.rules import RULES_VERSION
from evaluation.services import (
    OPINION_KEY,
    SCORABLE_STATUSES,
    STORED_RULE_PART,
    UNREACHABLE_IN_A_ROW,
    OpinionEndpointUnreachable,
    opinions_enabled,
    sessions_opinion_form,
    sessions_score,
)


class Command(ServiceCommand):
    help = (
        "Score SUCCESS/FAILED sessions with the current rules, in batches (one aggregate "
        "query and a few UPDATEs per batch). Safe to interrupt and run again. With "
        "--opinion, (re)form the opinions of scored sessions instead, with the configured "
        "OPINION_PROVIDER (--missing: those without one)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        which = parser.add_mutually_exclusive_group()
        which.add_argument("--missing", action="store_true", help="only sessions with no score")
        which.add_argument("--all", action="store_true", help="every finished session")
        which.add_argument(
            "--outdated",
            action="store_true",
            help="sessions scored by an older rule set (or unscored): after a rule change",
        )
        parser.add_argument("--since", type=_day, help="created on or after this day (YYYY-MM-DD)")
        parser.add_argument("--until", type=_day, help="created on or before this day (YYYY-MM-DD)")
        parser.add_argument("--batch", type=int, default=1000, help="sessions per batch")
        parser.add_argument("--no-progress", action="store_true", help="no progress bar")
        parser.add_argument(
            "--opinion",
            action="store_true",
            help="(re)form opinions (self_evaluation.llm_opinion) instead of rule scores",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if not (
            options["missing"]
            or options["all"]
            or options["outdated"]
            or options["since"]
            or options["until"]
        ):
            raise CommandError(
                "Say which sessions: --missing, --all, --outdated, or --since/--until."
            )
        if options["batch"] < 1:
            raise CommandError("--batch must be at least 1.")
        if options["since"] and options["until"] and options["since"] > options["until"]:
            raise CommandError("--since is after --until.")
        if options["opinion"]:
            self._opinions(**options)
            return
        sessions = _selection(**options)
        total = sessions.count()
        started = time.monotonic()
        scored = changed = 0
        last_id = 0
        with tqdm(
            total=total,
            unit="session",
            # None: no bar either when stderr is not a terminal (a log file, a pipe).
            disable=options["no_progress"] or None,
            file=sys.stderr,
        ) as bar:
            while True:
                # Keyset pagination: each batch is an index range scan, and a rerun after
                # an interruption simply starts again (with --missing, where it stopped).
                batch = list(
                    sessions.filter(id__gt=last_id)
                    .order_by("id")
                    # A constant expression of evaluation/services.py, no input in it.
                    .annotate(stored=RawSQL(STORED_RULE_PART, (), output_field=TextField()))  # noqa: S611
                    .values_list("id", "session_id", "status", "stored")[: options["batch"]]
                )
                if not batch:
                    break
                # The stored scores come along (their rule part as text: no JSON
                # decoding) so unchanged ones are not written again.
                counts = sessions_score(
                    sessions=[(sid, status) for _, sid, status, _ in batch],
                    current={sid: score for _, sid, _, score in batch},
                )
                scored += counts.scored
                changed += counts.changed
                last_id = batch[-1][0]
                bar.update(len(batch))
        elapsed = time.monotonic() - started
        rate = scored / elapsed if elapsed else 0.0
        self.stdout.write(
            f"Scored {scored} session(s) in {elapsed:.1f}s ({rate:.0f}/s): {changed} changed."
        )

    def _opinions(self, **options: Any) -> None:
        if not opinions_enabled():
            raise CommandError("OPINION_PROVIDER is off (or unknown): no opinions to form.")
        sessions = _selection(**{**options, "missing": False}).filter(self_evaluation__isnull=False)
        if options["missing"]:
            sessions = sessions.filter(~Q(self_evaluation__has_key=OPINION_KEY))
        total = sessions.count()
        started = time.monotonic()
        written = failed = 0
        last_id = 0
        with tqdm(
            total=total, unit="session", disable=options["no_progress"] or None, file=sys.stderr
        ) as bar:
            while True:
                batch = list(
                    sessions.filter(id__gt=last_id)
                    .order_by("id")
                    .values_list("id", "session_id")[: options["batch"]]
                )
                if not batch:
                    break
                try:
                    done, not_done = sessions_opinion_form(
                        session_ids=[sid for _, sid in batch], only_missing=options["missing"]
                    )
                except OpinionEndpointUnreachable as stop:
                    written += stop.written
                    failed += stop.failed
                    raise CommandError(
                        f"The opinion endpoint is unreachable: {UNREACHABLE_IN_A_ROW} calls in a "
                        f"row did not reach it (the last: {stop}). {written} opinion(s) formed, "
                        f"{failed} failed, {total - written - failed} not tried; no budget was "
                        "spent on the calls that did not reach it."
                    ) from None
                written += done
                failed += not_done
                last_id = batch[-1][0]
                bar.update(len(batch))
        elapsed = time.monotonic() - started
        rate = written / elapsed if elapsed else 0.0
        self.stdout.write(
            f"Formed {written} opinion(s) in {elapsed:.1f}s ({rate:.0f}/s); {failed} failed."
        )
        if failed:
            raise CommandError(f"{failed} opinion(s) could not be formed; see the log.")


# The days --since/--until take. A day is turned into a time in TIME_ZONE (--until's next
# midnight) and then into UTC: a day at either end of what a date can hold (0001-01-01,
# 9999-12-31) overflows on the way.
FIRST_DAY = date(1900, 1, 1)
LAST_DAY = date(9999, 12, 30)


def _day(value: str) -> date:
    # argparse turns ArgumentTypeError into the command's usual one-line error, naming the
    # argument (a CommandError raised while arguments are parsed would escape as a traceback).
    try:
        day = date.fromisoformat(value)
    except ValueError:
        raise ArgumentTypeError(f"not a day (YYYY-MM-DD): {value!r}") from None
    if not FIRST_DAY <= day <= LAST_DAY:
        raise ArgumentTypeError(f"{value} is not a day from {FIRST_DAY} to {LAST_DAY}")
    return day


def _selection(  # type: ignore[no-untyped-def]
    *, missing: bool, since: date | None, until: date | None, outdated: bool = False, **_: Any
):
    sessions = DiagnosisSession.objects.filter(status__in=SCORABLE_STATUSES)
    if missing:
        sessions = sessions_unscored(sessions)
    if outdated:
        sessions = sessions_scored_before(sessions, version=RULES_VERSION)
    zone = timezone.get_current_timezone()
    if since:
        sessions = sessions.filter(created_at__gte=datetime.combine(since, clock.min, zone))
    if until:
        end = datetime.combine(until + timedelta(days=1), clock.min, zone)
        sessions = sessions.filter(created_at__lt=end)
    return sessions
