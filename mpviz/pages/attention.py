"""Attention, step by step: a real forward and backward under autocast, every op traced, stepped in the browser.

The server computes one lesson bundle per run config (shared by every session on the link) and hands it to the
stepper component; stepping, picking and zooming happen in the browser without a rerun (in presenter mode each
step also reports the stepper's place, for the students following).
"""

from mpviz.app import text
from mpviz.app.page import guarded, page_header, presenting
from mpviz.app.run_config import run_config
from mpviz.app.serving import results
from mpviz.app.stepper import mount_stepper

TEXT = text.section("attention")
page_header(TEXT)
results.kernel_notice()
with guarded("lesson"):
    lesson = results.attention_lesson(run_config())
    if lesson is not None:
        mount_stepper(lesson, key="stepper", locale=text.language(), presenter=presenting())
