"""One MindIE Motor inference service with a shared KV-cache pool: its settings are the stack's `motor-kvpool:*`
configuration (Pulumi.<stack>.yaml)."""

from kvpool.program import run

run()
