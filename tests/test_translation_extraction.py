"""Every text the admin's import page translates is one `makemessages` finds (it knows
`gettext` and `_`, not another name for them), and the import's field names have their
Chinese."""

import ast
import os
import subprocess
from pathlib import Path

from django.utils import translation

from caselibrary.import_models import CaseImportSource

ROOT = Path(__file__).resolve().parent.parent
IMPORTS_ADMIN = ROOT / "caselibrary" / "admin" / "imports.py"
# The options Django's makemessages gives xgettext for Python files.
XGETTEXT = [
    "xgettext",
    "--language=Python",
    "--keyword=gettext_noop",
    "--keyword=gettext_lazy",
    "--keyword=ngettext_lazy:1,2",
    "--keyword=pgettext:1c,2",
    "--keyword=npgettext:1c,2,3",
    "--keyword=pgettext_lazy:1c,2",
    "--keyword=npgettext_lazy:1c,2,3",
    "--from-code=UTF-8",
    "--no-wrap",
    "--omit-header",
    "--output=-",
]
SINGULAR = {"gettext", "gettext_lazy", "gettext_noop"}


def translated_texts(source: Path) -> set[str]:
    """The literal texts the module passes to django.utils.translation's gettext, whatever
    name it imports it under."""
    tree = ast.parse(source.read_text())
    names = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "django.utils.translation"
        for alias in node.names
        if alias.name in SINGULAR
    }
    return {
        node.args[0].value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in names
        and node.args
        and isinstance(node.args[0], ast.Constant)
    }


def ascii_of(text: str) -> str:
    return text.encode("ascii", "ignore").decode()


def extracted_texts(source: Path) -> str:
    # A UTF-8 locale, or xgettext garbles the texts' curly quotes.
    env = {**os.environ, "LC_ALL": "C.UTF-8"}
    return subprocess.run(
        [*XGETTEXT, str(source)], capture_output=True, text=True, check=True, env=env
    ).stdout


def test_every_text_the_import_page_translates_is_found_by_makemessages() -> None:
    texts = translated_texts(IMPORTS_ADMIN)
    extracted = extracted_texts(IMPORTS_ADMIN)

    assert "Added by importing %(file)s." in texts
    # Compared by their ASCII: an xgettext built without iconv drops a text's curly quotes.
    missed = sorted(t for t in texts if f'msgid "{ascii_of(t)}"' not in ascii_of(extracted))
    assert missed == []


def test_the_fields_an_import_read_are_named_in_chinese() -> None:
    field = CaseImportSource._meta.get_field("read_fields")

    with translation.override("zh-hans"):
        assert str(field.verbose_name) != "fields as read"
