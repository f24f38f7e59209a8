"""The project's structural rules, checked: engine without streamlit, thin pages, lint and format clean."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.xdist_group("serial")  # reads pages/, which test_navigation's throw-away lesson writes


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_engine_never_imports_streamlit():
    offenders = [p.name for p in (ROOT / "mpviz").rglob("*.py") if "streamlit" in _imports(p)]
    assert offenders == []


def test_engine_reaches_the_view_layer_only_to_export_a_lesson_file_or_show_a_notebook_widget():
    """The engine computes and never words what it finds (the words are the view's); the exceptions are hosts
    of the view like a page: the CLI's `export` (the offline lesson file is the stepper with its words), its
    `claims` (where each claim is made, quoted from the locales) and `mpviz.show` (the stepper as a notebook
    widget), which `import mpviz` loads only when it is first used."""
    offenders = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "mpviz").rglob("*.py") if "view" in _imports(p))
    assert offenders == ["mpviz/cli/claims.py", "mpviz/cli/export.py", "mpviz/notebook.py"]


def test_engine_imports_cleanly_without_streamlit():
    code = (
        "import sys; sys.modules['streamlit'] = None; import mpviz, mpviz.__main__, mpviz.bundle, "
        "view.figures.policy, view.figures.formats, view.figures.softmax, "
        "view.figures.scaler, view.figures.claims"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


def test_figures_never_import_streamlit():
    offenders = [p.name for p in (ROOT / "view" / "figures").glob("*.py") if "streamlit" in _imports(p)]
    assert offenders == []


def test_pages_folder_holds_only_lessons():
    """Streamlit treats pages/ as pages: shared view code lives in view/, and every file here is a lesson."""
    from mpviz.lessons import LESSONS

    assert sorted(p.name for p in (ROOT / "pages").glob("*.py")) == sorted(f"{entry.slug}.py" for entry in LESSONS)


def test_pages_run_no_torch_machinery():
    """Pages may *mention* torch.autocast in their text; they must not import torch or call its machinery."""
    machinery = {"autocast", "GradScaler", "TorchDispatchMode", "scaled_dot_product_attention"}
    for page in (ROOT / "pages").glob("*.py"):
        assert "torch" not in _imports(page), page.name
        calls = {
            getattr(n.func, "attr", getattr(n.func, "id", None))
            for n in ast.walk(ast.parse(page.read_text()))
            if isinstance(n, ast.Call)
        }
        assert not calls & machinery, page.name


@pytest.mark.parametrize("args", [["check", "."], ["format", "--check", "."]])
def test_ruff_is_clean(args):
    result = subprocess.run([sys.executable, "-m", "ruff", *args], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]


def _untyped(path: Path) -> list[str]:
    """Public functions and methods of public classes in `path` with a parameter or the return left unannotated."""
    found = []

    def visit(body: list[ast.stmt], owner: str = "") -> None:
        for node in body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                visit(node.body, f"{node.name}.")
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and not node.name.startswith("_"):
                a = node.args
                params = [*a.posonlyargs, *a.args, *a.kwonlyargs, *filter(None, (a.vararg, a.kwarg))]
                if owner and params and params[0].arg in ("self", "cls"):
                    params = params[1:]
                if node.returns is None or any(p.annotation is None for p in params):
                    found.append(f"{path.relative_to(ROOT)}::{owner}{node.name}")

    visit(ast.parse(path.read_text()).body)
    return found


def test_every_public_function_is_typed():
    """The engine's and the view's public functions say what they take and return (the brief's style rule)."""
    untyped = {name for folder in ("mpviz", "view") for p in (ROOT / folder).rglob("*.py") for name in _untyped(p)}
    assert sorted(untyped) == []
