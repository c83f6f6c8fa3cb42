"""The fault-category taxonomy operators keep in the admin."""

from django.core.exceptions import ValidationError
from django.db import transaction

from caselibrary.models import FaultCategory
from caselibrary.selectors import fault_category_in_use


def fault_category_save(
    *, code: str, name: str, description: str = "", keywords: str = ""
) -> FaultCategory:
    """Add a category to the taxonomy, or rename/redescribe one (its code is its key).

    Its keywords apply from the next pass that structures new AUTO cases.
    """
    category = FaultCategory(code=code, name=name, description=description, keywords=keywords)
    category.full_clean(validate_unique=False)
    category.save()
    return category


def fault_category_delete(*, code: str) -> None:
    """Drop a category no case uses; GENERAL, where every AUTO case starts, stays.

    Its row is locked before its use is read: a case being written in it meanwhile (which
    locks the row too) is seen, or waits and then finds the category gone."""
    with transaction.atomic():
        list(FaultCategory.objects.select_for_update().filter(code=code).values("code"))
        if fault_category_in_use(code=code):
            raise ValidationError(
                f'"{code}" is in use (GENERAL always is, as every new case starts there): '
                "move its cases to another category first."
            )
        FaultCategory.objects.filter(code=code).delete()
