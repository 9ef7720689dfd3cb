"""The deploy/ files: gunicorn config loads the app, units migrate first, nginx serves only static.

The nginx test runs Debian's nginx (when installed) in front of a real gunicorn
started with deploy/gunicorn.conf.py, on loopback ports, with the site file as shipped
except for its paths and ports.
"""

from __future__ import annotations

import http.client
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from ports import free_port, wait_for_port

PROJECT_ROOT = Path(__file__).resolve().parents[3]
DEPLOY = PROJECT_ROOT / "deploy"
BIN = Path(sys.executable).parent
SPEC_VARIABLES = ["DATABASE_URL", "TAILBOARD_DATA_DIR", "TAILBOARD_STORAGE", "SECRET_KEY",
                  "TAILBOARD_SCORING", "CELERY_BROKER_URL", "AWS_ENDPOINT_URL"]


def app_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """Return an environment for the app with its data dir, labels and database in tmp_path."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("TAILBOARD_", "GUNICORN_"))}
    env.update({
        "TAILBOARD_DATA_DIR": str(tmp_path / "data"),
        "TAILBOARD_LABELS_DIR": str(tmp_path / "labels"),
        "DATABASE_URL": f"sqlite:///{tmp_path / 'data' / 'tailboard.sqlite3'}",
        "SECRET_KEY": "deploy-test",
        "TAILBOARD_SCORING": "inline",
        "WEB_CONCURRENCY": "1",
    })
    env.update(extra)
    return env


def gunicorn(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run gunicorn from the project root with the deploy config."""
    return subprocess.run([str(BIN / "gunicorn"), *args, "-c", "deploy/gunicorn.conf.py", "app:app"],
                          cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=120, check=False)


def test_gunicorn_check_config_loads_the_app(tmp_path: Path) -> None:
    result = gunicorn("--check-config", env=app_env(tmp_path))
    assert result.returncode == 0, result.stderr


def test_gunicorn_settings_come_from_the_environment(tmp_path: Path) -> None:
    env = app_env(tmp_path, GUNICORN_BIND="127.0.0.1:9123", WEB_CONCURRENCY="3", GUNICORN_TIMEOUT="240")
    printed = gunicorn("--print-config", env=env).stdout
    settings = dict(re.findall(r"^(\w+)\s+= (.*)$", printed, re.MULTILINE))
    assert settings["bind"] == "['127.0.0.1:9123']"
    assert settings["workers"] == "3"
    assert settings["timeout"] == "240"
    assert settings["preload_app"] == "False"


def test_gunicorn_defaults_size_workers_by_cpu_and_allow_slow_uploads(tmp_path: Path) -> None:
    env = app_env(tmp_path)
    del env["WEB_CONCURRENCY"]
    settings = dict(re.findall(r"^(\w+)\s+= (.*)$", gunicorn("--print-config", env=env).stdout, re.MULTILINE))
    assert int(settings["workers"]) == min(max(os.cpu_count() or 1, 2), 8)
    assert int(settings["threads"]) == int(settings["worker_connections"]) == 4
    assert int(settings["timeout"]) >= 120


def unit(name: str) -> str:
    """Return the text of a systemd unit in deploy/."""
    return (DEPLOY / name).read_text()


@pytest.mark.parametrize("name", ["tailboard-web.service", "tailboard-worker.service"])
def test_web_and_worker_start_only_after_the_release_step(name: str) -> None:
    text = unit(name)
    assert "Requires=tailboard-release.service" in text
    assert re.search(r"^After=.*tailboard-release\.service", text, re.MULTILINE)
    assert "alembic" not in text  # migrating is the release unit's job alone


def test_the_release_step_migrates_then_requeues() -> None:
    commands = re.findall(r"^ExecStart=(.*)$", unit("tailboard-release.service"), re.MULTILINE)
    assert commands == ["/opt/tailboard/.venv/bin/alembic upgrade head",
                        "/opt/tailboard/.venv/bin/flask --app app requeue"]
    procfile = dict(line.split(": ", 1) for line in (DEPLOY / "Procfile").read_text().splitlines())
    assert procfile["release"].startswith("alembic upgrade head")
    assert procfile["web"].startswith("gunicorn -c deploy/gunicorn.conf.py app:app")
    assert procfile["worker"].startswith("celery -A leaderboard.workers.celery_app worker")


def test_systemd_accepts_the_units(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed")
    for name in ("tailboard-release.service", "tailboard-web.service", "tailboard-worker.service"):
        (tmp_path / name).write_text(unit(name).replace("/opt/tailboard", str(PROJECT_ROOT)))
    result = subprocess.run([analyze, "verify", *sorted(str(p) for p in tmp_path.glob("*.service"))],
                            capture_output=True, text=True, check=False)
    problems = [line for line in result.stderr.splitlines() if "tailboard" in line]
    assert problems == [], result.stderr


def test_env_example_lists_every_spec_variable() -> None:
    text = (DEPLOY / "env.example").read_text()
    for variable in SPEC_VARIABLES:
        assert re.search(rf"^#?{variable}=", text, re.MULTILINE), variable


def test_env_example_lists_every_variable_the_code_reads() -> None:
    text = (DEPLOY / "env.example").read_text()
    sources = [PROJECT_ROOT / "leaderboard" / "platform/config.py", DEPLOY / "gunicorn.conf.py",
               PROJECT_ROOT / "scoring" / "labels" / "cache.py"]
    read = {name for path in sources
            for name in re.findall(r"\b((?:TAILBOARD|GUNICORN)_[A-Z_]+|WEB_CONCURRENCY|FORWARDED_ALLOW_IPS)\b",
                                   path.read_text())}
    missing = sorted(name for name in read if not re.search(rf"^#?{name}=", text, re.MULTILINE))
    assert missing == []


def test_env_example_has_no_comment_after_a_value() -> None:
    # systemd's EnvironmentFile keeps "  # ..." after a value as part of the value
    lines = (DEPLOY / "env.example").read_text().splitlines()
    assignments = [line.lstrip("#") for line in lines if re.match(r"^#?[A-Z][A-Z0-9_]*=", line)]
    assert [line for line in assignments if "#" in line.split("=", 1)[1]] == []


def test_nginx_site_serves_no_directory_but_leaderboard_static() -> None:
    site = (DEPLOY / "nginx-tailboard.conf").read_text()
    directives = re.findall(r"^\s*(root|alias)\s+([^;]+);", site, re.MULTILINE)
    assert directives == [("alias", "/opt/tailboard/leaderboard/static/")]
    assert re.search(r"^\s*client_max_body_size 110m;", site, re.MULTILINE)


# ------------------------------------------------------------ nginx in front of gunicorn


def nginx_main_config(tmp: Path, site: Path) -> str:
    """Return a minimal nginx.conf that runs in tmp and includes the site."""
    user = "user root;\n" if os.geteuid() == 0 else ""  # workers must read tmp (mode 0700)
    temps = "\n".join(f"{name}_temp_path {tmp / name};"
                      for name in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    return (f"{user}daemon off;\nworker_processes 1;\npid {tmp / 'nginx.pid'};\nerror_log {tmp / 'error.log'};\n"
            f"events {{}}\nhttp {{\ninclude /etc/nginx/mime.types;\naccess_log off;\n{temps}\ninclude {site};\n}}\n")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, Path]]:
    """Run gunicorn (deploy config) and nginx (deploy site); yield nginx's port and the labels dir."""
    nginx = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
    if nginx is None:
        pytest.skip("nginx is not installed (Debian package nginx-light)")
    tmp = tmp_path_factory.mktemp("site")
    app_port, web_port = free_port(), free_port()
    env = app_env(tmp, GUNICORN_BIND=f"127.0.0.1:{app_port}")
    migrate = subprocess.run([str(BIN / "alembic"), "upgrade", "head"], cwd=PROJECT_ROOT, env=env,
                             capture_output=True, text=True, check=False)
    assert migrate.returncode == 0, migrate.stderr
    (tmp / "labels" / "phases" / "1").mkdir(parents=True)
    (tmp / "labels" / "phases" / "1" / "labels-v1.jsonl").write_text('{"id": "q1", "label": "SENTINEL"}\n')
    site_text = (DEPLOY / "nginx-tailboard.conf").read_text()
    site_text = (site_text.replace("listen 80;", f"listen 127.0.0.1:{web_port};").replace("listen [::]:80;", "")
                 .replace("127.0.0.1:8000", f"127.0.0.1:{app_port}").replace("/opt/tailboard", str(PROJECT_ROOT)))
    (tmp / "site.conf").write_text(site_text)
    (tmp / "nginx.conf").write_text(nginx_main_config(tmp, tmp / "site.conf"))
    logs = {name: (tmp / f"{name}.out") for name in ("gunicorn", "nginx")}
    processes = []
    try:
        with logs["gunicorn"].open("wb") as out:
            processes.append(subprocess.Popen([str(BIN / "gunicorn"), "-c", "deploy/gunicorn.conf.py", "app:app"],
                                              cwd=PROJECT_ROOT, env=env, stdout=out, stderr=subprocess.STDOUT))
        wait_for_port(app_port, processes[-1], logs["gunicorn"])
        with logs["nginx"].open("wb") as out:
            processes.append(subprocess.Popen([nginx, "-p", str(tmp), "-c", str(tmp / "nginx.conf")],
                                              stdout=out, stderr=subprocess.STDOUT))
        wait_for_port(web_port, processes[-1], tmp / "error.log")
        yield web_port, tmp / "labels"
    finally:
        for process in reversed(processes):
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def request(port: int, method: str, path: str, *, body: bytes | None = None,
            headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    """Send one request with the path exactly as given; return status, headers and body."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def test_nginx_serves_static_files_with_a_long_cache(site: tuple[int, Path]) -> None:
    port, _labels = site
    status, headers, body = request(port, "GET", "/static/css/tailboard.css")
    assert status == 200
    assert body == (PROJECT_ROOT / "leaderboard/static/css/tailboard.css").read_bytes()
    assert "max-age=2592000" in headers["cache-control"]


def test_nginx_proxies_pages_to_gunicorn(site: tuple[int, Path]) -> None:
    status, headers, _body = request(site[0], "GET", "/")
    assert status == 200
    assert headers["content-type"].startswith("text/html")


@pytest.mark.parametrize("path", [
    "/hidden_labels/phases/1/labels-v1.jsonl", "/static/../hidden_labels/phases/1/labels-v1.jsonl",
    "/static/..%2f..%2fhidden_labels/README.md", "/static/../../hidden_labels/README.md",
    "/phases/1/labels-v1.jsonl", "/labels/phases/1/labels-v1.jsonl", "/instance/tailboard.sqlite3",
    "/data/secret_key", "/files/", "/static/../app.py", "/.git/config",
])
def test_nginx_never_serves_hidden_labels_or_data(site: tuple[int, Path], path: str) -> None:
    status, _headers, body = request(site[0], "GET", path)
    assert status in (400, 404), (status, path)
    assert b"SENTINEL" not in body and b"deploy-test" not in body


def test_nginx_accepts_a_105_megabyte_upload_and_refuses_a_120_megabyte_one(site: tuple[int, Path]) -> None:
    port = site[0]
    status, _headers, _body = request(port, "POST", "/api/v1/phases/1/submissions", body=b"x" * 105_000_000,
                                      headers={"Content-Type": "application/octet-stream"})
    assert status != 413  # reached the app, which refuses it for its own reasons (no token)
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.putrequest("POST", "/api/v1/phases/1/submissions")
        connection.putheader("Content-Length", str(120_000_000))
        connection.endheaders()
        assert connection.getresponse().status == 413
    finally:
        connection.close()
