"""Start-up errors: exit code 2 and one line naming the file or field, never a traceback.

Each case runs the real command (`python -m asched ...`) in a subprocess, since "no
traceback" is about what the process prints. The processes of all cases are started
together, so the table costs about one interpreter start-up.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from asched.cli import main

CONFIG_HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


def _free_port() -> int:
    """A loopback port nobody listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def _kubeconfig(
    server: str = "https://127.0.0.1:6443",
    *,
    user: dict[str, Any] | None = None,
    context: dict[str, Any] | None = None,
    current: str | None = "main",
    cluster: dict[str, Any] | None = None,
) -> str:
    doc: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "c",
                "cluster": cluster or {"server": server, "insecure-skip-tls-verify": True},
            }
        ],
        "users": [{"name": "u", "user": user or {"token": "t"}}],
        "contexts": [{"name": "main", "context": context or {"cluster": "c", "user": "u"}}],
    }
    if current is not None:
        doc["current-context"] = current
    return yaml.safe_dump(doc)


@dataclass(frozen=True)
class Case:
    id: str
    # Given the case's directory, write its files and return the command's arguments.
    setup: Callable[[Path], list[str]]
    # Given the directory, the one line stderr must hold (exactly).
    expect: Callable[[Path], str]


def _run(
    *, kubeconfig: str | None = None, config: str | None = None, extra: tuple[str, ...] = ()
) -> Callable[[Path], list[str]]:
    def setup(d: Path) -> list[str]:
        args = ["run", "--secure-port", "0", "--bind-address", "127.0.0.1", "--no-leader-elect"]
        # The unreachable case must not wait: the waiting itself is test_probe's.
        args += ["--api-server-wait", "0"]
        if kubeconfig is not None:
            (d / "kubeconfig").write_text(kubeconfig)
        args += ["--kubeconfig", str(d / "kubeconfig")]
        if config is not None:
            (d / "config.yaml").write_text(config)
            args += ["--config", str(d / "config.yaml")]
        # Later flags win: a case's own --bind-address replaces the loopback one above.
        return args + [a.format(d=d) for a in extra]

    return setup


def _unreachable(d: Path) -> list[str]:
    port = _free_port()
    (d / "port").write_text(str(port))
    (d / "kubeconfig").write_text(_kubeconfig(f"https://127.0.0.1:{port}"))
    args = ["run", "--kubeconfig", str(d / "kubeconfig"), "--api-server-wait", "0"]
    # Structured logs share stderr; above info, nothing but the error line is left.
    return [*args, "--secure-port", "0", "--bind-address", "127.0.0.1", "--log-level", "warning"]


# Sockets held open while their case runs, so its port is taken.
_HELD: list[socket.socket] = []


def _port_in_use(d: Path) -> list[str]:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    _HELD.append(s)
    (d / "port").write_text(str(s.getsockname()[1]))
    (d / "kubeconfig").write_text(_kubeconfig())
    args = ["run", "--kubeconfig", str(d / "kubeconfig"), "--bind-address", "127.0.0.1"]
    return [*args, "--secure-port", (d / "port").read_text(), "--log-level", "warning"]


def _garbage_cert(d: Path) -> list[str]:
    (d / "u.crt").write_text("not a certificate\n")
    (d / "u.key").write_text("not a key\n")
    user = {"client-certificate": str(d / "u.crt"), "client-key": str(d / "u.key")}
    return _run(kubeconfig=_kubeconfig(user=user))(d)


def _garbage_serving_cert(d: Path) -> list[str]:
    (d / "tls.crt").write_text("not a certificate\n")
    (d / "tls.key").write_text("not a key\n")
    flags = ("--tls-cert-file={d}/tls.crt", "--tls-private-key-file={d}/tls.key")
    return _run(kubeconfig=_kubeconfig(), extra=flags)(d)


def _explain_missing(d: Path) -> list[str]:
    return ["explain", "default/p", "--kubeconfig", str(d / "kubeconfig")]


def _explain_unreachable(d: Path) -> list[str]:
    port = _free_port()
    (d / "port").write_text(str(port))
    (d / "kubeconfig").write_text(_kubeconfig(f"https://127.0.0.1:{port}"))
    return ["explain", "default/p", "--kubeconfig", str(d / "kubeconfig")]


def _kc(d: Path) -> str:
    return str(d / "kubeconfig")


CASES = [
    Case("kubeconfig-missing", _run(), lambda d: f"asched: kubeconfig {_kc(d)}: no such file"),
    Case(
        "kubeconfig-bad-yaml",
        _run(kubeconfig="clusters: [\n"),
        lambda d: (
            f"asched: kubeconfig {_kc(d)}: YAML syntax error at line 2, column 1: "
            "while parsing a flow node expected the node content, but found '<stream end>'"
        ),
    ),
    Case(
        "kubeconfig-empty",
        _run(kubeconfig=""),
        lambda d: (
            f"asched: kubeconfig {_kc(d)}: not a kubeconfig (expected a mapping with "
            "clusters, contexts, users and current-context)"
        ),
    ),
    Case(
        "kubeconfig-no-current-context",
        _run(kubeconfig=_kubeconfig(current=None)),
        lambda d: f"asched: kubeconfig {_kc(d)}: current-context: not set",
    ),
    Case(
        "kubeconfig-unknown-context",
        _run(kubeconfig=_kubeconfig(current="other")),
        lambda d: (
            f'asched: kubeconfig {_kc(d)}: current-context: no context named "other" in contexts'
        ),
    ),
    Case(
        "kubeconfig-unknown-cluster",
        _run(kubeconfig=_kubeconfig(context={"cluster": "nope", "user": "u"})),
        lambda d: (
            f"asched: kubeconfig {_kc(d)}: contexts[name=main].context.cluster: "
            'no cluster named "nope" in clusters'
        ),
    ),
    Case(
        "kubeconfig-unknown-user",
        _run(kubeconfig=_kubeconfig(context={"cluster": "c", "user": "nobody"})),
        lambda d: (
            f"asched: kubeconfig {_kc(d)}: contexts[name=main].context.user: "
            'no user named "nobody" in users'
        ),
    ),
    Case(
        "kubeconfig-no-server",
        _run(kubeconfig=_kubeconfig(cluster={"insecure-skip-tls-verify": True})),
        lambda d: f"asched: kubeconfig {_kc(d)}: clusters[name=c].cluster.server: not set",
    ),
    Case(
        "kubeconfig-cert-file-missing",
        _run(kubeconfig=_kubeconfig(user={"client-certificate": "/nonexistent/u.crt"})),
        lambda d: (
            f"asched: kubeconfig {_kc(d)}: users[name=u].client-certificate /nonexistent/u.crt: "
            "cannot read: No such file or directory"
        ),
    ),
    Case(
        "kubeconfig-cert-file-unreadable",
        _garbage_cert,
        lambda d: (
            f"asched: kubeconfig {_kc(d)}: client-certificate {d / 'u.crt'} / client-key "
            f"{d / 'u.key'}: not a readable PEM certificate and matching key: [SSL] PEM lib"
        ),
    ),
    Case(
        "api-server-unreachable",
        _unreachable,
        lambda d: (
            "asched: cannot reach the API server at "
            f"https://127.0.0.1:{(d / 'port').read_text()}: connection refused"
        ),
    ),
    Case(
        "ops-port-in-use",
        _port_in_use,
        lambda d: (
            "asched: cannot serve /healthz and /metrics on "
            f"127.0.0.1:{(d / 'port').read_text()}: address already in use"
        ),
    ),
    Case(
        "insecure-serving-not-loopback",
        _run(kubeconfig=_kubeconfig(), extra=("--insecure-serving", "--bind-address=0.0.0.0")),
        lambda d: (
            "asched: --insecure-serving serves plain HTTP without authentication, so it "
            "binds a loopback address only; --bind-address 0.0.0.0 is not one (use "
            "127.0.0.1 or ::1, or drop --insecure-serving for HTTPS)"
        ),
    ),
    Case(
        "tls-cert-without-key",
        _run(kubeconfig=_kubeconfig(), extra=("--tls-cert-file={d}/tls.crt",)),
        lambda d: (
            "asched: --tls-cert-file is given without --tls-private-key-file; give both or neither"
        ),
    ),
    Case(
        "tls-cert-file-missing",
        _run(
            kubeconfig=_kubeconfig(),
            extra=("--tls-cert-file={d}/tls.crt", "--tls-private-key-file={d}/tls.key"),
        ),
        lambda d: f"asched: --tls-cert-file {d / 'tls.crt'}: no such file or directory",
    ),
    Case(
        "tls-cert-file-garbage",
        _garbage_serving_cert,
        lambda d: f"asched: --tls-cert-file {d / 'tls.crt'}: not a PEM certificate",
    ),
    Case(
        "config-missing",
        lambda d: ["run", "--config", str(d / "missing.yaml")],
        lambda d: f"asched: {d / 'missing.yaml'}: cannot read the file: No such file or directory",
    ),
    Case(
        "config-bad-yaml",
        _run(kubeconfig=_kubeconfig(), config="profiles: [\n"),
        lambda d: (
            f"asched: {d / 'config.yaml'}: YAML syntax error at line 2, column 1: "
            "while parsing a flow node did not find expected node content"
        ),
    ),
    Case(
        "config-unknown-plugin",
        _run(
            kubeconfig=_kubeconfig(),
            config=CONFIG_HEAD + "profiles:\n- plugins:\n    filter:\n      enabled:\n"
            "      - name: NoSuchPlugin\n",
        ),
        lambda d: (
            f"asched: {d / 'config.yaml'}: profiles[0].plugins.filter.enabled[0].name: "
            'unknown plugin "NoSuchPlugin"'
        ),
    ),
    Case(
        "config-invalid-args",
        _run(
            kubeconfig=_kubeconfig(),
            config=CONFIG_HEAD + "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n"
            "    args:\n      scoringStrategy: {type: Nope}\n",
        ),
        lambda d: (
            f"asched: {d / 'config.yaml'}: profiles[0].pluginConfig[0].args."
            'scoringStrategy.type: Unsupported value: "Nope": supported values: '
            '"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"'
        ),
    ),
    Case(
        "explain-kubeconfig-missing",
        _explain_missing,
        lambda d: f"asched explain: kubeconfig {_kc(d)}: no such file",
    ),
    Case(
        "explain-api-server-unreachable",
        _explain_unreachable,
        lambda d: (
            "asched explain: cannot reach the API server at "
            f"https://127.0.0.1:{(d / 'port').read_text()}: connection refused"
        ),
    ),
]


def _check(case: Case, d: Path, returncode: int, stderr: str) -> None:
    lines = stderr.splitlines()
    assert "Traceback" not in stderr
    assert returncode == 2, stderr
    assert len(lines) == 1, stderr
    expected = case.expect(d)
    if expected.endswith("PEM lib"):
        # ssl's message goes on with its C source line, which moves between Python builds.
        assert lines[0].startswith(expected)
    else:
        assert lines[0] == expected


@pytest.fixture
def clean_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for key in [k for k in os.environ if k.startswith("KUBERNETES_")] + ["KUBECONFIG"]:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no ~/.kube/config to fall back on
    # Logging is process-wide: configuring it onto pytest's captured stderr would break
    # every later test that logs.
    monkeypatch.setattr("asched.logs.configure_logging", lambda *a: None)


@pytest.mark.usefixtures("clean_env")
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_startup_error_is_one_line_and_exit_2(
    case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = tmp_path / "case"
    d.mkdir()
    args = case.setup(d)

    returncode = main(args)

    _check(case, d, returncode, capsys.readouterr().err)


# What the process itself prints, traceback or not: one case per kind of start-up error,
# run as subprocesses started together (each costs an interpreter start-up).
IN_A_PROCESS = ("kubeconfig-missing", "api-server-unreachable", "config-unknown-plugin")


def test_the_process_prints_one_line_and_exits_2(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KUBERNETES_")}
    env.pop("KUBECONFIG", None)
    env["HOME"] = str(tmp_path / "home")
    started = []
    for case in [c for c in CASES if c.id in IN_A_PROCESS]:
        d = tmp_path / case.id
        d.mkdir()
        proc = subprocess.Popen(
            [sys.executable, "-m", "asched", *case.setup(d)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        started.append((case, d, proc))
    for case, d, proc in started:
        try:
            _, stderr = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, stderr = proc.communicate()
        _check(case, d, proc.returncode, stderr)
