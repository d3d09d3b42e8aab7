"""Settings for the whole suite.

Property tests are deterministic in CI (`CI` set, as `.ci/run` and GitHub Actions do): hypothesis derives its examples
from each test's name, so a landing never depends on a random draw. Elsewhere they explore randomly, where a new
failure informs and cannot block a landing.
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI"):
    settings.load_profile("ci")
