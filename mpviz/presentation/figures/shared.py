"""A figure that many sessions show, serialised once: the figures a class on one link shares
(mpviz.app.serving.results)."""

from __future__ import annotations

import plotly.graph_objects as go

from mpviz.presentation.figures.style import presented_spec


class SharedFigure(go.Figure):
    """A figure that many sessions show: the dict that st.plotly_chart serialises is made once, on first use, and
    so is its presenter-mode copy.

    st.plotly_chart turns a figure into a dict on every call, and plotly's `to_dict` deep-copies the whole figure
    to do so: for the softmax lesson's figures that copy cost more than all the rest of the page, once per session.
    This figure hands out the dict it made first, so the dict is as shared as the figure: never mutate either.
    Presenter mode's copy (larger type) was the figure rebuilt through plotly's validators once per presenter run:
    65-135 ms of the one GIL on the formats, policy and softmax lessons, just as the followers' runs of a page
    change queue behind it. It is made once, from the dict, and shared the same way.
    """

    _as_dict: dict | None = None
    _presented: SharedFigure | None = None

    def to_dict(self) -> dict:
        if self._as_dict is None:  # two threads may both make it: the same dict, one of them kept
            self._as_dict = super().to_dict()
        return self._as_dict

    @classmethod
    def of_spec(cls, spec: dict) -> SharedFigure:
        """A figure drawn only from `spec`, a figure's dict: no plotly objects are built for it (what st.plotly_chart
        reads of a figure is its to_dict()); its own plotly attributes stay empty."""
        figure = cls(layout={"template": {}})  # {}: an empty template, not plotly's default to validate
        figure._as_dict = spec
        return figure

    def presented(self) -> SharedFigure:
        """This figure for a projector (mpviz.presentation.figures.style.presented_spec), made on first use and kept
        with it."""
        if self._presented is None:  # as in to_dict: a race makes two equal copies, one of them kept
            self._presented = SharedFigure.of_spec(presented_spec(self.to_dict()))
        return self._presented
