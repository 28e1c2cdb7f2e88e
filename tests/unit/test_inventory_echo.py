"""An inventory line Ansible cannot read is refused without its text: the INI plugin ends
its messages with the line (``Expected key=value, got: ansible_become_pass s3cr3t``,
``Error parsing host definition '<line>'``), and a line may be a password. The refusal keeps
the file and what was wrong.

The inventories name documentation addresses only; each read runs in a child Python
without a network (``unshare -n``), as every inventory test does.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sizing.inventory.sources import without_line_text
from tests.offline import check_offline

SECRET = "PLANTED-s3cr3t"

# Each INI text makes the INI plugin quote a line (or a word of it) that holds the secret.
BAD_INI = {
    "group-vars-without-equals": f"[servers]\ns1\n[clients]\nc1\n[servers:vars]\npw {SECRET}\n",
    "host-var-without-equals": f"[servers]\ns1 ansible_host=192.0.2.1 pw {SECRET}\n",
    "unclosed-quote": f'[servers]\ns1 ansible_host=192.0.2.1 ansible_password="{SECRET}\n',
    "children-not-a-group": f"[servers:children]\nweb {SECRET}\n",
    "two-words": f"s1 {SECRET}\n",
}

_READ = """
import json, sys
from sizing.errors import InputError
from sizing.inventory import load_inventory
out = {}
for path in sys.argv[1:]:
    try:
        load_inventory(path)
        out[path] = None
    except InputError as exc:
        out[path] = str(exc)
print(json.dumps(out))
"""


def test_a_line_ansible_cannot_read_is_refused_without_its_text(tmp_path: Path) -> None:
    paths = {}
    for name, text in BAD_INI.items():
        paths[name] = tmp_path / f"{name}.ini"
        paths[name].write_text(text)
    got = json.loads(check_offline(_READ, *map(str, paths.values())))
    for name, path in paths.items():
        message = got[str(path)]
        assert message is not None, name
        assert message.startswith(f"{path}: Ansible cannot read it: "), (name, message)
        assert SECRET not in message, (name, message)
        assert "\n" not in message, (name, message)


@pytest.mark.parametrize(
    ("message", "kept"),
    [
        (
            f"Expected key=value, got: pw {SECRET}",
            "Expected key=value, got something else (its text is not shown)",
        ),
        (
            f"Error parsing host definition 's1 pw=\"{SECRET}': No closing quotation",
            "Error parsing host definition: No closing quotation",
        ),
        (
            f"Invalid data from file, expected dictionary and got: {SECRET}",
            "Invalid data from file, expected dictionary and got something else "
            "(its text is not shown)",
        ),
        # nothing quoted: kept as Ansible said it
        ("not enough values to unpack (expected 3, got 2)", None),
        ("Section [servers:weird] has unknown type: weird", None),
    ],
)
def test_what_was_wrong_is_kept(message: str, kept: str | None) -> None:
    assert without_line_text(message) == (kept or message)


@given(line=st.text(alphabet=st.characters(codec="utf-8"), max_size=40))
def test_whatever_the_line_it_never_comes_back(line: str) -> None:
    for shape in (
        "Expected key=value host variable assignment, got: {}",
        "Expected key=value, got: {}",
        "Expected group name, got: {}",
        "Error parsing host definition '{}': No closing quotation",
    ):
        text = without_line_text(shape.format(line + SECRET + line))
        assert SECRET not in text


# -- a -e value is never repeated ------------------------------------------------------------

GOOD_INI = "[servers]\ns1 ansible_host=192.0.2.1\n[clients]\nc1 ansible_host=192.0.2.2\n"

_READ_WITH_E = """
import json, sys
from sizing.errors import InputError
from sizing.extravars import parse_extra_vars
from sizing.inventory import load_inventory
out = []
for value in sys.argv[2:]:
    try:
        load_inventory(sys.argv[1], extra_vars=parse_extra_vars([value]))
        out.append(None)
    except InputError as exc:
        out.append(exc.problems)
print(json.dumps(out))
"""

# (-e value, the one problem it makes): said once, about -e, for both hosts it applies to
E_CASES = [
    (f"ansible_host={SECRET};x", "-e ansible_host: not an IP address or a host name"),
    (f"ansible_ssh_port={SECRET}", "-e ansible_ssh_port: not a port (1-65535)"),
    (f"sizing_address={SECRET};x", "-e sizing_address: the value is not an IP address or a host"),
    (f"sizing_platform={SECRET}", "-e sizing_platform: unknown platform (expected baremetal"),
    (f"sizing_client_cpus={SECRET}", "-e sizing_client_cpus: the value is not a CPU list"),
    (f"sizing_listen_address={SECRET}:80", "-e sizing_listen_address: the value is not an address"),
    ("ansible_connection=winrm", "-e ansible_connection: winrm: a Windows host, no shell"),
]


def test_a_bad_e_value_is_said_once_about_e_without_its_value(tmp_path: Path) -> None:
    path = tmp_path / "hosts.ini"
    path.write_text(GOOD_INI)
    got = json.loads(check_offline(_READ_WITH_E, str(path), *(v for v, _ in E_CASES)))
    for (value, expected), problems in zip(E_CASES, got, strict=True):
        assert problems is not None, value
        assert len(problems) == 1, (value, problems)
        assert problems[0].startswith(expected), (value, problems)
        assert SECRET not in problems[0], (value, problems)
