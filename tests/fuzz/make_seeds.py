#!/usr/bin/env python3
"""Regenerates the seed corpus of the fuzz targets (corpus/elf, corpus/pe,
corpus/ldcache). Every seed is made here: small shared objects from the C compiler,
hand-laid-out ELF files (32/64-bit, both byte orders, no section headers), PE DLLs
from tests/tool/make_pe.py, and ld.so.cache files in both glibc formats.

    make_seeds.py [--cc cc]
"""
import argparse
import os
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tool"))
import make_pe  # noqa: E402

CORPUS = os.path.join(HERE, "corpus")


def write(kind, name, data):
    with open(os.path.join(CORPUS, kind, name), "wb") as f:
        f.write(data)
    print(f"{kind}/{name}: {len(data)} bytes")


# ---------------------------------------------------------------- ELF laid out by hand

def elf(bits, big, soname, needed, runpath, symbols, verdefs, sections=True, hash_table=True):
    """symbols: list of (name, type, value_bytes or None, version index). Returns bytes."""
    e = ">" if big else "<"
    w = "I" if bits == 32 else "Q"
    ehsize, phent, shent, syment = (52, 32, 40, 16) if bits == 32 else (64, 56, 64, 24)
    dynstr = b"\0"
    offs = {}

    def s(x):
        nonlocal dynstr
        if x not in offs:
            offs[x] = len(dynstr)
            dynstr += x.encode() + b"\0"
        return offs[x]

    for n in needed:
        s(n)
    s(soname)
    if runpath:
        s(runpath)
    for v in verdefs:
        s(v)
    for sym in symbols:
        s(sym[0])
    body = bytearray()
    base = ehsize + 2 * phent

    def place(b, al=8):
        while (base + len(body)) % al:
            body.append(0)
        off = base + len(body)
        body.extend(b)
        return off

    data_off = place(b"".join(struct.pack(e + "I", 0x091300) for _ in symbols), 4)
    strtab_off = place(dynstr, 1)
    syms = [bytes(syment)]
    for i, (name, typ, _, _) in enumerate(symbols):
        info = (1 << 4) | typ  # GLOBAL
        value = data_off + 4 * i
        if bits == 32:
            syms.append(struct.pack(e + "IIIBBH", s(name), value, 4, info, 0, 6))
        else:
            syms.append(struct.pack(e + "IBBHQQ", s(name), info, 0, 6, value, 4))
    symtab_off = place(b"".join(syms))
    versym_off = place(struct.pack(e + "H", 0) + b"".join(struct.pack(e + "H", sym[3]) for sym in symbols), 2)
    vd = b""
    for i, v in enumerate(verdefs):
        last = i == len(verdefs) - 1
        vd += struct.pack(e + "HHHHIII", 1, 1 if i == 0 else 0, i + 1, 1, 0, 20, 0 if last else 28)
        vd += struct.pack(e + "II", s(v), 0)
    verdef_off = place(vd, 4)
    nsyms = len(symbols) + 1
    hash_off = place(struct.pack(e + "II", 1, nsyms) + struct.pack(e + "I", 0) + bytes(4 * nsyms), 4)
    dyn = []
    for n in needed:
        dyn.append((1, s(n)))
    dyn.append((14, s(soname)))
    if runpath:
        dyn.append((29, s(runpath)))
    dyn += [(5, strtab_off), (10, len(dynstr)), (6, symtab_off), (11, syment), (0x6ffffff0, versym_off),
            (0x6ffffffc, verdef_off), (0x6ffffffd, len(verdefs))]
    if hash_table:
        dyn.append((4, hash_off))
    dyn.append((0, 0))
    dynamic = b"".join(struct.pack(e + w + w, t, v) for t, v in dyn)
    dynamic_off = place(dynamic)
    shstr = b"\0.dynstr\0.dynsym\0.gnu.version\0.gnu.version_d\0.dynamic\0.shstrtab\0.rodata\0"
    shstr_off = place(shstr, 1)

    def name(n):
        return shstr.index(n.encode() + b"\0")

    total = base + len(body)
    shdrs = []
    if sections:
        def sh(nm, typ, off, size, link=0, info=0, entsize=0):
            if bits == 32:
                return struct.pack(e + "IIIIIIIIII", nm, typ, 2, off, off, size, link, info, 4, entsize)
            return struct.pack(e + "IIQQQQIIQQ", nm, typ, 2, off, off, size, link, info, 8, entsize)
        shdrs = [bytes(shent),
                 sh(name(".dynstr"), 3, strtab_off, len(dynstr)),
                 sh(name(".dynsym"), 11, symtab_off, syment * nsyms, 1, 1, syment),
                 sh(name(".gnu.version"), 0x6fffffff, versym_off, 2 * nsyms, 2, 0, 2),
                 sh(name(".gnu.version_d"), 0x6ffffffd, verdef_off, len(vd), 1, len(verdefs)),
                 sh(name(".dynamic"), 6, dynamic_off, len(dynamic), 1, 0, 16 if bits == 64 else 8),
                 sh(name(".rodata"), 1, data_off, 4 * len(symbols)),
                 sh(name(".shstrtab"), 3, shstr_off, len(shstr))]
    shoff = total if sections else 0
    while sections and shoff % 8:
        shoff += 1
    ident = b"\x7fELF" + bytes([1 if bits == 32 else 2, 2 if big else 1, 1, 0]) + bytes(8)
    if bits == 32:
        hdr = ident + struct.pack(e + "HHIIIIIHHHHHH", 3, 2 if big else 3, 1, 0, ehsize, shoff, 0, ehsize, phent, 2,
                                  shent, len(shdrs), len(shdrs) - 1 if sections else 0)
        ph = struct.pack(e + "IIIIIIII", 1, 0, 0, 0, shoff or total, shoff or total, 5, 0x1000)
        ph += struct.pack(e + "IIIIIIII", 2, dynamic_off, dynamic_off, dynamic_off, len(dynamic), len(dynamic), 6, 4)
    else:
        hdr = ident + struct.pack(e + "HHIQQQIHHHHHH", 3, 21 if big else 62, 1, 0, ehsize, shoff, 0, ehsize, phent, 2,
                                  shent, len(shdrs), len(shdrs) - 1 if sections else 0)
        ph = struct.pack(e + "IIQQQQQQ", 1, 5, 0, 0, 0, shoff or total, shoff or total, 0x1000)
        ph += struct.pack(e + "IIQQQQQQ", 2, 6, dynamic_off, dynamic_off, dynamic_off, len(dynamic), len(dynamic), 8)
    out = bytearray(hdr + ph + body)
    while sections and len(out) < shoff:
        out.append(0)
    for x in shdrs:
        out += x
    return bytes(out)


def handmade_elf_seeds():
    syms = [("cudnnGetVersion", 2, None, 2), ("cudnn_graph_version", 1, None, 2), ("odnnIsOdnn", 2, None, 2)]
    vds = ["libcudnn_graph.so.9", "libcudnn_graph.so.9"]
    common = dict(soname="libcudnn_graph.so.9", needed=["libz.so.1", "libcublasLt.so.13"], runpath="$ORIGIN",
                  symbols=syms, verdefs=vds)
    write("elf", "hand64le.so", elf(64, False, **common))
    write("elf", "hand32be.so", elf(32, True, **common))
    write("elf", "hand32le_noshdr.so", elf(32, False, sections=False, **common))
    write("elf", "hand64be_noshdr.so", elf(64, True, sections=False, **common))
    write("elf", "tiny_header.bin", b"\x7fELF\x02\x01\x01\x00" + bytes(8) + b"\x03\x00\x3e\x00")


def compiled_elf_seeds(cc):
    src = r"""
    #include <stddef.h>
    const unsigned int cudnn_graph_version = 0x091300;
    const char tag[] = "cudnn_version_9_19_0_1_ libnvrtc.so.13 libcublasLt.so.13";
    size_t cudnnGetVersion(void) { return 91900; }
    int cudnnCreate(void** h) { return tag[0] == 'c' ? 0 : 1; }
    """
    with tempfile.TemporaryDirectory() as t:
        c = os.path.join(t, "s.c")
        m = os.path.join(t, "s.map")
        open(c, "w").write(src)
        open(m, "w").write("libcudnn_graph.so.9 { global: cudnn*; local: *; };\n")
        for name, extra in [("gcc_gnuhash.so", ["-Wl,--hash-style=gnu"]), ("gcc_sysvhash.so", ["-Wl,--hash-style=sysv"])]:
            out = os.path.join(t, name)
            subprocess.run([cc, "-shared", "-fPIC", "-O2", "-s", "-nostdlib", "-o", out, c,
                            "-Wl,-soname,libcudnn_graph.so.9", "-Wl,-rpath,$ORIGIN", "-Wl,--enable-new-dtags",
                            f"-Wl,--version-script={m}", "-Wl,-z,max-page-size=0x1000", "-Wl,-z,noseparate-code",
                            "-Wl,-z,norelro"] + extra, check=True)
            data = open(out, "rb").read()
            write("elf", name, data)
            # the same without section headers: symbols come through DT_SYMTAB and the hash table
            b = bytearray(data)
            b[40:48] = bytes(8)  # e_shoff
            b[60:64] = bytes(4)  # e_shnum, e_shstrndx
            write("elf", name.replace(".so", "_noshdr.so"), bytes(b))


def pe_seeds():
    names = ["cudnnCreate", "cudnnDestroy", "cudnnGetVersion", "odnnIsOdnn"]
    write("pe", "full.dll", make_pe.make_pe("cudnn64_9.dll", "9.19.0.56", names, ["KERNEL32.dll", "cudnn_graph64_9.dll"],
                                            ["cublasLt64_13.dll", "nvrtc64_130_0.dll"]))
    write("pe", "noversion.dll", make_pe.make_pe("cudnn_ops64_9.dll", "", ["cudnnOpsVersionCheck"], [], []))
    write("pe", "mz_only.bin", b"MZ" + bytes(58) + struct.pack("<I", 64) + b"PE\0\0")


def ld_cache(entries, old=False):
    strings = b""
    offs = []
    for name, path in entries:
        offs.append((len(strings), len(strings) + len(name) + 1))
        strings += name.encode() + b"\0" + path.encode() + b"\0"
    n = len(entries)
    hdr = b"glibc-ld.so.cache" + b"1.1" + struct.pack("<IIB3xI3I", n, len(strings), 2, 0, 0, 0, 0)
    table_end = 48 + 24 * n
    ents = b"".join(struct.pack("<iIIIQ", 0x0303, table_end + a, table_end + b, 0, 0) for a, b in offs)
    new = hdr + ents + strings
    if not old:
        return new
    olds = b"ld.so-1.7.0\0" + struct.pack("<I", n)
    olds += b"".join(struct.pack("<iII", 0x0303, a, b) for a, b in offs)
    while len(olds) % 8:
        olds += b"\0"
    return olds + new


def ldcache_seeds():
    e = [("libcudnn.so.9", "/usr/local/cuda/lib64/libcudnn.so.9"), ("libz.so.1", "/lib/x86_64-linux-gnu/libz.so.1")]
    write("ldcache", "new.cache", ld_cache(e))
    write("ldcache", "old_and_new.cache", ld_cache(e, old=True))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cc", default="cc")
    a = ap.parse_args()
    for k in ("elf", "pe", "ldcache"):
        os.makedirs(os.path.join(CORPUS, k), exist_ok=True)
    handmade_elf_seeds()
    compiled_elf_seeds(a.cc)
    pe_seeds()
    ldcache_seeds()


if __name__ == "__main__":
    main()
