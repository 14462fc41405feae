"""What every JSON body of the API shares: JSON's own types ("1" is no number), no field the model lacks, and no NUL
character in any text (PostgreSQL's text cannot hold one, and both databases must answer alike)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

NUL = "holds a NUL character (U+0000), which no id, name, spec or value may contain"


def holds_nul(value: Any) -> bool:
    """A NUL character in a text, or in any key or item of a JSON value."""
    todo = [value]
    while todo:
        item = todo.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return True
        elif isinstance(item, dict):
            todo.extend(item.keys())
            todo.extend(item.values())
        elif isinstance(item, list | tuple):
            todo.extend(item)
    return False


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    @field_validator("*", mode="after")
    @classmethod
    def _no_nul(cls, value: Any) -> Any:
        if holds_nul(value):
            raise ValueError(NUL)
        return value
