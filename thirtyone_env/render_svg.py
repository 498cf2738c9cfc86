"""The table as a picture: SVG drawn from a ``TableView``, and the same picture as pixels.

One drawing for ``render_mode="rgb_array"`` (videos, W&B), the web page and the docs: a felt
table with every seat's cards (face down where the view hides them), lives or chips, the dealer,
knock and on-honor markers, whose turn it is, the stock with its count and the discard pile.
Card faces are drawn here (French suits, and the Italian coins, cups, swords and batons), so
nothing depends on fonts beyond one sans-serif for ranks and labels.

``rgb_array`` rasterises with ``resvg-py`` (the ``render`` extra: ``pip install
"thirtyone-env[render]"``); the SVG itself needs nothing.
"""

from __future__ import annotations

import io
import math
from collections.abc import Iterable, Sequence
from html import escape

import numpy as np

from thirtyone_env.actions import DISCARD0, DRAW_DISCARD, DRAW_STOCK, action_name
from thirtyone_env.cards import get_deck
from thirtyone_env.view import TableView

WIDTH, HEIGHT = 960, 640
CARD_W, CARD_H = 100, 140  # a card's own units; drawn scaled

# suit symbols, each in a 100 x 100 box
_SUIT_SHAPES = {
    "heart": '<path d="M50 90C20 66 4 49 4 30 4 14 16 4 29 4c10 0 17 6 21 14 4-8 11-14 21-14 13 0 25 10 25 26 '
             '0 19-16 36-46 60z" fill="#c62828"/>',
    "diamond": '<path d="M50 3 88 50 50 97 12 50z" fill="#c62828"/>',
    "spade": '<path d="M50 4c20 24 44 38 44 58 0 14-10 22-22 22-9 0-15-4-18-10 2 10 6 18 12 22H34c6-4 10-12 '
             '12-22-3 6-9 10-18 10C16 84 6 76 6 62 6 42 30 28 50 4z" fill="#1b1b1b"/>',
    "club": '<g fill="#1b1b1b"><circle cx="50" cy="27" r="19"/><circle cx="27" cy="57" r="19"/>'
            '<circle cx="73" cy="57" r="19"/><path d="M45 50c0 22-6 36-15 46h40c-9-10-15-24-15-46z"/></g>',
    "coin": '<g><circle cx="50" cy="50" r="44" fill="#e0a91b" stroke="#7a5a06" stroke-width="5"/>'
            '<circle cx="50" cy="50" r="26" fill="none" stroke="#7a5a06" stroke-width="4"/>'
            '<circle cx="50" cy="50" r="8" fill="#b3261e"/></g>',
    "cup": '<g><path d="M18 8h64c0 30-12 46-26 50v18l16 14H28l16-14V58C30 54 18 38 18 8z" fill="#c0392b" '
           'stroke="#6d1a12" stroke-width="3"/><rect x="22" y="14" width="56" height="8" fill="#e0a91b"/></g>',
    "sword": '<g><path d="M46 3h8l3 66H43z" fill="#9fb6cc" stroke="#2c4a6e" stroke-width="3"/>'
             '<rect x="26" y="66" width="48" height="8" rx="3" fill="#2c5f9e"/>'
             '<rect x="45" y="74" width="10" height="15" fill="#6d4c2f"/>'
             '<circle cx="50" cy="93" r="5" fill="#2c5f9e"/></g>',
    "baton": '<g><path d="M38 8c10-6 24-2 24 10l-5 74c0 6-14 6-14 0L38 18z" fill="#3f8f3a" stroke="#1d4d1a" '
             'stroke-width="3"/><circle cx="49" cy="34" r="4" fill="#1d4d1a"/><circle cx="50" cy="58" r="4" '
             'fill="#1d4d1a"/><circle cx="50" cy="80" r="4" fill="#1d4d1a"/></g>',
}
SUITS = {  # deck -> suit letter -> (shape, ink)
    "french52": {"C": ("club", "#1b1b1b"), "D": ("diamond", "#c62828"), "H": ("heart", "#c62828"),
                 "S": ("spade", "#1b1b1b")},
    "italian40": {"B": ("baton", "#2e6b2a"), "C": ("cup", "#a5281b"), "D": ("coin", "#8a6508"),
                  "S": ("sword", "#2c4a6e")},
}
FACES = {"J": "J", "Q": "Q", "K": "K"}

_DEFS = (
    "<defs>"
    + "".join(f'<symbol id="suit-{name}" viewBox="0 0 100 100">{shape}</symbol>'
              for name, shape in _SUIT_SHAPES.items())
    + '<radialGradient id="felt" cx="50%" cy="45%" r="60%"><stop offset="0" stop-color="#2f8a4c"/>'
      '<stop offset="1" stop-color="#155c2f"/></radialGradient>'
      '<pattern id="back" width="12" height="12" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">'
      '<rect width="12" height="12" fill="#24468f"/><rect width="6" height="12" fill="#2d56ad"/></pattern>'
      "</defs>"
)


def card_svg(card: int | None, deck: str, x: float, y: float, scale: float = 0.7, action: int | None = None,
             extra_class: str = "") -> str:
    """One card at (x, y), face up (``card``) or face down (None). ``action``: clickable for that action id."""
    attrs = f' class="card{" act" if action is not None else ""}{" " + extra_class if extra_class else ""}"'
    if action is not None:
        attrs += f' data-action="{action}" role="button" tabindex="0"'
    head = f'<g transform="translate({x:.1f},{y:.1f}) scale({scale:.3f})"{attrs}>'
    if card is None or card < 0:
        attrs_title = "<title>face down</title>"
        return (head + attrs_title + f'<rect width="{CARD_W}" height="{CARD_H}" rx="9" fill="#fff" stroke="#222" '
                'stroke-width="2"/><rect x="7" y="7" width="86" height="126" rx="6" fill="url(#back)" stroke="#fff" '
                'stroke-width="2"/></g>')
    d = get_deck(deck)
    rank, suit = d.ranks[d.rank_of(card)], d.suits[d.suit_of(card)]
    shape, ink = SUITS[d.name][suit]
    lit = "" if action is None else '<rect class="hi" width="100" height="140" rx="9" fill="none" stroke="#ffd54a" ' \
                                    'stroke-width="7"/>'
    body = [
        head, f"<title>{rank}{suit}</title>",
        f'<rect width="{CARD_W}" height="{CARD_H}" rx="9" fill="#fffdf6" stroke="#222" stroke-width="2"/>',
        f'<text x="8" y="30" font-family="DejaVu Sans, Arial, sans-serif" font-size="27" font-weight="bold" '
        f'fill="{ink}">{escape(rank)}</text>',
        f'<use href="#suit-{shape}" x="7" y="36" width="22" height="22"/>',
        f'<g transform="rotate(180 50 70)"><text x="8" y="30" font-family="DejaVu Sans, Arial, sans-serif" '
        f'font-size="27" font-weight="bold" fill="{ink}">{escape(rank)}</text>'
        f'<use href="#suit-{shape}" x="7" y="36" width="22" height="22"/></g>',
    ]
    if rank in FACES:
        body.append(f'<rect x="28" y="30" width="44" height="80" rx="4" fill="#f3e6c4" stroke="{ink}" '
                    'stroke-width="2"/>'
                    f'<use href="#suit-{shape}" x="35" y="36" width="30" height="30"/>'
                    f'<text x="50" y="100" text-anchor="middle" font-family="DejaVu Sans, Arial, sans-serif" '
                    f'font-size="30" font-weight="bold" fill="{ink}">{FACES[rank]}</text>')
    else:
        body.append(f'<use href="#suit-{shape}" x="27" y="47" width="46" height="46"/>')
    body.append(lit + "</g>")
    return "".join(body)


def _badge(x: float, y: float, text: str, fill: str, ink: str = "#fff") -> tuple[str, float]:
    w = 9 + 8.2 * len(text)
    return (f'<g class="badge"><rect x="{x:.1f}" y="{y - 15:.1f}" width="{w:.1f}" height="20" rx="10" fill="{fill}"/>'
            f'<text x="{x + w / 2:.1f}" y="{y:.1f}" text-anchor="middle" font-family="DejaVu Sans, Arial, sans-serif" '
            f'font-size="13" font-weight="bold" fill="{ink}">{escape(text)}</text></g>'), w + 5


def table_svg(
    view: TableView,
    legal: Iterable[int] = (),
    names: Sequence[str] | None = None,
    bottom: int | None = None,
    message: str = "",
) -> str:
    """The table as an SVG document (960 x 640 units, scalable).

    ``legal``: action ids to draw as clickable (the stock, the discard and the viewer's cards get
    ``class="act" data-action=ID``). ``bottom``: the seat drawn at the bottom (default: the
    view's viewer, else seat 0). ``message`` replaces the line that names the last move.
    """
    n = view.num_players
    legal = set(int(a) for a in legal)
    names = list(names) if names is not None else [f"player_{s}" for s in range(n)]
    if bottom is None:
        bottom = view.viewer if view.viewer is not None and view.viewer >= 0 else 0
    unit = "chips" if view.economy == "pot" else "lives"
    font = 'font-family="DejaVu Sans, Arial, sans-serif"'
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" '
           f'height="{HEIGHT}" class="table-svg" role="img" aria-label="Thirty-one table">', _DEFS,
           f'<rect width="{WIDTH}" height="{HEIGHT}" fill="#3b2416"/>',
           f'<rect x="14" y="14" width="{WIDTH - 28}" height="{HEIGHT - 28}" rx="190" fill="#6b4226" '
           'stroke="#2a170c" stroke-width="4"/>',
           f'<rect x="34" y="34" width="{WIDTH - 68}" height="{HEIGHT - 68}" rx="172" fill="url(#felt)"/>',
           f'<text x="{WIDTH / 2}" y="60" text-anchor="middle" {font} font-size="16" fill="#d9f2dd">'
           f'{escape(view.rules_name)} · deal {view.deal} · turn {view.turn + 1}</text>']
    cx, cy = WIDTH / 2, HEIGHT / 2 - 10
    # centre: stock, discard pile, pot
    scale = 0.62
    sx, dx, py = cx - 80, cx + 16, cy - CARD_H * scale / 2
    if view.stock_size:
        for k in range(min(3, view.stock_size - 1), 0, -1):
            out.append(card_svg(None, view.deck, sx - 2 * k, py - 2 * k, scale))
        out.append(card_svg(None, view.deck, sx, py, scale, DRAW_STOCK if DRAW_STOCK in legal else None, "stock"))
    else:
        out.append(f'<rect x="{sx}" y="{py}" width="{CARD_W * scale}" height="{CARD_H * scale}" rx="6" fill="none" '
                   'stroke="#b8dcbf" stroke-dasharray="6 4"/>')
    out.append(f'<text x="{sx + CARD_W * scale / 2}" y="{py + CARD_H * scale + 20}" text-anchor="middle" {font} '
               f'font-size="14" fill="#e8f5ea" class="stock-count">stock {view.stock_size}</text>')
    if view.discard:
        if len(view.discard) > 1:
            out.append(card_svg(view.discard[-2], view.deck, dx + 5, py + 3, scale))
        out.append(card_svg(view.discard_top, view.deck, dx, py, scale,
                            DRAW_DISCARD if DRAW_DISCARD in legal else None, "discard-top"))
    out.append(f'<text x="{dx + CARD_W * scale / 2}" y="{py + CARD_H * scale + 20}" text-anchor="middle" {font} '
               f'font-size="14" fill="#e8f5ea">discard {len(view.discard)}</text>')
    if view.economy == "pot":
        out.append(f'<text x="{cx + 120}" y="{cy + 5}" {font} font-size="16" fill="#ffe08a">pot {view.pot}</text>')
    line = message or (f"{names[view.last_seat]}: {action_name(view.last_action, view.deck)}"
                       if view.last_seat >= 0 and view.last_action >= 0 else "")
    if view.done:
        line = message or "match over"
    if line:
        out.append(f'<text x="{cx}" y="{cy + 88}" text-anchor="middle" {font} font-size="16" fill="#fff" '
                   f'class="last-move">{escape(line)}</text>')
    # seats around an ellipse, ``bottom`` at the bottom, the others clockwise
    rx, ry = WIDTH / 2 - 150, HEIGHT / 2 - 132
    card_scale = 0.8 if n <= 3 else 0.64 if n <= 4 else 0.48 if n <= 6 else 0.38  # big where there is room
    for seat in range(n):
        rel = (seat - bottom) % n
        angle = math.pi / 2 + 2 * math.pi * rel / n
        x, y = cx + rx * math.cos(angle), cy + 20 + ry * math.sin(angle)
        out.append(_seat_svg(view, seat, x, y, card_scale * (1.1 if rel == 0 and n <= 6 else 1.0), names[seat],
                             unit, legal if seat == view.viewer or view.viewer is None else set(), font))
    out.append("</svg>")
    return "".join(out)


def _seat_svg(view: TableView, seat: int, x: float, y: float, scale: float, name: str, unit: str,
              legal: set[int], font: str) -> str:
    hand = view.hands[seat]
    status = view.status[seat]
    count = 0 if status == "out" else (len(hand) if hand is not None else (4 if view.current == seat and
                                                                          view.phase == "discard" else 3))
    w, h = CARD_W * scale, CARD_H * scale
    gap = w * 0.72
    left = x - (gap * max(count - 1, 0) + w) / 2
    top = y - h / 2 - 8
    parts = [f'<g class="seat{" to-act" if view.current == seat else ""}{" out" if status == "out" else ""}" '
             f'data-seat="{seat}"' + (' opacity="0.45"' if status == "out" else "") + ">"]
    if view.current == seat:
        pad = 10
        width = gap * max(count - 1, 0) + w + 2 * pad
        parts.append(f'<rect x="{left - pad:.1f}" y="{top - pad:.1f}" width="{width:.1f}" '
                     f'height="{h + 2 * pad + 38:.1f}" rx="14" fill="#ffd54a" fill-opacity="0.18" stroke="#ffd54a" '
                     'stroke-width="3"/>')
    known = view.known[seat] if hand is None else ()  # cards it took from the discard pile: public
    for k in range(count):
        card = hand[k] if hand is not None else known[k] if k < len(known) else None
        act = DISCARD0 + card if hand is not None and DISCARD0 + card in legal else None
        parts.append(card_svg(card, view.deck, left + k * gap, top, scale, act, "known" if k < len(known) else ""))
    ty = top + h + 20
    label = f"{name} · {unit} {view.chips[seat]}"
    if hand and view.hand_values[seat] is not None:
        label += f" · {view.hand_values[seat]:g}"
    parts.append(f'<text x="{x:.1f}" y="{ty:.1f}" text-anchor="middle" {font} font-size="15" font-weight="bold" '
                 f'fill="#fff">{escape(label)}</text>')
    badges = [(t, f) for t, f, on in (
        ("dealer", "#5d4037", view.dealer == seat),
        ("knocked", "#d84315", view.knocker == seat),
        ("on honor", "#6a1b9a", status == "on honor"),
        ("out", "#424242", status == "out"),
        ("to act", "#f9a825", view.current == seat),
    ) if on]
    bx = x - sum(9 + 8.2 * len(t) + 5 for t, _ in badges) / 2
    for text, fill in badges:
        svg, width = _badge(bx, ty + 22, text, fill, "#222" if text == "to act" else "#fff")
        parts.append(svg)
        bx += width
    parts.append("</g>")
    return "".join(parts)


def rgb_array(svg: str, width: int = WIDTH) -> np.ndarray:
    """Pixels (uint8 [H, W, 3]) of an SVG, rasterised with resvg (the ``render`` extra)."""
    try:
        import resvg_py
        from PIL import Image
    except ImportError as exc:
        raise ImportError(
            f"render_mode='rgb_array' needs resvg-py and Pillow ({exc.name} is missing): "
            'pip install "thirtyone-env[render]"'
        ) from None
    png = resvg_py.svg_to_bytes(svg_string=svg, width=int(width))
    return np.asarray(Image.open(io.BytesIO(bytes(png))).convert("RGB"))


def view_rgb_array(view: TableView, width: int = WIDTH, **kwargs) -> np.ndarray:
    """``rgb_array(table_svg(view))``: what ``render_mode="rgb_array"`` returns."""
    return rgb_array(table_svg(view, **kwargs), width)
