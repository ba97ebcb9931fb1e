"""The Kubernetes files (hub/z2jh-values.yaml, hub/dask-cluster.yaml, hub/k8s-volumes.yaml), as far as they can be
tested without a cluster: they parse, the role hook gives each role what hub/ gives it on one machine, the paths and
names agree across the files, and, where the charts' schemas are on disk, they follow them.

The schemas do not come with the course: the jupyterhub chart's (values.yaml and values.schema.json, or the source's
values.schema.yaml) are in the chart, `helm pull jupyterhub/jupyterhub --version 4.4.0 --untar`; the DaskCluster CRD is
in the dask-kubernetes package: dask_kubernetes/operator/deployment/helm/dask-kubernetes-operator/crds/daskcluster.yaml.
Point Z2JH_CHART at the chart's folder and DASK_CLUSTER_CRD at the CRD to run those two tests.
"""
from __future__ import annotations

import os
import re
import sys
import types
from pathlib import Path

import pytest
import yaml

from course_lib.layout import REPO

HUB = REPO / "hub"


def _load(name: str) -> list[dict]:
    return list(yaml.safe_load_all((HUB / name).read_text(encoding="utf-8")))


def _values() -> dict:
    return _load("z2jh-values.yaml")[0]


def _course() -> dict:
    return _values()["custom"]["course"]


class _Spawner:
    """What the hook touches of a KubeSpawner: the user, and the traits it sets."""

    def __init__(self, name: str, user_id: int):
        self.user = types.SimpleNamespace(name=name, id=user_id)
        self.environment, self.volumes, self.volume_mounts = {"KEPT": "1"}, [], []
        self.uid = self.notebook_dir = self.working_dir = None


def _hook():
    """hub.extraConfig's pre_spawn_hook, run as z2jh runs extraConfig (``c`` and ``z2jh.get_config`` given)."""
    from traitlets.config import Config

    z2jh = types.ModuleType("z2jh")
    z2jh.get_config = lambda key: {"custom.course": _course()}[key]
    c = Config()
    saved = sys.modules.get("z2jh")
    sys.modules["z2jh"] = z2jh
    try:
        for code in _values()["hub"]["extraConfig"].values():
            exec(compile(code, "hub.extraConfig", "exec"), {"c": c})
    finally:
        sys.modules.pop("z2jh")
        if saved is not None:
            sys.modules["z2jh"] = saved
    return c.KubeSpawner.pre_spawn_hook


def _in_image(path: str) -> Path:
    """A path of the image's repository, as a path of this one."""
    return REPO / Path(path).relative_to(_course()["repository"])


def test_the_kubernetes_files_parse():
    """Do the three files parse, each holding what its comment says?"""
    assert {"hub", "singleuser", "custom"} <= set(_values())
    assert [d["kind"] for d in _load("dask-cluster.yaml")] == ["DaskCluster"]
    assert [d["kind"] for d in _load("k8s-volumes.yaml")] == ["PersistentVolumeClaim"] * 3 + ["Job"]


def test_the_role_hook_gives_each_role_its_config():
    """Does the hook give the instructor hub/instructor and the course folder, and each student hub/student over
    student_jupyter, a uid of their own, and the course's id, exchange, data and preset?"""
    hook, course = _hook(), _course()
    instructor, ada, bo = _Spawner(course["instructors"][0], 1), _Spawner("ada", 2), _Spawner("bo", 3)
    for spawner in (instructor, ada, bo):
        hook(spawner)
    assert len({s.uid for s in (instructor, ada, bo)}) == 3 and min(s.uid for s in (ada, bo)) > course["firstUid"]

    config_path = [_in_image(p) for p in ada.environment["JUPYTER_CONFIG_PATH"].split(os.pathsep)]
    assert config_path == [HUB / "student", REPO / "student_jupyter"]
    assert [_in_image(p) for p in instructor.environment["JUPYTER_CONFIG_PATH"].split(os.pathsep)] == \
        [HUB / "instructor"]
    assert all(path.is_dir() for path in config_path)

    mounts = {m["name"]: m["mountPath"] for m in _values()["singleuser"]["storage"]["extraVolumeMounts"]}
    for spawner in (instructor, ada):
        env = spawner.environment
        assert env["KEPT"] == "1" and env["COURSE_EXCHANGE"] == mounts["nbgrader-exchange"]
        assert env["COURSE_DATA_DIR"] == mounts["course-data"] and env["COURSE_PRESET"] == course["preset"]
        assert env["COURSE_ID"] == course["id"]
    assert instructor.working_dir == instructor.notebook_dir == instructor.environment["COURSE_ROOT"]
    assert [m["mountPath"] for m in instructor.volume_mounts] == [course["courseFolder"]]
    assert ada.volume_mounts == [] and ada.working_dir is None


def test_the_names_agree_with_the_one_machine_hub():
    """Are the course id, the exchange and data paths those of nbgrader_config.py, hub/ and tools/hub_setup.sh?"""
    course = _course()
    config = (REPO / "nbgrader_config.py").read_text()
    assert re.search(rf"""course_id = ["']{re.escape(course['id'])}["']""", config)
    setup = (REPO / "tools" / "hub_setup.sh").read_text()
    assert f"EXCHANGE={course['exchange']} " in setup and f"DATA={course['data']} " in setup
    assert f'"{course["exchange"]}"' in (HUB / "student" / "nbgrader_config.py").read_text()


def test_the_grading_cluster_sees_the_course_folder_where_the_instructor_does():
    """Do the grading workers mount the instructor's course folder and the data at the same paths, run privileged
    and one student at a time, from claims hub/k8s-volumes.yaml makes?"""
    course = _course()
    cluster = _load("dask-cluster.yaml")[0]["spec"]
    claims = {d["metadata"]["name"] for d in _load("k8s-volumes.yaml") if d["kind"] == "PersistentVolumeClaim"}
    for role in ("worker", "scheduler"):
        pod = cluster[role]["spec"]
        container = pod["containers"][0]
        assert container["securityContext"]["privileged"] is True
        mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
        assert mounts == {"course-folder": course["courseFolder"], "course-data": course["data"]}
        assert {v["persistentVolumeClaim"]["claimName"] for v in pod["volumes"]} <= claims
    args = cluster["worker"]["spec"]["containers"][0]["args"]
    assert args[args.index("--nthreads") + 1] == "1"
    singleuser = {v["persistentVolumeClaim"]["claimName"] for v in _values()["singleuser"]["storage"]["extraVolumes"]}
    assert singleuser | {"course-folder"} == claims


def _given(variable: str) -> Path:
    path = os.environ.get(variable)
    if not path or not Path(path).exists():
        pytest.skip(f"{variable} does not name the schema file (see this module's docstring): it is not part of "
                    "the course")
    return Path(path)


def _merged(defaults: dict, values: dict) -> dict:
    """Helm's merge of a values file over the chart's defaults: maps merge key by key, anything else is replaced."""
    merged = dict(defaults)
    for key, value in values.items():
        both_maps = isinstance(value, dict) and isinstance(defaults.get(key), dict)
        merged[key] = _merged(defaults[key], value) if both_maps else value
    return merged


def test_z2jh_values_follow_the_charts_schema():
    """Do the chart's defaults with hub/z2jh-values.yaml over them follow the jupyterhub chart's values schema, as
    `helm install` checks (every key one the chart knows, every value of its type)?"""
    import jsonschema

    chart = _given("Z2JH_CHART")
    schema_file = next(p for p in (chart / "values.schema.json", chart / "values.schema.yaml") if p.is_file())
    schema = yaml.safe_load(schema_file.read_text())  # JSON is YAML
    defaults = yaml.safe_load((chart / "values.yaml").read_text())
    jsonschema.validate(_merged(defaults, _values()), schema)


def _pruned(instance, schema: dict, where: str = "") -> list[str]:
    """The keys of ``instance`` that Kubernetes would drop without a word: not among their object's properties."""
    if schema.get("x-kubernetes-preserve-unknown-fields"):
        return []
    if isinstance(instance, dict) and "properties" in schema:
        known = schema["properties"]
        return [f"{where}.{key}" for key in instance if key not in known] + \
            [p for key, value in instance.items() if key in known for p in _pruned(value, known[key], f"{where}.{key}")]
    if isinstance(instance, list) and isinstance(schema.get("items"), dict):
        return [p for i, item in enumerate(instance) for p in _pruned(item, schema["items"], f"{where}[{i}]")]
    return []


def test_dask_cluster_follows_the_operators_crd():
    """Does hub/dask-cluster.yaml follow the DaskCluster custom resource's schema (a full pod spec for each role),
    with no field Kubernetes would drop?"""
    import jsonschema

    crd = yaml.safe_load(_given("DASK_CLUSTER_CRD").read_text())
    version = next(v for v in crd["spec"]["versions"] if v["name"] == "v1")
    resource = _load("dask-cluster.yaml")[0]
    assert resource["apiVersion"] == f"{crd['spec']['group']}/v1" and resource["kind"] == crd["spec"]["names"]["kind"]
    schema = version["schema"]["openAPIV3Schema"]
    jsonschema.validate({"spec": resource["spec"]}, schema)
    # Kubernetes keeps only the fields a CRD's schema names: a misspelt securityContext would be dropped, silently
    assert _pruned({"spec": resource["spec"]}, schema) == []
