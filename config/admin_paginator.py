"""A changelist paginator that never counts a million rows.

The admin asks its paginator for `count` on every page load, and Django's answer is a
`COUNT(*)` over everything the filters match: seconds on a big InnoDB table. Here an
unfiltered list on MySQL/MariaDB is estimated from the table statistics, and anything
else is counted only up to a cap (`SELECT COUNT(*) FROM (SELECT ... LIMIT cap + 1)`),
so a count never reads more than `cap + 1` index entries.
"""

from django.core.paginator import Paginator
from django.db import connections
from django.db.models import QuerySet
from django.utils.formats import number_format
from django.utils.functional import cached_property
from django.utils.translation import gettext as _

COUNT_CAP = 10_000


class CountKind:
    EXACT = "exact"
    AT_LEAST = "at_least"  # the cap was reached: there are more
    ESTIMATE = "estimate"  # from table statistics, can be off by tens of percent


def table_row_estimate(queryset: QuerySet) -> int | None:
    """The number of rows MySQL/MariaDB's statistics hold for the queryset's table."""
    connection = connections[queryset.db]
    if connection.vendor != "mysql":
        return None
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT TABLE_ROWS FROM information_schema.TABLES "
            "WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = %s",
            [queryset.model._meta.db_table],
        )
        row = cursor.fetchone()
    return int(row[0]) if row and row[0] is not None else None


class EstimatedCountPaginator(Paginator):
    """`count` is exact up to `cap`; above it, "cap+" or a statistics estimate.

    `count_kind` and `count_label` tell the templates which one an operator is looking
    at (templates/admin/pagination.html shows "10,000+" or "≈ 1,000,000").
    """

    cap = COUNT_CAP

    @cached_property
    def _count_and_kind(self) -> tuple[int, str]:
        queryset = self.object_list
        if not isinstance(queryset, QuerySet):
            return len(queryset), CountKind.EXACT
        if not queryset.query.where:
            estimate = table_row_estimate(queryset)
            # Small tables are counted: cheap, and statistics of a young table are poor.
            if estimate is not None and estimate > self.cap:
                return estimate, CountKind.ESTIMATE
        counted = queryset.order_by().values("pk")[: self.cap + 1].count()
        return counted, CountKind.AT_LEAST if counted > self.cap else CountKind.EXACT

    @cached_property
    def count(self) -> int:
        return self._count_and_kind[0]

    @property
    def count_kind(self) -> str:
        return self._count_and_kind[1]

    @property
    def count_is_exact(self) -> bool:
        return self.count_kind == CountKind.EXACT

    @property
    def count_label(self) -> str:
        count, kind = self._count_and_kind
        if kind == CountKind.AT_LEAST:
            return _("%(count)s+") % {"count": number_format(self.cap, force_grouping=True)}
        if kind == CountKind.ESTIMATE:
            return _("≈ %(count)s") % {"count": number_format(count, force_grouping=True)}
        return number_format(count, force_grouping=True)
