"""ctypes declarations of libdtb's public API (probe/dtb.h) and how the library is found.

The structs mirror dtb.h for DTB_API_VERSION 2 (the soname libdtb.so.2): the value types
(dtb_position, dtb_pdn_move, dtb_ranked_move) are fixed for an API version, and dtb_options
carries struct_size, set here to the size this module declares (DTB_OPTIONS_INIT semantics), so
a newer libdtb keeps reading it. tests/python/test_dtb.py checks these layouts against the C
compiler's when one is at hand.
"""
import ctypes
import ctypes.util
import os
import threading

API_VERSION = 2  # DTB_API_VERSION these declarations follow

# dtb_status (core/dtb_status.h)
OK = 0
E_INVALID = 1
E_RANGE = 2
E_OVERFLOW = 3
E_NOTFOUND = 4
E_IO = 5
E_NOSPACE = 6
E_CORRUPT = 7
E_VERSION = 8
E_MISMATCH = 9
E_NOMEM = 10
E_ABORTED = 11
E_NOTCACHED = 12
E_GAMEOVER = 13
E_NOROOM = 14

MESSAGE_SIZE = 256      # DTB_MESSAGE_SIZE
MOVE_TEXT_SIZE = 128    # DTB_MOVE_TEXT_SIZE
MAX_CAPTURED = 32       # DTB_MAX_CAPTURED
MAX_LINE = 1022         # DTB_MAX_LINE (= DTB_MAX_DTW)
FEN_SIZE = 400          # "400 bytes is always enough" (dtb_position_to_fen)

LOG_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p)


class Options(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("paths", ctypes.POINTER(ctypes.c_char_p)),
        ("npaths", ctypes.c_int),
        ("variant", ctypes.c_char_p),
        ("cache_bytes", ctypes.c_uint64),
        ("log", LOG_FN),
        ("log_user", ctypes.c_void_p),
        ("loader_threads", ctypes.c_int),
        ("texts", ctypes.c_int),
    ]


# dtb_notation, and dtb_options.texts
NOTATION_NUMERIC, NOTATION_ALGEBRAIC = 0, 1
TEXTS_VARIANT = 0


class Position(ctypes.Structure):
    _fields_ = [
        ("men", (ctypes.c_uint64 * 2) * 2),
        ("kings", (ctypes.c_uint64 * 2) * 2),
        ("side", ctypes.c_int),
    ]


class PdnMove(ctypes.Structure):
    _fields_ = [
        ("from_", ctypes.c_int),
        ("to", ctypes.c_int),
        ("ncaptured", ctypes.c_int),
        ("captured", ctypes.c_ubyte * MAX_CAPTURED),
        ("promotes", ctypes.c_bool),
        ("text", ctypes.c_char * MOVE_TEXT_SIZE),
    ]


class RankedMove(ctypes.Structure):
    _fields_ = [
        ("move", PdnMove),
        ("wdl", ctypes.c_int),
        ("dtw", ctypes.c_int),
    ]


class RuleAnswer(ctypes.Structure):
    _fields_ = [
        ("rules", ctypes.c_char * 16),
        ("rule", ctypes.c_char * 16),
        ("category", ctypes.c_int),
        ("wdl", ctypes.c_int),
        ("unlimited", ctypes.c_int),
        ("plies", ctypes.c_int),
        ("limit", ctypes.c_int),
        ("clock", ctypes.c_int),
    ]


class RuleCounters(ctypes.Structure):
    _fields_ = [
        ("clock", ctypes.c_int),
        ("diagonal", ctypes.c_int),
    ]


class RuleMove(ctypes.Structure):
    _fields_ = [
        ("move", PdnMove),
        ("category", ctypes.c_int),
        ("plies", ctypes.c_int),
        ("clock", ctypes.c_int),
    ]


# dtb_rule_category, by the names lichess's tablebase API and dtb_rule_category_name give
RULE_CATEGORIES = {2: "win", 1: "cursed-win", 0: "draw", -1: "blessed-loss", -2: "loss"}


class CacheStats(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("hits", ctypes.c_uint64),
        ("misses", ctypes.c_uint64),
        ("bytes", ctypes.c_uint64),
        ("blocks", ctypes.c_uint64),
    ]


_P = ctypes.POINTER
_int, _uint, _char_p, _void_p = ctypes.c_int, ctypes.c_uint, ctypes.c_char_p, ctypes.c_void_p
_size_t, _bool = ctypes.c_size_t, ctypes.c_bool

# name: (restype, argtypes)
_PROTOTYPES = {
    "dtb_version": (_int, [_P(_char_p)]),
    "dtb_strerror": (_char_p, [_int]),
    "dtb_open": (_int, [_P(Options), _P(_void_p)]),
    "dtb_close": (None, [_void_p]),
    "dtb_db_variant": (_char_p, [_void_p]),
    "dtb_db_squares": (_int, [_void_p]),
    "dtb_max_pieces": (_int, [_void_p, _bool]),
    "dtb_last_error": (_int, [_void_p, _char_p, _size_t]),
    "dtb_position_from_fen": (_int, [_void_p, _char_p, _P(Position), _char_p, _size_t]),
    "dtb_position_to_fen": (_int, [_void_p, _P(Position), _char_p, _size_t]),
    "dtb_position_to_fen_in": (_int, [_void_p, _P(Position), _int, _char_p, _size_t]),
    "dtb_db_notation": (_int, [_void_p]),
    "dtb_move_to_text": (_int, [_void_p, _P(Position), _P(PdnMove), _int, _char_p, _size_t]),
    "dtb_position_after": (_int, [_void_p, _P(Position), _P(PdnMove), _P(Position)]),
    "dtb_probe_wdl": (_int, [_void_p, _P(Position), _uint, _P(_int)]),
    "dtb_probe_dtw": (_int, [_void_p, _P(Position), _uint, _P(_int), _P(_int)]),
    "dtb_probe_mtc": (_int, [_void_p, _P(Position), _uint, _P(_int), _P(_int)]),
    "dtb_probe_moves": (_int, [_void_p, _P(Position), _uint, _P(RankedMove), _int, _P(_int)]),
    "dtb_probe_line": (_int, [_void_p, _P(Position), _uint, _P(PdnMove), _int, _P(_int)]),
    "dtb_get_cache_stats": (_int, [_void_p, _P(CacheStats)]),
    "dtb_fen_clock": (_int, [_char_p, _P(_int), _char_p, _size_t]),
    "dtb_probe_rules": (_int, [_void_p, _P(Position), _int, _uint, _P(RuleAnswer)]),
    "dtb_probe_rules_at": (_int, [_void_p, _P(Position), _P(RuleCounters), _uint,
                                  _P(RuleAnswer)]),
    "dtb_probe_rule_moves_at": (_int, [_void_p, _P(Position), _P(RuleCounters), _uint,
                                       _P(RuleMove), _int, _P(_int)]),
    "dtb_rule_counters_after": (_int, [_void_p, _P(Position), _P(RuleCounters), _P(PdnMove),
                                       _P(RuleCounters)]),
    "dtb_probe_rule_moves": (_int, [_void_p, _P(Position), _int, _uint, _P(RuleMove), _int,
                                    _P(_int)]),
}

# The file names to try in a directory: the soname these declarations are written for first.
_NAMES = ("libdtb.so.%d" % API_VERSION, "libdtb.so", "libdtb.dylib", "dtb.dll")

_lock = threading.Lock()
_loaded = {}  # resolved path -> CDLL
_default = None


def _declare(lib, path):
    for name, (restype, argtypes) in _PROTOTYPES.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            raise OSError(f"{path} is not libdtb {API_VERSION}.x: it has no {name}") from None
        fn.restype = restype
        fn.argtypes = argtypes
    return lib


def _candidates():
    """(where, path) pairs in search order, after an explicit path: $DTB_LIBRARY, the package's
    own directory, the install prefix's lib directory, then the system's search."""
    out = []
    env = os.environ.get("DTB_LIBRARY")
    if env:
        out.append(("$DTB_LIBRARY", env))
    here = os.path.dirname(os.path.abspath(__file__))
    dirs = [("the package directory", here)]
    try:
        from . import _install  # written by `cmake --install`
        for d in (os.path.normpath(os.path.join(here, _install.LIBDIR_RELATIVE)), _install.LIBDIR):
            dirs.append(("the install prefix's lib directory", d))
    except ImportError:
        pass
    for where, d in dirs:
        for n in _NAMES:
            p = os.path.join(d, n)
            if os.path.exists(p):
                out.append((where, p))
    found = ctypes.util.find_library("dtb")
    if found:
        out.append(("ctypes.util.find_library('dtb')", found))
    return out


def load(path=None):
    """The libdtb CDLL: the given file, else the first of the places _candidates() lists.
    Raises OSError (a LibraryNotFoundError when nothing was found) naming what was tried."""
    global _default
    with _lock:
        if path is None and _default is not None:
            return _default
        tries = [("the path given", os.fspath(path))] if path is not None else _candidates()
        errors = []
        for where, p in tries:
            key = os.path.realpath(p) if os.path.exists(p) else p
            if key in _loaded:
                lib = _loaded[key]
                break
            try:
                lib = _declare(ctypes.CDLL(p), p)
            except OSError as e:
                if where in ("the path given", "$DTB_LIBRARY"):
                    raise OSError(f"cannot load libdtb from {p} ({where}): {e}") from None
                errors.append(f"{p} ({where}): {e}")
                continue
            _loaded[key] = lib
            break
        else:
            from . import LibraryNotFoundError
            detail = "; ".join(errors) if errors else "nothing found"
            raise LibraryNotFoundError(
                "libdtb not found: give its path (dtb.open_tablebase(..., library=PATH)) or set "
                "DTB_LIBRARY (e.g. build/release/probe/libdtb.so), install it with `cmake "
                "--install`, or put it on the loader's path (" + detail + ")")
        if path is None:
            _default = lib
        return lib
