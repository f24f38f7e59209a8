"""The view layer shared by the lessons in pages/: URL state, the sidebar run config, words (locales/), cached
engine results, page scaffolding and figures. Not a page: app.py lists the pages explicitly from the lesson registry.

Pages read config through here, call mpviz through `view.results`, and draw. Nothing here computes with torch.
"""
