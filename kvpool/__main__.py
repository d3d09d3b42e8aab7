"""`python -m kvpool ...`; see kvpool/__init__.py for examples."""

from kvpool.cli import main

raise SystemExit(main())
