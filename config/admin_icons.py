"""Django's yes, no and unknown icons, named in the page's language: Django's own (a
column with `boolean=True`) is named True, False or None whatever the language, which is
what a screen reader says."""

from django.templatetags.static import static
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.translation import gettext_lazy as _

_ICONS = {True: ("yes", _("Yes")), False: ("no", _("No")), None: ("unknown", _("Unknown"))}


def yes_no_icon(value: bool | None) -> SafeString:
    icon, name = _ICONS[value]
    return format_html('<img src="{}" alt="{}">', static(f"admin/img/icon-{icon}.svg"), name)
