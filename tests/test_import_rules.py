"""The house's import rules (docs/development.md), kept by reading every module's imports."""

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "mcp_asrama"

RULES = [  # (modules under this package, may not import these)
    ("mcp_asrama.service", ("mcp_asrama.server", "mcp_asrama.client", "mcp", "mcp_asrama.ops")),
    ("mcp_asrama.client", ("mcp", "mcp_asrama.server", "mcp_asrama.service")),
    ("mcp_asrama.contract", ("mcp", "mcp_asrama.server", "mcp_asrama.service", "mcp_asrama.client")),
    ("mcp_asrama.server.guard", ("mcp_asrama.server.features", "mcp_asrama.server.views")),
]


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    """Every module a file imports, at any depth of the file (absolute names; relative imports resolved)."""
    found: set[str] = set()
    package = module_name(path).rsplit(".", 1)[0] if path.name != "__init__.py" else module_name(path)
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package.split(".")[: len(package.split(".")) - node.level + 1], base]).strip(".")
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


FILES = sorted(SRC.rglob("*.py"))


@pytest.mark.parametrize(("package", "forbidden"), RULES, ids=[rule[0] for rule in RULES])
def test_import_rule_holds(package: str, forbidden: tuple[str, ...]) -> None:
    broken = [
        f"{module_name(path)} imports {name}"
        for path in FILES
        if within(module_name(path), package)
        for name in sorted(imports_of(path))
        if any(within(name, bad) for bad in forbidden)
    ]
    assert broken == []


def test_the_rules_see_the_packages_they_name_and_their_imports() -> None:
    names = {module_name(path) for path in FILES}
    for package, _ in RULES:
        assert any(within(name, package) for name in names), package
    assert "mcp_asrama.server.guard" in imports_of(SRC / "server" / "app.py")


ROLE_ATTRIBUTES = {"klinik", "bk", "peran"}  # what Akses says of a principal's roles


def test_no_feature_checks_a_role_itself() -> None:
    """A feature asks the guard's policy (`ScopedReader.sees_health_details`, `clinic_only`, …), never a role."""
    checks = [
        f"{path.relative_to(SRC)}:{node.lineno} .{node.attr}"
        for path in sorted((SRC / "server" / "features").rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Attribute)
        and node.attr in ROLE_ATTRIBUTES
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "akses"
    ]
    assert checks == []
