"""Positions given to the tablebase as text: PDN FEN, algebraic squares, pydraughts objects.

PDN squares of an 8x8 board (every 8x8 variant dtb knows: english, russian, brazilian) are
numbered from the top row (black's side), left to right, as dtb.h and docs/DESIGN.md §9 have it:
b8 = 1, d8 = 2, f8 = 3, h8 = 4, a7 = 5, ..., a1 = 29, c1 = 30, e1 = 31, g1 = 32 (c3 = 22).
White men move towards square 1 (rank 8).

pydraughts (https://github.com/AttackingOrDefending/pydraughts) keeps every variant on one
internal board whose numbering is the international one carried over to the board's width, and
translates at its edges in draughts/convert.py (_rotate_move, _change_fen_from_variant,
fen_to_variant). What its objects show, per variant:

* `draughts.Board.fen` (pydraughts 0.6 and later; the Board class in draughts/__init__.py
  returns `fen_to_variant(<internal FEN>, variant)`):
  - standard: PDN international, unchanged (its "notation 2").
  - english: the internal board turned half a turn (square s -> 33 - s, "notation 1") with the
    colours and the side to move exchanged, because pydraughts' internal white always starts:
    the result is English PDN (black on 1-12 moves first, towards 32). Passed on unchanged.
  - russian, brazilian: the internal board with its rows reversed ("notation 0": square s ->
    reverse_row(s), which numbers a1 = 1, c1 = 2, ..., h8 = 32), then written algebraically
    (_numeric_to_algebraic_square). The algebraic squares are the true ones (a1 bottom left,
    white at the bottom), so they are read as algebraic squares: a1 -> 29, h8 -> 4. pydraughts'
    *numeric* russian squares (a1 = 1, its moves' board_move/steps_move numbers) are that
    row-reversed numbering, not PDN: a numeric FEN in that numbering would probe the position
    mirrored top to bottom, which is why pydraughts objects are recognised rather than trusted
    to be PDN.
* `draughts.core.game.Game` (older releases' main class, and Board._game): get_li_fen() gives
  the internal numbering, which is PDN for standard, russian and brazilian (internal 1 = b8,
  29 = a1) and, for english, the half-turned board with colours exchanged: s -> 33 - s, white
  <-> black, side to move exchanged.
"""
import re

# pydraughts variant names (draughts/core/game.py _convert_variant_names) -> dtb's names.
PYDRAUGHTS_VARIANTS = {
    "standard": "international",
    "from position": "international",
    "english": "english",
    "american": "english",
    "russian": "russian",
    "brazilian": "brazilian",
}

_ALGEBRAIC = re.compile(r"^([A-Ha-h])([1-8])$")


def algebraic_to_square(text):
    """The PDN number (1..32) of an algebraic square of the 8x8 board ("a1" -> 29, "h8" -> 4);
    ValueError when it is not a dark (playable) square."""
    m = _ALGEBRAIC.match(text.strip())
    if not m:
        raise ValueError(f"{text!r} is not an algebraic square a1..h8")
    col = ord(m.group(1).lower()) - ord("a")
    row = 8 - int(m.group(2))  # 0 = top row (rank 8)
    if (row + col) % 2 == 0:
        raise ValueError(f"{text!r} is a light square, not one of the board's playable squares")
    return row * 4 + col // 2 + 1


def square_to_algebraic(square):
    """The algebraic name of PDN square 1..32 of the 8x8 board (29 -> "a1", 4 -> "h8")."""
    if not 1 <= square <= 32:
        raise ValueError(f"square {square} is not on the 8x8 board (1-32)")
    row, k = divmod(square - 1, 4)
    col = 2 * k + (1 if row % 2 == 0 else 0)
    return "abcdefgh"[col] + str(8 - row)


def move_to_algebraic(text):
    """A PDN move of the 8x8 board in algebraic squares ("22-18" -> "c3-d4", "x" kept)."""
    sep = "x" if "x" in text else "-"
    return sep.join(square_to_algebraic(int(s)) for s in text.split(sep))


def _split_fen(fen):
    """(the FEN's ':'-separated fields, whether it ended with a dot)."""
    text = fen.strip()
    dot = text.endswith(".")
    if dot:
        text = text[:-1]
    fields = text.split(":")
    return fields, dot


def _pydraughts_numeric(token):
    """A square token of a pydraughts russian/brazilian FEN in its numeric form (a1 = 1, c1 = 2,
    ..., h8 = 32: PDN with the rows reversed, see above) as a PDN number."""
    king = token[:1] == "K"
    n = int(token[1:] if king else token)
    row, k = divmod(n - 1, 4)  # row 0 = rank 1
    return ("K" if king else "") + str((7 - row) * 4 + k + 1)


def fen_from_algebraic(fen):
    """fen with every algebraic square of its W and B sections replaced by its PDN number
    ("W:Wc3,Ka1:Bh8" -> "W:W22,K29:B4"); fen unchanged when it has none. Raises ValueError for
    an algebraic square that is not playable or an algebraic range."""
    fields, dot = _split_fen(fen)
    changed = False
    for i in range(1, len(fields)):
        f = fields[i].strip()
        if not f or f[0] not in "WB":
            continue
        tokens = f[1:].split(",")
        out = []
        for tok in tokens:
            t = tok.strip()
            king = t[:1] in ("K", "k") and len(t) > 1 and t[1:2].isalpha()
            body = t[1:] if king else t
            if _ALGEBRAIC.match(body):
                out.append(("K" if king else "") + str(algebraic_to_square(body)))
                changed = True
            elif "-" in body and any(c.isalpha() for c in body):
                raise ValueError(f"algebraic range {t!r}: list the squares one by one")
            else:
                out.append(tok)
        fields[i] = f[0] + ",".join(out)
    if not changed:
        return fen
    return ":".join(fields) + ("." if dot else "")


def _sections(fen):
    """side, white tokens, black tokens of a plain FEN (no ranges expected, as pydraughts
    writes it)."""
    fields, _ = _split_fen(fen)
    side = fields[0].strip().upper()
    white, black = [], []
    for f in fields[1:]:
        f = f.strip()
        if f[:1] == "W":
            white = [t.strip() for t in f[1:].split(",") if t.strip()]
        elif f[:1] == "B":
            black = [t.strip() for t in f[1:].split(",") if t.strip()]
    return side, white, black


def _join(side, white, black):
    return f"{side}:W{','.join(white)}:B{','.join(black)}"


def english_internal_to_pdn(fen):
    """A pydraughts internal (Game.get_li_fen) english FEN as English PDN: each square s becomes
    33 - s, the colours and the side to move change places."""
    side, white, black = _sections(fen)

    def turn(tokens):
        out = []
        for t in tokens:
            king = t[:1] == "K"
            out.append(("K" if king else "") + str(33 - int(t[1:] if king else t)))
        return out

    return _join("B" if side == "W" else "W", turn(black), turn(white))


def is_pydraughts(obj):
    """True for a pydraughts Board (class Board of module draughts, 0.6+) or Game (class Game of
    draughts.core.game): told apart by their class's module and a str `variant`, without
    importing pydraughts."""
    cls = type(obj)
    module = getattr(cls, "__module__", "") or ""
    if not isinstance(getattr(obj, "variant", None), str):
        return False
    if cls.__name__ == "Board" and (module == "draughts" or module.startswith("draughts.")):
        return hasattr(obj, "fen")
    if cls.__name__ == "Game" and module == "draughts.core.game":
        return hasattr(obj, "get_li_fen")
    return False


def pydraughts_fen(obj):
    """(dtb variant, PDN FEN) of the position a pydraughts Board or Game shows; ValueError for
    a variant dtb has no tables for."""
    name = obj.variant.lower()
    variant = PYDRAUGHTS_VARIANTS.get(name)
    if variant is None:
        raise ValueError(f"pydraughts variant {obj.variant!r}: dtb has tables for "
                         "standard (international), english, russian and brazilian only")
    if type(obj).__name__ == "Game":
        fen = obj.get_li_fen()
        if variant == "english":
            fen = english_internal_to_pdn(fen)
        return variant, fen
    fen = obj.fen() if callable(obj.fen) else obj.fen
    if variant in ("russian", "brazilian"):
        # fen_to_variant writes these algebraically; a number would be pydraughts' own numbering.
        side, white, black = _sections(fen)
        conv = [[_pydraughts_numeric(t) if t.lstrip("K").isdigit() else t for t in ts]
                for ts in (white, black)]
        fen = fen_from_algebraic(_join(side, *conv))
    return variant, fen
