#!/usr/bin/env python3
"""Writes a minimal PE32+ DLL (x64) for the doctor's tests, without a Windows
toolchain: an export table, imports, a delay-load import and a version resource
(VS_FIXEDFILEINFO). It contains no code; only its headers and tables matter.

    make_pe.py OUT.dll --name cudnn64_9.dll --version 9.19.0.56 \
        [--export NAME ...] [--exports-file FILE] [--import DLL ...] [--delay DLL ...]
"""
import argparse
import struct

FILE_ALIGN = 0x200
SECT_ALIGN = 0x1000


def align(n, a):
    return (n + a - 1) // a * a


def build_rdata(rva, dll_name, exports, imports, delay):
    """One section holding the export, import and delay-import tables. Returns
    (bytes, export_dir (rva, size), import_dir, delay_dir)."""
    blob = bytearray()

    def put(b, al=4):
        while len(blob) % al:
            blob.append(0)
        off = len(blob)
        blob.extend(b)
        return rva + off

    # The export data, contiguous as linkers lay it out: directory, address table,
    # name pointers, ordinals, then the strings; the directory entry covers all of it.
    exports = sorted(exports)
    n = len(exports)
    base = 40 + 4 * n + 4 * n + 2 * n
    strings = dll_name.encode() + b"\0"
    name_offs = []
    for e in exports:
        name_offs.append(len(strings))
        strings += e.encode() + b"\0"
    start = rva
    funcs, names, ords = start + 40, start + 40 + 4 * n, start + 40 + 8 * n
    edata = struct.pack("<IIHHIIIIIII", 0, 0, 0, 0, start + base, 1, n, n, funcs if n else 0,
                        names if n else 0, ords if n else 0)
    edata += b"".join(struct.pack("<I", rva) for _ in exports)  # every function "at" the section start
    edata += b"".join(struct.pack("<I", start + base + o) for o in name_offs)
    edata += b"".join(struct.pack("<H", i) for i in range(n))
    edata += strings
    put(edata)
    export_dir = start
    export_size = len(edata)

    # import-by-name entries: hint (u16) + name
    def hint_name(n):
        return put(struct.pack("<H", 0) + n.encode() + b"\0", 2)

    import_entries = []
    for dll in imports:
        dll_rva = put(dll.encode() + b"\0", 1)
        hn = hint_name("cudnnStubImport")
        ilt = put(struct.pack("<QQ", hn, 0), 8)
        iat = put(struct.pack("<QQ", hn, 0), 8)
        import_entries.append((ilt, dll_rva, iat))
    delay_entries = []
    for dll in delay:
        dll_rva = put(dll.encode() + b"\0", 1)
        hn = hint_name("cublasLtCreate")
        int_ = put(struct.pack("<QQ", hn, 0), 8)
        iat = put(struct.pack("<QQ", 0, 0), 8)
        handle = put(struct.pack("<Q", 0), 8)
        delay_entries.append((dll_rva, handle, iat, int_))
    import_dir = None
    if import_entries:
        desc = b"".join(struct.pack("<IIIII", ilt, 0, 0, name, iat) for ilt, name, iat in import_entries)
        desc += b"\0" * 20
        import_dir = (put(desc), len(desc))
    delay_dir = None
    if delay_entries:
        desc = b"".join(struct.pack("<IIIIIIII", 1, name, handle, iat, int_, 0, 0, 0)
                        for name, handle, iat, int_ in delay_entries)
        desc += b"\0" * 32
        delay_dir = (put(desc), len(desc))
    return bytes(blob), (export_dir, export_size), import_dir, delay_dir


def build_rsrc(rva, version):
    """Resource tree: RT_VERSION (16) -> id 1 -> language 0x409 -> VS_VERSIONINFO."""
    v = [int(x) for x in version.split(".")] + [0, 0, 0, 0]
    ms, ls = (v[0] << 16) | v[1], (v[2] << 16) | v[3]
    fixed = struct.pack("<13I", 0xFEEF04BD, 0x00010000, ms, ls, ms, ls, 0x3F, 0, 0x40004, 2, 0, 0, 0)
    key = "VS_VERSION_INFO\0".encode("utf-16-le")
    head_len = 6 + len(key)
    pad = (4 - head_len % 4) % 4
    vsinfo_len = head_len + pad + len(fixed)
    vsinfo = struct.pack("<HHH", vsinfo_len, len(fixed), 0) + key + b"\0" * pad + fixed

    def directory(entries):  # entries: list of (id, offset_with_flag)
        return struct.pack("<IIHHHH", 0, 0, 0, 0, 0, len(entries)) + b"".join(
            struct.pack("<II", i, o) for i, o in entries)

    # layout: root(16+8) | type dir(16+8) | name dir(16+8) | data entry(16) | data
    root_off, type_off, name_off, entry_off, data_off = 0, 24, 48, 72, 88
    blob = directory([(16, 0x80000000 | type_off)])
    blob += directory([(1, 0x80000000 | name_off)])
    blob += directory([(0x409, entry_off)])
    blob += struct.pack("<IIII", rva + data_off, len(vsinfo), 0, 0)
    blob += vsinfo
    return blob, (rva, len(blob))


def make_pe(dll_name, version, exports, imports, delay):
    rdata_rva = SECT_ALIGN
    rdata, exp_dir, imp_dir, delay_dir = build_rdata(rdata_rva, dll_name, exports, imports, delay)
    rsrc_rva = rdata_rva + align(len(rdata), SECT_ALIGN)
    rsrc, rsrc_dir = build_rsrc(rsrc_rva, version) if version else (b"", None)
    sections = [(b".rdata", rdata_rva, rdata, 0x40000040)]
    if rsrc:
        sections.append((b".rsrc", rsrc_rva, rsrc, 0x40000040))
    headers_size = align(64 + 4 + 20 + 240 + 40 * len(sections), FILE_ALIGN)
    size_of_image = align(sections[-1][1] + len(sections[-1][2]), SECT_ALIGN)
    dirs = [(0, 0)] * 16
    dirs[0] = exp_dir
    if imp_dir:
        dirs[1] = imp_dir
    if rsrc_dir:
        dirs[2] = rsrc_dir
    if delay_dir:
        dirs[13] = delay_dir
    dos = bytearray(64)
    dos[0:2] = b"MZ"
    struct.pack_into("<I", dos, 0x3C, 64)
    coff = struct.pack("<HHIIIHH", 0x8664, len(sections), 0, 0, 0, 240, 0x2022)
    opt = struct.pack("<HBBIIIII", 0x20B, 14, 0, 0, 0, 0, 0, 0x1000)
    opt += struct.pack("<QII", 0x180000000, SECT_ALIGN, FILE_ALIGN)
    opt += struct.pack("<HHHHHHI", 6, 0, 0, 0, 6, 0, 0)
    opt += struct.pack("<IIIHH", size_of_image, headers_size, 0, 2, 0x160)
    opt += struct.pack("<QQQQII", 0x100000, 0x1000, 0x100000, 0x1000, 0, 16)
    opt += b"".join(struct.pack("<II", r, s) for r, s in dirs)
    assert len(opt) == 240, len(opt)
    sect_table = b""
    raw = headers_size
    body = b""
    for name, rva, data, ch in sections:
        raw_size = align(len(data), FILE_ALIGN)
        sect_table += struct.pack("<8sIIIIIIHHI", name, len(data), rva, raw_size, raw, 0, 0, 0, 0, ch)
        body += data + b"\0" * (raw_size - len(data))
        raw += raw_size
    head = bytes(dos) + b"PE\0\0" + coff + opt + sect_table
    head += b"\0" * (headers_size - len(head))
    return head + body


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--name", required=True)
    ap.add_argument("--version", default="")
    ap.add_argument("--export", action="append", default=[])
    ap.add_argument("--exports-file")
    ap.add_argument("--import", dest="imports", action="append", default=[])
    ap.add_argument("--delay", action="append", default=[])
    a = ap.parse_args()
    exports = list(a.export)
    if a.exports_file:
        exports += [l.strip() for l in open(a.exports_file) if l.strip()]
    with open(a.out, "wb") as f:
        f.write(make_pe(a.name, a.version, exports, a.imports, a.delay))


if __name__ == "__main__":
    main()
