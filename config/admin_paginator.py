"""A changelist paginator that never counts a million rows.

The admin asks its paginator for `count` on every page load, and Django's answer is a
`COUNT(*)` over everything the filters match: seconds on a big InnoDB table. Here an
unfiltered list on MySQL/MariaDB is estimated from the table statistics, and anything
else is counted only up to a cap, by reading at most `cap + 1` matching keys.
The cap is 1,000 rows (twenty pages) and moves with the operator: on page N it reaches
`COUNT_PAGES_AHEAD` pages past N, so every page is reachable and the first ones, the
ones looked at, cost the same on a table of ten thousand rows as on one of a million.

A cap bounds the rows counted, not the rows read: when few rows match (a rare word in a
free-text search), the count still reads everything the filter has to look at. On
MariaDB that count is also stopped after `COUNT_SECONDS`, and the list says it did
not count rather than making the operator wait for the same scan twice (the page of
rows needs one too). The count reads the matching keys, not just their number: when
they all fit on one page, the page reads its rows by those keys instead of scanning
for them a second time.

An estimate can be tens of percent too high, and the first page links pages up to it:
a page that comes back short or empty settles the exact count (see `page`), and one
past the real end shows the real last page rather than an empty one.
"""

from typing import Any

from django.contrib import admin, messages
from django.contrib.admin.options import IncorrectLookupParameters
from django.contrib.admin.views.main import ERROR_FLAG, ORDER_VAR, PAGE_VAR, ChangeList
from django.core.exceptions import EmptyResultSet
from django.core.paginator import EmptyPage, InvalidPage, Page, Paginator
from django.db import DatabaseError, connections
from django.db.models import OrderBy, QuerySet
from django.http import HttpRequest
from django.utils.formats import number_format
from django.utils.functional import cached_property
from django.utils.translation import gettext as _

from config.admin_filter_values import check_filter_values

COUNT_CAP = 1_000
COUNT_PAGES_AHEAD = 10
# No list has this many pages. A page number past it is taken as this one, so the count's
# reach, which grows with the page asked for, stays a limit every database takes
# (?p=99999999999999999999 was a 500, MariaDB's syntax error about its LIMIT); the page
# itself is then past the end, and the list reopens as for any page that is not there.
MAX_PAGE = 10**9
COUNT_SECONDS = 1.0

# "Query execution was interrupted" by MariaDB's max_statement_time.
_STATEMENT_TIMEOUT = 1969


class CountKind:
    EXACT = "exact"
    AT_LEAST = "at_least"  # the cap was reached: there are more
    ESTIMATE = "estimate"  # from table statistics, can be off by tens of percent
    UNCOUNTED = "uncounted"  # the count took longer than COUNT_SECONDS


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


def capped_keys(queryset: QuerySet, *, cap: int, seconds: float) -> list[Any] | None:
    """The primary keys of the rows that match, at most `cap + 1` of them (their number is
    the capped count); None if MariaDB gave up after `seconds`. Elsewhere (SQLite; MySQL,
    which is not tested here) the read has no time limit."""
    capped = queryset.order_by().values_list("pk", flat=True)[: cap + 1]
    connection = connections[queryset.db]
    if connection.vendor != "mysql" or not connection.mysql_is_mariadb:
        return list(capped)
    # Raw SQL for one reason: the ORM cannot put a time limit on a statement, and without
    # one a word few questions hold keeps the count reading every question (0.3 s at
    # 191,000 sessions, seconds at a million). The statement is Django's own SQL for the
    # queryset, its values kept apart as parameters, behind MariaDB's `SET STATEMENT`;
    # elsewhere the plain read above is what runs.
    try:
        sql, params = capped.query.sql_with_params()
    except EmptyResultSet:  # a filter no row can match (an id past the column's range)
        return []
    limited_sql = f"SET STATEMENT max_statement_time={seconds:f} FOR {sql}"
    try:
        # An interrupted statement is undone on its own: an enclosing transaction (say,
        # ATOMIC_REQUESTS) carries on, as on MySQL any failed statement would.
        with connection.cursor() as cursor:
            cursor.execute(limited_sql, params)
            return [row[0] for row in cursor.fetchall()]
    except DatabaseError as error:
        if error.args and error.args[0] == _STATEMENT_TIMEOUT:
            return None
        raise


class EstimatedCountPaginator(Paginator):
    """`count` is exact up to `cap`; above it, "cap+" or a statistics estimate.

    `count_kind` and `count_label` tell the templates which one an operator is looking
    at (templates/admin/pagination.html shows "1,000+" or "≈ 1,000,000"). With
    `exact=True` it counts every match, as Django's Paginator does: for a filter whose
    matches an index counts cheaply however many there are.
    """

    cap = COUNT_CAP
    seconds = COUNT_SECONDS
    # Every matching row's primary key, once an exact count has read them.
    matching_keys: list[Any] | None = None
    # The statistics' estimate, where the list's first page shows one (see `page`).
    estimate: int | None = None
    # The number of the page last read: the last one when a later one was asked for.
    page_shown: int | None = None

    def __init__(
        self, *args: Any, page_number: int = 1, exact: bool = False, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.exact = exact
        if page_number > 1:
            # Deep pages stay reachable: count far enough to link the pages past this one.
            self.cap = max(self.cap, (page_number + COUNT_PAGES_AHEAD) * self.per_page)

    @cached_property
    def _count_and_kind(self) -> tuple[int, str]:
        queryset = self.object_list
        if not isinstance(queryset, QuerySet):
            return len(queryset), CountKind.EXACT
        if self.exact:
            return queryset.count(), CountKind.EXACT
        if not queryset.query.where:
            estimate = table_row_estimate(queryset)
            # Small tables are counted: cheap, and statistics of a young table are poor.
            if estimate is not None and estimate > type(self).cap:
                self.estimate = estimate
                if estimate > self.cap:
                    return estimate, CountKind.ESTIMATE
        keys = capped_keys(queryset, cap=self.cap, seconds=self.seconds)
        if keys is None:
            # Pages up to the cap stay reachable; those past the end are empty.
            return self.cap + 1, CountKind.UNCOUNTED
        if len(keys) > self.cap:
            return len(keys), CountKind.AT_LEAST
        self.matching_keys = keys
        return len(keys), CountKind.EXACT

    @cached_property
    def count(self) -> int:
        return self._count_and_kind[0]

    def page(self, number: Any) -> Page:
        """The page's keys first, then its rows by those keys.

        Asked for whole rows, MariaDB may walk the list's order on an index that does not
        hold the filter, expecting to meet matching rows evenly, and read most of the
        table when they are old (the latest sessions have no feedback yet): at 381,000
        sessions, the useful ones latest first took 412 ms that way, where their keys,
        read off the index that holds both the filter and the order, took 1-3 ms. The
        admin benchmark at that size (`sessions feedback=useful`, a plain slice against
        this): 551 -> 44 ms a page load; bad cases triaged or resolved 91-94 -> 49-50
        ms; the lists that were fast stay as they were, one statement more.

        A list whose first page shows an estimate links pages up to it, and the estimate
        can be tens of percent too high. A page that comes back short of rows under the
        estimate gives the exact count: the rows before it and its own. One that comes
        back empty has the rows counted up to it, the reach of its own offset, which
        costs what skipping to it did. Either way the count is exact from then on, and a
        page past the end, counted or not, shows the real last page (`page_shown`).
        The same holds on a deep page of such a list whose count was given up."""
        # `num_pages` first: the count is what tells whether the list is estimated.
        if isinstance(number, int) and number > self.num_pages and self.estimate is not None:
            number = self.num_pages
        page = super().page(number)
        if not isinstance(self.object_list, QuerySet):
            return page
        keys = list(page.object_list.values_list("pk", flat=True))
        if self.estimate is not None and not self.count_is_exact:
            bottom = (page.number - 1) * self.per_page
            top = bottom + self.per_page
            if top + self.orphans >= self.count:
                top = self.count
            if len(keys) < top - bottom:
                self._settle_count(self._count_up_to(bottom) if not keys else bottom + len(keys))
                if page.number > self.num_pages:
                    return self.page(self.num_pages)
        page.object_list = self.object_list.filter(pk__in=keys)
        self.page_shown = page.number
        return page

    def _count_up_to(self, bottom: int) -> int:
        """The exact count of a list that has no row at offset `bottom`: its keys, read
        up to that offset. A read that is given up, or finds rows there after all (some
        just arrived), leaves the page as one the list does not have; so does a count
        given up already (a deep page of a table too long to count in time), rather
        than a second wait for the same answer."""
        if self.count_kind == CountKind.UNCOUNTED:
            raise EmptyPage(_("That page contains no results"))
        keys = capped_keys(self.object_list, cap=bottom, seconds=self.seconds)
        if keys is None or len(keys) > bottom:
            raise EmptyPage(_("That page contains no results"))
        return len(keys)

    def _settle_count(self, count: int) -> None:
        """From now on `count` is exact: what a page's rows have shown it to be."""
        self.__dict__["_count_and_kind"] = (count, CountKind.EXACT)
        for derived in ("count", "num_pages"):
            self.__dict__.pop(derived, None)

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
        if kind == CountKind.UNCOUNTED:
            return _("uncounted")
        return number_format(count, force_grouping=True)


def page_number_of(request: HttpRequest) -> int:
    """The changelist page asked for (1 when absent or not a number: the changelist
    itself answers a bad one)."""
    try:
        return min(max(1, int(request.GET.get(PAGE_VAR, 1))), MAX_PAGE)
    except (TypeError, ValueError):
        return 1


class EstimatedCountAdminMixin:
    """For a ModelAdmin: its changelist pages through an EstimatedCountPaginator, offers
    no facet counts (each filter choice counted over the whole table), offers "Show all"
    only where it works, and refuses a value its own filters do not offer, as Django
    refuses a bad lookup (config/admin_filter_values.py)."""

    paginator = EstimatedCountPaginator
    show_full_result_count = False
    show_facets = admin.ShowFacets.NEVER

    def count_exactly(self, request: HttpRequest) -> bool:
        """Whether this request's list is counted in full: a ModelAdmin says so for a
        filter whose matches an index counts cheaply, however many they are."""
        return False

    def get_paginator(
        self,
        request: HttpRequest,
        queryset: Any,
        per_page: int,
        orphans: int = 0,
        allow_empty_first_page: bool = True,
    ) -> EstimatedCountPaginator:
        return self.paginator(
            queryset,
            per_page,
            orphans,
            allow_empty_first_page,
            page_number=page_number_of(request),
            exact=self.count_exactly(request),
        )

    def get_changelist_instance(self, request: HttpRequest) -> Any:
        changelist = super().get_changelist_instance(request)  # type: ignore[misc]
        # Checked once the filters have read their choices for this request (a bad value
        # is rare: its count is spent, rather than reading every filter's choices twice).
        check_filter_values(changelist, request)
        _follow_the_page_shown(changelist)
        keys = changelist.paginator.matching_keys
        if keys is not None and not changelist.multi_page:
            # Counted, and every match fits on this page (an unsliced queryset): its rows
            # are read by the keys the count found, not by a second scan for them. For
            # a word few questions hold, the count's scan is then the only one (on
            # MariaDB, a word 5 of 200,000 questions hold: 149 -> 78 ms; one no question
            # holds, 191,000 sessions: 0.6 -> 0.3 s).
            # The filter stays, so a row changed since the count is checked again.
            changelist.result_list = changelist.result_list.filter(pk__in=keys)
        _show_all_only_where_it_works(changelist)
        return changelist

    def changelist_view(self, request: HttpRequest, extra_context: Any = None) -> Any:
        if ERROR_FLAG in request.GET and request.method == "GET":
            # Where Django sends a link with a filter, a value or a page the list does not
            # take (`?e=1`): the whole list, which its export links would export too,
            # shown as if that were what was asked for.
            messages.warning(
                request,
                _(
                    "The link asked for a filter, a value or a page this list does not "
                    "have: it shows every row."
                ),
            )
        response = super().changelist_view(request, extra_context)  # type: ignore[misc]
        context = getattr(response, "context_data", None) or {}
        changelist = context.get("cl")
        if changelist is not None and not getattr(changelist.paginator, "count_is_exact", True):
            # Django's bar says "All 1001 selected" from the capped count, yet "select all"
            # means every row the filters match, however many: no number, rather than one
            # that is wrong. The actions' messages say how many they changed.
            context["selection_note_all"] = selection_note_all(changelist)
        return response


def _follow_the_page_shown(changelist: Any) -> None:
    """The changelist as its paginator left it once the page was read: a page past the
    end of an estimated list shows the last one, and the count the page settled."""
    paginator = changelist.paginator
    if getattr(paginator, "page_shown", None) is None:
        return
    changelist.page_num = paginator.page_shown
    changelist.result_count = paginator.count
    changelist.multi_page = paginator.count > changelist.list_per_page


def _show_all_only_where_it_works(changelist: Any) -> None:
    """The two "Show all" links, offered only where they show something else.

    The pagination's lists every row on one page, which Django offers when the count is
    at most `list_max_show_all`: a count that stopped at its cap, was given up or is an
    estimate does not say the rows are that few, so it is not offered (and `?all` from an
    old link shows the page). The search bar's goes to the list without search and
    filters (Django's "N results (Show all)" when the full count is not shown): on a list
    with neither, that is the page itself, so the bar does not offer it, as Django's does
    not when it shows the full count and that count is the list's.
    """
    paginator = changelist.paginator
    if changelist.can_show_all and not paginator.count_is_exact:
        changelist.can_show_all = False
        if changelist.show_all and changelist.multi_page:
            try:
                changelist.result_list = paginator.page(changelist.page_num).object_list
            except InvalidPage:
                raise IncorrectLookupParameters from None
    if not changelist.query and not changelist.get_filters_params():
        changelist.full_result_count = changelist.result_count


def selection_note_all(changelist: Any) -> str:
    """What the action bar says once every page is selected, when the count is not exact."""
    name = str(changelist.opts.verbose_name_plural)
    if changelist.has_active_filters or changelist.query:
        return _("All %(name)s matching the filter selected") % {"name": name}
    return _("All %(name)s selected") % {"name": name}


class IndexOrderChangeList(ChangeList):
    """A changelist whose sorted pages, deep ones too, are read off an index.

    Sorted by a column, Django orders ties by the list's own ordering and the key, always
    descending (the cases' list by title: ORDER BY title, created_at DESC, case_id DESC):
    ascending, no index holds rows in that order, and every page sorted every row. Here
    the ties follow the direction of the first column sorted by, so an index on
    (column, created_at) reads a page in either direction. And a column the admin does
    not offer to sort by (`sortable_by`) is not sorted by when an address asks (?o=).
    A ModelAdmin's `ties_by_key` names the columns whose ties go by the key alone.
    """

    def get_ordering_field(self, field_name: Any) -> Any:
        if self.sortable_by is not None and field_name not in self.sortable_by:
            return None
        return super().get_ordering_field(field_name)

    def get_ordering(self, request: HttpRequest, queryset: QuerySet) -> list[Any]:
        ordering = super().get_ordering(request, queryset)
        chosen = self._columns_sorted_by()
        if not chosen or len(ordering) < len(chosen):
            return ordering
        ties = ordering[len(chosen) :]
        if chosen[0] in getattr(self.model_admin, "ties_by_key", ()):
            # Its index is (a filter's column, this one): the key follows it there.
            ties = ["pk"]
        descending = _descending(ordering[0])
        return ordering[: len(chosen)] + [_directed(item, descending) for item in ties]

    def _columns_sorted_by(self) -> list[str]:
        """The columns the address asks to sort by that the list takes (as Django's
        get_ordering does: it skips a column that cannot be sorted by)."""
        chosen = []
        for part in (self.params.get(ORDER_VAR) or "").split("."):
            try:
                field_name = self.list_display[int(part.rpartition("-")[2])]
            except (IndexError, ValueError):
                continue
            if self.get_ordering_field(field_name):
                chosen.append(field_name)
        return chosen


def _descending(item: Any) -> bool:
    if isinstance(item, str):
        return item.startswith("-")
    return bool(getattr(item, "descending", False))


def _directed(item: Any, descending: bool) -> Any:
    if isinstance(item, str):
        name = item.removeprefix("-")
        return f"-{name}" if descending else name
    if isinstance(item, OrderBy) and item.descending != descending:
        item = item.copy()
        item.reverse_ordering()
    return item
