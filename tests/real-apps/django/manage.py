#!/usr/bin/env python3
"""The e2e suite's Django site: an admin of authors and books (tests/e2e/real-apps.test.mjs)."""
import os
import sys

if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "site_conf.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)
