"""The CPU kernel ABI, shared by the code generator (which emits it) and the driver (which calls it).

A compiled kernel ``k`` exports one function::

    int32_t k_grid(const uint8_t *args, int32_t nx, int32_t ny, int32_t nz, share_t *shares,
                   int32_t self, int32_t threads, int32_t batch, int32_t state[2], uint32_t quota)

``args`` holds the runtime arguments in 8-byte slots (each value little-endian at the start of its
slot; pointers as addresses, ``i1`` as a byte, ``bf16`` as its 16 bits). Every worker thread calls
``k_grid`` with the same arguments but its own index ``self`` (below ``threads``). The grid is cut
into ``threads`` contiguous shares, one a cache line (``SHARE``: next program, end); a thread
claims ``batch`` consecutive programs at a time from its own share with an atomic increment, and
once that is spent from the others' in turn, so load balances itself. A claim on a share no other
thread touches yet stays in the thread's cache: 16 threads claiming from one shared counter
bounced its line between cores and cost 20 us a launch of 4096 short programs.
Program ids run x fastest, then y, then z. A thread returns 0 once the grid is exhausted, or 1
after running ``quota`` programs, its place in its batch saved in ``state`` (next pid, end of the
batch; zeros at launch) for the next call: the launching thread comes back to Python that way to
run signal handlers. Setting every share's next program to ``STOP`` makes every thread return after
its current program; so does the interrupt flag (``signals``), which programs also test in their
loops.
"""

from __future__ import annotations

import struct

from llvmlite import ir as ll

from tritium.errors import TritiumError

from .signals import INTERRUPT_SYMBOL, KERNEL_SYMBOL

SLOT_BYTES = 8
I32 = ll.IntType(32)
STOP = 1 << 31  # a share's next program past any grid (grids have fewer than 2**31 programs)
LINE_BYTES = 64  # a cache line: what threads write often is padded to one
#: one thread's share of a grid: the next program to claim, the end of the share, padding to a
#: cache line so that threads claiming from their own shares do not share one
SHARE_TYPE = ll.LiteralStructType([I32, I32, ll.ArrayType(ll.IntType(8), LINE_BYTES - 8)])
SHARE = str(SHARE_TYPE)
INTERRUPTED = 2  # what ``tritium_cpu_run_and_wait`` returns when the interrupt flag stopped the launch

#: struct format of one scalar argument, by Triton type name
SCALAR_FORMATS = {
    "i1": "?", "i8": "b", "u8": "B", "i16": "h", "u16": "H", "i32": "i", "u32": "I", "i64": "q",
    "u64": "Q", "fp16": "e", "bf16": "H", "fp32": "f", "fp64": "d",
}


def entry_name(kernel: str) -> str:
    return f"{kernel}_grid"


def slot_struct(arg_types: tuple[str, ...]) -> struct.Struct:
    """The packed layout of ``args`` for a kernel with these Triton argument types."""
    fmt = "<"
    for t in arg_types:
        code = "Q" if t.startswith("*") else SCALAR_FORMATS.get(t)
        if code is None:
            raise TritiumError(f"the cpu target does not support arguments of type {t} yet")
        fmt += code + f"{SLOT_BYTES - struct.calcsize('<' + code)}x"
    return struct.Struct(fmt)


def emit_grid_entry(module: ll.Module, body: ll.Function, n_args: int, debug: bool = False) -> ll.Function:
    """Define ``<kernel>_grid``: unpack the argument slots, then run programs until none is left,
    ``quota`` programs have run (the position is saved in ``state``) or the launch is stopped.

    ``body`` takes the kernel's arguments followed by pid x, y, z and grid sizes x, y, z (i32),
    and in debug mode the address of the debug area, which follows the argument slots.
    """
    ptr = ll.PointerType()
    fn = ll.Function(module, ll.FunctionType(I32, [ptr, I32, I32, I32, ptr, I32, I32, I32, ptr, I32]),
                     entry_name(body.name))
    args_ptr, nx, ny, nz, shares, own, threads, batch, state, quota = fn.args
    entry = fn.append_basic_block("entry")
    b = ll.IRBuilder(entry)
    args = []
    for i, t in enumerate(body.function_type.args[:n_args]):
        slot = b.gep(args_ptr, [ll.Constant(ll.IntType(64), i * SLOT_BYTES)], source_etype=ll.IntType(8))
        if t == ll.IntType(1):
            args.append(b.trunc(b.load(slot, typ=ll.IntType(8)), t))
        else:
            args.append(b.load(slot, typ=t))
    if debug:
        args.append(b.gep(args_ptr, [ll.Constant(ll.IntType(64), n_args * SLOT_BYTES)], source_etype=ll.IntType(8)))
    def field(share: ll.Value, k: int) -> ll.Value:
        return b.gep(shares, [share, ll.Constant(I32, k)], source_etype=SHARE_TYPE)

    own_next = field(own, 0)
    last_ptr = b.gep(state, [ll.Constant(ll.IntType(64), 4)], source_etype=ll.IntType(8))
    saved_pid, saved_last = b.load(state, typ=I32), b.load(last_ptr, typ=I32)
    blocks = {name: fn.append_basic_block(name)
              for name in ("next", "claim", "spent", "claimed", "run", "ran", "done", "pause")}
    b.branch(blocks["next"])
    b.position_at_end(blocks["next"])  # the next program: the rest of a batch, or a new claim
    pid, last, left, victim = b.phi(I32), b.phi(I32), b.phi(I32), b.phi(I32)
    pid.add_incoming(saved_pid, entry)
    last.add_incoming(saved_last, entry)
    left.add_incoming(quota, entry)
    victim.add_incoming(own, entry)
    b.cbranch(b.icmp_unsigned("<", pid, last), blocks["run"], blocks["claim"])
    b.position_at_end(blocks["claim"])  # from the share last claimed from, then from each other one
    share, tried = b.phi(I32), b.phi(I32)
    share.add_incoming(victim, blocks["next"])
    tried.add_incoming(ll.Constant(I32, 0), blocks["next"])
    first = b.atomic_rmw("add", field(share, 0), batch, "monotonic")
    end = b.load_atomic(field(share, 1), "monotonic", 4, typ=I32)
    b.cbranch(b.icmp_unsigned("<", first, end), blocks["claimed"], blocks["spent"])
    b.position_at_end(blocks["spent"])
    following_share = b.add(share, ll.Constant(I32, 1))
    following_share = b.select(b.icmp_unsigned("<", following_share, threads), following_share, ll.Constant(I32, 0))
    tried_more = b.add(tried, ll.Constant(I32, 1))
    share.add_incoming(following_share, blocks["spent"])
    tried.add_incoming(tried_more, blocks["spent"])
    b.cbranch(b.icmp_unsigned("<", tried_more, threads), blocks["claim"], blocks["done"])
    b.position_at_end(blocks["claimed"])
    room = b.sub(end, first)
    claimed_last = b.add(first, b.select(b.icmp_unsigned("<", batch, room), batch, room))
    b.branch(blocks["run"])
    b.position_at_end(blocks["run"])
    run_pid, run_last, run_victim = b.phi(I32), b.phi(I32), b.phi(I32)
    run_pid.add_incoming(pid, blocks["next"])
    run_pid.add_incoming(first, blocks["claimed"])
    run_last.add_incoming(last, blocks["next"])
    run_last.add_incoming(claimed_last, blocks["claimed"])
    run_victim.add_incoming(victim, blocks["next"])
    run_victim.add_incoming(share, blocks["claimed"])
    x = b.urem(run_pid, nx)
    rest = b.udiv(run_pid, nx)
    y = b.urem(rest, ny)
    z = b.udiv(rest, ny)
    b.call(body, args[:n_args] + [x, y, z, nx, ny, nz] + args[n_args:])
    following = b.add(run_pid, ll.Constant(I32, 1))
    remaining = b.sub(left, ll.Constant(I32, 1))
    stopped = b.or_(b.icmp_unsigned(">=", b.load_atomic(own_next, "monotonic", 4, typ=I32), ll.Constant(I32, STOP)),
                    interrupted(b, module))
    b.cbranch(stopped, blocks["done"], blocks["ran"])
    b.position_at_end(blocks["ran"])
    pid.add_incoming(following, blocks["ran"])
    last.add_incoming(run_last, blocks["ran"])
    left.add_incoming(remaining, blocks["ran"])
    victim.add_incoming(run_victim, blocks["ran"])
    b.cbranch(b.icmp_unsigned("==", remaining, ll.Constant(I32, 0)), blocks["pause"], blocks["next"])
    b.position_at_end(blocks["done"])
    b.ret(ll.Constant(I32, 0))
    b.position_at_end(blocks["pause"])
    b.store(following, state)
    b.store(run_last, last_ptr)
    b.ret(ll.Constant(I32, 1))
    return fn


def interrupted(b: ll.IRBuilder, module: ll.Module) -> ll.Value:
    """Whether Ctrl-C asked the launch to stop (the flag of ``signals``), as an i1."""
    flag = module.globals.get(INTERRUPT_SYMBOL)
    if flag is None:
        flag = ll.GlobalVariable(module, I32, INTERRUPT_SYMBOL)
    return b.icmp_unsigned("!=", b.load_atomic(flag, "monotonic", 4, typ=I32), ll.Constant(I32, 0))


#: one helper's place in the pool: the launch count it waits for (``go``), a flag it sets while
#: asleep in the kernel, padding to a cache line so that helpers do not share one
HELPER_SLOT = "{i32, i32, [56 x i8]}"
#: a launch (one per kernel, its fields but the grid's fixed): grid entry, arguments, nx, ny, nz,
#: the threads' shares, threads, batch, pending helpers, the launching thread's state, the kernel's name
JOB = "{ptr, ptr, i32, i32, i32, ptr, i32, i32, ptr, ptr, ptr}"
JOB_FIELDS = (("grid", "ptr"), ("args", "ptr"), ("nx", "i32"), ("ny", "i32"), ("nz", "i32"), ("shares", "ptr"),
              ("threads", "i32"), ("batch", "i32"), ("pending", "ptr"), ("state", "ptr"), ("kernel", "ptr"))
#: the futex system call's number, by machine (Linux); elsewhere a helper polls while asleep
FUTEX_SYSCALLS = {"x86_64": 202, "amd64": 202, "aarch64": 98, "arm64": 98}
_FUTEX_WAIT_PRIVATE, _FUTEX_WAKE_PRIVATE = 128, 129


def trampolines_ir(x86: bool, clock_id: int, futex: int | None) -> str:
    """LLVM IR of the functions the thread pool calls.

    ``tritium_cpu_helper(current, slot, index, spin_ns)`` is helper ``index``'s whole life: it waits
    until its slot's ``go`` count differs from the launches it ran (from 0, so a launch that comes
    before the thread runs is not missed), runs the grid entry of the job (a ``JOB``) that
    ``*current`` points to to the end as thread ``index``, decrements ``*pending`` and waits again.
    It spins for ``spin_ns`` first, so back-to-back launches find it
    awake, then sleeps in the kernel (the ``futex`` system call's number; None: it polls every
    50 us). ``tritium_cpu_release(slots, helpers)`` starts the first ``helpers`` helpers, waking
    those asleep; no Python runs on a helper, so a launch takes no helper through the GIL.

    ``tritium_cpu_launch(job, slots, current, slice_ns)`` cuts the job's grid into its threads'
    shares, points ``*current`` at it, starts ``threads - 1`` helpers and goes on as
    ``tritium_cpu_run_and_wait(job, slice_ns)`` (the launching thread, the last), which runs the grid in
    quotas of programs that grow while a quota takes under 0.2 ms, then spins until ``*pending`` is
    zero; it returns 1 when
    ``slice_ns`` nanoseconds (``clock_gettime(clock_id)``) pass first, so that Python can run
    signal handlers and call it again, and 0 when the launch is done (``INTERRUPTED`` when the
    interrupt flag stopped it). It keeps ``kernel`` (the kernel's name) where the memory fault
    handler reads it until the launch is done (``signals``)."""
    pause = "call void @llvm.x86.sse2.pause()" if x86 else ""
    declare = "declare void @llvm.x86.sse2.pause()" if x86 else ""
    if futex is None:
        sleep = "call i32 @usleep(i32 50)"
        wake = ""
        declare += "\ndeclare i32 @usleep(i32)"
    else:
        sleep = (f"call i64 (i64, ...) @syscall(i64 {futex}, ptr %slot, i64 {_FUTEX_WAIT_PRIVATE}, "
                 "i64 %seen_wide, ptr null)")
        wake = f"call i64 (i64, ...) @syscall(i64 {futex}, ptr %slot, i64 {_FUTEX_WAKE_PRIVATE}, i64 1)"
        declare += "\ndeclare i64 @syscall(i64, ...)"
    grid = ("call i32 %grid(ptr %args, i32 %nx, i32 %ny, i32 %nz, ptr %shares, i32 {}, i32 %threads, i32 %batch, "
            "ptr").format

    def pause_until(since: str, limit: str, late: str, again: str) -> str:
        """A spin-wait step: pause, then go to ``late`` once ``limit`` ns passed ``since``, else ``again``."""
        return (f"  {pause}\n  %now = call i64 @now_ns()\n  %waited = sub i64 %now, {since}\n"
                f"  %overdue = icmp sgt i64 %waited, {limit}\n  br i1 %overdue, label %{late}, label %{again}")

    job_fields = "\n".join(f"  %{name}_at = getelementptr {JOB}, ptr %job, i32 0, i32 {k}\n"
                           f"  %{name} = load {ty}, ptr %{name}_at" for k, (name, ty) in enumerate(JOB_FIELDS))
    return f"""
{declare}
declare i32 @clock_gettime(i32, ptr)
@{KERNEL_SYMBOL} = external global ptr
@{INTERRUPT_SYMBOL} = external global i32
define internal i64 @now_ns() {{
  %ts = alloca {{i64, i64}}
  call i32 @clock_gettime(i32 {clock_id}, ptr %ts)
  %s = load i64, ptr %ts
  %ns_ptr = getelementptr {{i64, i64}}, ptr %ts, i32 0, i32 1
  %ns = load i64, ptr %ns_ptr
  %s_ns = mul i64 %s, 1000000000
  %t = add i64 %s_ns, %ns
  ret i64 %t
}}
define void @tritium_cpu_helper(ptr %current, ptr %slot, i32 %index, i64 %spin_ns) {{
entry:
  %own = alloca [2 x i32]
  %sleeping = getelementptr {HELPER_SLOT}, ptr %slot, i32 0, i32 1
  br label %idle
idle:
  %seen = phi i32 [0, %entry], [%go, %ran]
  %seen_wide = zext i32 %seen to i64
  %idle_since = call i64 @now_ns()
  br label %spin
spin:
  %go = load atomic i32, ptr %slot acquire, align 4
  %started = icmp ne i32 %go, %seen
  br i1 %started, label %run, label %spinning
spinning:
{pause_until("%idle_since", "%spin_ns", "asleep", "spin")}
asleep:
  store atomic i32 1, ptr %sleeping seq_cst, align 4
  %go_now = load atomic i32, ptr %slot seq_cst, align 4
  %missed = icmp ne i32 %go_now, %seen
  br i1 %missed, label %awake, label %block
block:
  {sleep}
  br label %awake
awake:
  store atomic i32 0, ptr %sleeping seq_cst, align 4
  br label %spin
run:
  %job = load ptr, ptr %current
{job_fields}
  store [2 x i32] zeroinitializer, ptr %own
  {grid("%index")} %own, i32 -1)
  atomicrmw sub ptr %pending, i32 1 release
  br label %ran
ran:
  br label %idle
}}
define internal void @tritium_cpu_release(ptr %slots, i32 %helpers) {{
entry:
  br label %next
next:
  %i = phi i32 [0, %entry], [%i_next, %woken]
  %more = icmp slt i32 %i, %helpers
  br i1 %more, label %start, label %done
start:
  %slot = getelementptr {HELPER_SLOT}, ptr %slots, i32 %i
  atomicrmw add ptr %slot, i32 1 seq_cst
  %sleeping = getelementptr {HELPER_SLOT}, ptr %slot, i32 0, i32 1
  %asleep = load atomic i32, ptr %sleeping seq_cst, align 4
  %wake = icmp ne i32 %asleep, 0
  br i1 %wake, label %wake_it, label %woken
wake_it:
  {wake}
  br label %woken
woken:
  %i_next = add i32 %i, 1
  br label %next
done:
  ret void
}}
define i32 @tritium_cpu_launch(ptr %job, ptr %slots, ptr %current, i64 %slice_ns) {{
entry:
{job_fields}
  %plane = mul i32 %nx, %ny
  %total = mul i32 %plane, %nz
  %total_wide = zext i32 %total to i64
  %threads_wide = zext i32 %threads to i64
  br label %cut
cut:
  %i = phi i32 [0, %entry], [%i_next, %cut]
  %i_next = add i32 %i, 1
  %share = getelementptr {SHARE}, ptr %shares, i32 %i
  %end_at = getelementptr {SHARE}, ptr %shares, i32 %i, i32 1
  %i_wide = zext i32 %i to i64
  %i_next_wide = zext i32 %i_next to i64
  %from_scaled = mul i64 %i_wide, %total_wide
  %to_scaled = mul i64 %i_next_wide, %total_wide
  %from_wide = udiv i64 %from_scaled, %threads_wide
  %to_wide = udiv i64 %to_scaled, %threads_wide
  %from = trunc i64 %from_wide to i32
  %to = trunc i64 %to_wide to i32
  store i32 %from, ptr %share
  store i32 %to, ptr %end_at
  %more_shares = icmp ult i32 %i_next, %threads
  br i1 %more_shares, label %cut, label %start
start:
  %helpers = sub i32 %threads, 1
  store i32 %helpers, ptr %pending
  store ptr %job, ptr %current
  call void @tritium_cpu_release(ptr %slots, i32 %helpers)
  %status = call i32 @tritium_cpu_run_and_wait(ptr %job, i64 %slice_ns)
  ret i32 %status
}}
define i32 @tritium_cpu_run_and_wait(ptr %job, i64 %slice_ns) {{
entry:
{job_fields}
  %own_index = sub i32 %threads, 1
  store atomic ptr %kernel, ptr @{KERNEL_SYMBOL} monotonic, align 8
  %start = call i64 @now_ns()
  br label %programs
programs:
  %quota = phi i32 [1, %entry], [%next_quota, %again]
  %before = phi i64 [%start, %entry], [%after, %again]
  %more = {grid("%own_index")} %state, i32 %quota)
  %exhausted = icmp eq i32 %more, 0
  br i1 %exhausted, label %wait, label %timed
timed:
  %after = call i64 @now_ns()
  %elapsed = sub i64 %after, %start
  %late = icmp sgt i64 %elapsed, %slice_ns
  br i1 %late, label %yield, label %again
again:
  %took = sub i64 %after, %before
  %quick = icmp slt i64 %took, 200000
  %small = icmp ult i32 %quota, 1048576
  %grow = and i1 %quick, %small
  %doubled = shl i32 %quota, 1
  %next_quota = select i1 %grow, i32 %doubled, i32 %quota
  br label %programs
wait:
  %left = load atomic i32, ptr %pending acquire, align 4
  %done = icmp eq i32 %left, 0
  br i1 %done, label %exit, label %spin
spin:
{pause_until("%start", "%slice_ns", "yield", "wait")}
yield:
  ret i32 1
exit:
  store atomic ptr null, ptr @{KERNEL_SYMBOL} monotonic, align 8
  %flag = load atomic i32, ptr @{INTERRUPT_SYMBOL} monotonic, align 4
  %stopped = icmp ne i32 %flag, 0
  %result = select i1 %stopped, i32 {INTERRUPTED}, i32 0
  ret i32 %result
}}
"""
