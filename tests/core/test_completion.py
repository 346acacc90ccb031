"""Shell completion works from the installed command (bash protocol), and scripts print."""
import os
import subprocess
import sys

import pytest


def complete(words: str, cword: int) -> list[str]:
    env = dict(os.environ, COMP_WORDS=words, COMP_CWORD=str(cword), _KARMACTL_COMPLETE="complete_bash")
    proc = subprocess.run([sys.executable, "-m", "karmactl"], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


def test_commands_complete():
    assert complete("karmactl recon", 1) == ["reconcile"]


def test_resource_types_complete():
    assert complete("karmactl get propa", 2) == ["propagationpolicies"]


def test_options_complete():
    assert "--offline" in complete("karmactl reconcile --of", 2)


@pytest.mark.parametrize("shell, marker", [("bash", "complete -o default -F"), ("zsh", "compdef"), ("fish", "complete --command karmactl")])
def test_scripts(cli, shell, marker):
    assert marker in cli.ok("completion", shell)


def test_unknown_shell(cli):
    code, _out, err = cli("completion", "tcsh")
    assert code == 2 and "unsupported shell" in err
