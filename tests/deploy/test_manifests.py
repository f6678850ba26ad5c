"""The deployment files, read as the tools that run them would: the ``ray up`` file through
Ray's own preparation and cluster-config schema (shipped inside the ray package); the KubeRay
manifests field by field (their CRD schemas are not available offline), for what a cluster
needs to run the demo on shared storage. None can run here (no Kubernetes, no other machines)."""

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"


def containers(pod_template: dict) -> list[dict]:
    return pod_template["template"]["spec"]["containers"]


def test_the_ray_up_file_passes_rays_schema_and_uses_the_venv_it_installs():
    from ray.autoscaler._private.util import prepare_config, validate_config

    config = yaml.safe_load((DEPLOY / "ray-cluster.yaml").read_text())
    validate_config(prepare_config(config))  # what `ray up` does before it touches a machine
    setup = " ".join(config["setup_commands"])
    assert "openjdk-17-jre-headless" in setup and "~/tidal-venv/bin/pip install" in setup
    assert "[s3]" in setup
    for command in config["head_start_ray_commands"] + config["worker_start_ray_commands"]:
        assert command.startswith("~/tidal-venv/bin/ray "), command  # Ray lives only there
    assert {".venv", ".git"} <= set(config["rsync_exclude"])  # never upload the local venv


def test_the_image_leaves_the_local_venv_out():
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert ".venv" in ignored and ".git" in ignored
    assert '"/home/ray/tidal[s3]"' in (DEPLOY / "Dockerfile").read_text()


def test_kuberay_manifests_run_the_demo_on_shared_storage():
    cluster = yaml.safe_load((DEPLOY / "kuberay" / "raycluster.yaml").read_text())
    job = yaml.safe_load((DEPLOY / "kuberay" / "rayjob.yaml").read_text())
    assert (cluster["apiVersion"], cluster["kind"]) == ("ray.io/v1", "RayCluster")
    assert (job["apiVersion"], job["kind"]) == ("ray.io/v1", "RayJob")
    entrypoint = job["spec"]["entrypoint"]
    assert "examples/revenue_by_nation.py" in entrypoint
    for flag in ("--data s3://", "--out s3://", "jobstore.dir=s3://"):
        assert flag in entrypoint  # nothing on a pod's own disk but the shuffle
    assert "/tmp" not in entrypoint
    for spec in (cluster["spec"], job["spec"]["rayClusterSpec"]):
        assert spec["headGroupSpec"]["rayStartParams"]["num-cpus"] == "0"
        groups = [spec["headGroupSpec"], *spec["workerGroupSpecs"]]
        for container in (c for group in groups for c in containers(group)):
            assert container["image"] == "tidal:latest"
            assert container["imagePullPolicy"] == "IfNotPresent"  # a locally built image
            assert {"secretRef": {"name": "tidal-s3"}} in container["envFrom"]


def test_local_cluster_script_starts_a_head_node():
    script = (DEPLOY / "start-local-cluster").read_text()
    assert "ray start --head" in script
    assert (DEPLOY / "start-local-cluster").stat().st_mode & 0o111
