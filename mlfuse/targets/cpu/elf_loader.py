"""A loader for the relocatable ELF objects LLVM makes for the host (x86-64 Linux).

Kernels found in the disk cache are object files. Linking one with MCJIT
needs ``llvmlite.binding``, whose import alone (it loads LLVM, 180 MB) costs
more than everything else a second process does before its first result. The
objects the CPU's compiler makes are simple: code and constant pools, no
writable data, no thread-local storage, and, compiled for the JIT's large code
model, only absolute 64-bit relocations (``R_X86_64_64``); calls to libm or
libc (``pow``, ``memset``) are resolved in the process. So this module links
them itself: every allocated section is copied into one anonymous mapping,
the relocations are applied, and the mapping is made read-only and executable.
Anything else (another machine, another relocation type, writable sections)
raises :class:`UnsupportedObject` and the caller links with MCJIT instead.
"""

from __future__ import annotations

import ctypes
import mmap
import os
import platform
import struct
import sys

SHT_SYMTAB, SHT_RELA, SHT_NOBITS = 2, 4, 8
SHF_WRITE, SHF_ALLOC = 0x1, 0x2
SHF_TLS = 0x400
STT_SECTION = 3
SHN_UNDEF, SHN_ABS = 0, 0xFFF1
R_X86_64_NONE, R_X86_64_64, R_X86_64_PC32, R_X86_64_PLT32, R_X86_64_PC64 = 0, 1, 2, 4, 24
EM_X86_64 = 62


class UnsupportedObject(ValueError):
    """An object this loader does not link (MCJIT can)."""


def supported_host() -> bool:
    return sys.platform.startswith("linux") and platform.machine() in ("x86_64", "AMD64")


class LoadedObject:
    """An object file linked into this process: ``address(name)`` of its symbols.
    The code lives as long as this object (kernels keep a reference to it)."""

    def __init__(self, data: bytes):
        if not supported_host():
            raise UnsupportedObject("elf loader: only x86-64 Linux")
        if len(data) < 64 or data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
            raise UnsupportedObject("elf loader: not a 64-bit little-endian ELF object")
        (e_type, e_machine) = struct.unpack_from("<HH", data, 16)
        if e_type != 1 or e_machine != EM_X86_64:
            raise UnsupportedObject("elf loader: not a relocatable x86-64 object")
        shoff = struct.unpack_from("<Q", data, 40)[0]
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 58)
        if shentsize != 64 or shoff + shnum * 64 > len(data):
            raise UnsupportedObject("elf loader: bad section header table")
        sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * 64) for i in range(shnum)]
        # (name, type, flags, addr, offset, size, link, info, align, entsize)

        # lay out the allocated sections in one mapping
        place: dict[int, int] = {}
        end = 0
        for i, (_, typ, flags, _, off, size, _, _, align, _) in enumerate(sections):
            if not flags & SHF_ALLOC:
                continue
            if flags & (SHF_WRITE | SHF_TLS):
                raise UnsupportedObject("elf loader: writable or thread-local sections")
            if typ != SHT_NOBITS and off + size > len(data):
                raise UnsupportedObject("elf loader: a section lies outside the file")
            align = max(align, 1)
            end = -(-end // align) * align
            place[i] = end
            end += size
        length = max(-(-end // mmap.PAGESIZE) * mmap.PAGESIZE, mmap.PAGESIZE)
        try:
            self._map = mmap.mmap(-1, length, prot=mmap.PROT_READ | mmap.PROT_WRITE)
        except OSError as e:  # pragma: no cover - depends on the system
            raise UnsupportedObject(f"elf loader: no memory for the code ({e})") from None
        self._buf = (ctypes.c_char * length).from_buffer(self._map)
        base = ctypes.addressof(self._buf)
        for i, at in place.items():
            _, typ, _, _, off, size, _, _, _, _ = sections[i]
            if typ != SHT_NOBITS and size:
                self._map[at : at + size] = data[off : off + size]

        # symbols
        symtabs = [i for i, s in enumerate(sections) if s[1] == SHT_SYMTAB]
        if len(symtabs) != 1:
            raise UnsupportedObject("elf loader: expected one symbol table")
        st = sections[symtabs[0]]
        strtab = sections[st[6]]
        names = data[strtab[4] : strtab[4] + strtab[5]]

        def name_at(k: int) -> str:
            return names[k : names.index(b"\0", k)].decode()

        symbols = []
        for k in range(st[5] // 24):
            st_name, st_info, _, st_shndx, st_value, _ = struct.unpack_from(
                "<IBBHQQ", data, st[4] + k * 24
            )
            symbols.append((name_at(st_name), st_info & 0xF, st_shndx, st_value))
        self.symbols: dict[str, int] = {}
        for name, _, shndx, value in symbols:
            if name and shndx in place:
                self.symbols[name] = base + place[shndx] + value

        def resolve(k: int) -> int:
            name, kind, shndx, value = symbols[k]
            if shndx in place:
                return base + place[shndx] + (0 if kind == STT_SECTION else value)
            if shndx == SHN_ABS:
                return value
            if shndx == SHN_UNDEF and name:
                return _process_symbol(name)
            raise UnsupportedObject(f"elf loader: symbol {name!r} in an unloaded section")

        # relocations of the allocated sections
        for typ_sec in sections:
            _, typ, _, _, off, size, link, info, _, entsize = typ_sec
            if typ != SHT_RELA or info not in place:
                continue
            if link != symtabs[0] or entsize != 24:
                raise UnsupportedObject("elf loader: unexpected relocation section")
            target = place[info]
            for r in range(size // 24):
                r_offset, r_info, r_addend = struct.unpack_from("<QQq", data, off + r * 24)
                kind = r_info & 0xFFFFFFFF
                if kind == R_X86_64_NONE:
                    continue
                where = target + r_offset
                s = resolve(r_info >> 32)
                if kind == R_X86_64_64:
                    struct.pack_into("<Q", self._map, where, (s + r_addend) & (2**64 - 1))
                elif kind == R_X86_64_PC64:
                    struct.pack_into("<q", self._map, where, s + r_addend - (base + where))
                elif kind in (R_X86_64_PC32, R_X86_64_PLT32):
                    v = s + r_addend - (base + where)
                    if not -(2**31) <= v < 2**31:
                        raise UnsupportedObject("elf loader: a 32-bit relocation out of range")
                    struct.pack_into("<i", self._map, where, v)
                else:
                    raise UnsupportedObject(f"elf loader: relocation type {kind}")
        del self._buf  # (the exported buffer would keep the mapping from closing)
        if _libc().mprotect(
            ctypes.c_void_p(base), ctypes.c_size_t(length), mmap.PROT_READ | mmap.PROT_EXEC
        ):  # (a system that refuses executable anonymous memory: MCJIT's way instead)
            raise UnsupportedObject(
                f"elf loader: mprotect failed ({os.strerror(ctypes.get_errno())})"
            )
        self.base = base

    def address(self, name: str) -> int:
        """The address of the defined symbol ``name`` (0 when absent)."""
        return self.symbols.get(name, 0)


_handles: list = []


def _libc():
    if not _handles:
        _handles.append(ctypes.CDLL(None, use_errno=True))
        for lib in ("libm.so.6", "libc.so.6"):
            try:
                _handles.append(ctypes.CDLL(lib))
            except OSError:  # pragma: no cover - depends on the system
                pass
    return _handles[0]


def _process_symbol(name: str) -> int:
    """The address of a C function of this process (libm's pow, libc's memset)."""
    _libc()
    for h in _handles:
        try:
            return ctypes.cast(getattr(h, name), ctypes.c_void_p).value or 0
        except AttributeError:
            continue
    raise UnsupportedObject(f"elf loader: undefined symbol {name!r}")
