"""The fault-category taxonomy: codes are fixed once made, and one in use stays."""

import re
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.html import format_html
from django.utils.http import urlencode
from django.utils.safestring import SafeString
from django.utils.translation import gettext, gettext_noop, ngettext
from django.utils.translation import gettext_lazy as _

from caselibrary.admin.filters import FaultCategoryFilter
from caselibrary.models import GENERAL_CATEGORY, CaseLibrary, FaultCategory
from caselibrary.selectors import (
    fault_category_case_count,
    fault_category_in_use,
)
from caselibrary.services.categories import (
    fault_category_delete,
    fault_category_save,
)
from config.admin_lookups import OfferedLookupsMixin
from config.admin_site import model_pages

# As every seeded code is written: what `faultCategory` carries in the API and in imports.
UPPER_SNAKE = re.compile(r"[A-Z][A-Z0-9_]*")

# The descriptions caselibrary/migrations/0003_seed_fault_categories.py stored, in English,
# marked here for the catalogue: a built-in category whose description is still this text
# is described in the operator's language; a description an operator wrote, or changed,
# is shown as written. The stored text is never rewritten.
BUILT_IN_DESCRIPTIONS = {
    "GENERAL": gettext_noop("Not curated yet: every automatic case starts here."),
    "DATABASE": gettext_noop("Slow queries, replication lag, locks, connection pools."),
    "NETWORK": gettext_noop("DNS, packet loss, TLS, load balancers, timeouts between hosts."),
    "CAPACITY": gettext_noop("Disk, CPU, memory, quotas, OOM, throttling."),
    "DEPLOYMENT_CONFIG": gettext_noop("Bad rollouts, config drift, flags."),
    "DEPENDENCY": gettext_noop("Caches, queues, third-party APIs, rate limits."),
    "APPLICATION_ERROR": gettext_noop("Exceptions, 5xx, leaks, bad releases."),
}


def shown_description(category: FaultCategory) -> str:
    """The category's description as the console shows it: a built-in one in the active
    language, any other as stored."""
    built_in = BUILT_IN_DESCRIPTIONS.get(category.code)
    if built_in is not None and category.description == built_in:
        return gettext(built_in)
    return category.description


class FaultCategoryForm(forms.ModelForm):
    class Meta:
        model = FaultCategory
        fields = ("code", "name", "description", "keywords")

    def clean_code(self) -> str:
        # Only a new category has the field: a code is fixed once made. Its length is
        # checked by the field (the column's).
        code = self.cleaned_data["code"]
        if not UPPER_SNAKE.fullmatch(code):
            raise forms.ValidationError(
                _(
                    "Write the code in UPPER_SNAKE: capital letters A–Z, digits and _, "
                    "starting with a letter (such as NETWORK or DB_TIMEOUT)."
                ),
                code="upper_snake",
            )
        return code


@admin.register(FaultCategory)
class FaultCategoryAdmin(OfferedLookupsMixin, admin.ModelAdmin):
    form = FaultCategoryForm
    list_display = ("code", "name", "description_column", "keywords")
    search_fields = ("code", "name", "keywords")
    actions = None

    def get_readonly_fields(self, request: HttpRequest, obj: FaultCategory | None = None) -> tuple:
        # Cases refer to the code: it is fixed once made.
        return ("code",) if obj is not None else ()

    def get_fields(self, request: HttpRequest, obj: FaultCategory | None = None) -> list:
        fields = super().get_fields(request, obj)
        if obj is not None and not self.has_change_permission(request, obj):
            # Read only, it is read: a built-in description in the reader's language. An
            # editor edits the text as stored.
            return ["description_column" if name == "description" else name for name in fields]
        return fields

    @admin.display(
        description=FaultCategory._meta.get_field("description").verbose_name,
        ordering="description",
    )
    def description_column(self, obj: FaultCategory) -> str:
        return shown_description(obj)

    def has_delete_permission(self, request: HttpRequest, obj: FaultCategory | None = None) -> bool:
        if obj is not None and fault_category_in_use(code=obj.code):
            return False
        return super().has_delete_permission(request, obj)

    def delete_view(
        self, request: HttpRequest, object_id: str, extra_context: dict | None = None
    ) -> HttpResponse:
        # No delete button is offered for a category in use; its address (a bookmark, a
        # typed URL) says why, to whoever may delete categories, rather than a 403.
        category = self.get_object(request, unquote(object_id))
        may_delete = super().has_delete_permission(request, category)
        if category is not None and may_delete and fault_category_in_use(code=category.code):
            if category.code == GENERAL_CATEGORY:
                message = gettext("“%(code)s” is not deleted: every automatic case starts in it.")
                message %= {"code": category.code}
            else:
                message = format_html(
                    "{} {}",
                    gettext(
                        "“%(code)s” is not deleted: cases use it. Move them to another "
                        "category first."
                    )
                    % {"code": category.code},
                    self._cases_using(request, category),
                )
            self.message_user(request, message, messages.ERROR)
            return redirect("admin:caselibrary_faultcategory_change", category.pk)
        return super().delete_view(request, object_id, extra_context)

    @staticmethod
    def _cases_using(request: HttpRequest, category: FaultCategory) -> SafeString:
        """How many cases use the category; linked to the case list filtered by it, for
        those the list opens to."""
        count = fault_category_case_count(code=category.code)
        if not model_pages(request).open(CaseLibrary):
            return format_html(
                "{}",
                ngettext("%(count)d case uses it.", "%(count)d cases use it.", count)
                % {"count": count},
            )
        url = reverse("admin:caselibrary_caselibrary_changelist")
        query = urlencode({FaultCategoryFilter.parameter_name: category.code})
        return format_html(
            '<a href="{}?{}">{}</a>',
            url,
            query,
            ngettext(
                "See the %(count)d case that uses it.",
                "See the %(count)d cases that use it.",
                count,
            )
            % {"count": count},
        )

    def save_model(self, request: HttpRequest, obj: FaultCategory, form: Any, change: bool) -> None:
        fault_category_save(
            code=obj.code, name=obj.name, description=obj.description, keywords=obj.keywords
        )

    def delete_model(self, request: HttpRequest, obj: FaultCategory) -> None:
        fault_category_delete(code=obj.code)
