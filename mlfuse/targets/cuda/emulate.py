"""The ``cuda_emu`` device: the CUDA target's kernels, as lowered for NVVM, run on host threads.

``cuda_sim`` interprets the loop-level IR with every thread in lock step;
this device runs what comes after it: the CUDA kernel pipeline down to the
``llvm`` dialect (NVVM's special registers, warp shuffles, shared memory in
address space 3, barriers), i.e. the module the NVPTX backend makes PTX of,
compiled for the host instead by LLVM (``emulate-nvvm`` swaps the four NVVM
intrinsics for calls of a small runtime and checks every access). A launch
of ``grid`` blocks of ``block`` threads starts ``block`` host threads; they
run the blocks one after another, each thread its own GPU thread, meeting at
real barriers (a mutex and a condition variable), exchanging shuffled values
through memory, and sharing the kernel's shared-memory globals, as one
block's threads do. The threads run concurrently, in whatever order the
host's scheduler picks (and a check now and then yields the processor), so a
missing barrier shows as a wrong result, not as lock-step luck.

A launch fails, naming the kernel, block, thread and access, where the GPU
would fault or behave undefinedly:

* an access not aligned as it claims (``CUDA_ERROR_MISALIGNED_ADDRESS``),
  a buffer argument not 16-byte aligned (what kernels assume);
* an access outside the launch's buffers and the kernel's shared memory
  (``CUDA_ERROR_ILLEGAL_ADDRESS`` or silent corruption);
* a shuffle with a lane outside its mask or past the block's threads;
* threads of a block at different barriers, or some at none (a deadlock:
  the launch gives up after ``MLFUSE_EMU_TIMEOUT`` seconds, default 300).

New buffers are filled with bytes 0xFF (NaN for floats), so a kernel that
reads memory nobody wrote shows it. What the emulator does not cover is the
NVPTX backend and the GPU themselves: PTX is checked by ``ptxas`` where it is
installed (see ``tests/unit/test_ptxas.py``) and by the GPU. It is slow
(one host thread per GPU thread of a block): a tool for tests, like
``cuda_sim``.
"""

from __future__ import annotations

import ctypes
import io
import os
import threading
import time
from collections.abc import Sequence
from functools import cache

import numpy as np
from xdsl.dialects import llvm
from xdsl.dialects.builtin import IntegerAttr, IntegerType, ModuleOp
from xdsl.printer import Printer

from mlfuse import dtypes
from mlfuse.dtypes import DType
from mlfuse.targets import Buffer, CompiledKernel
from mlfuse.targets.cuda.driver import CudaError
from mlfuse.targets.cuda.emulate_nvvm import RUNTIME, checked_accesses
from mlfuse.targets.cuda.host_memory import HostBuffer, HostMemoryTarget
from mlfuse.targets.cuda.target import CudaTarget

WARP = 32
BAR_BYTES = 256
"""Bytes of one barrier: a ``pthread_mutex_t`` (at most 64 bytes), a
``pthread_cond_t`` (at most 64) and three words."""
YIELD_MASK = 15
"""A thread gives up the processor at about one checked access in 16."""

# words of a thread's context and of a block's state (int64 each), shared by the
# runtime's IR below and the launch
T_TID, T_CTAID, T_BLOCK, T_RNG, T_GEN, T_WORDS = range(6)
B_BARS, B_NBARS, B_SLOTS, B_THREADS, B_ABORT, B_SCRATCH = range(6)
B_ERR, B_ERR_VALUE, B_ERR_TID, B_ERR_CTAID, B_ERR_SITE = range(6, 11)
B_RANGES, B_NRANGES, B_YIELD, B_SITES, B_ERR_OTHER, B_WORDS = range(11, 17)
"""A block's words: its barriers (the block's, then one per warp) and how many,
the shuffle slots, its threads, the abort flag, a scratch buffer failed
accesses use instead, the first failure, the ranges accesses may touch
(triples: first byte, end, shadow of shared memory or null), how often a check
yields, the barrier sites, the other thread of a race."""

MISALIGNED, OUT_OF_BOUNDS, BAD_SHUFFLE, DIVERGED, RACE_RAW, RACE_WAR, RACE_WAW = range(1, 8)
_CODES = (
    "MISALIGNED",
    "OUT_OF_BOUNDS",
    "BAD_SHUFFLE",
    "DIVERGED",
    "RACE_RAW",
    "RACE_WAR",
    "RACE_WAW",
)


class EmulationError(CudaError):
    """A kernel did on ``cuda_emu`` what would fault or be undefined on a GPU."""


_RUNTIME_IR = r"""
declare ptr @pthread_getspecific(i32)
declare i32 @pthread_setspecific(i32, ptr)
declare i32 @pthread_mutex_lock(ptr)
declare i32 @pthread_mutex_unlock(ptr)
declare i32 @pthread_cond_wait(ptr, ptr)
declare i32 @pthread_cond_broadcast(ptr)
declare i32 @sched_yield()

define internal ptr @ctx() {
  %c = call ptr @pthread_getspecific(i32 KEY)
  ret ptr %c
}

define internal ptr @at(ptr %p, i64 %i) {
  %a = getelementptr i64, ptr %p, i64 %i
  ret ptr %a
}

define internal i64 @word(ptr %p, i64 %i) {
  %a = getelementptr i64, ptr %p, i64 %i
  %v = load i64, ptr %a
  ret i64 %v
}

define internal ptr @pword(ptr %p, i64 %i) {
  %a = getelementptr i64, ptr %p, i64 %i
  %v = load ptr, ptr %a
  ret ptr %v
}

define internal void @set(ptr %p, i64 %i, i64 %v) {
  %a = getelementptr i64, ptr %p, i64 %i
  store i64 %v, ptr %a
  ret void
}

define internal i1 @aborted(ptr %b) {
  %a = getelementptr i64, ptr %b, i64 B_ABORT
  %v = load atomic i64, ptr %a seq_cst, align 8
  %r = icmp ne i64 %v, 0
  ret i1 %r
}

define i32 @mlfuse_emu_tid() {
  %c = call ptr @ctx()
  %t = call i64 @word(ptr %c, i64 T_TID)
  %r = trunc i64 %t to i32
  ret i32 %r
}

define i32 @mlfuse_emu_ctaid() {
  %c = call ptr @ctx()
  %t = call i64 @word(ptr %c, i64 T_CTAID)
  %r = trunc i64 %t to i32
  ret i32 %r
}

; a barrier (BAR_BYTES bytes: a mutex at 0, a condition at 64, then the words
; count, arrived, generation) that every thread passes at once once the launch
; is aborted
define internal void @wait(ptr %bar, ptr %b) {
entry:
  %cv = getelementptr i8, ptr %bar, i64 64
  %words = getelementptr i8, ptr %bar, i64 128
  call i32 @pthread_mutex_lock(ptr %bar)
  %ab = call i1 @aborted(ptr %b)
  br i1 %ab, label %leave, label %arrive
arrive:
  %count = call i64 @word(ptr %words, i64 0)
  %arrived = call i64 @word(ptr %words, i64 1)
  %gen = call i64 @word(ptr %words, i64 2)
  %arrived1 = add i64 %arrived, 1
  %last = icmp eq i64 %arrived1, %count
  br i1 %last, label %release, label %stay
release:
  call void @set(ptr %words, i64 1, i64 0)
  %gen1 = add i64 %gen, 1
  call void @set(ptr %words, i64 2, i64 %gen1)
  call i32 @pthread_cond_broadcast(ptr %cv)
  br label %leave
stay:
  call void @set(ptr %words, i64 1, i64 %arrived1)
  br label %check
check:
  %g = call i64 @word(ptr %words, i64 2)
  %moved = icmp ne i64 %g, %gen
  %ab2 = call i1 @aborted(ptr %b)
  %go = or i1 %moved, %ab2
  br i1 %go, label %leave, label %sleep
sleep:
  call i32 @pthread_cond_wait(ptr %cv, ptr %bar)
  br label %check
leave:
  call i32 @pthread_mutex_unlock(ptr %bar)
  ret void
}

; stop a launch: from now on barriers let everyone through, and every thread
; leaves after its block
define void @mlfuse_emu_abort(ptr %b) {
entry:
  %a = getelementptr i64, ptr %b, i64 B_ABORT
  store atomic i64 1, ptr %a seq_cst, align 8
  %bars = call ptr @pword(ptr %b, i64 B_BARS)
  %n = call i64 @word(ptr %b, i64 B_NBARS)
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %wake ]
  %more = icmp ult i64 %i, %n
  br i1 %more, label %wake, label %done
wake:
  %off = mul i64 %i, BAR_BYTES
  %bar = getelementptr i8, ptr %bars, i64 %off
  %cv = getelementptr i8, ptr %bar, i64 64
  call i32 @pthread_mutex_lock(ptr %bar)
  call i32 @pthread_cond_broadcast(ptr %cv)
  call i32 @pthread_mutex_unlock(ptr %bar)
  %i1 = add i64 %i, 1
  br label %loop
done:
  ret void
}

; the first failure of a launch is kept (its code, a value, the thread, the
; site) and stops the launch
define internal void @fail(ptr %c, i64 %code, i64 %value, i64 %site, i64 %other) {
entry:
  %b = call ptr @pword(ptr %c, i64 T_BLOCK)
  %e = getelementptr i64, ptr %b, i64 B_ERR
  %x = cmpxchg ptr %e, i64 0, i64 %code seq_cst seq_cst
  %won = extractvalue { i64, i1 } %x, 1
  br i1 %won, label %keep, label %done
keep:
  call void @set(ptr %b, i64 B_ERR_VALUE, i64 %value)
  %tid = call i64 @word(ptr %c, i64 T_TID)
  call void @set(ptr %b, i64 B_ERR_TID, i64 %tid)
  %cta = call i64 @word(ptr %c, i64 T_CTAID)
  call void @set(ptr %b, i64 B_ERR_CTAID, i64 %cta)
  call void @set(ptr %b, i64 B_ERR_SITE, i64 %site)
  call void @set(ptr %b, i64 B_ERR_OTHER, i64 %other)
  call void @mlfuse_emu_abort(ptr %b)
  br label %done
done:
  ret void
}

; a block barrier that also checks everyone came from the same site (-1: the end
; of a block); sites alternate between two arrays, as no thread can be two
; barriers ahead of another
define void @mlfuse_emu_barrier(i64 %site) {
entry:
  %c = call ptr @ctx()
  %b = call ptr @pword(ptr %c, i64 T_BLOCK)
  %n = call i64 @word(ptr %b, i64 B_THREADS)
  %tid = call i64 @word(ptr %c, i64 T_TID)
  %gen = call i64 @word(ptr %c, i64 T_GEN)
  %next = add i64 %gen, 1
  call void @set(ptr %c, i64 T_GEN, i64 %next)
  %parity = and i64 %gen, 1
  %half = mul i64 %parity, %n
  %sites = call ptr @pword(ptr %b, i64 B_SITES)
  %mine = add i64 %half, %tid
  call void @set(ptr %sites, i64 %mine, i64 %site)
  %bar = call ptr @pword(ptr %b, i64 B_BARS)
  call void @wait(ptr %bar, ptr %b)
  %ab = call i1 @aborted(ptr %b)
  br i1 %ab, label %done, label %compare
compare:
  %first = call i64 @word(ptr %sites, i64 %half)
  %same = icmp eq i64 %first, %site
  br i1 %same, label %done, label %diverged
diverged:
  call void @fail(ptr %c, i64 DIVERGED, i64 %first, i64 %site, i64 0)
  br label %done
done:
  ret void
}

; shfl.sync.bfly: every lane of the warp writes its value, meets the others,
; reads lane ^ lanemask's (its own past the clamp), and meets them again
define i32 @mlfuse_emu_shfl_bfly(i32 %mask, i32 %v, i32 %lanemask, i32 %clamp) {
entry:
  %c = call ptr @ctx()
  %b = call ptr @pword(ptr %c, i64 T_BLOCK)
  %n = call i64 @word(ptr %b, i64 B_THREADS)
  %tid = call i64 @word(ptr %c, i64 T_TID)
  %slots = call ptr @pword(ptr %b, i64 B_SLOTS)
  %mine = getelementptr i32, ptr %slots, i64 %tid
  store i32 %v, ptr %mine
  %warp = lshr i64 %tid, 5
  %bars = call ptr @pword(ptr %b, i64 B_BARS)
  %wb = add i64 %warp, 1
  %boff = mul i64 %wb, BAR_BYTES
  %wbar = getelementptr i8, ptr %bars, i64 %boff
  call void @wait(ptr %wbar, ptr %b)
  %lane = and i64 %tid, 31
  %lm32 = and i32 %lanemask, 31
  %lm = zext i32 %lm32 to i64
  %src = xor i64 %lane, %lm
  %cl32 = and i32 %clamp, 31
  %maxlane = zext i32 %cl32 to i64
  %inrange = icmp ule i64 %src, %maxlane
  %wbase = shl i64 %warp, 5
  %stid = add i64 %wbase, %src
  %exists = icmp ult i64 %stid, %n
  %m64 = zext i32 %mask to i64
  %mebit = lshr i64 %m64, %lane
  %me1 = and i64 %mebit, 1
  %hasme = icmp ne i64 %me1, 0
  %srcbit = lshr i64 %m64, %src
  %src1 = and i64 %srcbit, 1
  %hassrc = icmp ne i64 %src1, 0
  %srcok = and i1 %hassrc, %exists
  %notin = xor i1 %inrange, true
  %need = or i1 %notin, %srcok
  %ok = and i1 %hasme, %need
  br i1 %ok, label %read, label %bad
bad:
  call void @fail(ptr %c, i64 BAD_SHUFFLE, i64 %stid, i64 %m64, i64 0)
  br label %read
read:
  %take = and i1 %inrange, %exists
  %from = select i1 %take, i64 %stid, i64 %tid
  %theirs = getelementptr i32, ptr %slots, i64 %from
  %r = load i32, ptr %theirs
  call void @wait(ptr %wbar, ptr %b)
  ret i32 %r
}

; shared memory's shadow: two words per byte, the last write and the last read,
; each (epoch << 20 | thread), epoch = the thread's barrier count + 1 (the same
; for all threads of a block between two barriers; MANY: several readers). An
; access races when another thread wrote the byte, or (for a write) read it, in
; the same epoch
define internal i1 @race_free(ptr %c, i64 %addr, i64 %size, i64 %lo, ptr %shadow,
                              i64 %store, i64 %site) {
entry:
  %tid = call i64 @word(ptr %c, i64 T_TID)
  %gen = call i64 @word(ptr %c, i64 T_GEN)
  %epoch = add i64 %gen, 1
  %eshift = shl i64 %epoch, 20
  %mine = or i64 %eshift, %tid
  %many = or i64 %eshift, 1048575
  %first = sub i64 %addr, %lo
  %isstore = icmp ne i64 %store, 0
  br label %loop
loop:
  %j = phi i64 [ 0, %entry ], [ %j1, %next ]
  %more = icmp ult i64 %j, %size
  br i1 %more, label %body, label %clean
body:
  %off = add i64 %first, %j
  %wi = shl i64 %off, 1
  %wp = getelementptr i64, ptr %shadow, i64 %wi
  %rp = getelementptr i64, ptr %wp, i64 1
  %w = load atomic i64, ptr %wp monotonic, align 8
  %wep = lshr i64 %w, 20
  %wtid = and i64 %w, 1048575
  %wsame = icmp eq i64 %wep, %epoch
  %wother = icmp ne i64 %wtid, %tid
  %after_write = and i1 %wsame, %wother
  br i1 %after_write, label %written, label %kind
written:
  %wcode = select i1 %isstore, i64 RACE_WAW, i64 RACE_RAW
  call void @fail(ptr %c, i64 %wcode, i64 %addr, i64 %site, i64 %wtid)
  ret i1 false
kind:
  %r = load atomic i64, ptr %rp monotonic, align 8
  %rep = lshr i64 %r, 20
  %rtid = and i64 %r, 1048575
  %rsame = icmp eq i64 %rep, %epoch
  br i1 %isstore, label %write, label %read
write:
  %rother = icmp ne i64 %rtid, %tid
  %after_read = and i1 %rsame, %rother
  br i1 %after_read, label %was_read, label %mark_write
was_read:
  call void @fail(ptr %c, i64 RACE_WAR, i64 %addr, i64 %site, i64 %rtid)
  ret i1 false
mark_write:
  store atomic i64 %mine, ptr %wp monotonic, align 8
  br label %next
read:
  %already = icmp eq i64 %r, %many
  br i1 %already, label %next, label %mark_read
mark_read:
  %prev = atomicrmw xchg ptr %rp, i64 %mine monotonic
  %pep = lshr i64 %prev, 20
  %ptid = and i64 %prev, 1048575
  %psame = icmp eq i64 %pep, %epoch
  %pother = icmp ne i64 %ptid, %tid
  %two = and i1 %psame, %pother
  br i1 %two, label %mark_many, label %next
mark_many:
  store atomic i64 %many, ptr %rp monotonic, align 8
  br label %next
next:
  %j1 = add i64 %j, 1
  br label %loop
clean:
  ret i1 true
}

; an access of %size bytes at %addr, claiming %align: aligned, inside a range
; of the launch (its buffers, the kernel's shared memory), and in shared memory
; not racing another thread's since the last barrier. Returns the address to
; use: %addr, or a scratch buffer of the launch for an access that failed
define i64 @mlfuse_emu_check(i64 %addr, i64 %size, i64 %align, i64 %site, i64 %store) {
entry:
  %c = call ptr @ctx()
  %b = call ptr @pword(ptr %c, i64 T_BLOCK)
  %am1 = sub i64 %align, 1
  %mis = and i64 %addr, %am1
  %aligned = icmp eq i64 %mis, 0
  br i1 %aligned, label %bounds, label %misaligned
misaligned:
  call void @fail(ptr %c, i64 MISALIGNED, i64 %addr, i64 %site, i64 0)
  br label %refuse
bounds:
  %ranges = call ptr @pword(ptr %b, i64 B_RANGES)
  %nr = call i64 @word(ptr %b, i64 B_NRANGES)
  %end = add i64 %addr, %size
  br label %loop
loop:
  %i = phi i64 [ 0, %bounds ], [ %i1, %next ]
  %more = icmp ult i64 %i, %nr
  br i1 %more, label %test, label %outside
test:
  %lo_i = mul i64 %i, 3
  %hi_i = add i64 %lo_i, 1
  %sh_i = add i64 %lo_i, 2
  %lo = call i64 @word(ptr %ranges, i64 %lo_i)
  %hi = call i64 @word(ptr %ranges, i64 %hi_i)
  %ge = icmp uge i64 %addr, %lo
  %le = icmp ule i64 %end, %hi
  %in = and i1 %ge, %le
  %i1 = add i64 %i, 1
  br i1 %in, label %inside, label %next
next:
  br label %loop
inside:
  %shadow = call ptr @pword(ptr %ranges, i64 %sh_i)
  %shared = icmp ne ptr %shadow, null
  br i1 %shared, label %races, label %yield
races:
  %clean = call i1 @race_free(ptr %c, i64 %addr, i64 %size, i64 %lo, ptr %shadow,
                              i64 %store, i64 %site)
  br i1 %clean, label %yield, label %refuse
outside:
  call void @fail(ptr %c, i64 OUT_OF_BOUNDS, i64 %addr, i64 %site, i64 0)
  br label %refuse
refuse:
  %scratch = call i64 @word(ptr %b, i64 B_SCRATCH)
  ret i64 %scratch
yield:
  %every = call i64 @word(ptr %b, i64 B_YIELD)
  %s = call i64 @word(ptr %c, i64 T_RNG)
  %s1 = mul i64 %s, 6364136223846793005
  %s2 = add i64 %s1, 1442695040888963407
  call void @set(ptr %c, i64 T_RNG, i64 %s2)
  %top = lshr i64 %s2, 40
  %pick = and i64 %top, %every
  %now = icmp eq i64 %pick, 0
  %on = icmp ne i64 %every, 0
  %go = and i1 %now, %on
  br i1 %go, label %do_yield, label %done
do_yield:
  call i32 @sched_yield()
  br label %done
done:
  ret i64 %addr
}

; a host thread's work: GPU thread ctx[tid] of every block in turn, a barrier
; after each block; it leaves early once the launch is aborted
define void @mlfuse_emu_worker(ptr %c, ptr %kernel, ptr %args, i64 %grid) {
entry:
  call i32 @pthread_setspecific(i32 KEY, ptr %c)
  %b = call ptr @pword(ptr %c, i64 T_BLOCK)
  br label %loop
loop:
  %blk = phi i64 [ 0, %entry ], [ %blk1, %next ]
  %more = icmp ult i64 %blk, %grid
  br i1 %more, label %body, label %done
body:
  call void @set(ptr %c, i64 T_CTAID, i64 %blk)
  call void %kernel(ptr %args)
  call void @mlfuse_emu_barrier(i64 -1)
  %blk1 = add i64 %blk, 1
  %ab = call i1 @aborted(ptr %b)
  br i1 %ab, label %done, label %next
next:
  br label %loop
done:
  ret void
}
"""


@cache
def _host() -> tuple[str, str]:
    """(triple, data layout) of the machine the emulator runs on."""
    import llvmlite.binding as lb

    lb.initialize_native_target()
    lb.initialize_native_asmprinter()
    triple = lb.get_process_triple()
    return triple, str(lb.Target.from_triple(triple).create_target_machine().target_data)


def _target_machine():
    """A fresh TargetMachine for this processor, its features included (x86's
    F16C converts half floats; without it LLVM would call compiler-rt's
    ``__extendhfsf2``, which the JIT cannot find). An MCJIT engine owns the one
    it gets."""
    import llvmlite.binding as lb

    return lb.Target.from_triple(_host()[0]).create_target_machine(
        cpu=lb.get_host_cpu_name(),
        features=lb.get_host_cpu_features().flatten(),
        opt=2,
        codemodel="jitdefault",
    )


def _substitute(text: str, names: dict[str, int]) -> str:
    # longer names first, so B_ERR does not replace the start of B_ERR_SITE
    for name in sorted(names, key=len, reverse=True):
        text = text.replace(name, str(names[name]))
    return text


class _Runtime:
    """The runtime's functions, compiled once per process and made visible to
    the kernels' modules by name."""

    def __init__(self):
        import llvmlite.binding as lb

        try:
            libc = ctypes.CDLL(None)  # the process's own symbols: libc's
        except (OSError, TypeError):
            libc = None
        if libc is None or not hasattr(libc, "pthread_key_create"):
            raise EmulationError("cuda_emu runs on POSIX threads, which this system lacks")
        key = ctypes.c_uint()
        if libc.pthread_key_create(ctypes.byref(key), None) != 0:
            raise EmulationError("cuda_emu: no thread-specific key for the runtime")
        g = globals()
        names = {n: g[n] for n in g if n.startswith(("T_", "B_")) and isinstance(g[n], int)}
        names |= {"KEY": key.value, "BAR_BYTES": BAR_BYTES}
        names |= {n: g[n] for n in _CODES}
        triple, layout = _host()
        text = f'target triple = "{triple}"\ntarget datalayout = "{layout}"\n'
        mod = lb.parse_assembly(text + _substitute(_RUNTIME_IR, names))
        mod.verify()
        self.engine = lb.create_mcjit_compiler(mod, _target_machine())
        self.engine.finalize_object()
        for name in (*RUNTIME, "mlfuse_emu_worker", "mlfuse_emu_abort"):
            lb.add_symbol(name, self.engine.get_function_address(name))
        addr = self.engine.get_function_address
        self.worker = ctypes.CFUNCTYPE(
            None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64
        )(addr("mlfuse_emu_worker"))
        self.abort = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(addr("mlfuse_emu_abort"))
        p = ctypes.c_void_p
        self.mutex_init, self.cond_init = libc.pthread_mutex_init, libc.pthread_cond_init
        self.mutex_destroy, self.cond_destroy = (
            libc.pthread_mutex_destroy,
            libc.pthread_cond_destroy,
        )
        for fn in (self.mutex_init, self.cond_init):
            fn.argtypes = [p, p]
        for fn in (self.mutex_destroy, self.cond_destroy):
            fn.argtypes = [p]


_runtime_lock = threading.Lock()


@cache
def _make_runtime() -> _Runtime:
    return _Runtime()


def runtime() -> _Runtime:
    with _runtime_lock:
        return _make_runtime()


class EmuKernel(CompiledKernel):
    """A kernel compiled for the host: its entry (taking an array of buffer
    pointers), launch shape, shared memory and the accesses its checks guard."""

    __slots__ = ("entry", "grid", "block", "shared", "sites", "engine")

    def __init__(self, name, num_buffers, entry, grid, block, shared, sites, engine):
        super().__init__(name, num_buffers)
        self.entry, self.grid, self.block = entry, grid, block
        self.shared: list[tuple[str, int, int]] = shared  # (global, address, bytes)
        self.sites: list[str] = sites
        self.engine = engine


ALIGN = 256


def _aligned(size: int, dtype: DType) -> np.ndarray:
    """``size`` elements of ``dtype`` starting at a multiple of 256 bytes, every
    byte 0xFF."""
    nbytes = max(size * dtype.itemsize, 1)
    raw = np.full(nbytes + ALIGN, 0xFF, np.uint8)
    start = -raw.ctypes.data % ALIGN
    return raw[start : start + size * dtype.itemsize].view(dtype.np)


class CudaEmuTarget(HostMemoryTarget):
    """The ``cuda_emu`` device: NVVM-level kernels on host threads, every access checked."""

    name = "cuda_emu"
    kernel_pipeline = CudaTarget.kernel_pipeline

    def passes(self):
        def emulate():
            from mlfuse.targets.cuda.emulate_nvvm import EmulateNvvm

            return EmulateNvvm

        return {**super().passes(), "emulate-nvvm": emulate}

    def __init__(self):
        self.timeout = float(os.environ.get("MLFUSE_EMU_TIMEOUT", "300"))

    def available(self) -> bool:
        try:
            runtime()
        except EmulationError:
            return False
        return True

    # -- compiling ------------------------------------------------------------------
    def compile(self, module: ModuleOp) -> dict[str, CompiledKernel]:
        """Compile what the CUDA target compiles (kernels lowered for NVVM), through
        ``emulate-nvvm``, for the host. With ``MLFUSE_EMU_PTXAS=1`` the module's PTX
        is also assembled by ``ptxas``, as a GPU's driver would (PtxasError if it
        is rejected)."""
        import llvmlite.binding as lb

        from mlfuse.driver import run_passes
        from mlfuse.lowering.llvm_ir import to_llvm_module
        from mlfuse.targets.cuda import ptx

        if os.environ.get("MLFUSE_EMU_PTXAS", "") not in ("", "0"):
            ptx.assemble(ptx.ptx(module))
        shapes = ptx.launch_shapes(module)
        module = module.clone()
        run_passes(module, ("emulate-nvvm",))
        runtime()  # its functions resolve the kernels' calls
        ir = to_llvm_module(module, *_host())
        entries = []
        for name, shape in shapes.items():
            fn = ir.get_global(name)
            if any(str(a.type) != "ptr" for a in fn.args):
                raise EmulationError(f"cuda_emu: kernel {name} takes arguments other than buffers")
            loads = "\n".join(
                f"  %p{i} = getelementptr ptr, ptr %a, i64 {i}\n  %b{i} = load ptr, ptr %p{i}"
                for i in range(shape.num_buffers)
            )
            args = ", ".join(f"ptr %b{i}" for i in range(shape.num_buffers))
            entries.append(
                f'define void @"{name}.emu"(ptr %a) {{\n{loads}\n'
                f'  call void @"{name}"({args})\n  ret void\n}}'
            )
        text = str(ir) + "\n" + "\n".join(entries) + "\n"
        shared = {
            g.sym_name.data: g.global_type
            for g in module.ops
            if isinstance(g, llvm.GlobalOp)
            and isinstance(g.addr_space, IntegerAttr)
            and g.addr_space.value.data == 3
        }
        sites = [f"{_owner(op)}: {_text(op)}" for op in checked_accesses(module)]
        with ptx._lock:  # LLVM's work, one thread at a time
            mod = lb.parse_assembly(text)
            mod.verify()
            tm = _target_machine()
            pb = lb.create_pass_builder(tm, lb.PipelineTuningOptions(speed_level=2))
            pb.getModulePassManager().run(mod, pb)
            engine = lb.create_mcjit_compiler(mod, _target_machine())
            engine.finalize_object()
        out: dict[str, CompiledKernel] = {}
        for name, shape in shapes.items():
            mine = [
                (g, engine.get_global_value_address(g), _size(t))
                for g, t in shared.items()
                if g.startswith(f"{name}__")
            ]
            out[name] = EmuKernel(
                name,
                shape.num_buffers,
                engine.get_function_address(f"{name}.emu"),
                shape.grid,
                shape.block,
                mine,
                sites,
                engine,
            )
        return out

    # -- memory: host arrays as cuMemAlloc aligns them, unwritten bytes 0xFF -----------
    def alloc(self, size: int, dtype: DType) -> HostBuffer:
        return HostBuffer(self.name, _aligned(size, dtype), dtype)

    def from_numpy(self, array: np.ndarray) -> HostBuffer:
        host = np.ascontiguousarray(array).reshape(-1)
        dt = dtypes.from_numpy(host.dtype)
        out = _aligned(host.size, dt)
        out[...] = host
        return HostBuffer(self.name, out, dt)

    # -- launches --------------------------------------------------------------------
    def launch(self, kernel: CompiledKernel, buffers: Sequence[Buffer]) -> None:
        arrays = self._launch_arrays(kernel, EmuKernel, buffers)
        for i, a in enumerate(arrays):
            if a.ctypes.data % 16:
                raise EmulationError(
                    f"launch of {kernel.name}: buffer {i} at {a.ctypes.data:#x} is not 16-byte "
                    "aligned (kernels assume their buffers are)"
                )
        _Launch(runtime(), kernel, arrays, self.timeout).run()  # type: ignore[arg-type]


def _owner(op) -> str:
    f = op.parent_op()
    while f is not None and not isinstance(f, llvm.FuncOp):
        f = f.parent_op()
    return f.sym_name.data if f is not None else "?"


def _text(op) -> str:
    """One op as mlfuse-opt prints it (its operands numbered from 0)."""
    out = io.StringIO()
    Printer(stream=out).print_op(op)
    return out.getvalue().strip()


def _size(t) -> int:
    """Bytes of a shared global (``gpu-to-nvvm`` makes them arrays of i8)."""
    assert isinstance(t, llvm.LLVMArrayType) and isinstance(t.type, IntegerType)
    return t.size.data * t.type.width.data // 8


_running: list[object] = []
"""Launches whose threads never returned (kept alive for them)."""


class _Launch:
    """One launch: the block's barriers, shuffle slots and checks, its threads."""

    def __init__(self, rt: _Runtime, k: EmuKernel, arrays: list[np.ndarray], timeout: float):
        self.rt, self.k, self.arrays, self.timeout = rt, k, arrays, timeout
        n = k.block
        counts = [n] + [min(WARP, n - w) for w in range(0, n, WARP)]
        self.bars = np.zeros((len(counts), BAR_BYTES // 8), np.int64)
        for i, count in enumerate(counts):
            at = self.bars.ctypes.data + i * BAR_BYTES
            rt.mutex_init(at, None)
            rt.cond_init(at + 64, None)
            self.bars[i, 128 // 8] = count
        self.slots = np.zeros(n, np.int32)
        self.sites = np.zeros(2 * n, np.int64)
        self.scratch = _aligned(64, dtypes.float32)
        # each shared global has a shadow: two words per byte (see @race_free)
        self.shadows = [np.zeros(2 * size, np.int64) for _, _, size in k.shared]
        ranges = [(a.ctypes.data, a.ctypes.data + a.nbytes, 0) for a in arrays] + [
            (at, at + size, sh.ctypes.data) for (_, at, size), sh in zip(k.shared, self.shadows)
        ]
        self.ranges = np.array(ranges, np.uint64).reshape(-1)
        b = self.block = np.zeros(B_WORDS, np.int64)
        b[B_BARS], b[B_NBARS] = self.bars.ctypes.data, len(counts)
        b[B_SLOTS], b[B_THREADS] = self.slots.ctypes.data, n
        b[B_SCRATCH] = self.scratch.ctypes.data
        b[B_RANGES], b[B_NRANGES] = self.ranges.ctypes.data, len(ranges)
        b[B_YIELD], b[B_SITES] = YIELD_MASK, self.sites.ctypes.data
        self.ctx = np.zeros((n, T_WORDS), np.int64)
        self.ctx[:, T_TID] = np.arange(n)
        self.ctx[:, T_BLOCK] = b.ctypes.data
        self.ctx[:, T_RNG] = np.random.default_rng().integers(1, 1 << 62, n)
        self.args = np.array([a.ctypes.data for a in arrays] or [0], np.uint64)

    def run(self) -> None:
        k, rt = self.k, self.rt
        row = self.ctx.strides[0]
        threads = [
            threading.Thread(
                target=rt.worker,
                args=(self.ctx.ctypes.data + t * row, k.entry, self.args.ctypes.data, k.grid),
                daemon=True,
                name=f"cuda_emu {k.name} thread {t}",
            )
            for t in range(k.block)
        ]
        for t in threads:
            t.start()
        deadline = time.monotonic() + self.timeout
        for t in threads:
            t.join(max(0.0, deadline - time.monotonic()))
        hung = any(t.is_alive() for t in threads)
        if hung:
            rt.abort(self.block.ctypes.data)  # every barrier lets its threads through
            for t in threads:
                t.join(10.0)
            if any(t.is_alive() for t in threads):  # not at a barrier: looping
                _running.append(self)  # what those threads use stays alive
                raise EmulationError(
                    f"launch of {k.name}: threads still running after {self.timeout:g} s"
                )
        for i in range(len(self.bars)):
            at = self.bars.ctypes.data + i * BAR_BYTES
            rt.mutex_destroy(at)
            rt.cond_destroy(at + 64)
        msg = self.failure()
        if msg:
            raise EmulationError(msg)
        if hung:
            raise EmulationError(
                f"launch of {k.name}: not finished after {self.timeout:g} s; threads of a "
                "block wait at a barrier the others never reach"
            )

    def failure(self) -> str | None:
        b, k = self.block, self.k
        code = int(b[B_ERR])
        if not code:
            return None
        where = f"launch of {k.name}, block {int(b[B_ERR_CTAID])}, thread {int(b[B_ERR_TID])}"
        value, site = int(b[B_ERR_VALUE]), int(b[B_ERR_SITE])
        if code in (MISALIGNED, OUT_OF_BOUNDS):
            access = k.sites[site] if 0 <= site < len(k.sites) else f"access {site}"
            what = "misaligned" if code == MISALIGNED else "out-of-bounds"
            return f"{where}: {what} access at {value:#x}{self._near(value)}: {access}"
        if code in (RACE_RAW, RACE_WAR, RACE_WAW):
            access = k.sites[site] if 0 <= site < len(k.sites) else f"access {site}"
            other = int(b[B_ERR_OTHER])
            other = "several threads" if other == (1 << 20) - 1 else f"thread {other}"
            did = {
                RACE_RAW: ("reads", "wrote"),
                RACE_WAR: ("writes", "read"),
                RACE_WAW: ("writes", "wrote"),
            }[code]
            return (
                f"{where}: a shared-memory race: it {did[0]} {self._shared(value)}, which "
                f"{other} {did[1]} since the last barrier: {access}"
            )
        if code == BAD_SHUFFLE:
            return (
                f"{where}: a warp shuffle with mask {site:#x} reads thread {value}, which is "
                "not in its mask or not in the block"
            )
        names = {-1: "the end of the block"}
        return (
            f"{where}: threads at different barriers: this one at "
            f"{names.get(site, f'barrier {site}')}, thread 0 at "
            f"{names.get(value, f'barrier {value}')}"
        )

    def _shared(self, addr: int) -> str:
        for name, at, size in self.k.shared:
            if at <= addr < at + size:
                return f"byte {addr - at} of @{name}"
        return f"{addr:#x}"

    def _near(self, addr: int) -> str:
        for i, a in enumerate(self.arrays):
            lo = a.ctypes.data
            if lo - 4096 <= addr < lo + a.nbytes + 4096:
                return f" (buffer {i} holds [{lo:#x}, {lo + a.nbytes:#x}))"
        return ""
