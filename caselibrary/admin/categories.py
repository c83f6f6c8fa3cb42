"""The fault-category taxonomy: codes are fixed once made, and one in use stays."""

import re
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from caselibrary.models import GENERAL_CATEGORY, FaultCategory
from caselibrary.selectors import (
    fault_category_in_use,
)
from caselibrary.services.categories import (
    fault_category_delete,
    fault_category_save,
)

# As every seeded code is written: what `faultCategory` carries in the API and in imports.
UPPER_SNAKE = re.compile(r"[A-Z][A-Z0-9_]*")


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
class FaultCategoryAdmin(admin.ModelAdmin):
    form = FaultCategoryForm
    list_display = ("code", "name", "description", "keywords")
    search_fields = ("code", "name", "keywords")
    actions = None

    def get_readonly_fields(self, request: HttpRequest, obj: FaultCategory | None = None) -> tuple:
        # Cases refer to the code: it is fixed once made.
        return ("code",) if obj is not None else ()

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
            message = (
                gettext("“%(code)s” is not deleted: every automatic case starts in it.")
                if category.code == GENERAL_CATEGORY
                else gettext(
                    "“%(code)s” is not deleted: cases use it. Move them to another category first."
                )
            )
            self.message_user(request, message % {"code": category.code}, messages.ERROR)
            return redirect("admin:caselibrary_faultcategory_change", category.pk)
        return super().delete_view(request, object_id, extra_context)

    def save_model(self, request: HttpRequest, obj: FaultCategory, form: Any, change: bool) -> None:
        fault_category_save(
            code=obj.code, name=obj.name, description=obj.description, keywords=obj.keywords
        )

    def delete_model(self, request: HttpRequest, obj: FaultCategory) -> None:
        fault_category_delete(code=obj.code)
