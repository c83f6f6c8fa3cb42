"""docs/deploy-kubernetes.md held to the code: every YAML block parses, every variable it
sets is one the service reads, every command, path and port exists, the probes answer as
the page says, and its timings sit above the deadlines they wait for (read from the
settings and from config/gunicorn.conf.py, never copied here). No cluster is needed."""

import ast
import re
import runpy
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.conf import settings
from django.core.management import get_commands
from django.urls import resolve

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "deploy-kubernetes.md"
TEXT = DOC.read_text(encoding="utf-8")

# A variable as the page writes it in prose: `NAME` or `NAME=value`.
PROSE_VARIABLE = re.compile(r"`([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)(?:=[^`]*)?`")
# Not a setting of the service: prometheus-client reads it at import, and setting it in a
# test would put this process's metrics in a directory.
KEPT_OUT_OF_THE_ENVIRONMENT = {"PROMETHEUS_MULTIPROC_DIR"}


def blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", TEXT, flags=re.S | re.M)


def documents() -> list[dict[str, Any]]:
    return [doc for block in blocks("yaml") for doc in yaml.safe_load_all(block) if doc]


def of_kind(kind: str) -> list[dict[str, Any]]:
    return [doc for doc in documents() if doc.get("kind") == kind]


def pod_specs() -> dict[str, dict[str, Any]]:
    """The pod template of each Deployment and Job, by the workload's name."""
    return {
        doc["metadata"]["name"]: doc["spec"]["template"]["spec"]
        for doc in documents()
        if doc.get("kind") in ("Deployment", "Job")
    }


def containers(pod: dict[str, Any]) -> list[dict[str, Any]]:
    return pod.get("initContainers", []) + pod["containers"]


def runs_gunicorn(container: dict[str, Any]) -> bool:
    return container.get("command", [""])[0] == "gunicorn"


def runs_command(container: dict[str, Any], name: str) -> bool:
    return container.get("command", [])[:3] == ["python", "manage.py", name]


def option(command: list[str], flag: str) -> str:
    return command[command.index(flag) + 1]


def variables_the_service_reads() -> set[str]:
    """Every variable config/ reads: the first argument of an env_* reader (and of
    gunicorn.conf.py's _seconds), of os.environ.get / os.getenv, or an os.environ[...]
    key; a module-level string constant stands for its value."""
    names: set[str] = set()
    for path in (ROOT / "config").glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        constants = {
            target.id: node.value.value
            for node in tree.body
            if isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
            for target in node.targets
            if isinstance(target, ast.Name)
        }

        for node in ast.walk(tree):
            key = None
            if isinstance(node, ast.Call) and node.args:
                func = ast.unparse(node.func)
                if func.startswith("env_") or func in ("_seconds", "os.environ.get", "os.getenv"):
                    key = string_of(node.args[0], constants)
            elif isinstance(node, ast.Subscript) and ast.unparse(node.value) == "os.environ":
                key = string_of(node.slice, constants)
            if key:
                names.add(key)
    return names


def string_of(node: ast.expr, constants: dict[str, str]) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return constants.get(node.id)
    return None


def environment_of(container: dict[str, Any]) -> dict[str, str]:
    """What a container gets: the ConfigMaps and Secrets it names in envFrom, then env."""
    objects = {
        (doc["kind"], doc["metadata"]["name"]): {**doc.get("data", {}), **doc.get("stringData", {})}
        for doc in documents()
        if doc.get("kind") in ("ConfigMap", "Secret")
    }
    values: dict[str, str] = {}
    for source in container.get("envFrom", []):
        if "configMapRef" in source:
            values.update(objects[("ConfigMap", source["configMapRef"]["name"])])
        else:
            values.update(objects[("Secret", source["secretRef"]["name"])])
    values.update({item["name"]: item["value"] for item in container.get("env", [])})
    return values


def gunicorn_settings(monkeypatch: pytest.MonkeyPatch, environment: dict[str, str]) -> dict:
    """config/gunicorn.conf.py as gunicorn reads it, in the container's environment alone
    (what this shell sets is the page's defaults' business, not the page's)."""
    for name in variables_the_service_reads():
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        if name not in KEPT_OUT_OF_THE_ENVIRONMENT:
            monkeypatch.setenv(name, str(value))
    return runpy.run_path(str(ROOT / "config" / "gunicorn.conf.py"))


def prestop_seconds(container: dict[str, Any]) -> int:
    hook = container.get("lifecycle", {}).get("preStop", {})
    if "sleep" in hook:
        return int(hook["sleep"]["seconds"])
    command = hook.get("exec", {}).get("command", [])
    return int(command[1]) if command[:1] == ["sleep"] else 0


def cache_socket_timeout() -> int:
    """The Redis cache's socket timeout, as config/settings.py sets it (only with REDIS_URL,
    which the tests run without)."""
    tree = ast.parse((ROOT / "config" / "settings.py").read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if isinstance(key, ast.Constant) and key.value == "socket_timeout":
                    return ast.literal_eval(value)
    raise AssertionError("config/settings.py sets no socket_timeout for the cache")


def seconds(duration: str) -> float:
    number, unit = re.fullmatch(r"(\d+)(ms|s|m)", duration).groups()
    return int(number) * {"ms": 0.001, "s": 1, "m": 60}[unit]


def gunicorn_containers() -> list[tuple[dict, dict]]:
    return [(pod, c) for pod in pod_specs().values() for c in pod["containers"] if runs_gunicorn(c)]


def probes() -> list[tuple[str, dict, dict]]:
    return [
        (kind, probe, container)
        for _, container in gunicorn_containers()
        for kind in ("startupProbe", "livenessProbe", "readinessProbe")
        if (probe := container.get(kind))
    ]


def scrape_job() -> dict[str, Any]:
    (config,) = [doc for doc in documents() if "scrape_configs" in doc]
    (job,) = config["scrape_configs"]
    return job


# --- The page parses, and names what exists -----------------------------------------------


def test_every_yaml_block_of_the_page_parses_and_holds_the_whole_example() -> None:
    assert len(blocks("yaml")) >= 5
    kinds = {doc.get("kind") for doc in documents()}

    assert {"Secret", "ConfigMap", "Job", "Deployment", "Service", "Ingress"} <= kinds
    assert set(pod_specs()) >= {"diagnosis-web", "diagnosis-worker"}


def test_every_variable_the_page_sets_or_names_is_one_the_service_reads() -> None:
    read = variables_the_service_reads()
    assert {"SECRET_KEY", "PROBE_DB_DEADLINE_SECONDS", "GUNICORN_ACCESS_LOG"} <= read
    in_yaml = {
        name for pod in pod_specs().values() for c in containers(pod) for name in environment_of(c)
    }
    in_prose = set(PROSE_VARIABLE.findall(TEXT))

    assert in_yaml - read == set()
    assert in_prose - read == set()
    assert {"SECRET_KEY", "DATABASE_URL", "REDIS_URL", "Q_REDIS_URL", "METRICS_BEARER_TOKEN"} <= {
        key for secret in of_kind("Secret") for key in secret["stringData"]
    }


def test_every_manage_py_command_the_page_runs_exists() -> None:
    commands = {
        c["command"][2]
        for pod in pod_specs().values()
        for c in containers(pod)
        if c.get("command", [])[:2] == ["python", "manage.py"]
    }

    assert commands == {"migrate", "collectstatic", "qcluster"}
    assert commands <= set(get_commands())


def test_gunicorn_runs_with_the_projects_config_file_and_application() -> None:
    for _, container in gunicorn_containers():
        command = container["command"]
        assert (ROOT / option(command, "-c")).is_file()
        assert "config.wsgi" in command and (ROOT / "config" / "wsgi.py").is_file()


def test_the_alert_rules_and_dashboard_the_page_names_exist_and_are_what_prometheus_loads() -> None:
    named = set(re.findall(r"config/grafana/[\w.-]+", TEXT))
    (rule_file,) = scrape_job_rule_files()

    assert named == {"config/grafana/alerts.yml", "config/grafana/diagnosis-dashboard.json"}
    assert all((ROOT / path).is_file() for path in named)
    assert yaml.safe_load((ROOT / "config/grafana/alerts.yml").read_text())["groups"]
    assert f"--from-file={Path(rule_file).name}=config/grafana/alerts.yml" in TEXT


def scrape_job_rule_files() -> list[str]:
    (config,) = [doc for doc in documents() if "scrape_configs" in doc]
    return config["rule_files"]


# --- Ports, volumes and static files ------------------------------------------------------


def test_every_probe_and_the_scrape_reach_the_port_gunicorn_binds() -> None:
    for _, container in gunicorn_containers():
        port = int(option(container["command"], "--bind").rsplit(":", 1)[1])
        (named,) = container["ports"]
        assert named["containerPort"] == port
        for kind in ("startupProbe", "livenessProbe", "readinessProbe"):
            if kind in container:
                assert container[kind]["httpGet"]["port"] == named["name"]
        keep = scrape_job()["relabel_configs"][0]
        assert keep["action"] == "keep"
        assert keep["regex"].split(";")[1] == named["name"]


def test_the_metrics_directory_is_an_empty_dir_mounted_where_the_variable_points() -> None:
    for pod in pod_specs().values():
        empty_dirs = {v["name"] for v in pod.get("volumes", []) if "emptyDir" in v}
        for container in pod["containers"]:
            directory = environment_of(container).get("PROMETHEUS_MULTIPROC_DIR")
            if directory:
                mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
                assert mounts[directory] in empty_dirs


def test_static_files_are_collected_where_nginx_serves_them_under_static_url() -> None:
    pod = pod_specs()["diagnosis-web"]
    (collect,) = [c for c in pod["initContainers"] if runs_command(c, "collectstatic")]
    (nginx,) = [c for c in pod["containers"] if c["image"].startswith("nginx:")]
    url = "/" + settings.STATIC_URL.strip("/")
    static_root = environment_of(collect)["STATIC_ROOT"]
    (collected,) = [m for m in collect["volumeMounts"] if m["mountPath"] == static_root]
    (served,) = nginx["volumeMounts"]
    (ingress,) = of_kind("Ingress")
    paths = [p["path"] for rule in ingress["spec"]["rules"] for p in rule["http"]["paths"]]

    assert served["name"] == collected["name"]
    assert served["mountPath"] == "/usr/share/nginx/html" + url
    assert url + "/" in paths


# --- The probes and the scrape answer as the page says -----------------------------------


@pytest.mark.django_db
def test_the_probe_paths_are_routes_that_answer_200_over_plain_http_by_the_pods_address(
    client, settings
) -> None:
    settings.SECURE_SSL_REDIRECT = True
    settings.ALLOWED_HOSTS = ["diagnosis.example.com"]
    paths = {probe["httpGet"]["path"] for _, probe, _ in probes()}

    assert paths == {"/healthz", "/readyz"}
    assert {resolve(path).url_name for path in paths} == {"healthz", "readyz"}
    for path in sorted(paths):
        response = client.get(path, HTTP_HOST="10.0.3.17:8000")
        assert response.status_code == 200, (path, response.content)


@pytest.mark.django_db
def test_the_scrape_job_reads_metrics_over_plain_http_with_the_bearer_token(
    client, settings
) -> None:
    settings.SECURE_SSL_REDIRECT = True
    settings.ALLOWED_HOSTS = ["diagnosis.example.com"]
    settings.METRICS_BEARER_TOKEN = "a-scrape-token"
    job = scrape_job()
    pod_address = {"REMOTE_ADDR": "10.0.7.9", "HTTP_HOST": "10.0.3.17:8000"}

    scraped = client.get(
        job["metrics_path"], HTTP_AUTHORIZATION="Bearer a-scrape-token", **pod_address
    )
    without = client.get(job["metrics_path"], **pod_address)

    assert (job["scheme"], job["authorization"]["type"]) == ("http", "Bearer")
    assert job["authorization"]["credentials_file"].startswith("/")
    assert scraped.status_code == 200
    assert without.status_code == 401


# --- Timings above the deadlines they wait for --------------------------------------------


def test_the_readiness_probe_waits_longer_than_the_probes_database_deadline() -> None:
    (readiness,) = [probe for kind, probe, _ in probes() if kind == "readinessProbe"]

    assert readiness["timeoutSeconds"] > settings.PROBE_DB_DEADLINE_SECONDS


def test_the_scrape_waits_longer_than_the_probes_database_deadline() -> None:
    job = scrape_job()

    assert seconds(job["scrape_timeout"]) > settings.PROBE_DB_DEADLINE_SECONDS
    assert seconds(job["scrape_timeout"]) <= seconds(job["scrape_interval"])


def test_liveness_outlasts_a_hanging_cache_and_gunicorns_own_worker_timeout(monkeypatch) -> None:
    ((_, liveness, container),) = [p for p in probes() if p[0] == "livenessProbe"]
    gunicorn = gunicorn_settings(monkeypatch, environment_of(container))

    assert liveness["timeoutSeconds"] > cache_socket_timeout()
    assert liveness["periodSeconds"] * liveness["failureThreshold"] > gunicorn["timeout"]


def test_every_pod_running_gunicorn_is_given_more_than_prestop_and_graceful_timeout(
    monkeypatch,
) -> None:
    checked = 0
    for pod, container in gunicorn_containers():
        with monkeypatch.context() as patch:
            graceful = gunicorn_settings(patch, environment_of(container))["graceful_timeout"]
        assert pod["terminationGracePeriodSeconds"] > prestop_seconds(container) + graceful
        checked += 1
    assert checked == 2  # the web pod's gunicorn and the worker pod's metrics


def test_the_web_pod_sleeps_in_prestop_before_sigterm() -> None:
    pod = pod_specs()["diagnosis-web"]

    assert all(prestop_seconds(c) >= 5 for c in pod["containers"])


def test_the_worker_pod_is_given_more_than_a_tasks_timeout_to_stop() -> None:
    pod = pod_specs()["diagnosis-worker"]
    (qcluster,) = [c for c in pod["containers"] if runs_command(c, "qcluster")]
    timeout = int(environment_of(qcluster).get("Q_TIMEOUT", settings.Q_CLUSTER["timeout"]))

    assert "livenessProbe" not in qcluster and "readinessProbe" not in qcluster
    assert pod["terminationGracePeriodSeconds"] > timeout


def test_migrate_runs_as_one_job_and_in_no_pods_init_containers() -> None:
    (job,) = of_kind("Job")
    pod = job["spec"]["template"]["spec"]

    assert [runs_command(c, "migrate") for c in pod["containers"]] == [True]
    assert job["spec"].get("parallelism", 1) == 1
    assert not any(
        runs_command(c, "migrate")
        for deployment in of_kind("Deployment")
        for c in containers(deployment["spec"]["template"]["spec"])
    )
