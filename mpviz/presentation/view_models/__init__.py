"""View models of the lessons: a page's settings in, the rows, words and figures it draws out.

One module per lesson (formats, softmax, policy). A view model runs without a Streamlit script run (its tests call
it bare) and never draws: the page script reads the widgets, asks the view model and draws what comes back. Every
shared result is memoised by `mpviz.presentation.memo.memoised`, keyed by the function and all its arguments, so no
cache key is written by hand. Results are shared by every session: never mutate them.
"""

# The app's store becomes the memo's host as soon as a view model loads: its results are shared by the class.
from mpviz.app.serving import results  # noqa: F401
