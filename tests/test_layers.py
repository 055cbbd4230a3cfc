"""The package's layers (docs/architecture.md): every module of `albert_core` sits in one layer, imports only
from its own layer or those below it, and no modules import each other in a circle. Function-level (lazy)
imports count as imports. A new subpackage must be given its place in `LAYERS` before it can land."""

from __future__ import annotations

import ast
from collections.abc import Collection, Mapping
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "albert_core"

# Bottom to top. The base modules hold what every layer uses (number formats, operator settings, the
# paper's printed figures, the whole-number rule); the package itself and `__main__` sit above everything.
LAYERS = (
    ("base", ("albert_core.format", "albert_core.settings", "albert_core.paper", "albert_core.checks",
               "albert_core.disk_cache", "albert_core.quality")),
    ("configuration", ("albert_core.configuration",)),
    ("counting", ("albert_core.counting",)),
    ("text", ("albert_core.text",)),
    ("live model", ("albert_core.live",)),
    ("hardware", ("albert_core.hardware", "albert_core.quality_cost")),
    ("lab", ("albert_core.lab",)),
    ("review", ("albert_core.review",)),
    ("cli", ("albert_core.cli",)),
    ("public API", ("albert_core", "albert_core.__main__")),
)


def module_names(root: Path = PACKAGE) -> dict[str, Path]:
    names = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        names[name] = path
    return names


def imported_names(path: Path, modules: Collection[str]) -> set[str]:
    """Every name `path` imports, at any depth of the file (lazy imports too); ``from m import x`` gives m.x
    when that is one of ``modules`` (a submodule), else m."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                found.add(sub if sub in modules else node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


def imports_of(path: Path, modules: Collection[str]) -> set[str]:
    """The modules among ``modules`` that `path` imports."""
    return imported_names(path, modules) & set(modules)


def layer_of(module: str) -> int | None:
    best = None  # the longest matching prefix wins: "albert_core.lab.x" is the lab, not the public API
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and (best is None or len(prefix) > best[1]):
                best = (index, len(prefix))
    return None if best is None else best[0]


def circles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def upward(graph: Mapping[str, set[str]]) -> list[str]:
    return sorted(f"{a} ({LAYERS[layer_of(a)][0]}) imports {b} ({LAYERS[layer_of(b)][0]})"
                  for a, targets in graph.items() for b in targets if layer_of(b) > layer_of(a))


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    modules = module_names()
    return {name: imports_of(path, modules) - {name} for name, path in modules.items()}


def test_every_module_has_a_layer(graph):
    assert [m for m in graph if layer_of(m) is None] == []


def test_no_module_imports_from_a_layer_above_it(graph):
    assert upward(graph) == []


def test_no_import_circles(graph):
    assert circles(graph) == []


def test_the_checks_see_a_circle_and_an_upward_import():
    cyclic = {"albert_core.lab.a": {"albert_core.lab.b"}, "albert_core.lab.b": {"albert_core.lab.a"},
              "albert_core.lab.c": {"albert_core.lab.a"}}
    assert circles(cyclic) == [["albert_core.lab.a", "albert_core.lab.b"]]
    assert upward({"albert_core.counting.x": {"albert_core.live.model"}}) == [
        "albert_core.counting.x (counting) imports albert_core.live.model (live model)"]
    assert upward({"albert_core.live.model": {"albert_core.counting.params"}}) == []


def test_lazy_imports_count(tmp_path):
    pkg = tmp_path / "albert_core"
    (pkg / "lab").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "lab" / "__init__.py").write_text("")
    (pkg / "lab" / "a.py").write_text("def f():\n    from albert_core.lab import b\n")
    (pkg / "lab" / "b.py").write_text("from albert_core.lab.a import f\n")
    modules = module_names(pkg)
    assert imports_of(pkg / "lab" / "a.py", modules) == {"albert_core.lab.b"}
    assert imports_of(pkg / "lab" / "b.py", modules) == {"albert_core.lab.a"}


def test_the_folders_import_downwards_only_and_ui_has_no_circles():
    root = PACKAGE.parent
    paths = module_names(root / "ui")
    ui = {name: imported_names(path, paths) for name, path in paths.items()}
    assert circles({m: (targets & set(ui)) - {m} for m, targets in ui.items()}) == []
    # the page scripts (ui/<page>/page.py, run by st.navigation) sit on top: nothing imports them
    page_scripts = {m for m in ui if m.endswith(".page")}
    assert len(page_scripts) == 8
    assert sorted(m for m, targets in ui.items() if targets & page_scripts) == []
    assert not (root / "pages").exists()  # Streamlit's legacy multipage folder name (app.py says why)
    modules = module_names()
    library = {name: imported_names(path, modules) for name, path in modules.items()}
    assert sorted(m for m, targets in library.items()
                  if any(t.split(".")[0] in ("ui", "streamlit") for t in targets)) == []


# ui/ by page over a small common core (sidebar, state, URL codec and URL-bound widgets, tables, colours, figure
# style and helpers): a page's package imports the core and itself, the core no page.
UI_PAGES = ("explorer", "scaling", "live", "train", "hardware", "compare", "paper", "quality")
# The figures two pages share, each charted by one page and reused by the other.
UI_SHARED = {
    ("ui.paper.figures", "ui.scaling.figures"): "the circulating embedding table: Scaling's chart, Paper's table",
    ("ui.train.figures", "ui.live.figures"): "layer smoothness: measured on a live model and on a lab run",
}


def ui_page_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 and parts[1] in UI_PAGES else None


def across_pages(graph: Mapping[str, set[str]]) -> list[str]:
    """Imports from the core into a page, or from one page into another (`UI_SHARED` excepted)."""
    return sorted(f"{a} imports {b}" for a, targets in graph.items() for b in targets
                  if ui_page_of(b) and ui_page_of(b) != ui_page_of(a) and (a, b) not in UI_SHARED)


def test_ui_is_grouped_by_page_over_a_common_core():
    paths = module_names(PACKAGE.parent / "ui")
    graph = {name: imported_names(path, paths) & set(paths) for name, path in paths.items()}
    assert {ui_page_of(m) for m in paths} == {None, *UI_PAGES}
    assert across_pages(graph) == []
    assert all(f"ui.{page}.page" in paths for page in UI_PAGES)
    assert across_pages({"ui.sidebar": {"ui.scaling.charts"}, "ui.paper.cache": {"ui.explorer.figures"},
                         "ui.paper.page": {"ui.paper.cache", "ui.state"}}) == [
        "ui.paper.cache imports ui.explorer.figures", "ui.sidebar imports ui.scaling.charts"]


def test_every_public_name_resolves_from_the_package_root():
    import albert_core

    missing = [name for name in albert_core.__all__ if getattr(albert_core, name, None) is None]
    assert missing == [] and {"ModelConfig", "PRESETS", "analyze", "build_model", "coerce"} <= set(albert_core.__all__)


# ----------------------------------------------------------------------------- no re-exports
def owned_names(path: Path) -> set[str]:
    """The names a module defines itself at module level (functions, classes, assignments, also under if / try),
    not those it imports."""
    names = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        for sub in ast.walk(node) if isinstance(node, (ast.If, ast.Try)) else (node,):
            if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(sub.name)
            elif isinstance(sub, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
                names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return names


def borrowed_imports(importers: Mapping[str, Path], modules: Mapping[str, Path]) -> list[str]:
    """Every ``from m import x`` (at any depth) where m is one of ``modules`` and x is neither a submodule of m nor
    defined in m: a name taken from a module that only imports it. The package root (`albert_core`, the public
    API of lazy names) is the one module allowed to hand on what it does not own."""
    owned = {name: owned_names(path) for name, path in modules.items()}
    found = []
    for importer, path in importers.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in modules):
                continue
            if node.module == "albert_core":
                continue
            found += [f"{importer} imports {a.name} from {node.module}" for a in node.names
                      if f"{node.module}.{a.name}" not in modules and a.name not in owned[node.module]]
    return sorted(found)


def test_every_name_is_imported_from_the_module_that_owns_it():
    """docs/architecture.md: "no re-exports". Library, app, tests, benches and scripts import a name from the
    module that defines it; a module that imports a name does not hand it on."""
    root = PACKAGE.parent
    modules = {**module_names(), **module_names(root / "ui")}
    importers = dict(modules)
    for folder in ("tests", "bench", "scripts"):
        importers |= {str(p.relative_to(root)): p for p in sorted((root / folder).rglob("*.py"))}
    importers["app.py"] = root / "app.py"
    assert borrowed_imports(importers, modules) == []
    noqa = [name for name, path in modules.items() if "noqa: F401" in path.read_text(encoding="utf-8")]
    assert noqa == []  # an unused import kept on purpose is a re-export


def test_the_re_export_check_sees_a_borrowed_name(tmp_path):
    pkg = tmp_path / "albert_core"
    (pkg / "live").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from albert_core.live.budget import reserve\n")
    (pkg / "live" / "__init__.py").write_text("")
    (pkg / "live" / "budget.py").write_text("LIMIT = 1\n\ndef reserve():\n    pass\n")
    (pkg / "live" / "model.py").write_text("from albert_core.live.budget import reserve\n\nreserve()\n")
    (pkg / "live" / "user.py").write_text("def f():\n    from albert_core.live.model import reserve\n"
                                          "from albert_core.live.budget import LIMIT\nfrom albert_core.live import budget\n"
                                          "from albert_core import reserve\n")
    modules = module_names(pkg)
    assert borrowed_imports(modules, modules) == [
        "albert_core.live.user imports reserve from albert_core.live.model"]
