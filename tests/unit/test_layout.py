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
    "translator.decode": 3,
    "translator.train": 4,
    "translator.engines": 4,
    "translator.serve": 5,
    "translator.cli_options": 5,
    "translator.cli": 6,
    "translator.commands": 6,
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
