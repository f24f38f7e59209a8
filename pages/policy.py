"""Placeholder page: being built (see the project's issues)."""

import streamlit as st

st.title("policy")
st.info("This lesson is being built.")
