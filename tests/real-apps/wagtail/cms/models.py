from wagtail.admin.panels import FieldPanel
from wagtail.fields import RichTextField
from wagtail.models import Page


class StandardPage(Page):
    """A page with a rich-text introduction (a Draftail editor in the admin)."""

    intro = RichTextField(blank=True)
    content_panels = Page.content_panels + [FieldPanel("intro")]
