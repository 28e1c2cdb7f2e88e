"""A ``-e`` value that cannot be read is refused in one line that names the ``-e`` by its
place (or its ``@file`` by the file's name) and never repeats the value: a ``-e`` may carry
a password (``-e ansible_become_pass=...``), and stderr ends up in CI logs."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sizing.errors import UsageError
from sizing.extravars import parse_extra_vars

SECRET = "PLANTED-s3cr3t"

# Values Ansible cannot read, each carrying the secret where a parser would quote it.
BROKEN = [
    f'{{"ansible_password": "{SECRET}", bad',  # JSON cut short
    f"[{SECRET}]",  # a list, not a mapping
    f'a=1 "pw={SECRET}',  # unbalanced quote: parse_kv quotes the whole value
    f"pw={{{{ {SECRET}",  # an unclosed jinja2 block
    f"{{'x': !!python/object/apply:os.system ['{SECRET}']}}",  # a Python tag
    f"{{a: [1, {SECRET}}}",
    f"./{SECRET}.yml",  # a file name without '@'
]


@pytest.mark.parametrize("value", BROKEN)
def test_a_refused_value_is_named_by_its_place_never_repeated(value: str) -> None:
    with pytest.raises(UsageError) as got:
        parse_extra_vars(["a=1", value])
    message = str(got.value)
    assert SECRET not in message
    assert message.startswith("-e value 2: ")
    assert "\n" not in message


def test_a_file_is_named_by_its_name_and_its_content_is_not_shown(tmp_path: Path) -> None:
    for name, text in [
        ("cut.yml", f'pw: "{SECRET}\n'),
        ("list.yml", f"- {SECRET}\n"),
        ("tag.yml", f"pw: !!python/name:{SECRET}\n"),
    ]:
        path = tmp_path / name
        path.write_text(text)
        with pytest.raises(UsageError) as got:
            parse_extra_vars([f"@{path}"])
        assert str(got.value).startswith(f"-e @{path}: ")
        assert SECRET not in str(got.value)


def test_what_the_parser_expected_is_still_said() -> None:
    with pytest.raises(UsageError, match=r"did not find expected ',' or '\}'"):
        parse_extra_vars(['{"a": 1 "b"'])


_PIECES = st.sampled_from(['"', "'", "{", "}", "[", "]", ":", ",", "=", " ", "{{", "!!", "\t", "a"])


@settings(max_examples=150, deadline=None)
@given(before=st.lists(_PIECES, max_size=6), after=st.lists(_PIECES, max_size=6))
def test_whatever_surrounds_a_secret_a_refusal_never_carries_it(
    before: list[str], after: list[str]
) -> None:
    value = "".join(before) + SECRET + "".join(after)
    try:
        parse_extra_vars([value])
    except UsageError as exc:
        assert SECRET not in str(exc)
        assert "\n" not in str(exc)
