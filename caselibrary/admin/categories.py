"""The fault-category taxonomy: codes are fixed once made, and one in use stays."""

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from caselibrary.models import FaultCategory
from caselibrary.selectors import (
    fault_category_in_use,
)
from caselibrary.services.categories import (
    fault_category_delete,
    fault_category_save,
)


@admin.register(FaultCategory)
class FaultCategoryAdmin(admin.ModelAdmin):
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

    def save_model(self, request: HttpRequest, obj: FaultCategory, form: Any, change: bool) -> None:
        fault_category_save(
            code=obj.code, name=obj.name, description=obj.description, keywords=obj.keywords
        )

    def delete_model(self, request: HttpRequest, obj: FaultCategory) -> None:
        fault_category_delete(code=obj.code)
