"""The organization of Pulumi's local (file) backend: what a stack reference names when no Pulumi Cloud org is used.
A module of its own, so that the offline engine (kvpool/cli/engine/mock_engine.py) needs no settings models to name it."""

LOCAL_ORGANIZATION = "organization"
