"""The one exception family of motor-kvpool.

Library code raises these and never prints or exits; the CLI (`kvpool`) alone maps them to exit codes
and `__main__.py` turns them into `pulumi.RunError` so `pulumi up` shows the message without a traceback.
"""


class KvpoolError(Exception):
    """Base class: an error the user can fix by changing their input. `str()` is the full message."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class SettingsError(KvpoolError):
    """The service configuration is invalid. `problems` holds one line per problem, each naming its field."""

    def __init__(self, problems: list[str], source: str = "configuration") -> None:
        self.problems = list(problems)
        self.source = source
        header = f"{source}: {len(self.problems)} problem{'s' if len(self.problems) != 1 else ''}"
        super().__init__("\n".join([header, *(f"  - {p}" for p in self.problems)]))
