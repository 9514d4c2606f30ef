"""dtb: draughts endgame tablebases from Python.

Reads the tables dtbgen writes through libdtb (ctypes; the standard library only), in the manner
of python-chess's chess.syzygy::

    import dtb
    with dtb.open_tablebase("tables", variant="international") as tb:
        tb.probe_wdl("W:WK46,28:BK5")        # 1 (win), 0 (draw) or -1 (loss), side to move
        tb.probe_dtw("W:WK46,28:BK5")        # (1, 3): the win takes 3 plies
        tb.probe_mtc("W:WK46,28:BK5")        # (1, 1): a man move converts at once (.mtc tables)
        tb.moves("W:WK46,28:BK5")            # [Move(move='28-22', wdl=1, dtw=3), ...] best first
        tb.moves("W:WK46,28:BK5")[0].fen     # 'B:W22,K46:BK5': the position after the move
        tb.play("W:WK46,28:BK5", "28-22")    # 'B:W22,K46:BK5' (any legal move, either notation)
        tb.line("W:WK46,28:BK5")             # ['28-22', '5-10', '46x5']
        tb.get_wdl("W:W31-50:B1-20")         # None: no table for 40 pieces

Texts returned (moves, lines, fen()) are written as the variant's players write them
(tb.notation: "algebraic" in russian and brazilian, "c3-d4" and "c3:e5"; "numeric" elsewhere);
notation="numeric" or "algebraic" chooses.

Values are for the side to move, by perfect play without move-count draw rules. DTW is the
number of plies until the game ends (the loser, to move, has no piece or no legal move): odd for
a win, even for a loss, 0 for a draw.

Positions (`pos` below) may be given as
  * a PDN FEN string: "W:W31,32,K33:B1,2,K3" (side to move, then each side's squares, K for
    kings; ranges "W31-35", a trailing dot and unknown ":X..." fields are accepted). Squares are
    PDN numbers of the table's variant: 1-50 international, 1-32 english/russian/brazilian
    (english as in English PDN: black on 1-12 starts), 1-72 canadian.
  * on 8x8 boards (english, russian, brazilian) also algebraic squares, a1 bottom left with
    white at the bottom: "W:Wc3,Ka1:Bh8" is "W:W22,K29:B4" (a1 = 29, c3 = 22, b8 = 1, h8 = 4).
  * a pydraughts Board (draughts.Board, 0.6+) or Game (draughts.core.game.Game) of variant
    standard, english, russian or brazilian: recognised by its class's module and its `variant`
    (pydraughts is not imported) and probed as the position it shows, whatever numbering
    pydraughts uses inside (see dtb._notation for the mapping, read from pydraughts'
    draughts/convert.py). Its variant must be the tablebase's.
  * any other object with a `fen` attribute or method returning a PDN FEN.

Errors: dtb.MissingTableError (a KeyError) when a table the position needs is not there,
dtb.InvalidPositionError (a ValueError) for a malformed FEN (a NUL or other control character
included) or an impossible position, dtb.IllegalMoveError (a ValueError) for a move play() does
not find among the legal ones, and dtb.TablebaseError, the base of these, for everything else (a
damaged file, no tables of the variant in the directories, ...). Messages quote the text given.
Arguments of the wrong type raise TypeError (cache_mb="big", variant=5, open_tablebase(None)),
of the right type but a wrong value ValueError (cache_mb=-1 or 1e30, variant="chess",
notation="chess").

Threads: a Tablebase may be probed from any number of threads at once (libdtb is thread-safe
and ctypes releases the GIL during each call); close() waits for running probes to finish.

Finding libdtb: the `library` argument of open_tablebase/version, else $DTB_LIBRARY, else the
package's own directory, else the lib directory of the prefix `cmake --install` put the package
under, else ctypes.util.find_library("dtb"). From a build tree:

    PYTHONPATH=probe/python DTB_LIBRARY=build/release/probe/libdtb.so python3 -c 'import dtb'
"""
import collections
import ctypes
import logging
import os
import threading

from . import _lib
from ._notation import (algebraic_to_square, square_to_algebraic, move_to_algebraic,
                        fen_from_algebraic, is_pydraughts, pydraughts_fen, PYDRAUGHTS_VARIANTS)

__all__ = [
    "open_tablebase", "Tablebase", "version", "version_number", "Move", "RuleAnswer", "RuleMove",
    "TablebaseError", "MissingTableError", "InvalidPositionError", "IllegalMoveError",
    "LibraryNotFoundError",
    "WIN", "DRAW", "LOSS", "VARIANTS",
    "algebraic_to_square", "square_to_algebraic", "move_to_algebraic",
]

WIN, DRAW, LOSS = 1, 0, -1
VARIANTS = ("international", "english", "russian", "brazilian", "canadian")

_logger = logging.getLogger("dtb")


class TablebaseError(Exception):
    """A failure of libdtb; `status` is its dtb_status number (dtb._lib.E_*), or None."""

    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status

    def __str__(self):
        return str(self.args[0]) if self.args else ""


class MissingTableError(TablebaseError, KeyError):
    """A table the position needs is not in the directories (the message names the material)."""


class InvalidPositionError(TablebaseError, ValueError):
    """A malformed FEN, or a position that cannot occur (a piece off the board, two on a square,
    a man on its promotion row, the side not to move without pieces), or of another variant."""


class IllegalMoveError(TablebaseError, ValueError):
    """A move that is not one of the position's legal moves (play())."""


class LibraryNotFoundError(TablebaseError, OSError):
    """libdtb was not found in any of the places searched (the message lists them)."""


class Move(collections.namedtuple("Move", "move wdl dtw")):
    """A legal move with its value for the side to move of the probed position: move is its
    text ("32-28", "28x19"; "c3-d4", "c3:e5" in algebraic notation), wdl the result if it is
    played, dtw the plies to the end of the game with this move included (0 for a draw).
    fen: the canonical FEN of the position after the move, in the notation of the move's text
    (an attribute, not a tuple field: `move, wdl, dtw = m` still unpacks)."""

    def __new__(cls, move, wdl, dtw, fen=None):
        self = super().__new__(cls, move, wdl, dtw)
        self.__dict__["fen"] = fen
        return self

    @property
    def fen(self):
        return self.__dict__.get("fen")


class RuleMove(collections.namedtuple("RuleMove", "move category plies clock fen diagonal",
                                      defaults=(0,))):
    """A legal move under the move-count draw rules, for the side to move of the probed
    position: move its text, category what playing it makes of the game ("win", "cursed-win",
    "draw", "blessed-loss", "loss"), plies the plies to the next reset of the count that keeps a
    win or loss, this move included (None otherwise), clock the count after it (0: the move
    resets it), fen the position after it, diagonal fmjd64's diagonal count after it."""


class RuleAnswer(collections.namedtuple(
        "RuleAnswer", "rules rule category wdl unlimited plies limit clock moves diagonal",
        defaults=(0,))):
    """A position under the move-count draw rules at a clock (Tablebase.probe_rules): rules the
    rule set ("fmjd", "wcdf", "fmjd64"; "none": unlimited play), rule the count that runs here
    ("25-move", "16-move", "5-move", ...; None under "none"), category ("win", "cursed-win": won in unlimited
    play but drawn by the rule, "draw", "blessed-loss", "loss"), wdl the result under the rules
    and unlimited the one without (WIN, DRAW, LOSS), plies the rule distance: the plies to the
    next reset of the count that keeps the result (None for a draw, and where no count lets the
    result happen), limit the plies the count may reach here, clock the count asked about,
    moves every legal move as RuleMove, ranked so that always playing the first never lets a
    rule draw a win, and diagonal fmjd64's diagonal count asked about (the plies a lone king
    held the main road, 7.2.7)."""


def version(library=None):
    """libdtb's version text ("0.2.0")."""
    text = ctypes.c_char_p()
    _lib.load(library).dtb_version(ctypes.byref(text))
    return text.value.decode()


def version_number(library=None):
    """libdtb's version as major * 10000 + minor * 100 + patch (DTB_VERSION_NUMBER)."""
    return _lib.load(library).dtb_version(None)


# Most block cache one may ask for (1 TiB): beyond it a number is a mistake (1e30), not a wish.
MAX_CACHE_MB = 1 << 20


def _check_open_arguments(directory, variant, cache_mb):
    """TypeError or ValueError for arguments open_tablebase cannot mean."""
    paths = [directory] if isinstance(directory, (str, bytes, os.PathLike)) else directory
    if not isinstance(paths, (list, tuple)) or not all(
            isinstance(d, (str, bytes, os.PathLike)) for d in paths):
        raise TypeError(f"directory is a path or a list of paths, not {directory!r}")
    for d in paths:
        if "\0" in (os.fsdecode(d)):
            raise ValueError(f"directory {os.fsdecode(d)!r} holds a NUL character")
    if variant is not None:
        if not isinstance(variant, str):
            raise TypeError(f"variant is a name such as 'international', not {variant!r}")
        if PYDRAUGHTS_VARIANTS.get(variant.lower(), variant.lower()) not in VARIANTS:
            raise ValueError(f"unknown variant {variant!r}: one of {', '.join(VARIANTS)} "
                             f"(or pydraughts' 'standard', 'american')")
    if cache_mb is not None:
        if isinstance(cache_mb, bool) or not isinstance(cache_mb, (int, float)):
            raise TypeError(f"cache_mb is a number of MiB, not {cache_mb!r}")
        if not 0 < cache_mb <= MAX_CACHE_MB:  # (NaN fails this too)
            raise ValueError(f"cache_mb is a number of MiB above 0 and at most {MAX_CACHE_MB}, "
                             f"not {cache_mb!r}")


def open_tablebase(directory, variant=None, cache_mb=None, *, library=None, log=None):
    """Opens the tables in directory (a path, or a list of paths searched in order; each may
    hold <variant>/ subdirectories as dtbgen writes them, or the table files).

    variant: "international", "english", "russian", "brazilian", "canadian" (pydraughts' names
    "standard" and "american" are accepted too); None: the variant of the tables found (an error
    when there are several). cache_mb: memory for decompressed blocks (None: libdtb's default,
    64 MiB). library: path of libdtb.so. log: called with each problem libdtb reports about the
    files (a damaged file, an unreadable directory); None: logged as warnings on the "dtb"
    logger. Raises TablebaseError when nothing can be opened, also when the directories hold no
    table of the variant asked for; TypeError or ValueError for arguments of a wrong type or
    value (a cache_mb that is not a number in 0 < cache_mb <= MAX_CACHE_MB, an unknown variant,
    a directory that is None)."""
    return Tablebase(directory, variant, cache_mb, library=library, log=log)


class Tablebase:
    """Tables of one variant, opened by open_tablebase(); also a context manager."""

    def __init__(self, directory, variant=None, cache_mb=None, *, library=None, log=None):
        self._db = None
        self._closed = True
        _check_open_arguments(directory, variant, cache_mb)
        self._lib = _lib.load(library)
        self._cond = threading.Condition()
        self._active = 0
        self._closed = False
        if isinstance(directory, (str, bytes, os.PathLike)):
            directory = [directory]
        dirs = [os.fsencode(d) for d in directory]
        if not dirs:
            raise TablebaseError("no table directory given", _lib.E_INVALID)
        if variant is not None:  # (names in any case: "Russian" is russian)
            variant = PYDRAUGHTS_VARIANTS.get(variant.lower(), variant.lower())
        opening = []  # what libdtb logs while opening: the reason of a failure
        user_log = log if log is not None else (lambda m: _logger.warning("%s", m))

        def on_log(_user, message):
            text = message.decode(errors="replace") if message else ""
            if self._db is None:  # dtb_open's own thread: said again by the exception, or below
                opening.append(text)
                return
            try:
                user_log(text)
            except Exception:  # a callback must not raise into C
                _logger.exception("dtb log callback failed")

        self._log_fn = _lib.LOG_FN(on_log)  # kept alive as long as the db
        self._paths = (ctypes.c_char_p * len(dirs))(*dirs)
        o = _lib.Options()
        o.struct_size = ctypes.sizeof(_lib.Options)
        o.paths = ctypes.cast(self._paths, ctypes.POINTER(ctypes.c_char_p))
        o.npaths = len(dirs)
        o.variant = variant.encode() if variant is not None else None
        o.cache_bytes = int(cache_mb * (1 << 20)) if cache_mb else 0
        o.log = self._log_fn
        o.texts = _lib.TEXTS_VARIANT  # (the texts here are written in the notation asked for)
        db = ctypes.c_void_p()
        s = self._lib.dtb_open(ctypes.byref(o), ctypes.byref(db))
        if s != _lib.OK:
            why = "; ".join(opening) or self._lib.dtb_strerror(s).decode()
            where = ", ".join(os.fsdecode(d) for d in dirs)
            raise TablebaseError(f"cannot open tables in {where}: {why}", s)
        self.variant = self._lib.dtb_db_variant(db).decode()
        if self._lib.dtb_max_pieces(db, False) < 2 and self._lib.dtb_max_pieces(db, True) < 2:
            # Nothing of this variant here: every probe would fail; say so now.
            self._lib.dtb_close(db)
            where = ", ".join(os.fsdecode(d) for d in dirs)
            raise TablebaseError(f"no {self.variant} tables in {where}", _lib.E_NOTFOUND)
        self._db = db
        for text in opening:  # problems that did not stop the opening (an unreadable directory)
            user_log(text)
        self.squares = self._lib.dtb_db_squares(db)
        # The notation the variant's players write: the default of every text returned.
        self.notation = ("algebraic" if self._lib.dtb_db_notation(db) == _lib.NOTATION_ALGEBRAIC
                         else "numeric")

    # ---- lifetime ---------------------------------------------------------------------------

    def close(self):
        """Closes the files and frees the cache; waits for probes running in other threads.
        Later probes raise TablebaseError. Closing twice does nothing."""
        with self._cond:
            if self._closed:
                return
            self._closed = True
            while self._active:
                self._cond.wait()
            db, self._db = self._db, None
        if db:
            self._lib.dtb_close(db)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        if getattr(self, "_db", None) and not getattr(self, "_closed", True):
            self.close()

    def _enter(self):
        with self._cond:
            if self._closed:
                raise TablebaseError("the tablebase is closed", _lib.E_INVALID)
            self._active += 1
            return self._db

    def _leave(self):
        with self._cond:
            self._active -= 1
            if self._active == 0 and self._closed:
                self._cond.notify_all()

    def __repr__(self):
        state = "closed" if self._closed else f"{self.squares} squares"
        return f"<dtb.Tablebase {getattr(self, 'variant', '?')} ({state})>"

    # ---- positions --------------------------------------------------------------------------

    def _fen_text(self, pos):
        if isinstance(pos, bytes):
            pos = pos.decode()
        if isinstance(pos, str):
            fen = pos
        elif is_pydraughts(pos):
            try:
                variant, fen = pydraughts_fen(pos)
            except ValueError as e:
                raise InvalidPositionError(str(e), _lib.E_INVALID) from None
            if variant != self.variant:
                raise InvalidPositionError(
                    f"a pydraughts {pos.variant} board, but these are {self.variant} tables",
                    _lib.E_INVALID)
        elif hasattr(pos, "fen"):
            fen = pos.fen() if callable(pos.fen) else pos.fen
            if isinstance(fen, bytes):
                fen = fen.decode()
            if not isinstance(fen, str):
                raise TypeError(f"{type(pos).__name__}.fen gave {type(fen).__name__}, not a FEN")
        else:
            raise TypeError(f"a position is a FEN string or an object with a fen attribute or "
                            f"method, not {type(pos).__name__}")
        given = fen  # what errors quote: the text the caller wrote, not a conversion of it
        bad = next((c for c in fen if ord(c) < 0x20 or ord(c) == 0x7f), None)
        if bad is not None:  # a NUL would end the C string: the FEN would be read shorter
            raise InvalidPositionError(f"bad FEN {given!r}: a control character "
                                       f"({bad!r})", _lib.E_INVALID)
        if self.squares == 32:
            try:
                fen = fen_from_algebraic(fen)
            except ValueError as e:
                raise InvalidPositionError(f"bad FEN {given!r}: {e}", _lib.E_INVALID) from None
        return given, fen

    def _position(self, db, pos):
        given, fen = self._fen_text(pos)
        p = _lib.Position()
        err = ctypes.create_string_buffer(_lib.MESSAGE_SIZE)
        try:
            raw = fen.encode("ascii")
        except UnicodeEncodeError:
            raise InvalidPositionError(f"bad FEN {given!r}: not ASCII", _lib.E_INVALID) from None
        s = self._lib.dtb_position_from_fen(db, raw, ctypes.byref(p), err, len(err))
        if s != _lib.OK:
            raise InvalidPositionError(f"bad FEN {given!r}: {err.value.decode()}", s)
        return p

    def _raise(self, db, status):
        """The exception for a failed probe; reads dtb_last_error in this thread, right after the
        failing call (libdtb keeps each thread's own message)."""
        buf = ctypes.create_string_buffer(_lib.MESSAGE_SIZE)
        self._lib.dtb_last_error(db, buf, len(buf))
        msg = buf.value.decode(errors="replace") or self._lib.dtb_strerror(status).decode()
        if status == _lib.E_NOTFOUND:
            return MissingTableError(msg, status)
        if status == _lib.E_INVALID:
            return InvalidPositionError(msg, status)
        return TablebaseError(msg, status)

    def fen(self, pos, notation=None):
        """The canonical PDN FEN of pos as the tables read it (squares ascending), in notation
        ("numeric" or "algebraic"; None: the variant's, self.notation): shows what a pydraughts
        board or an algebraic FEN was taken to be."""
        n = self._notation_code(notation)
        db = self._enter()
        try:
            p = self._position(db, pos)
            buf = ctypes.create_string_buffer(_lib.FEN_SIZE)
            s = self._lib.dtb_position_to_fen_in(db, ctypes.byref(p), n, buf, len(buf))
            if s != _lib.OK:
                raise self._raise(db, s)
            return buf.value.decode()
        finally:
            self._leave()

    # ---- probes -----------------------------------------------------------------------------

    def probe_wdl(self, pos):
        """1 (win), 0 (draw) or -1 (loss) for the side to move. Raises MissingTableError,
        InvalidPositionError, TablebaseError."""
        db = self._enter()
        try:
            p = self._position(db, pos)
            wdl = ctypes.c_int()
            s = self._lib.dtb_probe_wdl(db, ctypes.byref(p), 0, ctypes.byref(wdl))
            if s == _lib.E_GAMEOVER:  # no piece to move: lost
                return LOSS
            if s != _lib.OK:
                raise self._raise(db, s)
            return wdl.value
        finally:
            self._leave()

    def probe_dtw(self, pos):
        """(wdl, dtw): the result and the plies to the end of the game (0 for a draw). Needs the
        .dtw tables."""
        db = self._enter()
        try:
            p = self._position(db, pos)
            wdl, dtw = ctypes.c_int(), ctypes.c_int()
            s = self._lib.dtb_probe_dtw(db, ctypes.byref(p), 0, ctypes.byref(wdl),
                                        ctypes.byref(dtw))
            if s == _lib.E_GAMEOVER:  # no piece to move: lost in 0 plies
                return LOSS, 0
            if s != _lib.OK:
                raise self._raise(db, s)
            return wdl.value, dtw.value
        finally:
            self._leave()

    def probe_mtc(self, pos):
        """(wdl, mtc): the result and the plies to the next conversion (a capture or a man move)
        that keeps the win, the winner taking the shortest way, the loser the longest (0 for a
        draw; docs/FORMAT.md 8.5). Needs the .mtc tables (dtbgen --metrics wld,dtw,mtc)."""
        db = self._enter()
        try:
            p = self._position(db, pos)
            wdl, mtc = ctypes.c_int(), ctypes.c_int()
            s = self._lib.dtb_probe_mtc(db, ctypes.byref(p), 0, ctypes.byref(wdl),
                                        ctypes.byref(mtc))
            if s == _lib.E_GAMEOVER:  # no piece to move: lost, nothing left to convert
                return LOSS, 0
            if s != _lib.OK:
                raise self._raise(db, s)
            return wdl.value, mtc.value
        finally:
            self._leave()

    def get_mtc(self, pos, default=None):
        """probe_mtc(pos), or default when a table it needs is missing."""
        try:
            return self.probe_mtc(pos)
        except MissingTableError:
            return default

    def get_wdl(self, pos, default=None):
        """probe_wdl(pos), or default when a table it needs is missing."""
        try:
            return self.probe_wdl(pos)
        except MissingTableError:
            return default

    def get_dtw(self, pos, default=None):
        """probe_dtw(pos), or default when a table it needs is missing."""
        try:
            return self.probe_dtw(pos)
        except MissingTableError:
            return default

    def _notation_code(self, notation):
        """libdtb's dtb_notation for notation: None (the variant's), "numeric" ("pdn", its name
        before 0.2.0) or "algebraic" (names on any board: "c3-d4", captures "c3:e5")."""
        if notation is None:
            notation = self.notation
        if notation in ("numeric", "pdn"):
            return _lib.NOTATION_NUMERIC
        if notation == "algebraic":
            return _lib.NOTATION_ALGEBRAIC
        raise ValueError(f"notation is 'numeric' or 'algebraic' (None: the variant's), "
                         f"not {notation!r}")

    def _move_text(self, db, p, move, n):
        buf = ctypes.create_string_buffer(_lib.MOVE_TEXT_SIZE)
        s = self._lib.dtb_move_to_text(db, ctypes.byref(p), ctypes.byref(move), n, buf, len(buf))
        if s != _lib.OK:
            raise self._raise(db, s)
        return buf.value.decode()

    def _all_moves(self, db, struct, probe, p, *args):
        """Every move probe (dtb_probe_moves or dtb_probe_rule_moves, with args before its
        out, cap, count) gives for p, in an array grown until they fit."""
        cap = 64
        while True:
            out = (struct * cap)()
            count = ctypes.c_int()
            s = probe(db, ctypes.byref(p), *args, out, cap, ctypes.byref(count))
            if s == _lib.E_OVERFLOW and count.value > cap:
                cap = count.value
                continue
            if s != _lib.OK:
                raise self._raise(db, s)
            return out[:count.value]

    def moves(self, pos, notation=None):
        """Every legal move of pos with its value, best first (wins by shortest DTW, then draws,
        then losses by longest DTW): a list of Move(move, wdl, dtw); [] when the side to move
        has no move. notation: "numeric" ("22-18", "22x13") or "algebraic" ("c3-d4",
        "c3:a5"); None, the default: the variant's (self.notation: algebraic in russian and
        brazilian, what pydraughts' Move(board, pdn_move=...) reads there)."""
        n = self._notation_code(notation)
        db = self._enter()
        try:
            p = self._position(db, pos)
            out = self._all_moves(db, _lib.RankedMove, self._lib.dtb_probe_moves, p, 0)
            return [Move(self._move_text(db, p, m.move, n), m.wdl, m.dtw,
                         self._fen_after(db, p, m.move, n)) for m in out]
        finally:
            self._leave()

    def _fen_after(self, db, p, move, n):
        after = _lib.Position()
        s = self._lib.dtb_position_after(db, ctypes.byref(p), ctypes.byref(move),
                                         ctypes.byref(after))
        if s != _lib.OK:
            raise self._raise(db, s)
        buf = ctypes.create_string_buffer(_lib.FEN_SIZE)
        s = self._lib.dtb_position_to_fen_in(db, ctypes.byref(after), n, buf, len(buf))
        if s != _lib.OK:
            raise self._raise(db, s)
        return buf.value.decode()

    def play(self, pos, move, notation=None):
        """The canonical FEN (in notation; None: the variant's) of the position after move, a
        legal move of pos given as a Move or as its text in either notation ("28-22", "c3-d4";
        "28x19", "c3:e5"; a capture may also be written with its full path of squares, as
        moves() writes it when two captures share their ends). Walking a game:
        `fen = tb.play(fen, tb.moves(fen)[0])`. Raises IllegalMoveError when move is none of
        pos's legal moves (the message lists them), InvalidPositionError, MissingTableError
        (the moves are found by a probe: the tables of the positions after them are needed)."""
        if isinstance(move, Move):
            text = move.move
        elif isinstance(move, str):
            text = move
        else:
            raise TypeError(f"a move is a Move or its text, not {type(move).__name__}")
        n = self._notation_code(notation)
        db = self._enter()
        try:
            p = self._position(db, pos)
            count = ctypes.c_int()
            s = self._lib.dtb_probe_moves(db, ctypes.byref(p), 0, None, 0, ctypes.byref(count))
            if s not in (_lib.OK, _lib.E_OVERFLOW):
                raise self._raise(db, s)
            out = (_lib.RankedMove * max(count.value, 1))()
            s = self._lib.dtb_probe_moves(db, ctypes.byref(p), 0, out, count.value,
                                          ctypes.byref(count))
            if s != _lib.OK:
                raise self._raise(db, s)
            wanted = text.strip().lower().replace("x", ":")
            texts, by_ends = [], []
            for m in out[:count.value]:
                names = [self._move_text(db, p, m.move, c).lower().replace("x", ":")
                         for c in (_lib.NOTATION_NUMERIC, _lib.NOTATION_ALGEBRAIC)]
                texts.append(self._move_text(db, p, m.move, n))
                if wanted in names:
                    return self._fen_after(db, p, m.move, n)
                # a capture by its ends alone ("c3:c7" for "c3:e5:c7"), if no other has them
                ends = {":".join(t.split(":")[::max(1, len(t.split(":")) - 1)]) for t in names
                        if ":" in t}
                if wanted in ends:
                    by_ends.append(m)
            if len(by_ends) == 1:
                return self._fen_after(db, p, by_ends[0].move, n)
            raise IllegalMoveError(
                f"{text!r} is not a legal move of {pos if isinstance(pos, str) else self.fen(pos)!r}"
                f" (legal: {', '.join(texts) or 'none, the game is over'})", _lib.E_INVALID)
        finally:
            self._leave()

    def line(self, pos, notation=None):
        """The best line from pos to the end of the game (the winner's quickest win, the
        loser's longest resistance) as move texts in notation (as for moves); [] for a draw and
        when the game is over."""
        n = self._notation_code(notation)
        db = self._enter()
        try:
            p = self._position(db, pos)
            out = (_lib.PdnMove * _lib.MAX_LINE)()
            count = ctypes.c_int()
            s = self._lib.dtb_probe_line(db, ctypes.byref(p), 0, out, _lib.MAX_LINE,
                                         ctypes.byref(count))
            if s != _lib.OK:
                raise self._raise(db, s)
            texts = []
            for m in out[:count.value]:  # each move written from the position it is played in
                texts.append(self._move_text(db, p, m, n))
                after = _lib.Position()
                s = self._lib.dtb_position_after(db, ctypes.byref(p), ctypes.byref(m),
                                                 ctypes.byref(after))
                if s != _lib.OK:
                    raise self._raise(db, s)
                p = after
            return texts
        finally:
            self._leave()

    # ---- under the move-count draw rules -----------------------------------------------------

    def _clock(self, pos, clock):
        """clock as given (a count of plies >= 0), or None: the H field of pos's FEN, else 0."""
        if clock is not None:
            if isinstance(clock, bool) or not isinstance(clock, int):
                raise TypeError(f"clock is an int (plies since the count was reset), "
                                f"not {type(clock).__name__}")
            if not 0 <= clock <= 1000000:
                raise ValueError(f"clock is a count of plies 0..1000000, not {clock}")
            return clock
        given, fen = self._fen_text(pos)
        value, err = ctypes.c_int(), ctypes.create_string_buffer(_lib.MESSAGE_SIZE)
        s = self._lib.dtb_fen_clock(fen.encode("ascii", "replace"), ctypes.byref(value), err,
                                    len(err))
        if s != _lib.OK:
            raise InvalidPositionError(f"bad FEN {given!r}: {err.value.decode()}", s)
        return value.value

    def probe_rules(self, pos, clock=None, rules=None, notation=None, diagonal=0):
        """What the move-count draw rules make of pos with the count at clock plies: a
        RuleAnswer, its moves in notation (as for moves()). clock: None (the default) takes the
        FEN's H field ("W:W31:B1:H12", lidraughts' halfmove clock), else 0. rules: None (the
        variant's: "fmjd" for international, "wcdf" for english, "fmjd64" for russian and
        brazilian; "none" for a variant dtb has no rules for), "fmjd", "wcdf", "fmjd64", or
        "none" (unlimited play: categories win, draw, loss; no plies, no limit). diagonal:
        fmjd64's count of plies that ended with a lone king alone on the main road (7.2.7;
        lidraughts keeps it outside the FEN, 0 from one).
        Raises MissingTableError (no rule tables for the material: dtbgen --metrics
        wld,dtw,rules), InvalidPositionError (a malformed FEN or H field), ValueError (rules
        not one of those, or not the variant's; a clock or diagonal out of 0..1000000),
        TypeError (a clock or diagonal that is not an int)."""
        if rules not in (None, "fmjd", "wcdf", "fmjd64", "none"):
            raise ValueError(f"rules is 'fmjd', 'wcdf', 'fmjd64' or 'none' (None: the "
                             f"variant's), not {rules!r}")
        if isinstance(diagonal, bool) or not isinstance(diagonal, int):
            raise TypeError(f"diagonal is an int (plies on the main road), "
                            f"not {type(diagonal).__name__}")
        if not 0 <= diagonal <= 1000000:
            raise ValueError(f"diagonal is a count of plies 0..1000000, not {diagonal}")
        clock = self._clock(pos, clock)
        n = self._notation_code(notation)
        if rules == "none":
            wdl = self.probe_wdl(pos)
            cat = {WIN: "win", DRAW: "draw", LOSS: "loss"}
            moves = [RuleMove(m.move, cat[m.wdl], None, None, m.fen)
                     for m in self.moves(pos, notation)]
            return RuleAnswer("none", None, cat[wdl], wdl, wdl, None, None, clock, moves)
        db = self._enter()
        try:
            p = self._position(db, pos)
            a = _lib.RuleAnswer()
            c = _lib.RuleCounters(clock, diagonal)
            s = self._lib.dtb_probe_rules_at(db, ctypes.byref(p), ctypes.byref(c), 0,
                                             ctypes.byref(a))
            if s == _lib.E_GAMEOVER:  # no piece to move: lost at any count, no move
                return RuleAnswer(rules or "none", None, "loss", LOSS, LOSS, 0, None, clock, [],
                                  diagonal)
            if s != _lib.OK:
                raise self._raise(db, s)
            name = a.rules.decode()
            if rules is not None and name != rules:
                raise ValueError(f"the {self.variant} tables are answered under {name!r}, "
                                 f"not {rules!r}")
            out = self._all_moves(db, _lib.RuleMove, self._lib.dtb_probe_rule_moves_at, p,
                                  ctypes.byref(c), 0)
            moves = [RuleMove(self._move_text(db, p, m.move, n), _lib.RULE_CATEGORIES[m.category],
                              m.plies if m.plies >= 0 else None, m.clock,
                              self._fen_after(db, p, m.move, n),
                              self._counters_after(db, p, c, m.move).diagonal) for m in out]
            return RuleAnswer(name, a.rule.decode() or None, _lib.RULE_CATEGORIES[a.category],
                              a.wdl, a.unlimited, a.plies if a.plies >= 0 else None,
                              a.limit or None, clock, moves, diagonal)
        finally:
            self._leave()

    def _counters_after(self, db, p, c, move):
        """The rule counters after move of p when they are c before it."""
        after = _lib.RuleCounters()
        s = self._lib.dtb_rule_counters_after(db, ctypes.byref(p), ctypes.byref(c),
                                              ctypes.byref(move), ctypes.byref(after))
        if s != _lib.OK:
            raise self._raise(db, s)
        return after

    def get_rules(self, pos, clock=None, default=None):
        """probe_rules(pos, clock), or default when a table it needs is missing."""
        try:
            return self.probe_rules(pos, clock)
        except MissingTableError:
            return default

    # ---- about the tables ---------------------------------------------------------------------

    def max_pieces(self, dtw=False):
        """The largest n such that every material of 2..n pieces has a table (for WDL probes, or
        DTW probes when dtw is true); 1 when not even all 2-piece tables are there."""
        db = self._enter()
        try:
            return self._lib.dtb_max_pieces(db, bool(dtw))
        finally:
            self._leave()

    def cache_stats(self):
        """The block cache's counters since opening: dict of hits, misses, bytes, blocks."""
        db = self._enter()
        try:
            st = _lib.CacheStats()
            st.struct_size = ctypes.sizeof(_lib.CacheStats)
            s = self._lib.dtb_get_cache_stats(db, ctypes.byref(st))
            if s != _lib.OK:
                raise TablebaseError(self._lib.dtb_strerror(s).decode(), s)
            return {"hits": st.hits, "misses": st.misses, "bytes": st.bytes, "blocks": st.blocks}
        finally:
            self._leave()
