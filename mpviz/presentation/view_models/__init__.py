"""View models of the lessons: a page's settings in, the rows, words and figures it draws out.

One module per lesson (formats, softmax, policy, scaler, claims). A view model imports neither Streamlit nor
mpviz.app (tests/test_architecture.py) and never draws: the page script reads the widgets, asks the view model and
draws what comes back. Its words are in the language of the viewer asking (mpviz.presentation.text), the run it
reads is a plain value (mpviz.presentation.run_config), and the engine runs it needs are mpviz.presentation.runs'.
Every shared result is memoised by `mpviz.presentation.memo.memoised`, keyed by the function and all its arguments
(and the language, unless the result holds no words), so no cache key is written by hand; the app's host keeps them
for the class and runs the engine in its workers, and without a host each call computes here. Results are shared by
every session: never mutate them.
"""
