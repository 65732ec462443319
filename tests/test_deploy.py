"""The Kubernetes manifests keep the load nodes' door closed (issue 62): fio's server runs
any job file that reaches its port, so only the controller may reach it — no host network
(or a host network with a firewall the manifest states), a NetworkPolicy that lets the
controller's pods alone reach the fio port — and the server runs without root, on a
read-only root file system, with only the data volume writable. Read from the YAML."""

from typing import Any

import yaml

from tests.conftest import REPO

DEPLOY = REPO / "deploy"
FIREWALL = "fslab/firewall"  # the annotation a host-network server must carry: its rule


def documents() -> list[dict[str, Any]]:
    found = []
    for path in sorted(DEPLOY.glob("*.yaml")):
        found += [doc for doc in yaml.safe_load_all(path.read_text()) if doc]
    return found


def of_kind(kind: str) -> list[dict[str, Any]]:
    return [doc for doc in documents() if doc["kind"] == kind]


def servers() -> list[dict[str, Any]]:
    """The workloads that run fio's server (its --server flag in the command line)."""
    found = []
    for doc in of_kind("DaemonSet") + of_kind("Deployment") + of_kind("StatefulSet"):
        for container in doc["spec"]["template"]["spec"]["containers"]:
            words = [*container.get("command", []), *container.get("args", [])]
            if any("--server" in word for word in words):
                found.append(doc)
    return found


def fio_port(doc: dict[str, Any]) -> int:
    (container,) = doc["spec"]["template"]["spec"]["containers"]
    (port,) = [p["containerPort"] for p in container["ports"]]
    words = " ".join([*container.get("command", []), *container.get("args", [])])
    assert f",{port}" in words, words  # the port the server listens on is the one declared
    return port


def selects(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(key) == value for key, value in selector.items())


def test_the_fio_servers_are_reached_by_the_controller_alone():
    (server,) = servers()
    pod = server["spec"]["template"]
    labels, port = pod["metadata"]["labels"], fio_port(server)
    host_network = pod["spec"].get("hostNetwork", False)
    assert not host_network or FIREWALL in pod["metadata"].get("annotations", {}), \
        "a host-network fio server must state the firewall that closes its port"
    assert all("hostPort" not in p for c in pod["spec"]["containers"] for p in c["ports"])
    controllers = [doc for doc in of_kind("Job") if "fslab run" in yaml.safe_dump(doc)]
    assert controllers, "the controller Job is in deploy/"
    controller_labels = controllers[0]["spec"]["template"]["metadata"]["labels"]
    policies = [p for p in of_kind("NetworkPolicy")
                if selects(p["spec"]["podSelector"]["matchLabels"], labels)]
    assert policies, "a NetworkPolicy selects the fio servers"
    rules = [rule for p in policies if "Ingress" in p["spec"]["policyTypes"]
             for rule in p["spec"].get("ingress", [])]
    assert rules  # Ingress is governed: what no rule allows is refused
    for rule in rules:
        assert rule.get("from"), "a rule without `from` would let every pod in"
        for source in rule["from"]:
            assert set(source) == {"podSelector"}, source  # no ipBlock, no namespace-wide
            assert selects(source["podSelector"]["matchLabels"], controller_labels)
        assert [(p["protocol"], p["port"]) for p in rule["ports"]] == [("TCP", port)]
    (service,) = [s for s in of_kind("Service") if selects(s["spec"]["selector"], labels)]
    assert service["spec"]["clusterIP"] == "None"  # each server by itself, none balanced
    assert [p["port"] for p in service["spec"]["ports"]] == [port]
    script = yaml.safe_dump(controllers[0])
    assert "podIP" in script and "hostIP" not in script  # the pods' own addresses


def test_the_fio_servers_run_without_root_on_a_read_only_root():
    (server,) = servers()
    spec = server["spec"]["template"]["spec"]
    pod_context = spec.get("securityContext", {})
    assert spec.get("automountServiceAccountToken") is False  # a job file reads no token
    for container in spec["containers"]:
        context = {**pod_context, **container.get("securityContext", {})}
        assert context.get("runAsNonRoot") is True and context.get("runAsUser", 0) != 0
        assert context.get("readOnlyRootFilesystem") is True
        assert context.get("allowPrivilegeEscalation") is False
        assert context.get("capabilities", {}).get("drop") == ["ALL"]
        assert "privileged" not in context or context["privileged"] is False
        writable = [m["name"] for m in container.get("volumeMounts", [])
                    if not m.get("readOnly", False)]
        assert writable == ["data"], writable  # the data volume, nothing else
        image = container["image"]
        dockerfile = (DEPLOY / "fio-server.Dockerfile").read_text()
        assert "fslab-fio-server" in image and "USER 65534" in dockerfile
        assert "apt-get" not in " ".join(container.get("args", []))  # nothing installed at start


def test_the_controller_may_only_list_pods():
    roles = of_kind("Role")
    assert [rule["verbs"] for role in roles for rule in role["rules"]] == [["list"]]
    assert not of_kind("ClusterRole") and not of_kind("ClusterRoleBinding")
