"""Who may sign in, and what a browser may send: the keys SECRET_KEY had before, the
admin login's lockout, where a login lands, where the admin keeps its messages; the
feedback tokens, their rate limits, the client address and CORS. Read from the
environment like the rest of config/settings.py, which takes them all with a `*` import.
"""

# Underscored: the settings module takes this one's names with a `*` import.
from csp.constants import NONE as _NONE
from csp.constants import SELF as _SELF

from config.env import env_bool, env_int, env_list, env_origins, env_rate, env_str, require
from config.env import refused as _refused
from config.settings_rules import secret_key_fallbacks_problem as _fallbacks_problem

# --- Rotating SECRET_KEY ----------------------------------------------------------------

# The keys SECRET_KEY had before, comma-separated: what they signed stays good (feedback
# tokens, the admins' sessions, the admin login's cookie of trusted accounts) until it
# expires, while everything new is signed with SECRET_KEY. Each as strong as SECRET_KEY
# must be with DEBUG off, and none SECRET_KEY itself; judged once DEBUG (and, for the
# latter, SECRET_KEY) is right.
# The task queue (django-q2) reads SECRET_KEY alone: see docs/operations.md.
SECRET_KEY_FALLBACKS = env_list("SECRET_KEY_FALLBACKS", [])
require(
    "SECRET_KEY_FALLBACKS",
    _fallbacks_problem(
        SECRET_KEY_FALLBACKS,
        secret_key=None if _refused("SECRET_KEY") else env_str("SECRET_KEY"),
        strong=not env_bool("DEBUG", False),
    ),
    depends_on=["DEBUG"],
)

# --- The admin's sign-in ----------------------------------------------------------------

# Failed logins within ADMIN_LOGIN_LOCKOUT_SECONDS of the first that lock the login (it
# answers 429 without a look at the password until that window is over;
# config/login_guard.py): ADMIN_LOGIN_MAX_FAILURES for one account at one client address;
# _PER_ADDRESS from one address over any accounts (password spraying), five times as
# many: a guesser at one account never reaches it (the pair stops it at 10) and the typos
# of a team behind one NAT stay far below it, while a sprayer gets five accounts' worth
# of guesses; _PER_USERNAME for one account from any addresses (distributed guessing),
# ten times as many: ten addresses' worth at least, and a browser that signed in as the
# account before is spared it. A login resets its own account-and-address count only.
ADMIN_LOGIN_MAX_FAILURES = env_int("ADMIN_LOGIN_MAX_FAILURES", 10, minimum=1)
ADMIN_LOGIN_MAX_FAILURES_PER_ADDRESS = env_int(
    "ADMIN_LOGIN_MAX_FAILURES_PER_ADDRESS", 5 * ADMIN_LOGIN_MAX_FAILURES, minimum=1
)
ADMIN_LOGIN_MAX_FAILURES_PER_USERNAME = env_int(
    "ADMIN_LOGIN_MAX_FAILURES_PER_USERNAME", 10 * ADMIN_LOGIN_MAX_FAILURES, minimum=1
)
ADMIN_LOGIN_LOCKOUT_SECONDS = env_int("ADMIN_LOGIN_LOCKOUT_SECONDS", 15 * 60, minimum=1)
# Where a login lands when its `next` is missing or leads off the site.
LOGIN_REDIRECT_URL = "admin:index"
# The admin's messages stay on the server, in the session: the default keeps them in a
# cookie first, signed but readable by anyone holding it. (A new API key is in none of
# them: diagnosis/api_key_admin_page.py shows it on the add's own answer.)
MESSAGE_STORAGE = "django.contrib.messages.storage.session.SessionStorage"

# --- Browser feedback (signed tokens, CORS) ---------------------------------------------

# How long a feedback token (diagnosis/feedback_tokens.py) stays good, in seconds.
FEEDBACK_TOKEN_MAX_AGE = env_int("FEEDBACK_TOKEN_MAX_AGE", 7 * 24 * 3600, minimum=60)
# Feedback sent with a token: per token, and per client address (many tokens, one page
# hammering the endpoint; refused tokens count there too). Same format as
# FEEDBACK_RATE_LIMIT; "off" disables one.
FEEDBACK_TOKEN_RATE_LIMIT = env_rate("FEEDBACK_TOKEN_RATE_LIMIT", "30/min")
FEEDBACK_ADDRESS_RATE_LIMIT = env_rate("FEEDBACK_ADDRESS_RATE_LIMIT", "600/min")
# Proxies in front of the service that append to X-Forwarded-For: the client address is
# the one they saw (the feedback limit, the admin login's lockout and its log lines). 0
# (the default) takes the connection's address, which a client cannot forge.
TRUSTED_PROXY_COUNT = env_int("TRUSTED_PROXY_COUNT", 0, minimum=0)
# Pages of these origins may send feedback from the browser; none by default. Only
# /api/feedback answers cross-origin requests, and never with cookies (the token is the credential).
CORS_ALLOWED_ORIGINS = env_origins("CORS_ALLOWED_ORIGINS", special=("null", "file://"))
CORS_URLS_REGEX = r"^/api/feedback$"
CORS_ALLOW_CREDENTIALS = False
CORS_ALLOW_METHODS = ["POST", "OPTIONS"]
# x-request-id: a page may name its request (config.request_id), as an agent may.
CORS_ALLOW_HEADERS = ["authorization", "content-type", "accept", "accept-language", "x-request-id"]
# A page reads only the safelisted response headers unless told more: the widget tells
# the reader how long to wait after a 429 from its Retry-After, and can report an error's
# X-Request-ID.
CORS_EXPOSE_HEADERS = ["Retry-After", "X-Request-ID"]
CORS_PREFLIGHT_MAX_AGE = 600

# --- What the console's pages may run and load (django-csp) ------------------------------

# Every page the service answers says so in its Content-Security-Policy: scripts, styles,
# images and connections from the service itself only, so that markup slipped past the
# escaping into a page (an agent's answer, a span's attributes) runs nothing. The console's
# scripts and styles are files under diagnosis/static/; none is written into a page, nor is
# a style attribute (Django's admin writes none; what the timeline draws is set from its
# script). No page may be framed, as X_FRAME_OPTIONS says. The feedback widget's file is
# loaded by other origins' pages, whose own policy governs it (README, "Feedback widget").
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [_SELF],
        "script-src": [_SELF],
        "style-src": [_SELF],
        "img-src": [_SELF, "data:"],  # data: for the icons the API docs' stylesheet inlines
        "object-src": [_NONE],
        "base-uri": [_SELF],
        "form-action": [_SELF],
        "frame-ancestors": [_NONE],
    },
}

# The admin's language cookie goes with same-site requests only, like the session's
# (Django sends it with any by default); secure when the session's is (config/settings.py).
LANGUAGE_COOKIE_SAMESITE = "Lax"
# No script of the service reads the CSRF token from its cookie (the console's forms carry
# it in a field): the cookie stays out of reach of any script.
CSRF_COOKIE_HTTPONLY = True
