"""The component package's provider: `serve()` is what the plugin folder's __main__.py runs when the engine starts it
for a program that declares kvpool:index:Service (kvpool/cli/commands/component_package_cmd.py writes that folder)."""

from pulumi.provider.experimental import component_provider_host

from kvpool import __version__
from kvpool.component_package.service import Service

NAME = "kvpool"


def serve() -> None:
    component_provider_host([Service], name=NAME, version=__version__)
