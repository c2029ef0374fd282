#!/usr/bin/env python3
"""The e2e suite's Wagtail site: a CMS with a few pages (tests/e2e/real-apps.test.mjs)."""
import os
import sys

if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cms_conf.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)
