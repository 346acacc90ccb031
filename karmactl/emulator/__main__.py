"""``python -m karmactl.emulator serve --name member1 --port 0 --data-dir DIR [--tls] [--fake-controller]
[--nodes 3]``: run one member until SIGTERM/SIGINT.

Once listening it writes ``DIR/kubeconfig`` and then ``DIR/server.json`` (``{"name", "port", "pid",
"url"}``, atomically, so a parent process can wait for that file to appear).
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m karmactl.emulator")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="serve one emulated member cluster")
    serve.add_argument("--name", default="member1")
    serve.add_argument("--port", type=int, default=0)
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--data-dir", required=True)
    serve.add_argument("--tls", action="store_true")
    serve.add_argument("--fake-controller", action="store_true")
    serve.add_argument("--fake-delay", type=float, default=0.5)
    serve.add_argument("--nodes", type=int, default=0)
    args = parser.parse_args(argv)

    from .server import MemberServer

    os.makedirs(args.data_dir, exist_ok=True)
    srv = MemberServer(name=args.name, port=args.port, data_dir=args.data_dir, tls=args.tls,
                       fake_controller=args.fake_controller, nodes=args.nodes or None, host=args.host,
                       fake_delay=args.fake_delay)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    signal.signal(signal.SIGINT, lambda *_: done.set())
    srv.start()
    srv.write_kubeconfig(os.path.join(args.data_dir, "kubeconfig"), context=args.name)
    info = {"name": args.name, "port": srv.port, "pid": os.getpid(), "url": srv.url}
    tmp = os.path.join(args.data_dir, ".server.json.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(info, f)
    os.replace(tmp, os.path.join(args.data_dir, "server.json"))
    print(json.dumps(info), flush=True)
    while not done.wait(0.5):
        pass
    srv.close()
    try:
        os.remove(os.path.join(args.data_dir, "server.json"))
    except OSError:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
