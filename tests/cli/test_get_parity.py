"""`get` behaves as kubectl's printers do: issue 14, item 2, replayed line by line."""
from __future__ import annotations

import os
import selectors
import signal
import subprocess
import sys

import pytest

from tests.conftest import write

APP = """
apiVersion: apps/v1
kind: Deployment
metadata:
  name: nginx
  labels: {app: nginx, app.kubernetes.io/tier: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: nginx}}
  template:
    metadata: {labels: {app: nginx}}
    spec: {containers: [{name: nginx, image: "nginx:1.25"}, {name: side, image: "busybox:1"}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api}
spec:
  replicas: 5
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec: {containers: [{name: api, image: "api:1"}]}
---
apiVersion: v1
kind: Service
metadata: {name: nginx}
spec: {ports: [{port: 80}], selector: {app: nginx}}
"""


@pytest.fixture
def app(state, cli):
    write(state / "app.yaml", APP)
    return cli


def table(text: str) -> list[list[str]]:
    return [line.split() for line in text.splitlines()]


def test_show_labels(app):
    rows = table(app.ok("get", "deploy", "--show-labels"))
    assert rows[0][-1] == "LABELS"
    assert rows[1][0] == "api" and rows[1][-1] == "<none>"
    assert rows[2][0] == "nginx" and rows[2][-1] == "app=nginx,app.kubernetes.io/tier=web"


def test_label_columns(app):
    rows = table(app.ok("get", "deploy", "-L", "app", "-L", "app.kubernetes.io/tier"))
    assert rows[0][-2:] == ["APP", "TIER"]
    assert rows[2][0] == "nginx" and rows[2][-2:] == ["nginx", "web"]
    assert rows[1] == ["api", "0/5", "0", "0", "<unknown>"]  # empty label cells


def test_sort_by_number_and_no_headers(app):
    assert [r[0] for r in table(app.ok("get", "deploy", "--sort-by", ".spec.replicas", "--no-headers"))] == ["nginx", "api"]
    assert [r[0] for r in table(app.ok("get", "deploy", "--sort-by", "{.metadata.name}", "--no-headers"))] == ["api", "nginx"]


def test_custom_columns(app):
    out = app.ok("get", "deploy", "-o", "custom-columns=NAME:.metadata.name,IMAGES:.spec.template.spec.containers[*].image,X:.nope")
    assert table(out) == [["NAME", "IMAGES", "X"], ["api", "api:1", "<none>"], ["nginx", "nginx:1.25,busybox:1", "<none>"]]


def test_custom_columns_bad_spec_exits_2(app):
    code, out, err = app("get", "deploy", "-o", "custom-columns=NAME")
    assert code == 2 and out == "" and "expected <header>:<json-path-expr>" in err


def test_go_template_refused_clearly(app):
    code, out, err = app("get", "deploy", "-o", "go-template={{.metadata.name}}")
    assert code == 2 and out == "" and "go-template" in err and "jsonpath" in err


def test_kind_slash_name_and_several_kinds(app):
    out = app.ok("get", "deploy/nginx", "svc/nginx")
    assert "deployment.apps/nginx" in out and "service/nginx" in out
    assert out.count("NAME") == 2
    assert app.ok("get", "deploy/nginx", "-o", "name") == "deployment.apps/nginx\n"
    both = app.ok("get", "deploy,svc", "-o", "name")
    assert both == "deployment.apps/api\ndeployment.apps/nginx\nservice/nginx\n"


def test_get_all(app):
    rows = [r[0] for r in table(app.ok("get", "all", "--no-headers")) if r]
    assert rows == ["service/nginx", "deployment.apps/api", "deployment.apps/nginx"]


def test_full_resource_names(app):
    for name in ("deployment.v1.apps", "deployments.apps", "deployment.apps"):
        assert table(app.ok("get", name, "nginx", "--no-headers"))[0][0] == "nginx"
    code, _out, err = app("get", "deployment.v2.apps")
    assert code == 2 and 'resource type "deployment.v2.apps"' in err


def test_one_object_is_not_a_list(app):
    assert app.ok("get", "deploy/nginx", "-o", "yaml").startswith("apiVersion: apps/v1\nkind: Deployment\n")
    assert "kind: List" in app.ok("get", "deploy/nginx", "deploy/api", "-o", "yaml")


def test_jsonpath_range(app):
    out = app.ok("get", "deploy", "-o", 'jsonpath={range .items[*]}{.metadata.name}{"\\t"}{.spec.replicas}{"\\n"}{end}')
    assert out == "api\t5\nnginx\t2\n"
    assert app.ok("get", "deploy", "-o", "jsonpath={.items[*].metadata.name}") == "api nginx"
    out = app.ok("get", "deploy", "nginx", "-o", r"jsonpath={.metadata.labels.app\.kubernetes\.io/tier}")
    assert out == "web"
    out = app.ok("get", "deploy", "nginx", "-o", 'jsonpath={.spec.template.spec.containers[?(@.name=="side")].image}')
    assert out == "busybox:1"


@pytest.mark.parametrize("template", ["{range .items[*]}{.metadata.name}", "{.items[*].metadata.name", "{end}",
                                      "{.items[?(@.x==]}"])
def test_malformed_jsonpath_exits_2(app, template):
    code, out, err = app("get", "deploy", "-o", f"jsonpath={template}")
    assert code == 2 and out == "" and err.startswith("error: ")


@pytest.mark.parametrize("selector", ["a=b=c", "=b", "a in b", "a in ()", "a,", "bad key!=x", "a>x", "a=-b-"])
def test_strict_label_selector(app, selector):
    code, out, err = app("get", "deploy", "-l", selector)
    assert code == 2 and out == "" and "unable to parse requirement" in err


def test_label_selectors_select(app):
    assert [r[0] for r in table(app.ok("get", "deploy", "-l", "app in (nginx,x)", "--no-headers"))] == ["nginx"]
    assert [r[0] for r in table(app.ok("get", "deploy", "-l", "!app", "--no-headers"))] == ["api"]
    # an empty value after == selects the empty label value, as the API server reads it
    code, out, err = app("get", "deploy", "-l", "app==")
    assert code == 0 and out == "" and "No resources found" in err


@pytest.mark.parametrize("selector", ["metadata.name", "metadata.name=a=b", "metadata.name=a,", "spec.replicas=2"])
def test_strict_field_selector(app, selector):
    code, _out, err = app("get", "deploy", "--field-selector", selector)
    assert code == 2 and err.startswith("error: ")


def test_missing_names_reported_each(app):
    code, out, err = app("get", "deploy", "nginx", "nope", "gone")
    assert code == 1 and table(out)[1][0] == "nginx"
    assert 'deployments.apps "nope" not found' in err and 'deployments.apps "gone" not found' in err


class Lines:
    """Lines of a process's stdout, read as they come (a generous bound so a hang fails instead of blocking)."""

    def __init__(self, proc):
        self.fd = proc.stdout.fileno()
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.fd, selectors.EVENT_READ)
        self.buf = b""

    def next(self) -> str:
        while b"\n" not in self.buf:
            assert self.sel.select(timeout=120), "no output from get --watch"
            chunk = os.read(self.fd, 65536)
            assert chunk, "get --watch ended"
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode()


def test_watch_prints_rows_as_files_change(state, tmp_path):
    write(state / "app.yaml", APP)
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([sys.executable, "-m", "karmactl", "--state", str(state), "get", "deploy", "-w"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    try:
        lines = Lines(proc)
        assert lines.next().split()[0] == "NAME"
        assert lines.next().split()[:2] == ["api", "0/5"]
        assert lines.next().split()[:2] == ["nginx", "0/2"]
        write(state / "app.yaml", APP.replace("replicas: 5", "replicas: 7"))
        assert lines.next().split()[:2] == ["api", "0/7"]
        write(state / "more.yaml", APP.split("---")[0].replace("name: nginx\n", "name: web\n", 1))
        assert lines.next().split()[:2] == ["web", "0/2"]
    finally:
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=120)
    assert code == 130  # Ctrl-C ends a watch as it ends any command (interrupted, 130)


def test_describe_kind_slash_name(app):
    assert app.ok("describe", "deploy/nginx") == app.ok("describe", "deploy", "nginx")
    assert "Name:         nginx" in app.ok("describe", "deploy/nginx")
