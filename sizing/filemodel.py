"""The base of the models of files sizing reads (catalogs, profiles, inventories'
variables): true/false is never a number.

pydantic's lax mode reads true as 1 and false as 0 for an int or a float: a
``sizing_price_usd: true`` became a $1 server, the cheapest of every fleet, and
``threads_per_core: true`` one thread per core. A :class:`FileModel` refuses it, by the
field's type, naming the field as every validation error does.
"""

from __future__ import annotations

import typing
from typing import Any

from pydantic import BaseModel, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

__all__ = ["FileModel"]


def _wants_a_number(annotation: Any) -> bool:
    """Whether a field's type takes an int or a float and not a bool."""
    if annotation is bool:
        return False
    if annotation in (int, float):
        return True
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) is typing.Annotated:
        return _wants_a_number(args[0])
    return bool(args) and bool not in args and any(_wants_a_number(a) for a in args)


class FileModel(BaseModel):
    """A model of a file's content: true/false where a field takes a number is refused."""

    @field_validator("*", mode="before")
    @classmethod
    def _bool_is_not_a_number(cls, value: Any, info: ValidationInfo) -> Any:
        field = cls.model_fields.get(info.field_name or "")
        if isinstance(value, bool) and field is not None and _wants_a_number(field.annotation):
            raise PydanticCustomError("bool_not_a_number", "true/false is not a number")
        return value
