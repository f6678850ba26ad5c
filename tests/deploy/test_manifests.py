"""The deployment files parse and say what they must; they cannot run here (no Kubernetes)."""

from pathlib import Path

import yaml

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def test_kuberay_manifests_are_a_raycluster_and_a_rayjob_running_tidal():
    cluster = yaml.safe_load((DEPLOY / "kuberay" / "raycluster.yaml").read_text())
    job = yaml.safe_load((DEPLOY / "kuberay" / "rayjob.yaml").read_text())
    assert (cluster["apiVersion"], cluster["kind"]) == ("ray.io/v1", "RayCluster")
    assert (job["apiVersion"], job["kind"]) == ("ray.io/v1", "RayJob")
    assert "examples/revenue_by_nation.py" in job["spec"]["entrypoint"]
    images = {c["image"] for c in cluster["spec"]["headGroupSpec"]["template"]["spec"]["containers"]}
    assert images == {"tidal:latest"}


def test_ray_up_cluster_file_installs_java_and_tidal():
    config = yaml.safe_load((DEPLOY / "ray-cluster.yaml").read_text())
    setup = " ".join(config["setup_commands"])
    assert "openjdk-17-jre-headless" in setup and "pip install" in setup
    assert config["provider"]["type"] == "local"


def test_local_cluster_script_starts_a_head_node():
    script = (DEPLOY / "start-local-cluster").read_text()
    assert "ray start --head" in script
    assert (DEPLOY / "start-local-cluster").stat().st_mode & 0o111
