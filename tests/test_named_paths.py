"""What the documentation names exists: the package's modules named in README.md, docs/ and the package's own text
(modules moved and left stale names behind, issue 46), and the cli package's docstring shows every subcommand."""

from __future__ import annotations

import argparse
import re

import kvpool.cli
from kvpool.cli.commands.cli import build_parser
from tests.program_runs import PROJECT_DIR

# A path into the package: a module or a folder (ending in /). Not preceded by a name character or a slash, so that a
# stack reference such as organization/motor-kvpool/service-a is no path.
PACKAGE_PATH = re.compile(r"(?<![\w/.-])kvpool(?:/[\w.-]+)*/[\w-]+(?:\.py\b|/)")
NAMING = [PROJECT_DIR / "README.md", *sorted((PROJECT_DIR / "docs").glob("*.md")),
          *sorted((PROJECT_DIR / "kvpool").rglob("*.py"))]


def test_every_package_path_named_in_the_docs_and_the_package_exists():
    named = {(path.relative_to(PROJECT_DIR).as_posix(), found) for path in NAMING
             for found in PACKAGE_PATH.findall(path.read_text())}
    assert len(named) > 50  # the pattern still finds the paths the text names
    assert sorted((where, found) for where, found in named if not (PROJECT_DIR / found).exists()) == []


def test_the_cli_docstring_shows_every_subcommand():
    parser = build_parser([])  # no command given: every subcommand is registered
    registered = next(action for action in parser._actions if isinstance(action, argparse._SubParsersAction)).choices
    shown = re.findall(r"python -m kvpool (?:--[\w-]+ )*([a-z][\w-]*)", kvpool.cli.__doc__)
    assert sorted(set(shown)) == sorted(registered)
