"""Small helpers for games' `State.render_svg()`: self-contained inline SVG built as strings.

Pure string building, no dependency: every function returns one element as text, numbers
written compactly and text escaped. `document(width, height, parts)` wraps them in an <svg> with
a viewBox (its size in user units; the page scales it), a <title> and no external reference.
"""

from __future__ import annotations

import html
from collections.abc import Iterable

FONT = "system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif"
PLAYER_COLORS = ("#d32f2f", "#1976d2", "#388e3c", "#f9a825", "#7b1fa2", "#00838f", "#ef6c00", "#5d4037")  # seat 0, 1, ...


def num(value: float) -> str:
    """A coordinate as short text: integers without a point, others with at most two decimals."""
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.2f}".rstrip("0").rstrip(".")


def _attrs(attributes: dict[str, object]) -> str:
    parts = []
    for name, value in attributes.items():
        if value is None:
            continue
        text = num(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else str(value)
        parts.append(f' {name.rstrip("_").replace("_", "-")}="{html.escape(text, quote=True)}"')
    return "".join(parts)


def element(tag: str, content: object = "", **attributes: object) -> str:
    """<tag a="..." ...>content</tag> (self-closing when empty); attribute names: `_` becomes `-`, a trailing `_` is dropped."""
    attrs = _attrs(attributes)
    return f"<{tag}{attrs}>{content}</{tag}>" if content else f"<{tag}{attrs}/>"


def rect(x: float, y: float, width: float, height: float, fill: str = "none", **attributes: object) -> str:
    return element("rect", x=x, y=y, width=width, height=height, fill=fill, **attributes)


def circle(cx: float, cy: float, r: float, fill: str = "none", **attributes: object) -> str:
    return element("circle", cx=cx, cy=cy, r=r, fill=fill, **attributes)


def line(x1: float, y1: float, x2: float, y2: float, stroke: str = "#000", width: float = 1, **attributes: object) -> str:
    return element("line", x1=x1, y1=y1, x2=x2, y2=y2, stroke=stroke, stroke_width=width, **attributes)


def text(x: float, y: float, content: object, size: float = 14, anchor: str = "middle", fill: str = "#222",
         **attributes: object) -> str:  # fmt: skip
    """Text centred on (x, y) by default (dominant-baseline central)."""
    return element("text", html.escape(str(content)), x=x, y=y, font_size=size, text_anchor=anchor,
                   dominant_baseline="central", fill=fill, **attributes)  # fmt: skip


def document(width: float, height: float, parts: Iterable[str], title: str, background: str = "#fff") -> str:
    """The whole <svg>: viewBox 0 0 width height, a <title> for screen readers, a background, then `parts`."""
    body = "".join(parts)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {num(width)} {num(height)}" width="{num(width)}"'
        f' height="{num(height)}" role="img" font-family="{html.escape(FONT, quote=True)}">'
        f"<title>{html.escape(title)}</title>{rect(0, 0, width, height, fill=background)}{body}</svg>"
    )
