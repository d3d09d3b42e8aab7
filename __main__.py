"""motor-kvpool: one MindIE Motor P/D inference service with a shared KV-cache pool, per stack."""

import os
import signal

from components.program import run

# The engine interrupts the program's process group (SIGINT) when it fails the update under it, e.g. on a
# StackReference to a stack the backend does not know; it has printed why. Leave at once: sys.exit would run the
# atexit handlers, and a second interrupt landing in one of them prints a Python traceback.
signal.signal(signal.SIGINT, lambda *_: os._exit(1))
run()
