"""The project's structural rules, checked: the layers, thin pages, typed public functions, lint and format clean."""

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


PACKAGE = ROOT / "mpviz"
# The layers, lowest first: each imports only the ones below it (and the third-party packages it is given).
LAYERS = ("engine", "presentation", "app", "pages")
ENGINE_PACKAGES = {"torch", "numpy", "ml_dtypes"}  # the base install: the engine and the CLI need nothing else
CJK = re.compile(r"[\u3000-\u30ff\u3400-\u9fff\uff00-\uffef]")  # Chinese words and punctuation


def layer_of(path: Path) -> str:
    """A module's layer, from where it lives: mpviz/presentation, mpviz/app, mpviz/pages (and app.py, which runs the
    app), the command line (mpviz/cli, mpviz/__main__.py) and the package's front door (mpviz/__init__.py: `mpviz.show`
    imported on first use) on top, everything else in mpviz the engine."""
    if path == ROOT / "app.py":
        return "pages"
    parts = path.relative_to(PACKAGE).parts
    if parts[0] in ("presentation", "app", "pages"):
        return parts[0]
    if parts[0] in ("cli", "__main__.py", "__init__.py"):
        return "front"
    return "engine"


def _module_layer(module: str) -> str | None:
    """The layer of an imported mpviz module (None for another package)."""
    parts = module.split(".")
    if parts[0] != "mpviz":
        return None
    return parts[1] if len(parts) > 1 and parts[1] in ("presentation", "app", "pages") else "engine"


def _imported(path: Path) -> set[str]:
    """Every module `path` imports, anywhere in it (a function's late import counts as much as the top's)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _imports(path: Path) -> set[str]:
    return {name.split(".")[0] for name in _imported(path)}


MODULES = sorted([*PACKAGE.rglob("*.py"), ROOT / "app.py"])


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_each_module_imports_only_the_layers_below_it(path):
    """engine ← presentation (no Streamlit) ← app (Streamlit glue) ← pages; the command line and the package's front
    door on top. No exceptions: a module that needs a higher layer belongs in it."""
    here = layer_of(path)
    rank = {name: i for i, name in enumerate(LAYERS)} | {"front": len(LAYERS)}
    above = [m for m in _imported(path) if (lay := _module_layer(m)) and rank[lay] > rank[here]]
    assert above == [], f"{here} imports a higher layer"
    packages = {m.split(".")[0] for m in _imported(path)} - set(sys.stdlib_module_names) - {"mpviz"}
    if here == "engine":
        assert packages <= ENGINE_PACKAGES, "the engine imports torch, numpy and ml_dtypes only"
    if here in ("engine", "presentation", "front"):
        assert "streamlit" not in packages, "only the app and its pages import Streamlit"


@pytest.mark.parametrize("path", [p for p in MODULES if layer_of(p) == "engine"], ids=lambda p: p.name)
def test_the_engine_holds_no_words_icons_or_page_paths(path):
    """What is shown is worded in mpviz/locales, drawn by the presentation and laid out by the app."""
    source = path.read_text()
    assert not CJK.search(source), "words belong in mpviz/locales"
    assert ":material/" not in source, "icons belong to the app (mpviz.app.lessons)"
    assert not re.search(r"pages/\w+\.py", source), "page paths belong to the app"


def test_engine_imports_cleanly_without_streamlit_or_plotly():
    """The engine, the CLI and the lesson file without Streamlit or plotly; then, plotly allowed again, every
    lesson's view model and the runs they share, still without Streamlit (one interpreter for both)."""
    view_models = ", ".join(f"mpviz.presentation.view_models.{p.stem}" for p in VIEW_MODELS)
    code = (
        "import sys; sys.modules['streamlit'] = sys.modules['plotly'] = sys.modules['anywidget'] = None; "
        "import mpviz, mpviz.__main__, mpviz.bundle, mpviz.fp8, mpviz.claims, mpviz.presentation.lesson_file; "
        f"del sys.modules['plotly']; import mpviz.presentation.runs, {view_models}"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


VIEW_MODELS = sorted(p for p in (PACKAGE / "presentation" / "view_models").glob("*.py") if p.name != "__init__.py")


def test_every_view_model_has_its_tests():
    tested = {p.stem.removeprefix("test_view_") for p in (ROOT / "tests").glob("test_view_*.py")}
    assert {p.stem for p in VIEW_MODELS} <= tested


@pytest.mark.parametrize("path", sorted((ROOT / "tests").glob("test_view_*.py")), ids=lambda p: p.name)
def test_the_view_models_tests_run_without_streamlit_or_the_app(path):
    """A view model is tested bare: its tests import neither Streamlit nor mpviz.app nor the AppTest helpers
    (anywhere in the file), and what they import from mpviz imports no Streamlit either (the layer test above);
    the results they share live in a host of their own (mpviz.presentation.memo.InProcess)."""
    banned = [m for m in _imported(path) if m.split(".")[0] == "streamlit" or m.startswith(("mpviz.app", "tests."))]
    assert banned == []


def test_the_pages_folder_holds_only_lessons():
    """Every page script is a lesson of the registry, and every lesson has its page."""
    from mpviz.app.lessons import LESSONS

    pages = sorted(p.name for p in (PACKAGE / "pages").glob("*.py") if p.name != "__init__.py")
    assert pages == sorted(f"{entry.slug}.py" for entry in LESSONS)
    assert all(entry.page.is_file() for entry in LESSONS)


def test_every_page_is_a_short_linear_script():
    """At most 150 lines: widgets and drawing; the lesson's logic lives in its view model
    (mpviz.presentation.view_models)."""
    long = {p.name: n for p in (PACKAGE / "pages").glob("*.py") if (n := len(p.read_text().splitlines())) > 150}
    assert long == {}


def test_pages_run_no_torch_machinery():
    """Pages may *mention* torch.autocast in their text; they must not import torch or call its machinery."""
    machinery = {"autocast", "GradScaler", "TorchDispatchMode", "scaled_dot_product_attention"}
    for page in (PACKAGE / "pages").glob("*.py"):
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
    modules = [p for p in PACKAGE.rglob("*.py") if layer_of(p) != "pages"]  # a page is a script, not an API
    untyped = {name for p in modules for name in _untyped(p)}
    assert sorted(untyped) == []
