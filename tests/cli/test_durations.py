"""Durations in Go's syntax everywhere one is read (issue 28, part 6): flags (``--timeout``,
``--lock-timeout``, ``--resync``, ``--wait``) and karmactl-config settings, as Karmada's flags take
them; a bad value is refused naming the flag or setting and the value."""
from __future__ import annotations

import pytest

from karmactl.api.durations import parse_duration
from tests.conftest import NOW, cluster_yaml, write


@pytest.mark.parametrize("text, seconds", [("1.5m", 90), ("500ms", 0.5), ("1h30m", 5400), ("90s", 90), ("0", 0),
                                           ("30", 30), ("2.5", 2.5), ("1m0.5s", 60.5), ("100us", 0.0001)])
def test_go_durations_and_plain_seconds(text, seconds):
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["1d", "2w", "1y", "5x", "m", "", "1.5.5s", "nan", "inf", "1 m"])
def test_what_go_refuses_is_refused(text):
    with pytest.raises(ValueError, match="not a duration"):
        parse_duration(text)


def test_flags_take_go_durations(cli):
    write(cli.state / "clusters" / "member1.yaml", cluster_yaml("member1"))
    assert cli("--lock-timeout", "500ms", "get", "clusters", "-o", "name")[0] == 0
    code, _out, err = cli("--now", NOW, "reconcile", "--offline", "--wait", "--timeout", "1.5m")
    assert code == 0, err


@pytest.mark.parametrize("args, flag, value", [
    (["--lock-timeout", "5 minutes", "get", "clusters"], "--lock-timeout", "5 minutes"),
    (["reconcile", "--offline", "--wait", "--timeout", "1d"], "--timeout", "1d"),
    (["reconcile", "--offline", "--watch", "--resync", "-1m"], "--resync", "-1m"),
    (["unjoin", "member1", "--wait", "soon"], "--wait", "soon"),
])
def test_a_bad_flag_value_names_the_flag_and_the_value(cli, args, flag, value):
    code, _out, err = cli(*args)
    assert code == 2
    assert f"invalid value for {flag}" in err and f'"{value}"' in err


def _settings(cli, **data):
    body = "".join(f"\n  {k}: \"{v}\"" for k, v in data.items())
    write(cli.state / "settings.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: karmactl-config\n"
                                       f"  namespace: karmada-system\ndata:{body}\n")


def test_settings_take_go_durations(cli):
    write(cli.state / "clusters" / "member1.yaml", cluster_yaml("member1"))
    _settings(cli, clusterFailureThreshold="1m", gracefulEvictionTimeout="1.5m", memberRequestTimeout="500ms")
    code, _out, err = cli("--now", NOW, "reconcile", "--offline")
    assert code == 0, err


def test_a_bad_setting_names_the_setting_and_the_value(cli):
    write(cli.state / "clusters" / "member1.yaml", cluster_yaml("member1"))
    _settings(cli, clusterFailureThreshold="1 minute")
    code, _out, err = cli("--now", NOW, "reconcile", "--offline")
    assert code == 2
    assert "data.clusterFailureThreshold" in err and '"1 minute"' in err
