"""Settings of the e2e suite's Django site. The browser reaches it on an https name through
Playwright's routing (tests/e2e/lib/real-apps.mjs), so that origin is trusted for CSRF and
allowed as a host; the database is a file the test names (REAL_APP_DB)."""
import os

SECRET_KEY = "e2e-only-not-secret"
DEBUG = False
ORIGIN = os.environ.get("REAL_APP_ORIGIN", "https://books.tandem.test")
ALLOWED_HOSTS = ["127.0.0.1", "localhost", ORIGIN.split("://", 1)[1]]
CSRF_TRUSTED_ORIGINS = [ORIGIN]
# The browser sees https: the proxy says so, and Django must then set secure cookies.
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "library",
]
MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]
ROOT_URLCONF = "site_conf.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.environ.get("REAL_APP_DB", os.path.join(os.path.dirname(__file__), "..", "db.sqlite3")),
    }
}
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_TZ = True
STATIC_URL = "/static/"
# The seeded session (the admin signed in) outlives any cached copy of the seeded database.
SESSION_COOKIE_AGE = 10 * 365 * 24 * 3600
