"""The one exception family of motor-kvpool.

Library code raises these and never prints or exits; the CLI (`kvpool`) alone maps them to exit codes, and
the program turns them into `pulumi.RunError` (`user_errors_as_run_errors`) so that `pulumi up` shows the
message without a traceback.
"""

import contextlib
from collections.abc import Iterator

import pulumi


class KvpoolError(Exception):
    """Base class: an error the user can fix by changing their input. `str()` is the full message."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message

    def __reduce__(self) -> tuple:
        """Pickled by its attributes, not its constructor's arguments (subclasses take others), so that an error
        raised in a worker process (kvpool fleet's previews) reaches the parent as the same class and message."""
        return _restore, (type(self), self.__dict__)


def _restore(cls: type[KvpoolError], state: dict) -> KvpoolError:
    error = cls.__new__(cls)
    Exception.__init__(error, state["message"])
    error.__dict__.update(state)
    return error


def problem_report(source: str, problems: list[str], note: str = "") -> str:
    """`<source>: N problem(s) (note)` over one indented line per problem: every multi-problem error reads so."""
    header = f"{source}: {len(problems)} problem{'s' if len(problems) != 1 else ''}" + (f" ({note})" if note else "")
    return "\n".join([header, *(f"  - {problem}" for problem in problems)])


class SettingsError(KvpoolError):
    """The service configuration is invalid. `problems` holds one line per problem, each naming its field."""

    def __init__(self, problems: list[str], source: str = "configuration", fixes: dict[str, object] | None = None) -> None:
        self.problems = list(problems)
        self.source = source
        # dotted path -> a value that satisfies the rule broken there (kvpool.policies.rules.Finding.example)
        self.fixes = dict(fixes or {})
        super().__init__(problem_report(source, self.problems))


@contextlib.contextmanager
def user_errors_as_run_errors() -> Iterator[None]:
    """A user error raised inside becomes pulumi.RunError, which the CLI prints without a traceback. Needed around
    the program's entry, and again in its `pulumi.run` entry point, which runs after the entry has returned."""
    try:
        yield
    except KvpoolError as error:
        raise pulumi.RunError(str(error)) from None
