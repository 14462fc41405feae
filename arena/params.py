"""Declared parameters of games and agents, and the `id:key=value,...` spec syntax."""

from __future__ import annotations

import builtins
import functools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.errors import ArenaError, did_you_mean

#: A day: a longer time per move (or inf, nan) is a mistake, not a limit: `--time-per-move`, and parameters in seconds
#: that an agent may spend on one move (mcts's and minimax's `time`, remote agents' `timeout` and `wait`).
MAX_TIME_PER_MOVE = 86_400.0


@dataclass(frozen=True)
class Param:
    """One parameter: name, default, and what values it accepts.

    The type is taken from the default (int, float, str, bool, or a tuple of floats
    written `1,2,3` on the command line) unless `type` says otherwise.
    """

    name: str
    default: Any
    help: str = ""
    type: builtins.type | None = None
    choices: tuple[Any, ...] | None = None
    min: float | None = None
    max: float | None = None

    @property
    def kind(self) -> builtins.type:
        if self.type is not None:
            return self.type
        return type(self.default) if self.default is not None else str

    def convert(self, value: Any, owner: str) -> Any:
        """Turn a raw value (often a string from the command line) into a checked value."""
        kind = self.kind
        converted: Any
        try:
            if kind is bool:
                converted = _to_bool(value)
            elif kind is tuple:
                converted = _to_float_tuple(value)
            elif kind is int:
                if isinstance(value, float) and not value.is_integer():
                    raise ValueError(value)
                converted = int(value)
            elif kind is float:
                converted = float(value)
                if not math.isfinite(converted):
                    raise ValueError(value)
            else:
                converted = kind(value)
        except (TypeError, ValueError):
            raise ArenaError(
                f"bad value {value!r} for parameter '{self.name}' of {owner}: expected {_kind_name(kind)}"
            ) from None
        if self.choices is not None and converted not in self.choices:
            options = ", ".join(str(c) for c in self.choices)
            raise ArenaError(f"bad value {value!r} for parameter '{self.name}' of {owner}: choose one of {options}")
        if self.min is not None and converted < self.min:
            raise ArenaError(f"bad value {value!r} for parameter '{self.name}' of {owner}: must be >= {self.min:g}")
        if self.max is not None and converted > self.max:
            raise ArenaError(f"bad value {value!r} for parameter '{self.name}' of {owner}: must be <= {self.max:g}")
        return converted

    def describe(self) -> str:
        text = f"{self.name}={format_value(self.default)}"
        if self.choices is not None:
            text += " (" + "|".join(str(c) for c in self.choices) + ")"
        elif self.min is not None or self.max is not None:
            low = "" if self.min is None else f"{self.min:g}"
            high = "" if self.max is None else f"{self.max:g}"
            text += f" [{low}..{high}]"
        return text


def default_problem(declared: Sequence[Param], owner: str) -> str | None:
    """Why a declared parameter's own default is not a value it takes (None: every default is): a plugin's placeholder
    for a value every spec must give, or its mistake; said when it registers, refused when a spec would use it."""
    for param in declared:
        if param.default is None:
            continue
        try:
            param.convert(param.default, owner)
        except ArenaError as exc:
            return f"the default of its parameter '{param.name}' is not a value it takes ({exc})"
    return None


@functools.lru_cache(maxsize=1024)
def _unusable_defaults(declared: tuple[Param, ...]) -> tuple[Param, ...]:
    """The parameters whose default their own checks refuse (computed once per declaration)."""
    return tuple(param for param in declared if default_problem([param], "") is not None)


def _kind_name(kind: builtins.type) -> str:
    return {int: "an integer", float: "a number", bool: "true or false", tuple: "a comma-separated list of numbers"}.get(
        kind, "text"
    )


def _to_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ValueError(value)


def _to_float_tuple(value: Any) -> tuple[float, ...]:
    items = value.split(",") if isinstance(value, str) else list(value)
    numbers = tuple(float(item) for item in items)  # "" on the command line fails here; an empty tuple is kept
    if not all(math.isfinite(n) for n in numbers):
        raise ValueError(value)
    return numbers


def format_value(value: Any) -> str:
    """Write a parameter value the way the spec syntax reads it back."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, tuple):
        return ",".join(format_value(v) for v in value)
    return str(value)


def validate_params(declared: Sequence[Param], given: Mapping[str, Any], owner: str) -> dict[str, Any]:
    """Check `given` against `declared`: unknown names and bad values raise ArenaError; defaults fill the rest (a
    default its parameter refuses, a plugin's placeholder for a value to give, is refused when it would be used)."""
    try:
        unusable = _unusable_defaults(tuple(declared))
    except TypeError:  # a default that cannot be hashed (a plugin's list): checked each time
        unusable = tuple(param for param in declared if default_problem([param], owner) is not None)
    for param in unusable:
        if param.name not in given:
            raise ArenaError(f"{owner} needs {param.name}=VALUE: {default_problem([param], owner)}")
    if not given:  # the common case when agents are made match after match
        return {p.name: p.default for p in declared}
    by_name = {p.name: p for p in declared}
    unknown = [name for name in given if name not in by_name]
    if unknown:
        known = ", ".join(by_name) or "none"
        raise ArenaError(f"unknown parameter '{unknown[0]}' for {owner}{did_you_mean(unknown[0], by_name)} (known: {known})")
    values = {p.name: p.default for p in declared}
    for name, raw in given.items():
        values[name] = by_name[name].convert(raw, owner)
    return values


@dataclass(frozen=True)
class Spec:
    """A parsed `id:key=value,...` spec: which registered thing, and the parameters given explicitly."""

    id: str
    params: Mapping[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        if not self.params:
            return self.id
        return self.id + ":" + ",".join(f"{k}={quote_value(v, i == 0)}" for i, (k, v) in enumerate(self.params.items()))


def quote_value(value: str, first: bool = False) -> str:
    """A parameter value as a spec writes it: in double quotes only where it would not read back otherwise (see
    parse_specs): a comma always (list values of numbers, `0,2,4`, excepted), a colon unless it is the spec's first
    parameter (`http:url=http://host:9000` reads back as it is). So labels stay as they were wherever they could."""
    if '"' in value or ("," in value and all(_looks_like_value(part) for part in value.split(","))):
        return value
    return f'"{value}"' if "," in value or (":" in value and not first) else value


def _looks_like_value(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def _split_outside_quotes(text: str) -> list[str]:
    """`text` split at the commas that are not inside double quotes."""
    if '"' not in text:
        return text.split(",")
    parts: list[str] = []
    current: list[str] = []
    quoted = False
    for ch in text:
        if ch == '"':
            quoted = not quoted
        if ch == "," and not quoted:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    if quoted:
        raise ArenaError(f"unclosed double quote in {text!r}")
    parts.append("".join(current))
    return parts


def _index_outside_quotes(token: str, ch: str) -> int:
    quoted = False
    for i, c in enumerate(token):
        if c == '"':
            quoted = not quoted
        elif c == ch and not quoted:
            return i
    return -1


def _unquote(value: str, text: str) -> str:
    if '"' not in value:
        return value
    if len(value) >= 2 and value[0] == value[-1] == '"' and '"' not in value[1:-1]:
        return value[1:-1]
    raise ArenaError(f"a quoted value must be the whole value, in double quotes: {value!r} in {text!r}")


def parse_specs(text: str) -> list[Spec]:
    """Parse a comma-separated list of specs.

    `random,greedy:eval=heuristic,minimax:depth=3,weights=0,2,4` gives three specs: a token with
    `:` starts a spec, `key=value` adds a parameter to the current one, and a bare number
    continues the previous value (so list-valued parameters need no quoting). A value in double
    quotes is taken as it is, commas, colons and equals signs included: `checkpoint="a,b.npz"`.
    """
    specs: list[tuple[str, dict[str, str]]] = []
    last_key: str | None = None
    for raw in _split_outside_quotes(text):
        token = raw.strip()
        if not token:
            raise ArenaError(f"empty item in {text!r}")
        colon = _index_outside_quotes(token, ":")
        if colon >= 0:
            name, rest = token[:colon], token[colon + 1:]
            name = name.strip()
            if not name:
                raise ArenaError(f"missing name before ':' in {token!r}")
            specs.append((name, {}))
            last_key = None
            token = rest.strip()
            if not token:
                continue
            if "=" not in token:
                raise ArenaError(f"expected key=value after ':' in {raw.strip()!r}")
        if "=" in token:
            if not specs:
                raise ArenaError(f"parameter {token!r} comes before any name in {text!r}")
            key, _, value = token.partition("=")
            key = key.strip()
            if not key:
                raise ArenaError(f"missing parameter name in {token!r}")
            if key in specs[-1][1]:
                raise ArenaError(f"parameter '{key}' given twice for '{specs[-1][0]}'")
            specs[-1][1][key] = _unquote(value.strip(), text)
            last_key = key
        elif last_key is not None and _looks_like_value(token):
            specs[-1][1][last_key] += "," + token
        else:
            specs.append((token, {}))
            last_key = None
    return [Spec(name, params) for name, params in specs]


def parse_spec(text: str) -> Spec:
    """Parse exactly one `id:key=value,...` spec."""
    specs = parse_specs(text)
    if len(specs) != 1:
        raise ArenaError(f"expected one spec, got {len(specs)} in {text!r}")
    return specs[0]


#: Characters that split or quote a spec (`id:key=value,...`, `"..."`): no id or name that becomes part of one has them.
SPEC_SEPARATORS = ',:="'


def breaks_spec(name: str) -> bool:
    """Whether `name` would not read back as one word of a spec (empty, or a space or one of SPEC_SEPARATORS in it)."""
    return not name or any(ch.isspace() or ch in SPEC_SEPARATORS for ch in name)


#: The rule for the id of a game or an agent type, said when an id breaks it.
ID_RULE = "an id has no spaces, ',', ':', '=' or '\"' (it starts a spec such as id:key=value)"


def is_id(item_id: object) -> bool:
    """Whether `item_id` can be the id of a game or an agent type (ID_RULE): text that reads back as one word of a spec.
    The one rule of the plugin loader and of the conformance suite."""
    return isinstance(item_id, str) and not breaks_spec(item_id)


#: The longest name of an agent, a token or a person (their database columns).
MAX_NAME_LENGTH = 200


def check_name(name: str, what: str, field: str | None = None, also: str = "") -> str:
    """`name` if it can be a name in an agent spec (a named agent, a token's `pull:name=...`, a person's
    `human:name=...`): 1 to MAX_NAME_LENGTH characters with no space, control character or any of SPEC_SEPARATORS
    (nor of `also`); else ArenaError about `field`, saying `what` the name is ("an agent's name") and the rule."""
    if not name:
        raise ArenaError(f"{what} is empty", field)
    if len(name) > MAX_NAME_LENGTH:
        raise ArenaError(f"{what} is at most {MAX_NAME_LENGTH} characters, got {len(name)}", field)
    if breaks_spec(name) or not name.isprintable() or any(ch in also for ch in name):
        raise ArenaError(f"{what} has no spaces, control characters or any of {' '.join(SPEC_SEPARATORS + also)} (other "
                         f"characters are fine), got {name!r}", field)  # fmt: skip
    return name


def parse_game_spec(text: str) -> Spec:
    """Parse a game spec (`connect_four:rows=5`); an empty one is refused by name."""
    if not text.strip():
        raise ArenaError("game: give a game spec, such as connect_four or connect_four:rows=5 (`arena games` lists them)")
    return parse_spec(text)


def parse_assignments(items: Iterable[str]) -> dict[str, str]:
    """Parse repeated `--param key=value` options."""
    result: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ArenaError(f"expected key=value, got {item!r}")
        if key.strip() in result:
            raise ArenaError(f"parameter '{key.strip()}' given twice")
        result[key.strip()] = value.strip()
    return result


def canonical(values: Mapping[str, Any]) -> str:
    """A stable text form of validated parameters: sorted `key=value` pairs joined by ';'."""
    return ";".join(f"{k}={format_value(values[k])}" for k in sorted(values))
