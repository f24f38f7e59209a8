"""The fp8 lesson's view model without a page: a recipe and an outlier in, one shared run, its rows and figures out."""

import pytest

from mpviz.fp8 import block
from mpviz.presentation import memo
from mpviz.presentation.view_models import fp8 as vm


@pytest.fixture(autouse=True, scope="module")
def host():
    """Results shared in this process, for an English viewer (mpviz.presentation.memo.InProcess: tables stay rows)."""
    with memo.hosted(memo.InProcess()) as shared:
        yield shared


def test_the_run_is_the_engines_and_is_made_once():
    run = vm.run("tensorwise", 100.0)
    assert vm.run("tensorwise", 100.0) is run
    assert isinstance(run, block.Fp8Lesson) and run.tensors and run.gemms
    assert vm.outlier_figure("tensorwise", 100.0) is vm.outlier_figure("tensorwise", 100.0)


def test_one_row_per_quantised_tensor_and_per_gemm_in_the_viewers_words():
    run = vm.run("tensorwise", 100.0)
    tensors, gemms = vm.tensor_rows("tensorwise", 100.0), vm.gemm_rows("tensorwise", 100.0)
    assert [row["tensor"] for row in tensors] == [t.name for t in run.tensors]
    assert [row["underflow"] for row in tensors] == [vm.share(t.underflow) for t in run.tensors]
    assert [row["GEMM"] for row in gemms] == [g.name for g in run.gemms]
    assert [row["kind"] for row in gemms] == ["emulation" if g.emulated else "fp8 op" for g in run.gemms]
    assert len(vm.shares_figure("tensorwise", 100.0).data) >= 1
