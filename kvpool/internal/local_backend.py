"""The organization of Pulumi's local (file) backend: what a stack reference names when no Pulumi Cloud org is used.
A module of its own, so that the offline engine (kvpool/cli/engine/mock_engine.py) needs no settings models to name it."""

LOCAL_ORGANIZATION = "organization"


def local_stack_reference(project: str, stack: str) -> str:
    """The full name of stack `stack` of project `project` on the local backend, as a stack reference names it."""
    return f"{LOCAL_ORGANIZATION}/{project}/{stack}"
