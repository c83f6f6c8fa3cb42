"""The page that answers the API key admin's add form: the new key, shown once.

The key is written into this page alone. It is not kept for a page after a redirect (a
message lives in the session, a row of django_session, until it is read): what is stored
of a key is its hash only.
"""

from typing import Any

from django.contrib import admin
from django.contrib.admin.utils import quote
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html
from django.utils.translation import gettext as _

from diagnosis.models import ApiKey

TEMPLATE = "admin/diagnosis/apikey/created.html"


def new_key_page(
    model_admin: admin.ModelAdmin, request: HttpRequest, obj: ApiKey, key: str
) -> TemplateResponse:
    """The answer to the add form's POST: the key made, its secret, and where to go next.

    Whichever save button was pressed, this page comes first: the key's page, the list
    and another add form are its links, and none of them shows the secret again.
    """
    opts = obj._meta
    site = model_admin.admin_site.name
    change_url = reverse(
        f"admin:{opts.app_label}_{opts.model_name}_change", args=[quote(obj.pk)], current_app=site
    )
    # As Django's own message after an add, linked to the key's page, never stored.
    added = format_html(
        _("The {name} “{obj}” was added successfully."),
        name=opts.verbose_name,
        obj=format_html('<a href="{}">{}</a>', change_url, obj),
    )
    context: dict[str, Any] = {
        **model_admin.admin_site.each_context(request),
        "title": _("API key added"),
        "opts": opts,
        "original": obj,
        "added": added,
        "key": key,
        "change_url": change_url,
        "has_add_permission": model_admin.has_add_permission(request),
    }
    request.current_app = site
    return TemplateResponse(request, TEMPLATE, context)
