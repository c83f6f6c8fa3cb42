"""The admin pages that need more than one app: sessions (with their cases, searches and
scoring factors), bad cases and the useful-without-evidence queue.

The feedback app stands above the others, so it may import them all; each module here
registers its pages when imported.
"""

from feedback.admin import bad_cases, sessions, unbacked

__all__ = ["bad_cases", "sessions", "unbacked"]
