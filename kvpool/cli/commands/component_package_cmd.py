"""`kvpool component-package DIR`: write the folder of motor-kvpool's component package for Pulumi programs in other
languages (PulumiPlugin.yaml and __main__.py), which runs in this Python's virtualenv. A Pulumi YAML program then
names it in its Pulumi.yaml and declares the service:

    packages:
      kvpool: ./kvpool-package
    resources:
      service:
        type: kvpool:index:Service      # settings: the stack's motor-kvpool:* configuration, or its `settings` input

The virtualenv is named relative to DIR (both usually inside the project, so the folder can be committed)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from kvpool.cli.commands import exit_codes
from kvpool.internal.written_files import real_folder, write_file
from kvpool.errors import KvpoolError

PLUGIN_YAML = """\
# Written by `kvpool component-package`: motor-kvpool {version}'s component package (kvpool:index:Service).
runtime:
  name: python
  options:
    toolchain: pip
    virtualenv: {virtualenv}
"""
MAIN = """\
\"\"\"motor-kvpool's component provider (written by `kvpool component-package`).\"\"\"

from kvpool.component_package.host import serve

serve()
"""


class PackageFolderError(KvpoolError):
    """DIR cannot hold the package's files."""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "component-package", help="write the component package's folder, for Pulumi programs in other languages",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("dir", type=Path, metavar="DIR", help="the folder to write (created when missing)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from kvpool import __version__

    target = Path(args.dir)
    if target.exists() and not target.is_dir():
        raise PackageFolderError(f"DIR {target} is a file; name a folder (created when missing)")
    real_folder(target, target)
    virtualenv = os.path.relpath(sys.prefix, target.resolve())
    write_file(target / "PulumiPlugin.yaml", PLUGIN_YAML.format(version=__version__, virtualenv=virtualenv), target)
    write_file(target / "__main__.py", MAIN, target)
    print(f"wrote {target / 'PulumiPlugin.yaml'} (virtualenv {virtualenv}) and {target / '__main__.py'}")
    return exit_codes.OK
