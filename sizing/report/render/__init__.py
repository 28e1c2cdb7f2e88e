"""Rendering the guide and the terminal tables: HTML/Markdown (Jinja2), charts (matplotlib),
PDF (WeasyPrint) and plain text. The heavy libraries are imported lazily, inside functions."""
