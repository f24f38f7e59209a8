"""Shared fixtures. Streamlit caches are process-wide, so each test starts with them empty."""

import pytest
import streamlit as st


@pytest.fixture(autouse=True)
def _clear_streamlit_caches():
    st.cache_data.clear()
    st.cache_resource.clear()
    yield
