"""The Streamlit app's glue: URL state, the run config, words for this session, the classroom (presenter, rooms,
follow-me, the guided lesson) and serving (mpviz.app.serving). Imports streamlit; the lesson pages (mpviz/pages)
sit on top of it, the presentation layer (mpviz.presentation) and the engine below it.
"""
