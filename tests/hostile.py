"""A corpus of hostile URL values and the check every page must pass against them.

Each value goes into every URL parameter a page declares (mpviz.app.url.DECLARED, recorded when the page runs), all at
once, one value per run. A page passes when it raises nothing, its error boundary caught nothing, and every warning
it shows renders to HTML without a link, an image or raw HTML coming from the visitor's text.
"""

from markdown_it import MarkdownIt

HOSTILE_VALUES = (
    "x` **Your session expired.** [Sign in](https://evil.example/login) `",  # markdown injection
    "<img src=x onerror=alert(1)>",  # raw HTML
    "![pixel](https://evil.example/p.png)",
    "-1",
    "0",
    "1e308",
    "-1e308",
    "nan",
    "inf",
    "99999999999999999999999",
    "",
    "全角字符",
    "a,b,,c,cpu,cpu",
    "3.5",
)
_md = MarkdownIt("commonmark")


def unsafe_markup(markdown: str) -> list[str]:
    """Tags in `markdown`'s rendering that user text must never produce: links, images, raw HTML."""
    tokens = _md.parse(markdown)
    found = []
    for token in tokens:
        for t in [token, *(token.children or [])]:
            if t.type in ("link_open", "image", "html_inline", "html_block"):
                found.append(t.type)
    return found
