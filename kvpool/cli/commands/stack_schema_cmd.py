"""`kvpool stack-schema`: write the stack files' JSON Schema (from the installed settings models) beside a project's
stack files, so that editors with the YAML language server complete and check every stack file whose first line is
`# yaml-language-server: $schema=stack-file.schema.json`. `--check` writes nothing and exits 4 when the file there
differs (a test or CI step keeps a committed schema current)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kvpool.cli.commands import exit_codes
from kvpool.cli.engine.stack_config import find_project_file, stack_config_dir
from kvpool.cli.engine.stack_schema import SCHEMA_NAME, schema_text
from kvpool.internal.written_files import write_file


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "stack-schema", help=f"write {SCHEMA_NAME} beside the project's stack files, for editors",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--project-dir", type=Path, default=Path("."), help="folder of Pulumi.yaml (default: .)")
    parser.add_argument("--check", action="store_true", help="compare with the file there, write nothing")
    parser.set_defaults(handler=run)


def schema_file(project_dir: Path) -> Path:
    stacks = stack_config_dir(find_project_file(project_dir).parent)
    assert stacks is not None  # find_project_file refuses a folder without Pulumi.yaml
    return stacks / SCHEMA_NAME


def run(args: argparse.Namespace) -> int:
    target, text = schema_file(args.project_dir), schema_text()
    if args.check:
        if not target.is_file() or target.read_text(encoding="utf-8") != text:
            print(f"{target} differs from the settings models; run kvpool stack-schema", file=sys.stderr)
            return exit_codes.HAS_CHANGES
        return exit_codes.OK
    write_file(target, text, find_project_file(args.project_dir).parent)
    print(f"wrote {target}")
    return exit_codes.OK
