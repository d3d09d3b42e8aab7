"""Only regular files are read (issue 33 class 6): a FIFO a setting or a flag names used to hang the program or
`kvpool import` in open(); now every such file is refused before anything waits on it, naming the field or flag.
Each check runs in a child process with a deadline, so a hang fails the test instead of stopping the suite."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.program_runs import PROJECT_DIR
from tests.service_configs import as_motor_files, plain_pd

DEADLINE_S = 60


def run_python(code: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True,
                          timeout=DEADLINE_S, env={**os.environ, "PYTHONPATH": str(PROJECT_DIR)})


def test_a_project_file_setting_naming_a_fifo_is_refused(tmp_path):
    """kv_cache_store_config.local_service_conf, read through read_project_file as every project file a stack names."""
    os.mkfifo(tmp_path / "mmc-local.conf")
    result = run_python(
        "from kvpool.internal.project_files import read_project_file, ProjectFileError\n"
        "from pathlib import Path\n"
        "try:\n"
        "    read_project_file(Path('.'), 'mmc-local.conf', 'kv_cache_store_config.local_service_conf')\n"
        "except ProjectFileError as error:\n"
        "    print(error)\n",
        tmp_path,
    )
    assert result.stdout == (
        f"kv_cache_store_config.local_service_conf: {(tmp_path / 'mmc-local.conf').resolve()}: is a FIFO, not a "
        "regular file; name a file\n"
    ), result.stderr


def test_import_of_a_fifo_user_config_is_refused(tmp_path):
    user_config, env = as_motor_files(plain_pd())
    (tmp_path / "env.json").write_text(json.dumps(env))
    os.mkfifo(tmp_path / "user_config.json")
    result = subprocess.run(
        [sys.executable, "-m", "kvpool", "import", "--user-config", "user_config.json", "--env-config", "env.json",
         "--stack", "svc", "--stacks-dir", "stacks"],
        cwd=tmp_path, capture_output=True, text=True, timeout=DEADLINE_S,
        env={**os.environ, "PYTHONPATH": str(PROJECT_DIR)},
    )
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == "error: user_config.json: is a FIFO, not a regular file; name a file\n"
    assert not (tmp_path / "stacks").exists()
