"""motor-kvpool: one MindIE Motor P/D inference service with a shared KV-cache pool, per stack."""

from kvpool.program import run

run()
