"""`python -m kvpool ...`; see kvpool/__init__.py for examples."""

from kvpool.commands.cli import main

raise SystemExit(main())
