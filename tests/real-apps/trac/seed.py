"""Makes the e2e suite's Trac environment in the folder given: a project with three tickets,
two wiki pages of its own, and an anonymous visitor allowed to file and change tickets and
write and delete wiki pages (no login: the tasks are about what the agent does on the pages,
not about signing in). Run by tests/e2e/lib/real-apps.mjs with the real-apps venv's python."""
import subprocess
import sys
import os

from trac.env import Environment
from trac.ticket.model import Ticket
from trac.wiki.model import WikiPage

path = sys.argv[1]
admin = os.path.join(os.path.dirname(sys.executable), "trac-admin")
subprocess.run([admin, path, "initenv", "Orbit", "sqlite:db/trac.db"], check=True, stdout=subprocess.DEVNULL)
subprocess.run(
    [admin, path, "permission", "add", "anonymous", "TICKET_CREATE", "TICKET_MODIFY", "WIKI_CREATE", "WIKI_MODIFY", "WIKI_DELETE"],
    check=True,
)
env = Environment(path)
# No mail leaves the machine, and no background work competes with the browser.
env.config.set("notification", "smtp_enabled", "false")
env.config.set("logging", "log_type", "none")
env.config.save()
for summary, owner, component, description in [
    ("Login page rejects valid passwords", "maria", "component1", "Since the upgrade, signing in fails for some users."),
    ("Export to CSV drops the last row", "li", "component2", "The exported file misses the final line of the report."),
    ("Typo on the About page", "maria", "component1", "It says 'teh' instead of 'the'."),
]:
    t = Ticket(env)
    t["summary"], t["owner"], t["component"], t["description"] = summary, owner, component, description
    t["reporter"], t["status"] = "sam", "new"
    t.insert()
for name, text in [
    ("MeetingNotes", "= Meeting notes =\n\nNext meeting: Monday.\n"),
    ("OldRoadmap", "= Old roadmap =\n\nThis page is out of date.\n"),
]:
    page = WikiPage(env, name)
    page.text = text
    page.save("sam", "First version")
env.shutdown()
