"""The CPU driver: JIT-load kernel objects in process and run grids on a persistent thread pool.

No C compiler is needed at run time: LLVM's MCJIT (through llvmlite) links the relocatable object
into this process. A launch packs the arguments into a preallocated buffer and calls the kernel's
``_grid`` entry on up to ``os.cpu_count()`` threads (the calling thread included); ctypes releases
the GIL for the duration of each call, and each thread runs its share of the grid's programs, then
helps with the others' (see ``abi``). The calling thread comes back to Python every
``SLICE_S`` seconds of a long launch, so Ctrl-C (any signal handler) runs: a ``KeyboardInterrupt``
stops the grid after the batches in flight and propagates. Ctrl-C also stops the programs in flight
at their next loop iteration, and a memory fault names the kernel (``signals``).
"""

from __future__ import annotations

import ctypes
import functools
import os
import platform
import threading
import time
from typing import Any, Mapping, Sequence

from llvmlite import binding as llvm
from tritium.codegen.block import conversions, debug_area
from tritium.codegen.block.hooks import MARKER_SYMBOL
from tritium.errors import TritiumError
from tritium.language.dtypes import bf16_bits
from tritium.runtime.cache import Cache, cache_key
from tritium.runtime.host import HostMemory
from tritium.target import KernelSignature

from . import abi, debug_callbacks, signals
from .compiler import host_triple_and_layout, new_host_target_machine

_RUN_AND_WAIT = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_int64)
_LAUNCH = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)
_HELPER = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32, ctypes.c_int64)


class Job(ctypes.Structure):
    """One kernel's launch (``abi.JOB``): set up once, then each launch writes its grid and batch."""

    _fields_ = [(name, ctypes.c_int32 if ty == "i32" else ctypes.c_void_p) for name, ty in abi.JOB_FIELDS]


CLAIMS_PER_THREAD = 16  # a share is claimed in batches: few fences, still balanced
WORKER_STACK_BYTES = 64 << 20  # kernels keep their tiles on the stack
SLICE_S = 0.05  # the launching thread checks for signals this often during a long launch
_SLICE_NS = int(SLICE_S * 1e9)
HELPER_SPIN_S = 0.0002  # an idle helper stays awake this long: back-to-back launches find it running


def _jit(llir: str) -> llvm.ExecutionEngine:
    """An engine holding the code of the runtime module ``llir``. Its object comes from the kernel
    cache where this host compiled the same IR before: a first launch needs three such modules
    (conversion helpers, signal handlers, the pool), and compiling them took 30 of its 50 ms."""
    machine = new_host_target_machine()
    key = cache_key({"cpu-runtime": llir, "cpu": llvm.get_host_cpu_name(),
                     "features": llvm.get_host_cpu_features().flatten(), "llvm": llvm.llvm_version_info})
    cache = Cache()
    entry = cache.get(key)
    if entry is not None:
        obj = entry.binary
    else:
        obj = machine.emit_object(llvm.parse_assembly(llir))
        cache.put(key, obj, {"name": "cpu-runtime"})
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), machine)
    engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
    engine.finalize_object()
    return engine


@functools.cache
def _runtime_helpers() -> llvm.ExecutionEngine:
    """Define the compiler-rt conversion helpers LLVM calls (see ``conversions``) for every kernel
    loaded from now on; the engine holding their code lives as long as the process."""
    engine = _jit(conversions.helpers_ir(*host_triple_and_layout()))
    for name, _, _ in conversions.RUNTIME_HELPERS:
        llvm.add_symbol(name, engine.get_function_address(name))
    return engine


@functools.cache
def _signals() -> signals.Signals:
    """The memory fault and Ctrl-C handlers, installed once per process (``signals``)."""
    return signals.install(_jit(signals.handlers_ir(*host_triple_and_layout())))


def _lines(count: int) -> tuple[ctypes.Array, int]:
    """A buffer of ``count`` cache lines (at least one), and the address of the first."""
    buffer = ctypes.create_string_buffer(abi.LINE_BYTES * (max(1, count) + 1))
    return buffer, -(-ctypes.addressof(buffer) // abi.LINE_BYTES) * abi.LINE_BYTES


def grow_main_stack(size: int) -> None:
    """Let the main thread's stack grow to ``size`` bytes, as the helpers' do: the launching thread
    runs programs too, and kernels keep their tiles on the stack (a block at Triton's limit of 2**20
    elements is megabytes). Linux grows the main stack on demand up to the soft ``RLIMIT_STACK``,
    read at each fault, so raising that limit (never past the hard one) is enough."""
    try:
        import resource
    except ImportError:  # not a POSIX system
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_STACK)
    if soft == resource.RLIM_INFINITY or soft >= size:
        return
    resource.setrlimit(resource.RLIMIT_STACK, (size if hard == resource.RLIM_INFINITY else min(size, hard), hard))


class WorkerPool:
    """``size - 1`` helper threads that, with the caller, run a kernel's grid entry per launch.

    Each helper lives in native code (``abi.trampolines_ir``): it waits for its slot's launch count
    to change, spinning a while and then asleep in the kernel, runs the job and waits again. A
    launch writes the job and bumps the counts of the helpers it needs; the caller waits for them
    natively too, so no launch takes a thread through the GIL.
    """

    def __init__(self, size: int):
        self.size = max(1, size)
        self._lock = threading.Lock()
        self._interrupt = _signals().interrupt
        machine = platform.machine().lower()
        libc = ctypes.CDLL(None)
        for name in ("clock_gettime", "syscall", "usleep"):  # the trampolines call them
            llvm.add_symbol(name, ctypes.cast(getattr(libc, name), ctypes.c_void_p).value)
        futex = abi.FUTEX_SYSCALLS.get(machine) if platform.system() == "Linux" else None
        self._engine = _jit(abi.trampolines_ir(machine in ("x86_64", "amd64", "i686"), time.CLOCK_MONOTONIC, futex))
        self._run_and_wait = _RUN_AND_WAIT(self._engine.get_function_address("tritium_cpu_run_and_wait"))
        self._launch = _LAUNCH(self._engine.get_function_address("tritium_cpu_launch"))
        self._pending = ctypes.c_int32(0)
        self._pending_address = ctypes.addressof(self._pending)
        self._state = ctypes.c_int64(0)  # the launching thread's place in its batch (two i32)
        self._state_address = ctypes.addressof(self._state)
        self._current = ctypes.c_void_p(0)  # the job the helpers run
        self._current_address = ctypes.addressof(self._current)
        self._slots, self._slots_address = _lines(self.size - 1)
        self._shares, self._shares_address = _lines(self.size)
        helper = _HELPER(self._engine.get_function_address("tritium_cpu_helper"))
        current, spin = self._current_address, int(HELPER_SPIN_S * 1e9)
        grow_main_stack(WORKER_STACK_BYTES)
        previous = threading.stack_size(WORKER_STACK_BYTES)
        try:
            for i in range(self.size - 1):
                slot = self._slots_address + i * abi.LINE_BYTES
                threading.Thread(target=helper, args=(current, slot, i, spin), daemon=True, name="tritium-cpu").start()
        finally:
            threading.stack_size(previous)

    def job(self, entry: int, args_address: int, name_address: int) -> Job:
        """A kernel's ``Job`` on this pool: the ``_grid`` function at ``entry`` (see ``abi``), its
        packed arguments and name (a C string)."""
        return Job(grid=entry, args=args_address, shares=self._shares_address, pending=self._pending_address,
                   state=self._state_address, kernel=name_address)

    def run(self, job: Job, job_address: int) -> None:
        """Run ``job`` (whose grid, threads, at most this pool's size, and batch are set;
        ``job_address`` is its address) on its threads, this one included, and return when all are
        done; an exception here (Ctrl-C) stops the grid, and so does Ctrl-C in a long program
        (``KeyboardInterrupt``, also where Python's handler does not raise: the programs did not
        finish)."""
        self._state.value = 0
        self._interrupt.value = 0  # a Ctrl-C before this launch was Python's to handle
        try:
            status = self._launch(job_address, self._slots_address, self._current_address, _SLICE_NS)
            while status == 1:  # back in the interpreter: pending signal handlers run here
                status = self._run_and_wait(job_address, _SLICE_NS)
        except BaseException:
            self.stop()
            while self._run_and_wait(job_address, _SLICE_NS) == 1:
                pass  # the other threads finish the batches they hold
            raise
        if status == abi.INTERRUPTED:
            raise KeyboardInterrupt("Ctrl-C stopped the cpu kernel's programs before they finished")

    def stop(self) -> None:
        """Make every thread of the running launch return after its current program."""
        for i in range(self.size):
            ctypes.c_uint32.from_address(self._shares_address + i * abi.LINE_BYTES).value = abi.STOP

    @property
    def lock(self) -> threading.Lock:
        """Held for a whole launch: one grid runs at a time."""
        return self._lock


@functools.cache
def shared_pool(size: int) -> WorkerPool:
    """One pool per thread count for the process's life: its helpers never leave their native loop,
    so the code and memory they run in must never be freed."""
    return WorkerPool(size)


class CpuLauncher:
    """``launcher(grid, bound_args)`` for one loaded kernel."""

    def __init__(self, engine: llvm.ExecutionEngine, address: int, signature: KernelSignature, pool: WorkerPool,
                 debug_sites: list | None = None):
        self._engine = engine  # owns the code
        #: kernels that print or assert run their programs in order on the launching thread
        self._serial = bool(engine.get_global_value_address(MARKER_SYMBOL))
        self._address = address
        self._signature, self._sites = signature, debug_sites
        self._pack = abi.slot_struct(signature.arg_types).pack_into
        self._bf16 = [i for i, t in enumerate(signature.arg_types) if t == "bf16"]
        self._debug_area = len(signature.arg_types) * abi.SLOT_BYTES
        size = self._debug_area + (debug_area.debug_area_bytes(len(signature.arg_types)) if debug_sites is not None else 0)
        self._args = ctypes.create_string_buffer(max(8, size))
        self._name = ctypes.create_string_buffer(signature.name.encode())
        self._name_address = ctypes.addressof(self._name)
        self._args_address = ctypes.addressof(self._args)
        self._pool = pool
        self._job = pool.job(address, self._args_address, self._name_address)
        self._job_address = ctypes.addressof(self._job)

    def __call__(self, grid: tuple[int, int, int], args: Sequence[Any]) -> None:
        nx, ny, nz = (tuple(grid) + (1, 1))[:3]
        total = nx * ny * nz
        if total <= 0:
            return
        if total >= 1 << 31:
            raise TritiumError(f"grid {grid} has more than 2**31 - 1 programs")
        if self._bf16:
            args = list(args)
            for i in self._bf16:
                args[i] = bf16_bits(args[i])
        with self._pool.lock:
            self._pack(self._args, 0, *args)
            threads = 1 if self._serial else min(total, self._pool.size)
            batch = 1 if self._serial else max(1, total // (threads * CLAIMS_PER_THREAD))
            if self._sites is not None:
                debug_area.pack_spans(self._args, self._debug_area, args, self._signature.arg_types)
            if self._serial:
                debug_callbacks.STATE.reset(self._pool.stop)
            job = self._job
            job.nx, job.ny, job.nz, job.threads, job.batch = nx, ny, nz, threads, batch
            self._pool.run(job, self._job_address)
            if self._serial:
                debug_callbacks.raise_reported()
            if self._sites is not None:
                debug_area.raise_report(self._args, self._debug_area + len(args) * debug_area.SPAN_BYTES,
                                    self._signature.name, self._signature.arg_names, self._sites)


class CpuDriver(HostMemory):
    """Loads objects with MCJIT; memory is ordinary host memory (numpy arrays)."""

    def __init__(self, threads: int | None = None):
        self._threads = threads or os.cpu_count() or 1

    @property
    def threads(self) -> int:
        """The threads a grid runs on: one per core."""
        return self._threads

    @property
    def pool(self) -> WorkerPool:
        """The process's pool of this many threads, started on first use (not at plugin discovery)."""
        return shared_pool(self._threads)

    def load(self, binary: bytes, signature: KernelSignature, metadata: Mapping[str, Any]) -> CpuLauncher:
        """JIT-link the object; the object itself says what the launch needs (debug sites, whether it
        prints), so ``metadata`` goes unused."""
        _runtime_helpers()
        _signals()  # kernels read its interrupt flag
        debug_callbacks.register()
        engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), new_host_target_machine())
        engine.add_object_file(llvm.ObjectFileRef.from_data(bytes(binary)))
        engine.finalize_object()
        address = engine.get_function_address(abi.entry_name(signature.name))
        if not address:
            raise TritiumError(f"the object for kernel {signature.name} has no entry {abi.entry_name(signature.name)}")
        sites = engine.get_global_value_address(debug_area.sites_symbol(signature.name))
        debug_sites = debug_area.load_sites(ctypes.string_at(sites)) if sites else None
        return CpuLauncher(engine, address, signature, self.pool, debug_sites)

    def synchronize(self) -> None:
        """Launches return when the grid is done: nothing to wait for."""
