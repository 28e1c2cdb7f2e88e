"""true/false where a file gives a number is refused, naming the field: pydantic's lax mode
read ``sizing_price_usd: true`` as a $1 server (the cheapest of every fleet), a catalog's
``price: true`` as $1 and ``threads_per_core: true`` as one thread per core."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from sizing.catalog import load_catalog
from sizing.catalog import models as catalog_models
from sizing.errors import InputError
from sizing.filemodel import _wants_a_number
from sizing.inventory import load_inventory
from sizing.inventory import model as inventory_model
from sizing.inventory.model import CpuSpec, HostVars
from sizing.profiles import Profile, load_file

CLIENT = "    clients:\n      hosts:\n        load: {ansible_connection: local}\n"


def _inventory(tmp_path: Path, server_vars: str) -> Path:
    path = tmp_path / "inv.yml"
    path.write_text(
        "all:\n  children:\n    servers:\n      hosts:\n        web:\n"
        "          ansible_connection: local\n"
        f"          {server_vars}\n" + CLIENT
    )
    return path


@pytest.mark.parametrize(
    ("variables", "expected"),
    [
        ("sizing_price_usd: true", "host web: sizing_price_usd: true/false is not a number"),
        ("sizing_nic_gbps: false", "host web: sizing_nic_gbps: true/false is not a number"),
        (
            "sizing_cpu: {cores_per_socket: 8, threads_per_core: true}",
            "host web: sizing_cpu.threads_per_core: true/false is not a number",
        ),
        (
            "sizing_cpu: {cores_per_socket: true}",
            "host web: sizing_cpu.cores_per_socket: true/false is not a number",
        ),
        (
            "sizing_nginx_worker_connections: true",
            "host web: sizing_nginx_worker_connections: true",
        ),
    ],
)
def test_an_inventory_number_given_as_true_is_refused(
    tmp_path: Path, variables: str, expected: str
) -> None:
    path = _inventory(tmp_path, variables)
    with pytest.raises(InputError) as got:
        load_inventory(path)
    assert str(got.value).startswith(f"{path}: {expected}")


def test_a_boolean_stays_a_boolean(tmp_path: Path) -> None:
    inv = load_inventory(_inventory(tmp_path, "sizing_steer_irqs: true"))
    assert inv.hosts["web"].sizing.steer_irqs is True


@pytest.mark.parametrize(
    ("server", "expected"),
    [
        ("{name: A, cores: 8, price: true}", "servers.0.price: true/false is not a number"),
        ("{name: A, cores: true, price: 100}", "servers.0.cores: true/false is not a number"),
        ("{name: A, cores: 8, price: 9, sockets: true}", "servers.0.sockets: true/false is not"),
    ],
)
def test_a_catalog_number_given_as_true_is_refused(
    tmp_path: Path, server: str, expected: str
) -> None:
    path = tmp_path / "c.yml"
    path.write_text(f"kind: catalog\nname: t\nservers:\n  - {server}\n")
    with pytest.raises(InputError) as got:
        load_catalog(path)
    assert expected in str(got.value)


def test_a_profile_number_given_as_true_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "p.yml"
    path.write_text(
        "kind: workload\nname: p\ndescription: d\nmetric: requests_per_second\nunit: rps\n"
        "scheme: http\nconnections: true\n"
    )
    with pytest.raises(InputError, match="connections: true/false is not a number"):
        load_file(path)


def _numeric(model: type[BaseModel]) -> list[str]:
    return [n for n, f in model.model_fields.items() if _wants_a_number(f.annotation)]


def _models() -> list[type[BaseModel]]:
    """The models of the files users write that have a number field."""
    found: list[type[BaseModel]] = [Profile]
    for module in (inventory_model, catalog_models):
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if issubclass(obj, BaseModel) and obj.__module__ == module.__name__:
                found.append(obj)
    return [m for m in found if _numeric(m)]


def test_the_models_are_found() -> None:
    names = {m.__name__ for m in _models()}
    assert {"HostVars", "CpuSpec", "Profile", "ServerModel", "LicenceModel"} <= names


@pytest.mark.parametrize("model", _models(), ids=lambda m: m.__name__)
def test_every_file_model_with_a_number_refuses_true(model: type[BaseModel]) -> None:
    numeric = _numeric(model)
    validators = model.__pydantic_decorators__.field_validators.values()
    assert any("*" in v.info.fields and v.info.mode == "before" for v in validators), (
        f"{model.__name__}: {numeric} would read true as 1"
    )


NUMERIC_HOST_FIELDS = [n for n, f in HostVars.model_fields.items() if _wants_a_number(f.annotation)]


@given(field=st.sampled_from(NUMERIC_HOST_FIELDS), value=st.booleans())
def test_any_number_field_of_a_host_refuses_a_boolean(field: str, value: bool) -> None:
    with pytest.raises(ValidationError) as got:
        HostVars.model_validate({field: value})
    assert any(e["loc"] == (field,) for e in got.value.errors())


@given(field=st.sampled_from(["sockets", "cores_per_socket", "threads_per_core"]))
def test_any_cpu_count_refuses_a_boolean(field: str) -> None:
    data: dict[str, object] = {"cores_per_socket": 4, field: True}
    with pytest.raises(ValidationError, match="true/false is not a number"):
        CpuSpec.model_validate(data)
