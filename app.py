"""mpviz: step through a real self-attention forward and backward under torch.autocast, op by op.

Entry point: page config, the shared sidebar (run config + share link), and explicit navigation.
"""

from pathlib import Path

import streamlit as st

from pages import common

TEXT = {
    "title": "mpviz — mixed precision, measured",
    "pages": {
        "attention": "Attention, step by step",
        "policy": "Autocast policy",
        "formats": "Number formats",
        "softmax": "Softmax overflow",
        "scaler": "GradScaler",
        "claims": "Tutorial claims, checked",
    },
}
PAGES = [  # (file, key in TEXT["pages"], icon)
    ("pages/attention.py", "attention", ":material/footprint:"),
    ("pages/policy.py", "policy", ":material/rule:"),
    ("pages/formats.py", "formats", ":material/memory:"),
    ("pages/softmax.py", "softmax", ":material/functions:"),
    ("pages/scaler.py", "scaler", ":material/speed:"),
    ("pages/claims.py", "claims", ":material/fact_check:"),
]

st.set_page_config(page_title=TEXT["title"], page_icon=":material/memory:", layout="wide")
common.leave_legacy_pages_mode()
st.html(Path(__file__).with_name("assets").joinpath("style.css").read_text())
nav = st.navigation([st.Page(path, title=TEXT["pages"][key], icon=icon, url_path=key) for path, key, icon in PAGES])
st.session_state["_run_config"] = common.sidebar_config()
common.show_warnings()
nav.run()
common.share_link(nav.url_path)  # after the page ran: it has written its own state into the URL
