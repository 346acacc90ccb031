"""The layering of DESIGN §2 holds: import-linter contracts in pyproject.toml."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_import_contracts_are_kept():
    exe = shutil.which("lint-imports")
    if exe is None:
        pytest.fail("lint-imports is not installed: install the test extra (pip install -e '.[test]')")
    proc = subprocess.run([exe], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_help_does_not_import_the_kubernetes_client():
    code = "import sys; from karmactl.cli.main import app; assert 'kubernetes' not in sys.modules, 'kubernetes imported'"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_every_controller_is_in_the_independence_contract():
    import tomllib

    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    listed = {m for c in contracts if c["type"] == "independence" for m in c["modules"]}
    on_disk = {f"karmactl.controllers.{p.stem}" for p in (ROOT / "karmactl" / "controllers").glob("*.py")
               if p.stem not in ("__init__", "shards")}
    assert on_disk <= listed, sorted(on_disk - listed)
