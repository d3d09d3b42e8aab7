"""kvpool.cli.views.manifests: manifests built from recorded resources, strictly schema-checked, written as YAML."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import kubernetes_validate
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kvpool.cli.engine.mock_engine import ProgramRun, RecordedResource, run_program
from kvpool.cli.engine.stack_config import load_stack_config
from kvpool.cli.views import manifests
from kvpool.cli.views.manifests import (
    KubernetesObject,
    KubernetesVersionError,
    ManifestValidationError,
    kubernetes_objects,
    manifest_texts,
    validate_objects,
    write_manifests,
)

PROGRAMS = Path(__file__).parent / "fixtures" / "programs"


def run_fixture(name: str) -> ProgramRun:
    return run_program(PROGRAMS / name, load_stack_config(PROGRAMS / name, "dev"))


@pytest.fixture(scope="module")
def demo_objects() -> list[KubernetesObject]:
    return kubernetes_objects(run_fixture("kv-demo").resources)


VALID_SPEC = {
    "selector": {"matchLabels": {"app": "engine"}},
    "template": {"metadata": {"labels": {"app": "engine"}}, "spec": {"containers": [{"name": "e", "image": "e:1"}]}},
}


def deployment(spec: dict, *, secret_paths=(), unknown_paths=()) -> RecordedResource:
    """A recorded Deployment as the engine delivers it (numbers as floats)."""
    return RecordedResource(
        type="kubernetes:apps/v1:Deployment",
        name="engine",
        urn="urn:pulumi:dev::p::kubernetes:apps/v1:Deployment::engine",
        parent_urn="urn:pulumi:dev::p::pulumi:pulumi:Stack::p-dev",
        custom=True,
        inputs={"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"namespace": "demo"}, "spec": spec},
        secret_paths=secret_paths,
        unknown_paths=unknown_paths,
    )


def test_every_kubernetes_custom_resource_becomes_one_object(demo_objects: list[KubernetesObject]) -> None:
    assert [obj.label for obj in demo_objects] == [
        "Deployment demo/decode-engine",
        "Service demo/decode-engine",
        "ConfigMap demo/engine-settings",
        "Namespace demo",
        "Secret demo/engine-token",
        "InferServiceSet demo/decode-set",
    ]


def test_integral_floats_become_ints_and_nulls_are_dropped() -> None:
    spec = {"replicas": 2.0, "minReadySeconds": None, "template": {"spec": {"terminationGracePeriodSeconds": 1.5}}}
    [obj] = kubernetes_objects([deployment(spec)])

    assert obj.body["spec"] == {"replicas": 2, "template": {"spec": {"terminationGracePeriodSeconds": 1.5}}}
    assert type(obj.body["spec"]["replicas"]) is int


def test_an_object_without_metadata_name_is_named_after_its_logical_name() -> None:
    [obj] = kubernetes_objects([deployment({})])

    assert list(obj.body) == ["apiVersion", "kind", "metadata", "spec"]
    assert obj.body["metadata"] == {"name": "engine", "namespace": "demo"}


def test_valid_objects_pass_and_custom_resources_are_reported_not_schema_checked(
    demo_objects: list[KubernetesObject],
) -> None:
    report = validate_objects(demo_objects, "1.30")

    assert report.kubernetes_version == "1.30"
    assert report.validated == [
        "Deployment demo/decode-engine",
        "Service demo/decode-engine",
        "ConfigMap demo/engine-settings",
        "Namespace demo",
        "Secret demo/engine-token",
    ]
    assert report.not_schema_checked == [
        "InferServiceSet demo/decode-set (mindcluster.huawei.com/v1): no schema bundled for this kind"
    ]


def test_every_invalid_object_is_reported_with_path_reason_and_version() -> None:
    objects = kubernetes_objects(run_fixture("bad-manifest-field").resources)

    with pytest.raises(ManifestValidationError) as raised:
        validate_objects(objects, "1.30")
    assert raised.value.problems == [
        "Deployment demo/engine: $.spec.template.spec.containers[0]: Additional properties are not allowed "
        "('imagePullPolcy' was unexpected) (Kubernetes 1.30)",
        "Service demo/engine: $.spec.ports[0].port: 'eighty' is not of type 'integer' (Kubernetes 1.30)",
    ]
    assert str(raised.value).splitlines()[0] == "manifests: 2 problems (strict schema and API-server checks)"


def test_a_secret_value_is_not_quoted_in_a_validation_error() -> None:
    secret_replicas = deployment({**VALID_SPEC, "replicas": "hunter2"}, secret_paths=(("spec", "replicas"),))
    objects = kubernetes_objects([secret_replicas])

    with pytest.raises(ManifestValidationError) as raised:
        validate_objects(objects, "1.30")
    assert raised.value.problems == [
        "Deployment demo/engine: $.spec.replicas: '[secret]' is not of type 'integer', 'null' (Kubernetes 1.30)"
    ]


def test_values_unknown_in_a_preview_are_left_out_of_the_schema_check() -> None:
    unknown_replicas = deployment({**VALID_SPEC, "replicas": "[unknown]"}, unknown_paths=(("spec", "replicas"),))
    objects = kubernetes_objects([unknown_replicas])

    assert validate_objects(objects, "1.30").validated == ["Deployment demo/engine"]


def test_the_newest_schema_not_newer_than_the_requested_version_is_used(demo_objects: list[KubernetesObject]) -> None:
    assert validate_objects(demo_objects, "1.30.4").kubernetes_version == "1.30"


@pytest.mark.parametrize("version", ["1.9", "1.24", "thirty"])
def test_a_version_without_a_bundled_schema_is_an_input_error(version: str) -> None:
    with pytest.raises(KubernetesVersionError) as raised:
        validate_objects([], version)
    assert str(raised.value) == (
        f"no Kubernetes schema for version '{version}': kubernetes-validate 1.37.0 has 1.25 to 1.37"
    )


def test_two_objects_writing_the_same_file_are_an_error() -> None:
    first = deployment(VALID_SPEC)
    in_a_component = replace(first, urn="urn:pulumi:dev::p::p:index:Pool$kubernetes:apps/v1:Deployment::engine")
    objects = kubernetes_objects([first, in_a_component])

    with pytest.raises(ManifestValidationError, match=r"both render to manifests/deployment-demo-engine.yaml"):
        validate_objects(objects, "1.30")


def test_one_yaml_file_per_object_in_kubernetes_key_order(demo_objects: list[KubernetesObject], tmp_path: Path) -> None:
    written = write_manifests(manifest_texts(demo_objects), tmp_path)

    assert sorted(path.name for path in written) == [
        "configmap-demo-engine-settings.yaml",
        "deployment-demo-decode-engine.yaml",
        "inferserviceset-demo-decode-set.yaml",
        "namespace-_cluster-demo.yaml",
        "secret-demo-engine-token.yaml",
        "service-demo-decode-engine.yaml",
    ]
    assert (tmp_path / "deployment-demo-decode-engine.yaml").read_text() == (
        "apiVersion: apps/v1\n"
        "kind: Deployment\n"
        "metadata:\n"
        "  name: decode-engine\n"
        "  namespace: demo\n"
        "spec:\n"
        "  replicas: 2\n"
        "  selector:\n"
        "    matchLabels:\n"
        "      app: decode\n"
        "  template:\n"
        "    metadata:\n"
        "      labels:\n"
        "        app: decode\n"
        "    spec:\n"
        "      containers:\n"
        "      - image: registry.local/engine:1.4.2\n"
        "        name: engine\n"
    )


def test_secret_values_are_written_masked(demo_objects: list[KubernetesObject], tmp_path: Path) -> None:
    write_manifests(manifest_texts(demo_objects), tmp_path)
    written = "".join(path.read_text() for path in tmp_path.iterdir())

    assert yaml.safe_load((tmp_path / "secret-demo-engine-token.yaml").read_text())["stringData"] == {
        "salt": "[secret]",
        "token": "[secret]",
    }
    assert "s3cr3t-salt" not in written


def test_yaml_files_from_an_earlier_run_are_removed(demo_objects: list[KubernetesObject], tmp_path: Path) -> None:
    (tmp_path / "deployment-demo-old.yaml").write_text("stale\n")
    (tmp_path / "notes.txt").write_text("not a manifest\n")

    write_manifests(manifest_texts(demo_objects), tmp_path)

    assert not (tmp_path / "deployment-demo-old.yaml").exists()
    assert (tmp_path / "notes.txt").exists()


def test_multi_line_strings_are_written_as_blocks_and_read_back_unchanged(tmp_path: Path) -> None:
    conf = "key.a = 1\nkey.b = tcp://host:50088\n"
    trailing = "ends with a space \nsecond\n"  # a block cannot hold trailing spaces: stays quoted
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a.conf": conf, "b": trailing}}
    [path] = write_manifests(manifest_texts([KubernetesObject("urn:c", body, (), ())]), tmp_path)
    text = path.read_text()
    assert "  a.conf: |\n    key.a = 1\n    key.b = tcp://host:50088\n" in text
    assert yaml.safe_load(text)["data"] == {"a.conf": conf, "b": trailing}


def test_service_set_roles_are_checked_as_deployments_and_services() -> None:
    deployment_spec = {
        "selector": {"matchLabels": {"app": "p"}},
        "template": {"metadata": {"labels": {"app": "p"}}, "spec": {"containers": [{"name": "c", "image": "i", "imagePullPolcy": "x"}]}},
    }
    body = {
        "apiVersion": "mindcluster.huawei.com/v1", "kind": "InferServiceSet", "metadata": {"name": "vllm", "namespace": "ns"},
        "spec": {"replicas": 1, "template": {"roles": [{
            "name": "prefill", "replicas": 2, "workload": {"apiVersion": "apps/v1", "kind": "Deployment"},
            "services": [{"name": "s", "spec": {"ports": [{"port": "x"}]}}], "spec": deployment_spec,
        }]}},
    }
    with pytest.raises(ManifestValidationError) as caught:
        validate_objects([KubernetesObject("urn:iss", body, (), ())], "1.30")
    assert caught.value.problems == [
        "InferServiceSet ns/vllm: $.spec.template.roles[0].spec.template.spec.containers[0]: Additional properties "
        "are not allowed ('imagePullPolcy' was unexpected) (Kubernetes 1.30)",
        "InferServiceSet ns/vllm: $.spec.template.roles[0].services[0].spec.ports[0].port: 'x' is not of type "
        "'integer' (Kubernetes 1.30)",
    ]


def _python_emitter_text(document: dict) -> str:
    dumper = type("PythonEmitter", (yaml.SafeDumper,), {})
    dumper.add_representer(str, manifests._represent_text)
    return yaml.dump(document, Dumper=dumper, sort_keys=False, default_flow_style=False, allow_unicode=True)


_TEXT = st.one_of(
    st.text(max_size=300),
    st.text(alphabet=list("ab :#-|>'\"{}[],&*!%@`\n\t") + ["é", "\u2028", "\x85"], max_size=300),
)
_DOCUMENTS = st.recursive(
    st.one_of(_TEXT, st.integers(), st.floats(allow_nan=False), st.booleans(), st.none()),
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(_TEXT, children, max_size=4)),
    max_leaves=12,
)


@settings(max_examples=400, deadline=None)
@given(_DOCUMENTS)
def test_manifest_text_is_what_the_python_emitter_writes(value: object) -> None:
    # libyaml writes the files where it writes the same text; everything else goes through the Python emitter.
    document = {"apiVersion": "v1", "kind": "ConfigMap", "data": value}
    assert manifests.manifest_text(document) == _python_emitter_text(document)


def test_the_compiled_validators_agree_with_kubernetes_validate(demo_objects: list[KubernetesObject]) -> None:
    bad = kubernetes_objects(run_fixture("bad-manifest-field").resources)
    for obj in [*demo_objects, *bad]:
        outcomes = []
        for validate in (lambda body: kubernetes_validate.validate(body, "1.30", strict=True),
                         lambda body: manifests._validate_strictly(body, "1.30")):
            try:
                validate(obj.body)
                outcomes.append(None)
            except kubernetes_validate.ValidationError as error:
                outcomes.append((error.message, tuple(error.path), error.version))
            except kubernetes_validate.SchemaNotFoundError as error:
                outcomes.append(error.message)
        assert outcomes[0] == outcomes[1], obj.label
