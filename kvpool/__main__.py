"""`python -m kvpool ...`; see kvpool/__init__.py for examples."""

import gc

from kvpool.cli.commands.cli import main

exit_code = main()
# The process ends here: the interpreter's last garbage collection would walk every object the run made (a quarter of
# a 16P+16D preview's time) only to free what exiting frees anyway, so they are left out of it.
gc.freeze()
raise SystemExit(exit_code)
