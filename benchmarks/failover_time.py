"""Benchmark: how fast the continuous loop (`karmactl reconcile --watch`) fails over and recovers,
what one edit costs, and what an idle loop costs.

Part 1, failover and recovery (per --toleration T, default 0 and 30): three members (real
kube-apiservers from ../shared/tools/kube-apiserver where present, else emulated ones), N
Deployments of 3 replicas divided 1:1:1 over them by one PropagationPolicy whose clusterTolerations
tolerate the not-ready/unreachable NoExecute taints for T seconds, Karmada's default thresholds
(clusterFailureThreshold 30 s, clusterSuccessThreshold 30 s, clusterStatusUpdateFrequency 10 s).
The loop runs; once every Deployment is on its members, member2's API server is stopped (SIGSTOP:
it accepts connections and never answers) and killed 2 s later (connection refused). Printed:

  failover   seconds from the stop until every replica that was on member2 is applied on member1
             and member3 (target: threshold + T + frequency + 2 s)
  recovery   seconds from member2's API server started again (same ports, same etcd) until its
             Cluster is Ready again in the status files (a real API server's own start, about 5 s,
             included)
             (target: success threshold + frequency + 2 s)

Part 2 (--idle-n N, e.g. 10000; emulated members from `karmactl local-up`): N Deployments x 3
members. After the cold pass has settled, the loop's CPU seconds over --idle-seconds (from
/proc/<pid>/stat) per minute, as a share of one core (target < 2 %), its RSS (and its peak, the
cold pass), and the seconds from one template edited on disk to the new replica count on a member
(target < 1 s), with the loop's lines of the cold pass and of the edit's pass (full or partial).

Usage: python benchmarks/failover_time.py [--n 100] [--toleration 0 --toleration 30] [--emulated]
           [--idle-n 10000 --idle-seconds 60] [--skip-failover] [--workdir benchmarks/out/failover]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
from reconcile_offline import compile_checkout, process_env  # noqa: E402

ENV = dict(os.environ)
THRESHOLD, SUCCESS, FREQUENCY = 30.0, 30.0, 10.0


def karmactl(state: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "karmactl", "--state", str(state), *args], capture_output=True,
                          text=True, env=ENV)
    if check and proc.returncode != 0:
        raise SystemExit(f"karmactl {' '.join(args)} failed ({proc.returncode}): {proc.stderr}")
    return proc


def write_inputs(state: Path, n: int, toleration: int | None, clusters: list[str]) -> None:
    apps = state / "apps"
    apps.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        (apps / f"web-{i}.yaml").write_text(f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: web-{i}, namespace: default, labels: {{app: web}}}}
spec:
  replicas: 3
  selector: {{matchLabels: {{app: web-{i}}}}}
  template:
    metadata: {{labels: {{app: web-{i}}}}}
    spec:
      containers: [{{name: web, image: nginx}}]
""")
    tolerations = ""
    if toleration is not None:
        tolerations = "\n    clusterTolerations:\n" + "".join(
            f"    - {{key: cluster.karmada.io/{k}, operator: Exists, effect: NoExecute, tolerationSeconds: {toleration}}}\n"
            for k in ("not-ready", "unreachable"))
    weights = "".join(f"        - {{targetCluster: {{clusterNames: [{c}]}}, weight: 1}}\n" for c in clusters)
    (state / "policy.yaml").write_text(f"""apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {{name: web, namespace: default}}
spec:
  resourceSelectors: [{{apiVersion: apps/v1, kind: Deployment}}]
  placement:
    clusterAffinity: {{clusterNames: [{", ".join(clusters)}]}}{tolerations.rstrip()}
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
{weights}""")


class Loop:
    def __init__(self, state: Path, log: Path):
        self.proc = subprocess.Popen([sys.executable, "-m", "karmactl", "--state", str(state), "reconcile", "--watch"],
                                     stdout=subprocess.DEVNULL, stderr=log.open("w"), env=ENV,
                                     stdin=subprocess.DEVNULL)
        self.log = log

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def rss_mb(self, field: str = "VmRSS") -> float:
        """The loop's resident memory (``VmHWM``: its peak) in MB."""
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
        return 0.0

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def clients(kubeconfigs: dict) -> dict:
    from kubernetes import client, config

    return {name: client.AppsV1Api(config.new_client_from_config(str(path))) for name, path in kubeconfigs.items()}


def replicas_on(api) -> dict:
    try:
        items = api.list_namespaced_deployment("default", _request_timeout=5).items
    except Exception:  # noqa: BLE001 - a member that does not answer has nothing we can count
        return {}
    return {d.metadata.name: d.spec.replicas or 0 for d in items}


def wait(what: str, check, loop: Loop, limit: float, interval: float = 0.25) -> float:
    start = time.monotonic()
    while time.monotonic() - start < limit:
        if check():
            return time.monotonic() - start
        if loop.proc.poll() is not None:
            raise SystemExit(f"the loop exited {loop.proc.returncode} while waiting for {what}:\n{loop.log.read_text()[-3000:]}")
        time.sleep(interval)
    raise SystemExit(f"{what}: not within {limit:g} s\n{loop.log.read_text()[-3000:]}")


def ready(state: Path, name: str) -> str:
    path = state / "computed" / "status" / "clusters.cluster.karmada.io" / f"{name}.json"
    try:
        conds = (json.loads(path.read_text()).get("status") or {}).get("conditions") or []
    except (OSError, ValueError):
        return ""
    return next((c["status"] for c in conds if c["type"] == "Ready"), "")


HANG_SECONDS = 2.0
"""How long member2 hangs (SIGSTOP) before it is killed."""


def _killer(member):
    """(stop, start) for a real member: SIGSTOP its kube-apiserver, SIGKILL it :data:`HANG_SECONDS`
    later; start it again with the same command line, ports and etcd (the shared tool's start.sh
    cannot restart on existing data), recording the new pid in member.env and where stop.sh looks
    for it (kube-apiserver.pid)."""
    saved: dict = {}

    def stop() -> None:
        pid = int(member.env()["APISERVER_PID"])
        proc = Path(f"/proc/{pid}")
        saved.update(argv=(proc / "cmdline").read_bytes().split(b"\0")[:-1], cwd=os.readlink(proc / "cwd"),
                     env=dict(line.split(b"=", 1) for line in (proc / "environ").read_bytes().split(b"\0") if b"=" in line))
        os.kill(pid, signal.SIGSTOP)
        time.sleep(HANG_SECONDS)
        os.kill(pid, signal.SIGKILL)
        os.kill(pid, signal.SIGCONT)

    def start() -> None:
        if not saved:
            return
        log = open(member.dir / "kube-apiserver.restarted.log", "wb")
        new = subprocess.Popen(saved["argv"], cwd=saved["cwd"], env=saved["env"], stdin=subprocess.DEVNULL,
                               stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        env_file = member.dir / "member.env"
        lines = [f"APISERVER_PID={new.pid}" if ln.startswith("APISERVER_PID=") else ln
                 for ln in env_file.read_text().splitlines()]
        env_file.write_text("\n".join(lines) + "\n")
        (member.dir / "kube-apiserver.pid").write_text(f"{new.pid}\n")  # what stop.sh stops
        saved.clear()

    return stop, start


def failover(workdir: Path, n: int, toleration: int, real: bool) -> dict:
    """One failover and recovery; returns the figures."""
    root = workdir / f"t{toleration}"
    shutil.rmtree(root, ignore_errors=True)
    state = root / "state"
    (state / ".karmactl" / "kubeconfigs").mkdir(parents=True)
    names = ["member1", "member2", "member3"]
    members, kubeconfigs, pause, resume, stops = {}, {}, None, None, []
    if real:
        from tests import kube_apiserver as ka

        for name in names:
            m = ka.start_member(name, root / "members" / name)
            members[name] = m
            stops.append(m.stop)
        pause, resume = _killer(members["member2"])
        for name, m in members.items():
            shutil.copy(m.kubeconfig, state / ".karmactl" / "kubeconfigs" / name)
    else:
        from karmactl.emulator import MemberServer

        for name in names:
            srv = MemberServer(name=name, port=0, fake_controller=True, fake_delay=0.05, nodes=3).start()
            members[name] = srv
            stops.append(srv.close)
            srv.write_kubeconfig(str(state / ".karmactl" / "kubeconfigs" / name), context=name)
        def pause():  # hangs for a moment (accepts, never answers), then is gone (connection refused)
            members["member2"].set_hang(True)
            time.sleep(HANG_SECONDS)
            members["member2"].set_hang(False)
            members["member2"].stop()

        def resume():
            if not members["member2"].running:
                members["member2"].start()
    try:
        for name in names:
            kubeconfigs[name] = state / ".karmactl" / "kubeconfigs" / name
            karmactl(state, "join", name, "--kubeconfig", str(kubeconfigs[name]))
        write_inputs(state, n, toleration, names)
        apis = clients(kubeconfigs)
        loop = Loop(state, root / "watch.log")
        try:
            settle = wait("the first placement", lambda: all(len(replicas_on(apis[c])) == n for c in names), loop, 600)
            stopped = time.monotonic()
            pause()
            survivors = ("member1", "member3")

            def moved() -> bool:
                on = [replicas_on(apis[c]) for c in survivors]
                return all(sum(o.get(f"web-{i}", 0) for o in on) == 3 for i in range(n))

            wait("every replica off member2", moved, loop, THRESHOLD + toleration + FREQUENCY + 240)
            fail_s = time.monotonic() - stopped
            # the members are written before the files: the pass that moved them has ended when
            # the status files say member2 is not Ready
            wait("member2 NotReady in the files", lambda: ready(state, "member2") == "False", loop, 120)
            resume()
            back = time.monotonic()
            wait("member2 Ready again", lambda: ready(state, "member2") == "True", loop, SUCCESS + FREQUENCY + 240)
            recover_s = time.monotonic() - back
        finally:
            loop.stop()
            resume()
    finally:
        for stop in stops:
            stop()
    return {"settle": settle, "failover": fail_s, "failover_target": THRESHOLD + toleration + FREQUENCY + 2,
            "recovery": recover_s, "recovery_target": SUCCESS + FREQUENCY + 2}


def idle(workdir: Path, n: int, seconds: float) -> dict:
    """The idle cost and one edit's latency at ``n`` Deployments x 3 emulated members."""
    import urllib.request

    root = workdir / f"idle{n}"
    shutil.rmtree(root, ignore_errors=True)
    state = root / "state"
    state.mkdir(parents=True)
    karmactl(state, "local-up")
    try:
        servers = {}
        for info in sorted((state / ".karmactl" / "members").glob("*/server.json")):
            data = json.loads(info.read_text())
            servers[data["name"]] = data["url"]
        names = sorted(servers)
        write_inputs(state, n, None, names)
        # a machine busy with other work can make an emulated member holding 10,000 objects answer
        # slower than the 5 s default: the loop's costs are measured, not the members' timeouts
        (state / "settings.yaml").write_text("""apiVersion: v1
kind: ConfigMap
metadata: {name: karmactl-config, namespace: karmada-system}
data: {memberRequestTimeout: 30s}
""")
        loop = Loop(state, root / "watch.log")

        def deploy(name: str, obj: str) -> dict:
            url = f"{servers[name]}/apis/apps/v1/namespaces/default/deployments/{obj}"
            try:
                with urllib.request.urlopen(url, timeout=10) as resp:
                    return json.loads(resp.read())
            except OSError:
                return {}

        try:
            wait("the cold pass", lambda: "pass 1 " in loop.log.read_text(), loop, 1800, 1.0)
            # settled: no pass for longer than the longest gap between settle passes
            quiet: list = [loop.log.stat().st_size, time.monotonic()]

            def settled() -> bool:
                size = loop.log.stat().st_size
                if size != quiet[0]:
                    quiet[:] = [size, time.monotonic()]
                return time.monotonic() - quiet[1] > 75

            wait("settled", settled, loop, 3600, 1.0)
            cpu0, t0 = loop.cpu_seconds(), time.monotonic()
            time.sleep(seconds)
            cpu = loop.cpu_seconds() - cpu0
            wall = time.monotonic() - t0
            rss = loop.rss_mb()
            path = state / "apps" / "web-7.yaml"
            path.write_text(path.read_text().replace("replicas: 3", "replicas: 6"))
            latency = wait("the edit on a member", lambda: (deploy(names[0], "web-7").get("spec") or {}).get("replicas")
                           == 2, loop, 120, 0.02)
            wait("the edit's pass logged", lambda: "(files: apps/web-7.yaml" in loop.log.read_text(), loop, 120, 0.1)
            edit_pass = next(ln for ln in loop.log.read_text().splitlines() if "(files: apps/web-7.yaml" in ln)
            cold = next((ln for ln in loop.log.read_text().splitlines() if ln.startswith("pass 1 ")), "")
            peak = loop.rss_mb("VmHWM")
        finally:
            loop.stop()
    finally:
        karmactl(state, "local-down", "--purge", check=False)
    return {"idle_cpu_share": cpu / wall, "idle_cpu_s_per_min": cpu / wall * 60, "rss_mb": rss,
            "edit_to_member": latency, "edit_pass": edit_pass, "cold_pass": cold, "peak_mb": peak}


def main() -> None:
    global ENV
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--toleration", type=int, action="append")
    ap.add_argument("--emulated", action="store_true", help="emulated members even where real ones can run")
    ap.add_argument("--skip-failover", action="store_true")
    ap.add_argument("--idle-n", type=int, default=0)
    ap.add_argument("--idle-seconds", type=float, default=60.0)
    ap.add_argument("--workdir", type=Path, default=HERE / "out" / "failover")
    args = ap.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    ENV = process_env(args.workdir)
    compile_checkout(ENV)
    real = False
    if not args.emulated:
        from tests import kube_apiserver as ka

        reason = ka.unavailable_reason()
        real = reason is None
        if not real:
            print(f"real members unavailable ({reason}): emulated members")
    if not args.skip_failover:
        for t in args.toleration or [0, 30]:
            r = failover(args.workdir, args.n, t, real)
            kind = "real kube-apiserver" if real else "emulated"
            print(f"T={t:>3}s ({args.n} Deployments x 3 {kind} members): failover {r['failover']:.1f} s "
                  f"(target {r['failover_target']:.0f} s), recovery {r['recovery']:.1f} s "
                  f"(target {r['recovery_target']:.0f} s); first placement {r['settle']:.1f} s", flush=True)
    if args.idle_n:
        r = idle(args.workdir, args.idle_n, args.idle_seconds)
        print(f"idle loop at {args.idle_n} Deployments x 3 emulated members: {r['idle_cpu_s_per_min']:.2f} CPU s/min "
              f"= {100 * r['idle_cpu_share']:.2f} % of one core (target < 2 %), RSS {r['rss_mb']:.0f} MB "
              f"(target < 300 MB; peak {r['peak_mb']:.0f} MB); one template edited -> on the member in "
              f"{r['edit_to_member']:.2f} s (target < 1 s)\n  cold {r['cold_pass']}\n  edit {r['edit_pass']}")


if __name__ == "__main__":
    main()
