"""Numba options in one place, and a guard that keeps numba's on-disk cache honest.

Numba keys a cached kernel by its own file's timestamp only. Our kernels inline functions
from other modules (the drivers inline ``turn``, ``deal`` and ``observe``; the agents inline
``hands``), so after an edit to one of those a cached kernel would go on running the old
code. On first import, ``guard_cache`` compares the size and modification time of every
source a kernel can depend on (``kernel_sources``) with the stamp left by the last import,
and deletes the packages' cached kernels when anything changed.
"""

from __future__ import annotations

import hashlib
import re
import sys
import time
import types
from pathlib import Path
from typing import NamedTuple

import numba.core.event as numba_event
from llvmlite import ir
from numba import njit, prange
from numba import types as nb_types
from numba.core import cgutils
from numba.core.dispatcher import Dispatcher
from numba.extending import intrinsic

# error_model="numpy": a float division by zero gives inf/nan instead of a check and a raise per division;
# without that check LLVM vectorizes loops that divide (the float32 observations: 5x faster)
JIT = dict(cache=True, nogil=True, error_model="numpy")
# the per-decision path: numba does not inline one compiled function into another, and a
# call that passes arrays costs as much as a hand value (the deal and settlement stay calls:
# inlining them too made the parallel drivers take 20 GB to compile)
INLINE = dict(JIT, inline="always")

PARALLEL_FROM = 256  # rows from which threads pay off (fewer: waking them costs more than the work)
ROW_CHUNK = 32  # rows per call of the compiled loop in a threaded run
CACHE_LINE = 64  # bytes: x86-64 and most ARM cores


def _threaded(n, *args):
    """Template of every threaded driver: the compiled loop (each copy's global ``_serial``) over chunks
    of ``ROW_CHUNK`` rows, the chunks spread over numba's threads."""
    for k in prange((n + ROW_CHUNK - 1) // ROW_CHUNK):
        lo = k * ROW_CHUNK
        _serial(lo, min(n, lo + ROW_CHUNK), *args)  # noqa: F821 (each copy's globals define it)


@intrinsic
def prefetch(typingctx, array, index):
    """Ask the CPU to bring the cache line of ``array[index]`` (a 1-d array, index in range) into every cache
    level (LLVM's ``llvm.prefetch``: a hint, no fault, no effect on results). For loops over more tables
    than the caches hold, which fetch the next table's rows while they work on this one."""

    def codegen(context, builder, signature, args):
        array_type = signature.args[0]
        view = context.make_array(array_type)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, array_type, view, [args[1]], wraparound=False)
        i8p, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]),
                                            "llvm.prefetch.p0")
        builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(3), i32(1)])  # read, keep everywhere, data
        return context.get_dummy_value()

    return nb_types.void(array, index), codegen


@njit(**INLINE)
def prefetch_row(row):
    """``prefetch`` every cache line of a contiguous 1-d array."""
    step = max(CACHE_LINE // row.itemsize, 1)
    for i in range(0, row.shape[0], step):
        prefetch(row, i)


class Variants(NamedTuple):
    """A loop over rows ``lo..hi`` compiled once (``serial(lo, hi, *args)``) and, where threads pay,
    its threaded driver (``threaded(n, *args)``: rows ``0..n`` in chunks, each one call of that loop)."""

    serial: Dispatcher
    threaded: Dispatcher | None

    def run(self, n: int, threads: bool, *args) -> None:
        """Rows ``0..n``, on numba's threads when ``threads`` (and the loop has a threaded driver)."""
        if threads and self.threaded is not None:
            self.threaded(n, *args)
        else:
            self.serial(0, n, *args)


def jit_variants(fn: types.FunctionType, threads: bool = True) -> Variants:
    """``fn(lo, hi, *args)`` (a loop over rows ``lo..hi``) jitted, and with ``threads`` a threaded driver.

    The driver calls the compiled loop instead of inlining it into a ``prange`` body, where numba's
    parallel passes over a whole inlined engine step took minutes per kernel. It still re-optimises
    and re-generates the loop's machine code (numba links a callee into its caller), so a driver costs
    about twice its loop's compile: ``threads=False`` for loops that never see a large batch.
    Each driver is a copy of ``_threaded`` with its own globals and name (numba caches by name).
    """
    serial = njit(**JIT)(fn)
    if not threads:
        return Variants(serial, None)
    scope = {"_serial": serial, "prange": prange, "min": min, "ROW_CHUNK": ROW_CHUNK, "__name__": fn.__module__}
    driver = types.FunctionType(_threaded.__code__, scope, f"{fn.__name__}_threaded")
    driver.__qualname__ = f"{fn.__qualname__}_threaded"
    return Variants(serial, njit(parallel=True, **JIT)(driver))


KERNEL_PACKAGES = ("thirtyone_env", "agents", "train")
STAMP = "numba-sources.stamp"
ROOT = Path(__file__).resolve().parent.parent  # the folder that holds the packages


def cache_folders(root: Path, packages: list[Path]) -> list[Path]:
    """Where numba caches our kernels: ``__pycache__`` beside the sources, or, with ``NUMBA_CACHE_DIR`` (set
    for read-only installs), one folder there per source folder."""
    from numba.core.config import CACHE_DIR

    folders = [folder for package in packages for folder in package.rglob("__pycache__")]
    if CACHE_DIR:  # one folder per source folder, named as numba's _CacheLocator.get_suitable_cache_subpath does
        sources = {f.parent.resolve() for package in packages for f in package.rglob("*.py")}
        folders += [Path(CACHE_DIR) / f"{d.name}_{hashlib.sha1(str(d).encode()).hexdigest()}" for d in sources]
    return [folder for folder in folders if folder.is_dir()]


CORE_IMPORT = re.compile(r"^\s*(?:from|import)\s+(thirtyone_env(?:\.\w+)*)", re.MULTILINE)


def kernel_sources(root: Path, packages: list[Path]) -> list[Path]:
    """The files whose edits can change a compiled kernel: those that define kernels, and the core modules they
    import, transitively (a kernel inlines other kernels and bakes in module constants such as the layout's).
    Editing anything else (the CLI, the web app, docs) keeps the cache."""
    files = sorted(f for package in packages for f in package.rglob("*.py") if "__pycache__" not in f.parts)
    texts = {f: f.read_text(encoding="utf-8", errors="replace") for f in files}
    by_module = {".".join(f.relative_to(root).with_suffix("").parts).removesuffix(".__init__"): f for f in files}
    todo = [f for f, text in texts.items() if "njit" in text or "jit_variants" in text]
    found: set[Path] = set()
    while todo:
        f = todo.pop()
        if f in found:
            continue
        found.add(f)
        for module in CORE_IMPORT.findall(texts[f]):
            parts = module.split(".")
            for k in range(1, len(parts) + 1):  # the module and the packages it sits in
                if ".".join(parts[:k]) in by_module:
                    todo.append(by_module[".".join(parts[:k])])
    return sorted(found)


def guard_cache(root: Path = ROOT) -> bool:
    """Drop cached kernels of ``KERNEL_PACKAGES`` under ``root`` if any of their sources changed.

    Returns True when it dropped them. Quietly does nothing where it cannot write.
    """
    packages = [root / name for name in KERNEL_PACKAGES if (root / name / "__init__.py").is_file()]
    sources = kernel_sources(root, packages)
    digest = hashlib.sha256()
    for f in sources:
        info = f.stat()
        digest.update(f"{f.relative_to(root)}:{info.st_size}:{info.st_mtime_ns}\n".encode())
    stamp = root / "thirtyone_env" / "__pycache__" / STAMP
    try:
        if stamp.is_file() and stamp.read_text() == digest.hexdigest():
            return False
        for folder in cache_folders(root, packages):
            for cached in (*folder.rglob("*.nbi"), *folder.rglob("*.nbc")):
                cached.unlink(missing_ok=True)
        stamp.parent.mkdir(exist_ok=True)
        stamp.write_text(digest.hexdigest())
    except OSError:
        return False
    return True


guard_cache()

FIRST_COMPILE_NOTICE = (
    "thirtyone-env: compiling the game engine's numba kernels for this machine, once (each on its first use: "
    "about a minute for the PettingZoo env, a few more for the batched engine on 2 cores; later runs load them "
    "from the cache; `thirtyone warmup` compiles them all ahead)"
)


class CompileWatch(numba_event.Listener):
    """Prints ``FIRST_COMPILE_NOTICE`` once per process when one of our kernels is compiled (a cache hit fires
    no compile event, so a warm run stays silent) and adds up the seconds spent compiling them."""

    def __init__(self) -> None:
        self.announced, self.depth, self.started, self.seconds = False, 0, 0.0, 0.0

    @staticmethod
    def ours(event: numba_event.Event) -> bool:
        module = getattr(event.data["dispatcher"].py_func, "__module__", "") or ""
        return module.split(".")[0] in KERNEL_PACKAGES

    def on_start(self, event: numba_event.Event) -> None:
        if not self.ours(event):
            return
        if not self.announced:
            self.announced = True
            print(FIRST_COMPILE_NOTICE, file=sys.stderr, flush=True)
        if self.depth == 0:  # a kernel's compile compiles the kernels it calls: time the outermost only
            self.started = time.perf_counter()
        self.depth += 1

    def on_end(self, event: numba_event.Event) -> None:
        if not self.ours(event):
            return
        self.depth -= 1
        if self.depth == 0:
            self.seconds += time.perf_counter() - self.started


compile_watch = CompileWatch()
numba_event.register("numba:compile", compile_watch)
