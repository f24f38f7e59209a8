"""Every URL parameter of every lesson, attacked with hostile values: a warning at most, never a crash or a link.

The keys come from what each page declares when it runs (mpviz.app.url.DECLARED), so a new lesson is covered as soon as
it is registered.
"""

from functools import cache

import pytest

from mpviz.app.lessons import LESSONS
from mpviz.app.url import DECLARED
from tests.apptest import failures, page_app
from tests.hostile import HOSTILE_VALUES, unsafe_markup

pytestmark = [pytest.mark.slow, pytest.mark.shared_results]  # a value that falls back reads the default run


@cache  # once per lesson, not once per hostile value: the keys a page declares do not depend on the values
def _keys(slug: str) -> frozenset[str]:
    page_app(f"mpviz/pages/{slug}.py").run()  # the page records the keys it (and the sidebar it shows) declares
    return frozenset(DECLARED[slug])


@pytest.mark.parametrize("value", HOSTILE_VALUES, ids=range(len(HOSTILE_VALUES)))
@pytest.mark.parametrize("slug", [entry.slug for entry in LESSONS])
def test_hostile_value_in_every_parameter(slug, value):
    keys = _keys(slug)
    at = page_app(f"mpviz/pages/{slug}.py", **dict.fromkeys(keys, value)).run()
    assert not failures(at), failures(at)
    for element in (*at.warning, *at.error, *at.info, *at.caption):
        assert not unsafe_markup(element.value), element.value
