"""Values of command-line flags shared by several commands: durations (``--timeout``, ``--wait``,
``--resync``, ``--lock-timeout``)."""
from __future__ import annotations

import re

from karmactl.cli.context import CLIError


def parse_duration(text: str) -> float:
    """``90s``, ``5m``, ``1h30m``, ``10`` (seconds) -> seconds.

    Raises:
        CLIError: not a duration.
    """
    m = re.fullmatch(r"(?:(\d+)h)?(?:(\d+)m)?(?:(\d+(?:\.\d+)?)s?)?", text.strip())
    if not m or not any(m.groups()):
        raise CLIError(f'invalid duration "{text}" (examples: 90s, 5m, 1h)')
    h, mi, s = m.groups()
    return int(h or 0) * 3600 + int(mi or 0) * 60 + float(s or 0)

