"""The import graph, read from the code: stages import only their own floor and the
floors below, nothing imports in a circle (lazy imports included), at most ten modules
stand at the top of the package, and reading a config loads no torch."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "translator"

# Module prefix -> floor; a module may import its own floor and those below. The config
# reads its model section through the family registry, which imports no torch.
FLOORS = {
    "translator": 0,
    "translator.errors": 0,
    "translator.fileio": 0,
    "translator.specials": 0,
    "translator.runtime": 0,
    "translator.progress": 0,
    "translator.config": 0,
    "translator.models.family": 0,
    "translator.data": 1,
    "translator.models": 2,
    "translator.plots": 3,
    "translator.pretrained": 3,
    "translator.decode": 3,
    "translator.documents": 3,
    "translator.train": 4,
    "translator.engines": 4,
    "translator.engines.lang_codes": 3,  # plain checks of codes, which import also makes
    "translator.engines.export_settings": 3,  # an export's config, which every format reads
    "translator.serve": 5,
    "translator.cli_options": 5,
    "translator.cli": 6,
    "translator.commands": 6,
    "translator.api": 6,  # the library's interface, beside the command line's
    "translator.__main__": 6,
}


def floor(module: str) -> int:
    owners = [k for k in FLOORS if module == k or module.startswith(k + ".")]
    return FLOORS[max(owners, key=len)]


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """The translator modules `path` imports anywhere in its body, lazy imports included."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("translator"):
            for alias in node.names:  # `from translator.data import prepare` names a module
                full = f"{node.module}.{alias.name}"
                is_module = (PACKAGE.parent / (full.replace(".", "/") + ".py")).exists()
                found.add(full if is_module else node.module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("translator")}
    return found


def graph() -> dict[str, set[str]]:
    mods = {module_name(p): imports(p) for p in PACKAGE.rglob("*.py")}
    return {m: {d for d in deps if d != m} for m, deps in mods.items()}


def test_no_module_imports_a_higher_floor():
    upward = [f"{m} -> {d}" for m, deps in graph().items() for d in deps if floor(d) > floor(m)]
    assert not upward, upward


def find_cycle(g: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        path.append(m)
        for d in sorted(g.get(m, ())):
            if state.get(d) == 1:
                return path[path.index(d) :] + [d]
            if d not in state and (cycle := visit(d)):
                return cycle
        path.pop()
        state[m] = 2
        return None

    for m in sorted(g):
        if m not in state and (cycle := visit(m)):
            return cycle
    return None


def test_no_import_cycles():
    assert find_cycle(graph()) is None, " -> ".join(find_cycle(graph()))


def test_the_cycle_finder_finds_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_every_module_has_a_floor_and_the_top_holds_at_most_ten():
    for m in graph():
        floor(m)  # a module outside every prefix has none: KeyError / ValueError
    top = [p.name for p in PACKAGE.glob("*.py")]
    assert len(top) <= 10, top
    for sub in (p for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__"):
        if any(sub.glob("*.py")):
            assert (sub / "__init__.py").is_file(), sub
            assert f"translator.{sub.name}" in FLOORS, sub


# -- the tests themselves -------------------------------------------------------------------------


def test_no_test_module_imports_another():
    # What several test modules use lives in the helper modules beside tests/util.py: a test
    # module that imports another hangs on that one's tests, and collects any test it imports.
    tests = Path(__file__).resolve().parents[1]
    names = {path.stem for path in tests.rglob("test_*.py")}
    found = []
    for path in sorted(tests.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                targets = [base] + [f"{base}.{alias.name}".lstrip(".") for alias in node.names]
            else:
                continue
            if any(target.split(".")[-1] in names for target in targets):
                found.append(f"{path.relative_to(tests)}:{node.lineno}")
    assert not found, found


def test_functions_and_modules_stay_small():
    """A function reads in one screen (80 lines, its signature and decorators counted) and a
    module in one sitting (400 lines)."""
    long = []
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if len(text.splitlines()) > 400:
            long.append(f"{path.name}: {len(text.splitlines())} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                start = min([node.lineno] + [d.lineno for d in node.decorator_list])
                if node.end_lineno - start + 1 > 80:
                    long.append(f"{path.name}:{node.lineno} {node.name}")
    assert not long, long


ENGINE_NAMES = {"pytorch", "ctranslate2"}
ENGINE_CLASSES = {"Translator", "ExportedTranslator"}


def engine_checks(tree: ast.AST) -> list[int]:
    """Lines that compare a value with an engine's name or test an engine's class."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(isinstance(s, ast.Constant) and s.value in ENGINE_NAMES for s in sides):
                found.append(node.lineno)
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "isinstance":
            names = {n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name)}
            names |= {n.attr for n in ast.walk(node.args[1]) if isinstance(n, ast.Attribute)}
            if names & ENGINE_CLASSES:
                found.append(node.lineno)
    return found


def test_outside_the_engines_nothing_tells_engines_apart_by_name_or_class():
    """What an engine can do is in its `capabilities` (engines/engine.py)."""
    found = []
    for path in PACKAGE.rglob("*.py"):
        if "engines" in path.relative_to(PACKAGE).parts:
            continue
        found += [f"{path.name}:{n}" for n in engine_checks(ast.parse(path.read_text()))]
    assert not found, found
    sample = 'if info["engine"] != "pytorch": pass\nisinstance(e, ExportedTranslator)'
    assert engine_checks(ast.parse(sample)) == [1, 2]
