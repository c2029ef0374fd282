"""The state every real-app task starts from: an admin user, a "moderators" group, a second
user, three authors and their books."""
import datetime

from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.auth.models import Group, Permission, User
from django.contrib.sessions.backends.db import SessionStore
from django.core.management.base import BaseCommand

from library.models import Author, Book


SESSION_FOR_TESTS = "e2esession0000000000000000000001"


class Command(BaseCommand):
    help = "Seeds the e2e suite's data."

    def handle(self, *args, **options):
        admin = User.objects.create_superuser("admin", "admin@example.com", "admin-pass-e2e")
        User.objects.create_user("maria", "maria@example.com", "maria-pass-e2e")
        moderators = Group.objects.create(name="moderators")
        moderators.permissions.set(Permission.objects.filter(codename__in=["change_book", "delete_book"]))
        books = {
            "Ursula K. Le Guin": [("A Wizard of Earthsea", 1968, 183), ("The Left Hand of Darkness", 1969, 286)],
            "Stanisław Lem": [("Solaris", 1961, 204), ("The Cyberiad", 1965, 295)],
            "Octavia E. Butler": [("Kindred", 1979, 264)],
        }
        for name, titles in books.items():
            author = Author.objects.create(name=name)
            for title, year, pages in titles:
                Book.objects.create(title=title, publication_date=datetime.date(year, 1, 1), pages=pages, author=author)
        # The admin's signed-in session under a known key: the test gives the browser that
        # cookie, so each task starts signed in (the reset copies this database back).
        session = SessionStore()
        session[SESSION_KEY] = str(admin.pk)
        session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
        session[HASH_SESSION_KEY] = admin.get_session_auth_hash()
        # After the data: reading a key that is not stored yet forgets it.
        session._session_key = SESSION_FOR_TESTS
        session.save(must_create=True)
