"""Every word the admin takes from the project's models is in Chinese in the zh-hans admin:
the labels of its choices, and the names of the models it shows and of their fields. A word
without a translation shows in English, which no page test notices (they look for other
words)."""

import importlib
import pkgutil
from collections.abc import Iterator

import pytest
from django.contrib import admin
from django.db import models
from django.utils import translation

APPS = ("diagnosis", "evaluation", "caselibrary", "feedback")

# Words that are the same in both languages, each with why.
SAME_IN_BOTH = {
    "id": "a row's key: Chinese writes ID too (the admin's 案例 ID)",
    "0": "a score band (ScoreBand) written in digits",
    "1–39": "a score band (ScoreBand) written in digits",
    "40–64": "a score band (ScoreBand) written in digits",
    "≥ 65": "a score band (ScoreBand) written in digits",
}


def _every_module_imported() -> None:
    # Choices may be declared beside a selector, not only in models.py: import every
    # module of the apps so that each of them is found below.
    for label in APPS:
        package = importlib.import_module(label)
        for module in pkgutil.walk_packages(package.__path__, f"{label}."):
            if ".migrations" not in module.name:
                importlib.import_module(module.name)


def _subclasses(cls: type) -> Iterator[type]:
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def _choices() -> Iterator[type[models.Choices]]:
    _every_module_imported()
    for choices in _subclasses(models.Choices):
        if choices.__module__.split(".")[0] in APPS:
            yield choices


def _inherited_from_a_package(model: type[models.Model]) -> set[str]:
    """Fields an abstract model of another package declares (the API key's `prefix`):
    their names are the package's words, which the admin shows in its own."""
    return {
        field.name
        for base in model.__mro__[1:]
        if getattr(getattr(base, "_meta", None), "abstract", False)
        and base.__module__.split(".")[0] not in APPS
        for field in base._meta.local_fields
    }


def _words() -> Iterator[tuple[str, object]]:
    """(where, lazy text) for every word of the apps' models and choices."""
    for choices in _choices():
        for member in choices:
            yield f"{choices.__module__}.{choices.__name__}.{member.name}", member.label
    # The models the admin shows: the others' words (the indexer's bookkeeping) reach no page.
    shown = [model for model in admin.site._registry if model._meta.app_label in APPS]
    for model in shown:
        name = f"{model._meta.app_label}.{model.__name__}"
        yield f"{name} verbose_name", model._meta.verbose_name
        yield f"{name} verbose_name_plural", model._meta.verbose_name_plural
        foreign = _inherited_from_a_package(model)
        for field in model._meta.local_fields + model._meta.local_many_to_many:
            # The primary key Django adds is Django's word ("ID"), not ours.
            if not field.auto_created and field.name not in foreign:
                yield f"{name}.{field.name}", field.verbose_name


def _english(text: object) -> str:
    with translation.override("en"):
        return str(text)


def _untranslated() -> list[str]:
    found = []
    for where, text in _words():
        english = _english(text)
        with translation.override("zh-hans"):
            chinese = str(text)
        if chinese == english and english not in SAME_IN_BOTH:
            found.append(f"{where}: {english!r}")
    return found


def test_the_words_checked_include_choices_models_and_fields() -> None:
    where = [w for w, _ in _words()]

    assert "diagnosis.models.SessionStatus.FAILED" in where
    assert "diagnosis.selectors.ScoreBand.HIGH" in where
    assert "feedback.BadCase verbose_name_plural" in where
    assert "caselibrary.CaseLibrary.root_cause" in where


def test_every_choice_label_and_model_word_has_a_chinese_translation() -> None:
    assert _untranslated() == []


@pytest.mark.parametrize("english", sorted(SAME_IN_BOTH))
def test_each_word_allowed_to_stay_english_is_still_used(english: str) -> None:
    # An entry nothing uses any longer only hides the next word that needs one.
    assert english in {_english(text) for _, text in _words()}
