"""The exit codes of every `kvpool` command: one meaning each (README "Exit codes" lists them; tests/test_exit_codes.py
runs each command into each code it can give). A command returns one of these; cli.main maps what is raised.

Whatever ends with a code other than OK says why on stderr; stdout keeps only what the command shows (a plan, a
report), so that a script can read it whatever the code.
"""

from __future__ import annotations

import sys

OK = 0
"""Done; nothing changed (diff --exit-code, stack-schema --check); advisory policy violations included."""
REFUSED = 1
"""The input is refused: the command line (argparse's usage errors included), a stack or project file, a path, a
program that raises; or a check of the stacks failed (fleet's problems, fleet --check-destroy)."""
INTERNAL_ERROR = 2
"""A bug in the tool: an exception no input explains (--debug shows its traceback)."""
POLICY_VIOLATION = 3
"""The policy pack reported a mandatory violation (preview, and the previews diff --base runs)."""
HAS_CHANGES = 4
"""Asked to tell a change by the exit code, found one: diff --exit-code, stack-schema --check."""

TABLE = {
    OK: "ok (no changes; advisory violations included)",
    REFUSED: "refused input, or a failed check of the stacks (fleet)",
    INTERNAL_ERROR: "internal error (a bug in the tool)",
    POLICY_VIOLATION: "mandatory policy violation",
    HAS_CHANGES: "has changes (diff --exit-code, stack-schema --check)",
}
"""Each code and its meaning, as README's table reads them (tests/test_exit_codes.py compares the two)."""


def of_error(error: BaseException) -> int:
    """The code of a KvpoolError that ended a command: POLICY_VIOLATION for the pack's verdict, else REFUSED."""
    # Only a preview raises PolicyViolationError, so without kvpool.cli.preview loaded the error is none; a refusal
    # of another command need not import the preview to learn so.
    preview = sys.modules.get("kvpool.cli.preview")
    if preview is not None and isinstance(error, preview.PolicyViolationError):
        return POLICY_VIOLATION
    return REFUSED
