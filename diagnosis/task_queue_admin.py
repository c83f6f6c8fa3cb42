"""django-q2's task-queue lists (successful, failed, scheduled and queued tasks) in the
console's style: its stylesheet, so they fit a 1366-pixel screen like the other lists, a
task's function path free to wrap after its dots, and the schedule list's last-run and
success columns named in words (django-q2 heads the first "last_run" and its yes/no icons
say True or False to a screen reader, in any language), and their times written as every
other list writes them (`diagnosis.admin_times`). django-q2 registers its admins
when its admin module is imported; they are registered again here with these changes,
and for superusers only (docs/admin.md): no model permission opens them."""

from typing import Any

from django.contrib import admin
from django.http import HttpRequest
from django.utils.html import format_html_join
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext_lazy as _
from django_q.admin import FailAdmin, QueueAdmin, ScheduleAdmin, TaskAdmin
from django_q.models import Failure, OrmQ, Schedule, Success

from config.admin_icons import yes_no_icon
from config.admin_lookups import OfferedLookupsMixin
from config.admin_superuser import SuperuserOnlyAdminMixin
from diagnosis.admin_times import list_time_column

# The lists' time columns, each written by a `<field>_column` of TaskListMixin.
TIME_FIELDS = ("started", "stopped", "next_run")


def dotted_path(path: str | None) -> SafeString | str:
    """A task's function (evaluation.tasks.session_score), free to wrap after its dots
    rather than inside a name."""
    if not path:
        return "-"
    return format_html_join(mark_safe(".<wbr>"), "{}", ((part,) for part in path.split(".")))


class TaskListMixin(OfferedLookupsMixin, SuperuserOnlyAdminMixin):
    """django-q2's lists with the console's styles (they fit a 1366-pixel screen like the
    others) and the function's path wrapping after its dots; superusers only."""

    class Media:
        css = {"all": ["diagnosis/admin.css"]}

    def get_list_display(self, request: HttpRequest) -> list[str]:
        return [
            "func_column" if name == "func" else f"{name}_column" if name in TIME_FIELDS else name
            for name in super().get_list_display(request)
        ]

    started_column = list_time_column("started", Success._meta.get_field("started").verbose_name)
    stopped_column = list_time_column("stopped", Success._meta.get_field("stopped").verbose_name)
    next_run_column = list_time_column(
        "next_run", Schedule._meta.get_field("next_run").verbose_name
    )

    @admin.display(description=_("Function"), ordering="func")
    def func_column(self, obj: Any) -> SafeString | str:
        return dotted_path(obj.func)


class SuccessAdmin(TaskListMixin, TaskAdmin):
    pass


class FailureAdmin(TaskListMixin, FailAdmin):
    pass


class ScheduleListAdmin(TaskListMixin, ScheduleAdmin):
    @admin.display(description=_("last run"))
    def get_last_run(self, obj: Schedule) -> SafeString | None:
        return super().get_last_run(obj)

    # The icon is drawn here (not boolean=True) to be named in the page's language.
    @admin.display(description=_("success"))
    def get_success(self, obj: Schedule) -> SafeString:
        return yes_no_icon(obj.task_success)


class QueuedTaskAdmin(TaskListMixin, QueueAdmin):
    # Read from the signed payload: not a column the database can sort.
    @admin.display(description=_("Function"))
    def func_column(self, obj: OrmQ) -> SafeString | str:
        return dotted_path(obj.func())


for _model, _model_admin in (
    (Success, SuccessAdmin),
    (Failure, FailureAdmin),
    (Schedule, ScheduleListAdmin),
    (OrmQ, QueuedTaskAdmin),
):
    # The queued tasks have a list only with the ORM broker (not with Redis).
    if admin.site.is_registered(_model):
        admin.site.unregister(_model)
        admin.site.register(_model, _model_admin)
