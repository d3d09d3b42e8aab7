"""The reference pages of docs/, written from the sources that hold their facts, so that each fact is said once:

- docs/configuration.md from the settings models (kvpool/settings/service.py and its section modules: each field's
  type, limits, default and description) and the loader's older names and refused keys (kvpool/settings/loader.py);
- docs/policies.md from the policy pack's catalog (kvpool/policies/catalog.py: names, levels, descriptions, fixes and
  configuration);
- docs/restarts.md from the restart catalogue (kvpool/internal/restarts.py), the checksum inputs
  (kvpool/internal/checksums.py) and the Motor files each role runs (kvpool/internal/motor_config.py);
- docs/seeds.md from docs/seeds.yaml: each statement of the product seeds, its behaviour here and its tests
  (tests/test_seed_table.py checks the rows against the seeds' text and the cited tests).

    venv/bin/python -m tools.reference           # write the pages
    venv/bin/python -m tools.reference --check   # exit 1 when a committed page differs from what it would write

tests/test_reference_docs.py fails when a committed page differs.
"""
