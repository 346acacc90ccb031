"""``python -m karmactl``."""
from karmactl.cli.main import run

run()
