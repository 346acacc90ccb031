"""`karmactl apply -f URL`, as kubectl reads manifests from http(s) URLs (served here on localhost)."""
from __future__ import annotations

import http.server
import threading

import pytest

DEPLOYMENT = b"""apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx:1.25}]}
"""


@pytest.fixture
def server():
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - the stdlib's name
            if self.path == "/web.yaml":
                self.send_response(200)
                self.send_header("Content-Type", "application/yaml")
                self.end_headers()
                self.wfile.write(DEPLOYMENT)
            else:
                self.send_error(404)

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_apply_reads_a_manifest_from_a_url(cli, server):
    assert cli.ok("apply", "-f", f"{server}/web.yaml") == "deployment.apps/web created\n"
    assert cli.ok("get", "deploy", "web", "-o", "jsonpath={.spec.replicas}") == "2"


def test_a_url_that_fails_is_named_with_the_server_s_answer(cli, server):
    code, _out, err = cli("apply", "-f", f"{server}/missing.yaml")
    assert code == 2
    assert f"{server}/missing.yaml" in err and "404" in err
    code, _out, err = cli("apply", "-f", "http://127.0.0.1:9/x.yaml")  # nothing listens on port 9
    assert code == 2 and "unable to read URL" in err
