"""Export the case library or the bad cases as CSV or JSON Lines, in primary-key batches."""

from collections.abc import Iterator
from typing import Any

from django.core.management.base import CommandParser

from diagnosis.management.commands._base import ServiceCommand
from diagnosis.management.output import replaced_when_complete, write_to_stdout
from feedback.exports import EXPORTS, FORMATS, export_lines, export_querysets, export_rows

# What a row of each export is, in the summary line.
ROWS = {"cases": "case(s)", "bad_cases": "bad case(s)"}


class Command(ServiceCommand):
    help = (
        "Write every case (`cases`) or every bad case with its factors and review state "
        "(`bad_cases`) as CSV or JSON Lines, read a few thousand rows at a time."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("what", choices=sorted(EXPORTS))
        parser.add_argument("--format", choices=FORMATS, default="csv")
        parser.add_argument("--output", help="a file (standard output when absent)")

    def handle(
        self, *args: Any, what: str, format: str, output: str | None, **options: Any
    ) -> None:
        export = EXPORTS[what]
        written = 0

        def counted(rows: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
            nonlocal written
            for row in rows:
                written += 1
                yield row

        rows = counted(export_rows(export, export_querysets()[what]))
        lines = export_lines(export, rows, format)
        if output is None:
            write_to_stdout(lines)
            return
        with replaced_when_complete(output, newline="") as out:
            for line in lines:
                out.write(line)
        # As export_cases says it; on standard output the data stays alone.
        self.stdout.write(f"{written} {ROWS[what]} written to {output}")
