"""The state every Wagtail task starts from: a signed-in admin and two live pages under the
site's home page."""
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.auth.models import User
from django.contrib.sessions.backends.db import SessionStore
from django.core.management.base import BaseCommand
from wagtail.models import Page

from cms.models import StandardPage

SESSION_FOR_TESTS = "e2esession0000000000000000000002"


class Command(BaseCommand):
    help = "Seeds the e2e suite's data."

    def handle(self, *args, **options):
        admin = User.objects.create_superuser("admin", "admin@example.com", "admin-pass-e2e")
        home = Page.objects.get(depth=2)
        for title, slug, intro in [
            ("Summer sale", "summer-sale", "<p>Everything 20% off until August.</p>"),
            ("About us", "about-us", "<p>We make tents.</p>"),
        ]:
            page = home.add_child(instance=StandardPage(title=title, slug=slug, intro=intro))
            page.save_revision(user=admin).publish()
        session = SessionStore()
        session[SESSION_KEY] = str(admin.pk)
        session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
        session[HASH_SESSION_KEY] = admin.get_session_auth_hash()
        # After the data: reading a key that is not stored yet forgets it.
        session._session_key = SESSION_FOR_TESTS
        session.save(must_create=True)
