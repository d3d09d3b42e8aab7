"""motor-kvpool: one MindIE Motor P/D inference service with a shared KV-cache pool, per stack."""

import signal
import sys

from components.program import run

# The engine interrupts the program (SIGINT) when it fails the update under it, e.g. on a StackReference to a stack
# the backend does not know; it has printed why, so the program leaves without a Python traceback.
signal.signal(signal.SIGINT, lambda *_: sys.exit(1))
run()
