"""Where the case library's passages are indexed: one interface (base.py), two backends."""
