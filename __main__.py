"""motor-kvpool: one MindIE Motor P/D inference service with a shared KV-cache pool, per stack."""

import signal
import sys

from components.program import run


def _leave_quietly(*_: object) -> None:
    # The engine interrupts the program (SIGINT) when it fails the update under it, e.g. on a StackReference to a
    # stack the backend does not know, and has printed why: leave without a Python traceback. The language host
    # and then the CLI (stopping the host's process group) each send one; the second, landing in the atexit
    # handlers, would print a traceback, so it is ignored.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sys.exit(1)


signal.signal(signal.SIGINT, _leave_quietly)
run()
