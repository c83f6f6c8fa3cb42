"""The language of every page: the operator's own choice, else LANGUAGE_CODE.

Django's LocaleMiddleware would follow the browser's Accept-Language, so the same console
spoke English to one operator and Chinese to the next. Here only an explicit choice counts:
the language cookie that Django's `set_language` view sets (the switcher in the admin
header posts to it).
"""

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils import translation
from django.utils.cache import patch_vary_headers


def chosen_language(request: HttpRequest) -> str:
    """The language cookie if it names a language we offer, else LANGUAGE_CODE."""
    chosen = request.COOKIES.get(settings.LANGUAGE_COOKIE_NAME)
    if chosen:
        try:
            return translation.get_supported_language_variant(chosen)
        except LookupError:
            pass
    return settings.LANGUAGE_CODE


class ChosenLanguageMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        language = chosen_language(request)
        translation.activate(language)
        request.LANGUAGE_CODE = translation.get_language()
        response = self.get_response(request)
        # A cache must not hand one operator's language to another.
        patch_vary_headers(response, ("Cookie",))
        response.headers.setdefault("Content-Language", language)
        return response
