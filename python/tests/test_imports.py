"""The `lara` package's import graph: acyclic, and no module reaches into another's privates.

Every module of `python/src/lara` is parsed with `ast` (nothing is imported,
so optional extras need not be installed). An edge A -> B is any import of B
by A, wherever it sits: module level, inside a function, or under
`if TYPE_CHECKING:`. `from lara.x import y` is an edge to `lara.x.y` when
that is a module, else to `lara.x` (a package's `__init__`). Importing a
module does not count as importing its parent packages: a package that
re-exports its submodules is the usual layout, not a cycle.

A private name is one with a single leading underscore (`_rng`, not
`__version__`). A module may use its own, never another module's: neither
`from lara.x import _name` nor `x._name` on an imported lara module.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass, field
from pathlib import Path

PACKAGE = "lara"
ROOT = Path(__file__).resolve().parents[1] / "src" / PACKAGE


@dataclass
class Module:
    name: str
    path: Path
    is_package: bool
    imports: dict[str, int] = field(default_factory=dict)  # imported module -> first line
    private_uses: list[tuple[int, str]] = field(default_factory=list)  # (line, what)


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _module_name(path: Path, root: Path) -> tuple[str, bool]:
    parts = [PACKAGE, *path.relative_to(root).with_suffix("").parts]
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


def _resolve(module: Module, node: ast.ImportFrom) -> str:
    """The absolute module name of `from <...> import`."""
    if not node.level:
        return node.module or ""
    base = module.name.split(".")
    if not module.is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def scan(root: Path = ROOT) -> dict[str, Module]:
    modules: dict[str, Module] = {}
    for path in sorted(root.rglob("*.py")):
        name, is_package = _module_name(path, root)
        modules[name] = Module(name, path, is_package)
    for module in modules.values():
        tree = ast.parse(module.path.read_text(), filename=str(module.path))
        aliases: dict[str, str] = {}  # local name -> lara module it is bound to

        def add(target: str, line: int, module: Module = module) -> None:
            if target != module.name:
                module.imports.setdefault(target, line)

        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] != PACKAGE or alias.name not in modules:
                        continue
                    add(alias.name, node.lineno)
                    if alias.asname:
                        aliases[alias.asname] = alias.name
                    for part in alias.name.split(".")[1:]:
                        if _is_private(part):
                            module.private_uses.append((node.lineno, f"import {alias.name}"))
            elif isinstance(node, ast.ImportFrom):
                source = _resolve(module, node)
                if source.split(".")[0] != PACKAGE:
                    continue
                for alias in node.names:
                    submodule = f"{source}.{alias.name}"
                    if submodule in modules:
                        add(submodule, node.lineno)
                        aliases[alias.asname or alias.name] = submodule
                        own_package = module.name.startswith(source + ".") or (
                            module.is_package and module.name == source
                        )
                        if _is_private(alias.name) and not own_package:
                            module.private_uses.append(
                                (
                                    node.lineno,
                                    f"from {source} import {alias.name} "
                                    "(a private module of another package)",
                                )
                            )
                    else:
                        add(source, node.lineno)
                        if _is_private(alias.name):
                            module.private_uses.append(
                                (node.lineno, f"from {source} import {alias.name}")
                            )
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in aliases
                and _is_private(node.attr)
            ):
                module.private_uses.append(
                    (
                        node.lineno,
                        f"{node.value.id}.{node.attr} (private to {aliases[node.value.id]})",
                    )
                )
    return modules


@functools.cache
def package() -> dict[str, Module]:
    """The scan of `lara` itself, once per test session."""
    return scan()


def find_cycle(graph: dict[str, list[str]]) -> list[str] | None:
    """A cycle of `graph` as [a, b, ..., a], or None (iterative depth-first search)."""
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    for start in sorted(graph):
        if state.get(start):
            continue
        path = [start]
        state[start] = 1
        stack = [iter(sorted(graph[start]))]
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            elif not state.get(nxt):
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(sorted(graph.get(nxt, []))))
    return None


def _graph(modules: dict[str, Module]) -> dict[str, list[str]]:
    return {name: [t for t in m.imports if t in modules] for name, m in modules.items()}


def test_scan_sees_the_package() -> None:
    modules = package()
    assert {"lara.cli", "lara.generate", "lara.bridge", "lara.ingest"} <= set(modules)
    # the CLI imports the generator inside a function: that edge is seen
    assert "lara.generate" in modules["lara.cli"].imports


def test_no_import_cycle() -> None:
    modules = package()
    graph = _graph(modules)
    found = []
    while (cycle := find_cycle(graph)) and len(found) < 20:  # every cycle, one edge cut each
        steps = zip(cycle, cycle[1:], strict=False)
        found.append(
            " -> ".join(f"{a} (line {modules[a].imports[b]})" for a, b in steps)
            + f" -> {cycle[-1]}"
        )
        graph[cycle[-2]] = [t for t in graph[cycle[-2]] if t != cycle[-1]]
    assert not found, "import cycles in lara:\n  " + "\n  ".join(found)


def test_no_private_names_of_other_modules() -> None:
    offenders = [module for module in package().values() if module.private_uses]
    assert not offenders, "modules using another module's private names:\n" + "\n".join(
        f"  {module.path.relative_to(ROOT.parent)}:{line}: {use}"
        for module in offenders
        for line, use in sorted(module.private_uses)
    )


def test_checks_catch_what_they_claim(tmp_path: Path) -> None:
    """The scanner on a small fake package: a function-level cycle, `from x import _y`
    and `x._y` are all found; a clean layout passes."""
    package = tmp_path / PACKAGE
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from lara.b import thing\n\n\ndef _mine():\n    pass\n")
    (package / "b.py").write_text(
        "def thing():\n    from lara import a\n    return a._mine\n\n\n"
        "def other():\n    from lara.a import _mine\n    return _mine\n"
    )
    (package / "sub" / "__init__.py").write_text("from lara.sub.c import helper\n")
    (package / "sub" / "c.py").write_text("from .d import helper\n")
    (package / "sub" / "d.py").write_text("def helper():\n    pass\n")
    modules = scan(package)
    assert find_cycle(_graph(modules)) == ["lara.a", "lara.b", "lara.a"]
    uses = modules["lara.b"].private_uses
    assert [line for line, _ in sorted(uses)] == [3, 7], uses  # `a._mine`, `import _mine`
    assert modules["lara.sub.c"].imports == {"lara.sub.d": 1}  # relative import resolved
    assert not modules["lara.sub"].private_uses and not modules["lara.a"].private_uses
    (package / "b.py").write_text("def thing():\n    pass\n")
    assert find_cycle(_graph(scan(package))) is None
