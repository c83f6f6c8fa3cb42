"""The case library's admin pages; each module registers its own when imported."""

from caselibrary.admin import cases, categories

__all__ = ["cases", "categories"]
