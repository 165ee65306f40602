"""libc63 (include/c63/c63.h) through ctypes, for the workers that encode
and decode in their own process: the structs and functions c63farm.inprocess
uses, and c63-enc's and c63-dec's options turned into the parameter structs
the way the tools fill them (tools/cliutil.c), so that the bytes are the
tools' own.

Standard library only: this module travels to the workers with the job
(c63farm.cluster.WORKER_MODULES). ctypes releases the GIL around every
call, so reader threads run while the library encodes.
SPDX-License-Identifier: LGPL-2.1-or-later
"""
import ctypes
import os
import sys
import types

SONAME = "libc63.so.1"
_STATE_MODULE = "_c63farm_worker_state"

OK = 0
ERR_AGAIN = -5
ERR_EOF = -6
BACKENDS = {"cpu": 0, "cuda": 1}
MODES = {"exact": 0, "rd": 1}
RATE_CONTROLS = {"quality": 0, "abr": 1, "cbr": 2}
RC_QUALITY, RC_ABR = 0, 1
MEMORY_HOST = 0
SCAN_NEED_DATA, SCAN_SKIP, SCAN_FRAME = 0, 1, 2

# The parameter structs grow at the end (c63.h): c63_*_params_init fills
# the library's whole layout in a buffer this large, and the fields below
# are its start.
PARAMS_ROOM = 4096


def _define():
    """The structs of c63.h, and the functions' signatures. Made when a
    worker loads the library, never at import: a module's import stays
    cheap where the library is never loaded (the driver)."""
    C = ctypes

    class EncParams(C.Structure):
        _fields_ = [("size", C.c_size_t), ("width", C.c_int), ("height", C.c_int),
                    ("quality", C.c_int), ("keyframe_interval", C.c_int),
                    ("search_range", C.c_int), ("backend", C.c_int), ("device_id", C.c_int),
                    ("threads", C.c_int), ("cuda_context", C.c_void_p), ("mode", C.c_int),
                    ("rate_control", C.c_int), ("bitrate", C.c_int), ("buffer_ms", C.c_int),
                    ("fps_num", C.c_int), ("fps_den", C.c_int)]

    class DecParams(C.Structure):
        _fields_ = [("size", C.c_size_t), ("backend", C.c_int), ("device_id", C.c_int),
                    ("threads", C.c_int), ("cuda_context", C.c_void_p)]

    class DecodedPicture(C.Structure):
        _fields_ = [("data", C.c_void_p * 3), ("stride", C.c_int * 3), ("memory", C.c_int),
                    ("width", C.c_int), ("height", C.c_int), ("keyframe", C.c_int),
                    ("user", C.c_int64)]

    class FrameHeader(C.Structure):
        _fields_ = [("width", C.c_int), ("height", C.c_int), ("keyframe", C.c_int),
                    ("has_quant", C.c_int), ("quant", (C.c_uint8 * 64) * 3),
                    ("data_offset", C.c_size_t), ("data_size", C.c_size_t),
                    ("frame_size", C.c_size_t)]

    class ScanResult(C.Structure):
        _fields_ = [("size", C.c_size_t), ("complete", C.c_int), ("too_long", C.c_int),
                    ("limit", C.c_size_t), ("hdr", FrameHeader)]

    class Scanner(C.Structure):
        _fields_ = [("opaque", C.c_uint64 * 8)]

    P, VP, INT, SIZE, STR = C.POINTER, C.c_void_p, C.c_int, C.c_size_t, C.c_char_p
    signatures = {
        "c63_enc_params_init": (None, [VP]),
        "c63_encoder_new": (INT, [VP, P(VP), STR, SIZE]),
        "c63_encoder_free": (None, [VP]),
        "c63_encoder_error": (STR, [VP]),
        "c63_encoder_backend_name": (STR, [VP]),
        "c63_dec_params_init": (None, [VP]),
        "c63_decoder_new": (INT, [VP, P(VP), STR, SIZE]),
        "c63_decoder_free": (None, [VP]),
        "c63_decoder_flush": (None, [VP]),
        "c63_decoder_backend_name": (STR, [VP]),
        "c63_decoder_send_packet": (INT, [VP, VP, SIZE, C.c_int64]),
        "c63_decoder_receive_picture": (INT, [VP, P(DecodedPicture)]),
        "c63_decoder_copy_picture": (INT, [VP, P(DecodedPicture), P(VP), P(INT), INT]),
        "c63_frame_scanner_init": (None, [P(Scanner)]),
        "c63_frame_scan": (INT, [P(Scanner), VP, SIZE, INT, P(ScanResult)]),
    }
    structs = types.SimpleNamespace(EncParams=EncParams, DecParams=DecParams,
                                    DecodedPicture=DecodedPicture,
                                    ScanResult=ScanResult, Scanner=Scanner)
    return structs, signatures


class LibraryMissing(Exception):
    """No libc63 this process can load (the worker then runs the tools)."""


class Failed(Exception):
    """libc63 refused or failed: the message is the library's."""


def worker_state():
    """What outlives a task in a worker process: the libraries loaded and
    the kept encoder or decoder. It hangs on a module of its own, shared
    by every version of the worker modules a long-lived worker imports
    (a job's package is named by its sources' hash), since the libraries
    are loaded once a process."""
    state = sys.modules.get(_STATE_MODULE)
    if state is None:
        state = types.ModuleType(_STATE_MODULE)
        state.libraries, state.kept = {}, {}
        sys.modules[_STATE_MODULE] = state
    return state


def load(candidates):
    """libc63 with its structs (lib.t), the first of CANDIDATES (paths;
    missing ones are passed over) that loads, else the soname through the
    dynamic loader (LD_LIBRARY_PATH, ld.so.cache); loaded once per process.
    LibraryMissing when none loads."""
    def define(lib):
        lib.t, signatures = _define()
        return signatures
    return _load("libc63", list(candidates) + [SONAME], define)


def load_worker(candidates):
    """The workers' chunk encoder and mapped output (tools/farm_worker.h),
    the first of CANDIDATES that loads, once per process; load libc63 first, so that
    this library's libc63 is the one already loaded (the same soname).
    LibraryMissing when none loads."""
    C = ctypes
    VP = C.c_void_p
    signatures = {
        "c63farm_chunks_new": (VP, [VP, C.c_int, C.c_int, C.c_int]),
        "c63farm_chunks_free": (None, [VP]),
        "c63farm_encode_chunk": (C.c_int, [VP, C.c_int, C.c_int64, C.c_long, C.c_int,
                                           C.POINTER(C.c_uint64), C.c_char_p, C.c_size_t]),
        "c63farm_output_open": (VP, [C.c_int]),
        "c63farm_output_put": (C.c_int, [VP, C.c_uint64, VP, C.c_size_t]),
        "c63farm_output_close": (C.c_int, [VP]),
    }
    return _load("libc63farm", candidates, lambda lib: signatures)


def _load(what, candidates, define):
    """The first of CANDIDATES (paths, or a soname for the dynamic loader)
    that loads and has every function DEFINE(lib) gives the signature of,
    set; once per process."""
    libraries = worker_state().libraries
    key = (what,) + tuple(candidates)
    if key in libraries:
        return libraries[key]
    errors = []
    for path in [p for p in candidates if p and (os.path.exists(p) or "/" not in p)]:
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            errors.append(str(e))
            continue
        try:
            for name, (restype, argtypes) in define(lib).items():
                fn = getattr(lib, name)
                fn.restype, fn.argtypes = restype, argtypes
        except AttributeError:
            errors.append("%s: no %s (another version of %s)" % (path, name, what))
            continue
        libraries[key] = lib
        return lib
    raise LibraryMissing("; ".join(errors) or "no %s" % what)


def _int(text):
    return int(text, 10)


def _fps(params, text):
    num, _, den = text.partition("/")
    params.fps_num, params.fps_den = _int(num), _int(den) if den else 1


# c63-enc's options as tools/cliutil.c's cli_enc_option applies them, in
# the order given: a bitrate alone means an average bitrate.
def _bitrate(params, text):
    if params.rate_control == RC_QUALITY:
        params.rate_control = RC_ABR
    params.bitrate = _int(text)


_ENC_OPTIONS = {
    "width": lambda p, v: setattr(p, "width", _int(v)),
    "height": lambda p, v: setattr(p, "height", _int(v)),
    "quality": lambda p, v: setattr(p, "quality", _int(v)),
    "keyframe-interval": lambda p, v: setattr(p, "keyframe_interval", _int(v)),
    "search-range": lambda p, v: setattr(p, "search_range", _int(v)),
    "threads": lambda p, v: setattr(p, "threads", _int(v)),
    "device": lambda p, v: setattr(p, "device_id", _int(v)),
    "buffer": lambda p, v: setattr(p, "buffer_ms", _int(v)),
    "bitrate": _bitrate,
    "rate-control": lambda p, v: setattr(p, "rate_control", RATE_CONTROLS[v]),
    "fps": _fps,
    "mode": lambda p, v: setattr(p, "mode", MODES[v]),
    "backend": lambda p, v: setattr(p, "backend", BACKENDS[v]),
}
_SHORT = {"-w": "width", "-h": "height", "-q": "quality", "-k": "keyframe-interval",
          "-r": "search-range", "-t": "threads", "-b": "bitrate", "-m": "mode"}


def _options(args, table):
    """(name, value) pairs of ARGS, a tool's options as c63-farm hands
    them on (every option with its value)."""
    out = []
    for flag, value in zip(args[0::2], args[1::2]):
        name = _SHORT.get(flag, flag[2:])
        if name not in table:
            raise Failed("option %s has no libc63 parameter" % flag)
        out.append((name, value))
    return out


def _params(lib, cls, init, args, table):
    cls = getattr(lib.t, cls)
    room = ctypes.create_string_buffer(PARAMS_ROOM)
    getattr(lib, init)(room)
    params = cls.from_buffer(room)
    if not ctypes.sizeof(cls) <= params.size <= PARAMS_ROOM:
        raise Failed("this libc63's parameters (%d bytes) are not the ones c63-farm knows"
                     % params.size)
    for name, value in _options(args, table):
        table[name](params, value)
    return room, params


def enc_params(lib, args):
    """c63_enc_params filled from c63-enc's options ARGS as c63-enc fills
    them. Returns (storage, struct): the storage must outlive its use."""
    return _params(lib, "EncParams", "c63_enc_params_init", args, _ENC_OPTIONS)


_DEC_OPTIONS = {name: _ENC_OPTIONS[name] for name in ("threads", "device", "backend")}


def dec_params(lib, args):
    """c63_dec_params from c63-dec's options (--backend, --device, -t)."""
    return _params(lib, "DecParams", "c63_dec_params_init", args, _DEC_OPTIONS)


def new(lib, kind, storage):
    """c63_KIND_new on the parameters in STORAGE; Failed with its message."""
    handle, msg = ctypes.c_void_p(), ctypes.create_string_buffer(512)
    if getattr(lib, "c63_%s_new" % kind)(storage, ctypes.byref(handle), msg, len(msg)) != OK:
        raise Failed("cannot create the %s: %s" % (kind, msg.value.decode("utf-8", "replace")))
    return handle


def buffer_at(address, size):
    """A writable memoryview of SIZE bytes at ADDRESS (memory the library
    owns or gave)."""
    return memoryview((ctypes.c_char * size).from_address(address)).cast("B")
