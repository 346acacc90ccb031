"""Shell completion without typer: ``karmactl __complete WORD... CURRENT`` and the scripts that call it.

Like kubectl's cobra ``__complete`` protocol, the shell passes the words typed so far (the last is the
one being completed, possibly empty); karmactl prints one candidate per line, then a directive line
``:names``, ``:files`` or ``:dirs`` telling the shell to use the candidates or complete paths itself.

What completes: commands and flags (from ``static_cli.json``, generated from the typer app by
:func:`generate`), kinds (``get deploy``, ``get deploy,svc``), object names per kind (``get rb <TAB>``,
``get deploy/<TAB>``, ``describe pp <TAB>``), namespaces for ``-n``, cluster names for ``-C``/``--clusters``
and cluster arguments, ``-o`` formats, ``-s`` scopes, and files for ``-f`` and other file flags.

Object names are read from the state directory's files directly (``--state`` on the line, else
``$KARMACTL_STATE``, else ``./state``): from the store's parse cache for files unchanged since the last
command, else with PyYAML's C loader, so a request stays light: nothing here imports typer, the store
or the control plane. Unreadable files are skipped: completion never fails.

Regenerate the static data and the scripts in ``completions/`` with
``python -m karmactl.cli.completing --write [DIR]`` (a test keeps both in sync).
"""
from __future__ import annotations

import json
import os
import sys
from functools import lru_cache
from pathlib import Path

STATIC_FILE = Path(__file__).with_name("static_cli.json")

# what the value of a flag completes to (by flag name, the same meaning in every command)
VALUE_KINDS = {"--namespace": "namespaces", "-n": "namespaces", "--clusters": "clusters", "-C": "clusters",
               "--cluster": "clusters", "--filename": "files", "-f": "files", "--status-file": "files",
               "--desired-file": "files", "--observed-file": "files", "--kubeconfig": "files",
               "--cluster-kubeconfig": "files", "--manifests": "dirs", "--state": "dirs",
               "--operation-scope": ["karmada", "members", "all"], "-s": ["karmada", "members", "all"],
               "--health": ["Healthy", "Unhealthy"], "--kube-apiserver": "files",
               "--testdata": "files"}
GET_FORMATS = ["json", "yaml", "name", "wide", "jsonpath=", "jsonpath-file=", "jsonpath-as-json=",
               "custom-columns=", "custom-columns-file="]
# what a command's positional arguments complete to
ARG_KINDS = {"get": "resources", "describe": "kind-names", "delete": "kind-names", "suspend": "kind-names",
             "resume": "kind-names", "edit": "kind-names", "label": "kind-names", "annotate": "kind-names",
             "patch": "kind-names", "explain": "kinds", "unjoin": "clusters", "cordon": "clusters",
             "uncordon": "clusters", "cluster condition set": "clusters", "cluster condition unset": "clusters",
             "promote": "kinds", "completion": ["bash", "zsh", "fish"]}
_SKIP_DIRS = {"computed", ".karmactl", ".git"}
_COMPUTED = {"ResourceBinding": "resourcebindings", "ClusterResourceBinding": "clusterresourcebindings",
             "Work": "works"}


@lru_cache(maxsize=1)
def static_data() -> dict:
    """``{"help": {command path: text}, "tree": node}`` from ``static_cli.json``; a node is
    ``{"options": {flag: value kind | None (a switch)}, "args": kind | None, "commands": {name: node}}``."""
    with open(STATIC_FILE, encoding="utf-8") as fh:
        return json.load(fh)


# ---------------------------------------------------------------------------- reading the state directory
def _documents(path: Path) -> list:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".json":
            return [json.loads(text)]
        return list(yaml.load_all(text, Loader=loader))
    except (OSError, UnicodeDecodeError, ValueError, yaml.YAMLError):
        return []


def _parse_cache(state: Path) -> dict:
    """The store's parse cache (``.karmactl/cache/parsed.json``, :mod:`karmactl.store.parse_cache`):
    relative path -> ``{"sig": [mtime_ns, size, inode], "objs": [[object, index, line], ...]}``; ``{}`` when
    absent or unreadable. Entries are used only when their signature matches the file's."""
    import orjson  # about twice as fast as json on a 10,000-object cache, and as light to import

    try:
        with open(state / ".karmactl" / "cache" / "parsed.json", "rb") as fh:
            data = orjson.loads(fh.read())
    except (OSError, ValueError):
        return {}
    files = data.get("files") if isinstance(data, dict) else None
    return files if isinstance(files, dict) else {}


def _user_objects(state: Path) -> list[tuple[str, str, str, str]]:
    """``[(apiVersion, kind, namespace, name)]`` of the objects people wrote in the state directory: from the
    parse cache where a file is unchanged since the last run, else parsed (PyYAML's C loader)."""
    cache = _parse_cache(state)
    found = []
    for dirpath, dirnames, filenames in os.walk(state):
        if Path(dirpath) == state:
            dirnames[:] = [d for d in dirnames if d not in _SKIP_DIRS]
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for f in filenames:
            if f.startswith(".") or not f.endswith((".yaml", ".yml", ".json")):
                continue
            path = Path(dirpath, f)
            hit = cache.get(str(path.relative_to(state)))
            try:
                st = os.stat(path)
            except OSError:
                continue
            if isinstance(hit, dict) and hit.get("sig") == [st.st_mtime_ns, st.st_size, st.st_ino] \
                    and isinstance(hit.get("objs"), list):
                docs = [item[0] for item in hit["objs"] if isinstance(item, list) and item]
            else:
                docs = _documents(path)
            for doc in docs:
                if isinstance(doc, dict) and isinstance(doc.get("metadata"), dict) and doc["metadata"].get("name"):
                    m = doc["metadata"]
                    found.append((str(doc.get("apiVersion", "")), str(doc.get("kind", "")),
                                  str(m.get("namespace") or ""), str(m["name"])))
    return found


def _computed_objects(state: Path, kind: str) -> list[tuple[str, str]]:
    """``[(namespace, name)]`` of computed ResourceBindings, ClusterResourceBindings or Works, from their
    paths (``computed/resourcebindings/<ns>/<name>.json``, ``computed/works/<es>/<name>.json``)."""
    root = state / "computed" / _COMPUTED[kind]
    if not root.is_dir():
        return []
    if kind == "ClusterResourceBinding":
        return [("", p.stem) for p in root.glob("*.json")]
    return [(p.parent.name, p.stem) for p in root.glob("*/*.json")]


def _registry(state: Path, objs: list):
    from karmactl.api.kinds import KindRegistry

    reg = KindRegistry.default()
    if any(kind == "CustomResourceDefinition" for _a, kind, _n, _m in objs):
        for path in state.rglob("*.y*ml"):
            for doc in _documents(path):
                if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
                    reg.add_crd(doc)
    return reg


class _Line:
    """What the words typed so far say: state directory, namespace, positional arguments."""

    def __init__(self, values: dict, switches: set, positional: list):
        self.state = Path(values.get("--state") or os.environ.get("KARMACTL_STATE") or "state")
        self.namespace = values.get("-n") or values.get("--namespace") or "default"
        self.all_namespaces = bool({"-A", "--all-namespaces"} & switches)
        self.positional = positional
        self._objs = None

    @property
    def objs(self) -> list:
        if self._objs is None:
            self._objs = _user_objects(self.state) if self.state.is_dir() else []
        return self._objs

    def kinds(self) -> list[str]:
        reg = _registry(self.state, self.objs) if self.state.is_dir() else _registry(self.state, [])
        return sorted({n for info in reg.all() for n in (info.plural, *info.short_names)})

    def names(self, kind_word: str) -> list[str]:
        from karmactl.cli.kindnames import lookup_kind

        info = lookup_kind(_registry(self.state, self.objs), kind_word)
        if info is None:
            return []
        if info.group == "work.karmada.io" and info.kind in _COMPUTED:
            pairs = _computed_objects(self.state, info.kind)
        else:
            pairs = [(ns, name) for api, kind, ns, name in self.objs if kind == info.kind and info.accepts(api)]
        if info.namespaced and not self.all_namespaces:
            pairs = [(ns, n) for ns, n in pairs if (ns or "default") == self.namespace]
        return sorted({n for _ns, n in pairs})

    def namespaces(self) -> list[str]:
        found = {"default"} | {ns for _a, _k, ns, _n in self.objs if ns}
        found |= {n for _a, k, _ns, n in self.objs if k == "Namespace"}
        for kind in ("ResourceBinding", "Work"):
            found |= {ns for ns, _n in _computed_objects(self.state, kind)}
        return sorted(found)

    def clusters(self) -> list[str]:
        return sorted({n for api, k, _ns, n in self.objs if k == "Cluster" and api.startswith("cluster.karmada.io/")})


# ---------------------------------------------------------------------------- completing
def _values(kind, cur: str, line: _Line) -> tuple[list[str], str]:
    """Candidates and directive for a value of ``kind`` (a list = fixed choices)."""
    if isinstance(kind, list):
        return [c for c in kind if c.startswith(cur)], "names"
    if kind in ("files", "dirs"):
        return [], kind
    if kind == "namespaces":
        return [n for n in line.namespaces() if n.startswith(cur)], "names"
    if kind == "clusters":  # a comma-separated list: complete its last item
        head, _, tail = cur.rpartition(",")
        prefix = head + "," if head else ""
        given = set(head.split(",")) if head else set()
        return [prefix + n for n in line.clusters() if n.startswith(tail) and n not in given], "names"
    if kind == "outputs":
        return [f for f in GET_FORMATS if f.startswith(cur)], "names"
    return [], "names"


def _resources(cur: str, line: _Line, allow_all: bool) -> list[str]:
    pos = line.positional
    if "/" in cur:  # TYPE/NAME
        kind, _, part = cur.partition("/")
        return [f"{kind}/{n}" for n in line.names(kind) if n.startswith(part)]
    if not pos:
        head, _, tail = cur.rpartition(",")
        prefix = head + "," if head else ""
        kinds = line.kinds() + (["all"] if allow_all and not head else [])
        return [prefix + k for k in kinds if k.startswith(tail)]
    if "/" in pos[0] or "," in pos[0] or pos[0] == "all":
        return []
    return [n for n in line.names(pos[0]) if n.startswith(cur) and n not in pos[1:]]


class _Words:
    """The words before the one being completed, read as click would: the command path (``node``, the
    options it and its parents accept), option values, switches, positional arguments, and
    ``pending``: the option whose value is the word being completed (None if none)."""

    def __init__(self, prev: list[str], node: dict):
        self.node, self.options = node, dict(node["options"])
        self.values: dict = {}
        self.switches: set = set()
        self.positional: list[str] = []
        self.pending: str | None = None
        i = 0
        while i < len(prev):
            i = self._read(prev, i)

    def _read(self, prev: list[str], i: int) -> int:
        """Read the word at ``i``; returns the index of the next word to read."""
        w = prev[i]
        if w == "--":
            self.positional += prev[i + 1:]
            return len(prev)
        if w.startswith("-") and len(w) > 1:
            name, eq, val = w.partition("=")
            if self.options.get(name) is not None and not eq:
                if i + 1 >= len(prev):  # the word being completed is this flag's value
                    self.pending = name
                    return len(prev)
                self.values[name] = prev[i + 1]
                return i + 2
            self.values[name] = val if eq else self.values.get(name)
            self.switches.add(name)
            return i + 1
        if not self.positional and w in self.node.get("commands", {}):
            self.node = self.node["commands"][w]
            self.options.update(self.node["options"])
            return i + 1
        self.positional.append(w)
        return i + 1

    def line(self) -> _Line:
        return _Line(self.values, self.switches, self.positional)


def _arguments(kind, cur: str, line: _Line) -> list[str]:
    """Candidates for a positional argument of the kind a command declares (``ARG_KINDS``)."""
    positional = line.positional
    if kind == "resources":
        return _resources(cur, line, allow_all=True)
    if kind == "kind-names":
        if not positional:
            return [k for k in line.kinds() if k.startswith(cur)]
        return [n for n in line.names(positional[0]) if n.startswith(cur) and n not in positional[1:]]
    if kind == "kinds":
        return [k for k in line.kinds() if k.startswith(cur)] if not positional else []
    if kind == "clusters":
        return [c for c in line.clusters() if c.startswith(cur)] if not positional else []
    if isinstance(kind, list) and not positional:
        return [c for c in kind if c.startswith(cur)]
    return []


def complete(words: list[str]) -> tuple[list[str], str]:
    """Candidates for the last of ``words`` (the words after ``karmactl``) and a directive:
    ``names`` (offer the candidates), ``files`` or ``dirs`` (let the shell complete paths)."""
    words = words or [""]
    cur, prev = words[-1], words[:-1]
    read = _Words(prev, static_data()["tree"])
    line = read.line()
    if read.pending is not None:
        return _values(read.options[read.pending], cur, line)
    if cur.startswith("-"):
        name, eq, val = cur.partition("=")
        if eq and read.options.get(name) is not None:
            found, directive = _values(read.options[name], val, line)
            return [f"{name}={c}" for c in found], directive
        return sorted(o for o in read.options if o.startswith(cur)), "names"
    node = read.node
    if node.get("commands") and not read.positional:
        return sorted(c for c in node["commands"] if c.startswith(cur) and not c.startswith("_")), "names"
    return _arguments(node.get("args"), cur, line), "names"


def main(words: list[str]) -> int:
    """``karmactl __complete WORD...``: candidates one per line, then ``:names``, ``:files`` or ``:dirs``."""
    try:
        found, directive = complete(words)
    except Exception:  # noqa: BLE001 - a completion request never prints a traceback into the prompt
        found, directive = [], "names"
    sys.stdout.write("".join(f"{c}\n" for c in found) + f":{directive}\n")
    return 0


# ---------------------------------------------------------------------------- the scripts
_BASH = r"""# bash completion for karmactl (generated by `karmactl completion bash`; do not edit)
_karmactl() {
    local cur="${COMP_WORDS[COMP_CWORD]}" out directive IFS=$'\n'
    out=($(karmactl __complete "${COMP_WORDS[@]:1:$COMP_CWORD}" 2>/dev/null))
    directive="${out[${#out[@]}-1]}"
    unset 'out[${#out[@]}-1]'
    case "$directive" in
        :files) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$cur")) ;;
        :dirs) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- "$cur")) ;;
        *) COMPREPLY=("${out[@]}")
           [[ ${#COMPREPLY[@]} -eq 1 && "${COMPREPLY[0]}" == *[=,/] ]] && compopt -o nospace 2>/dev/null ;;
    esac
}
complete -F _karmactl karmactl
"""

_ZSH = r"""#compdef karmactl
# zsh completion for karmactl (generated by `karmactl completion zsh`; do not edit)
_karmactl() {
    local -a out
    out=("${(@f)$(karmactl __complete "${(@)words[2,$CURRENT]}" 2>/dev/null)}")
    local directive="${out[-1]}"
    out=("${(@)out[1,-2]}")
    case "$directive" in
        :files) _files ;;
        :dirs) _files -/ ;;
        *) compadd -- "${out[@]}" ;;
    esac
}
if [ "$funcstack[1]" = "_karmactl" ]; then _karmactl "$@"; else compdef _karmactl karmactl; fi
"""

_FISH = r"""# fish completion for karmactl (generated by `karmactl completion fish`; do not edit)
function __karmactl_complete
    set -l words (commandline -opc)[2..-1] (commandline -ct)
    set -l out (karmactl __complete $words 2>/dev/null)
    switch $out[-1]
        case :files
            __fish_complete_path (commandline -ct)
        case :dirs
            __fish_complete_directories (commandline -ct)
        case '*'
            printf '%s\n' $out[1..-2]
    end
end
complete --command karmactl --no-files --arguments '(__karmactl_complete)'
"""

SCRIPTS = {"bash": _BASH, "zsh": _ZSH, "fish": _FISH}
SCRIPT_FILES = {"bash": "karmactl.bash", "zsh": "_karmactl", "fish": "karmactl.fish"}


def script(shell: str) -> str:
    """The completion script for ``bash``, ``zsh`` or ``fish`` (KeyError for others)."""
    return SCRIPTS[shell]


# ---------------------------------------------------------------------------- generating static_cli.json
def generate() -> dict:
    """The static data (help texts and command tree) from the typer app, as ``static_cli.json`` holds it.
    Imports typer and every command module: for the generator and its sync test only."""
    import contextlib
    import io

    import typer

    from karmactl.cli.app import app
    from karmactl.cli.light import LIGHT_COMMANDS

    root = typer.main.get_command(app)
    helps: dict[str, str] = {}

    def help_of(path: list[str]) -> str:
        buf = io.StringIO()
        old = os.environ.get("COLUMNS")
        os.environ["COLUMNS"] = "200"  # click wraps help at min(columns, 80) - 2
        try:
            with contextlib.redirect_stdout(buf), contextlib.suppress(SystemExit):
                root.main(args=[*path, "--help"], prog_name="karmactl", standalone_mode=False)
        finally:
            if old is None:
                os.environ.pop("COLUMNS", None)
            else:
                os.environ["COLUMNS"] = old
        return buf.getvalue()

    def node_of(cmd, path: list[str]) -> dict:
        helps[" ".join(path)] = help_of(path)
        options = {}
        for p in cmd.params:
            if p.param_type_name != "option":
                continue
            for opt in [*p.opts, *p.secondary_opts]:
                if p.is_flag or p.count:
                    options[opt] = None
                elif path == ["get"] and opt in ("-o", "--output"):
                    options[opt] = "outputs"
                elif opt in ("-o", "--output"):
                    options[opt] = ["name"]
                else:
                    options[opt] = next((VALUE_KINDS[o] for o in p.opts if o in VALUE_KINDS), "value")
        options["--help"] = options["-h"] = None
        node = {"options": dict(sorted(options.items())), "args": ARG_KINDS.get(" ".join(path))}
        if not path or " ".join(path) in LIGHT_COMMANDS:  # run without typer: their parameters too
            node["params"] = params_of(cmd)
        if hasattr(cmd, "commands"):
            node["commands"] = {n: node_of(c, [*path, n]) for n, c in sorted(cmd.commands.items()) if not c.hidden}
        return node

    return {"help": helps, "tree": node_of(root, [])}


def params_of(cmd) -> list[dict]:
    """The parameters of a click command as :mod:`karmactl.cli.light` parses them: ``[{"name", "opts",
    "kind": "argument"|"option", "type": "str"|"path"|"flag"|"count", "multiple", "nargs", "required",
    "default", "envvar", "eager"}]`` in declaration order.

    Raises:
        ValueError: a parameter the light parser cannot read (another type, a default that is not JSON):
            give it a type above or take the command out of ``karmactl.cli.light.LIGHT_COMMANDS``.
    """
    out = []
    for p in cmd.params:
        if p.secondary_opts:
            raise ValueError(f"{cmd.name} {p.name}: the light parser reads no --x/--no-x pairs")
        if p.nargs not in (1, -1) or (p.nargs == -1 and p.param_type_name == "option"):
            raise ValueError(f"{cmd.name} {p.name}: the light parser reads one value per option and argument "
                             f"(or any number of arguments)")
        if p.param_type_name == "option" and p.count:
            kind = "count"
        elif p.param_type_name == "option" and p.is_flag:
            kind = "flag"
        elif p.bare_type() in ("str", "list[str]", "Path"):
            kind = "path" if p.bare_type() == "Path" else "str"
        else:
            raise ValueError(f"{cmd.name} {p.name}: the light parser reads str, Path, flags and counts, "
                             f"not {p.bare_type()}")
        default = str(p.default) if isinstance(p.default, Path) else p.default
        if default is not None and not isinstance(default, (str, bool, int)):
            raise ValueError(f"{cmd.name} {p.name}: default {default!r} is not a plain value")
        out.append({"name": p.name, "opts": list(p.opts), "kind": p.param_type_name, "type": kind,
                    "multiple": bool(p.multiple), "nargs": p.nargs, "required": bool(p.required), "default": default,
                    "envvar": p.envvar, "eager": bool(p.is_eager or p.callback)})
    return out


def write(completions_dir: Path) -> list[Path]:
    """Write ``static_cli.json`` and the three scripts into ``completions_dir``; returns the paths written."""
    data = json.dumps(generate(), indent=1, sort_keys=True) + "\n"
    STATIC_FILE.write_text(data, encoding="utf-8")
    written = [STATIC_FILE]
    completions_dir.mkdir(parents=True, exist_ok=True)
    for shell, name in SCRIPT_FILES.items():
        (completions_dir / name).write_text(SCRIPTS[shell], encoding="utf-8")
        written.append(completions_dir / name)
    return written


if __name__ == "__main__":
    if sys.argv[1:2] != ["--write"]:
        sys.exit("usage: python -m karmactl.cli.completing --write [COMPLETIONS_DIR]")
    target = Path(sys.argv[2]) if len(sys.argv) > 2 else Path(__file__).resolve().parents[2] / "completions"
    for p in write(target):
        print(p)
