from django.contrib import admin

from .models import Author, Book


class BookInline(admin.TabularInline):
    """Books as rows of a table form on their author's page (columns Title, Publication
    date, Pages), with one empty row for a new book."""

    model = Book
    fields = ["title", "publication_date", "pages"]
    extra = 1


@admin.register(Author)
class AuthorAdmin(admin.ModelAdmin):
    inlines = [BookInline]


@admin.register(Book)
class BookAdmin(admin.ModelAdmin):
    list_display = ["title", "author", "publication_date", "pages"]
    list_filter = ["author"]
