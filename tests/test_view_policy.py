"""The autocast policy lesson's view model without a page: two devices in, counts, rows and figures out."""

import pytest

import mpviz.policy as pol
from mpviz.presentation import memo
from mpviz.presentation.view_models import policy as vm


@pytest.fixture(autouse=True, scope="module")
def host():
    """Results shared in this process, for an English viewer, as the app shares them for a class
    (mpviz.presentation.memo.InProcess: tables stay rows)."""
    with memo.hosted(memo.InProcess()) as shared:
        yield shared


@pytest.fixture(scope="module")
def cmp() -> pol.PolicyComparison:
    return pol.compare_policies(pol.device_policy("cpu"), pol.device_policy("cuda"))


def test_counts_are_the_comparisons_and_name_each_device(cmp):
    counts = vm.counts("cpu", "cuda")
    assert [n for _, n in counts.metrics] == [
        len(pol.device_policy("cpu").ops()),
        len(pol.device_policy("cuda").ops()),
        len(cmp.rows),
        cmp.differ,
    ]
    assert counts.metrics[0][0].startswith("CPU") and counts.metrics[1][0].startswith("CUDA")
    assert f"{cmp.differ} ops marked “differs”" in counts.caption
    assert set(counts.categories) <= set(vm.FILTER_CATEGORIES)
    assert vm.counts_figure("cpu", "cuda") is vm.counts_figure("cpu", "cuda")


def test_the_op_table_filters_by_search_category_and_difference(cmp):
    every = vm.op_table("cpu", "cuda", "", vm.FILTER_CATEGORIES, False)
    assert len(every) == len(cmp.rows) and list(every.columns) == ["op", "CPU", "CUDA", "differs"]
    softmax = vm.op_table("cpu", "cuda", " SOFTMAX ", vm.FILTER_CATEGORIES, True).to_dict("records")
    assert {"op": "aten::softmax.int", "CPU": "—", "CUDA": "fp32_set_opt_dtype", "differs": True} in softmax
    assert all(r["differs"] and "softmax" in r["op"] for r in softmax)
    assert len(vm.op_table("cpu", "cuda", "", (), False)) == 0
    assert vm.op_caption("cpu", "cuda", "", vm.FILTER_CATEGORIES, True).startswith(f"{cmp.differ} ")


def test_a_device_is_never_compared_with_itself():
    assert vm.distinct_right("cpu", "cuda") is None
    assert vm.distinct_right("cpu", "cpu") == "cuda" and vm.distinct_right("cuda", "cuda") == "cpu"


def test_a_probe_call_shows_its_steps_and_softmax_explains_fp32_set_opt_dtype():
    probe = vm.probe("softmax", ("float16",), "cuda", "float16")
    assert probe.output_dtype == "float32"
    assert vm.steps_figure("softmax", ("float16",), "cuda", "float16").data
    measured = vm.set_opt_measured("cpu", "cuda")
    assert "aten::softmax.int" in measured and "CUDA" in measured


def test_how_probed_has_a_row_per_note():
    rows = vm.how_probed_table("cpu", "cuda")
    notes = sum(len(pol.device_policy(d).notes) for d in ("cpu", "cuda"))
    assert len(rows) == notes


def test_categories_from_a_link_are_checked():
    assert vm.parse_categories("fp32,promote,") == ["fp32", "promote"]
    with pytest.raises(ValueError):
        vm.parse_categories("nope")
