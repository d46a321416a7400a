#!/usr/bin/env python3
"""ABI oracle: compares odnn with NVIDIA's cuDNN headers, read at test time only.

Nothing of NVIDIA's text is stored in the repository: this script preprocesses
NVIDIA's headers (cudnn_version.h, cudnn_graph.h, cudnn_ops.h, cudnn_cnn.h,
cudnn_adv.h) when the test runs, parses the declarations, and writes the programs
below into the build tree.

  values      a C program printing every enumerator, numeric CUDNN_* macro, struct
              size/alignment/field offset, enum and typedef size; built once against
              NVIDIA's headers and once against ours (with and without CUDA's
              headers); the outputs must be identical.
  prototypes  a C99 program that includes our cudnn.h, re-declares every function with
              NVIDIA's prototype (an incompatible one is a compile error), is linked
              against our libcudnn.so.9 and checks at run time that each of them
              resolves inside our library; plus a C++ program taking the address of
              each function (fails to link where a declaration lacks C linkage).
  exports     nm/readelf on our library: exactly NVIDIA's cudnn* functions (extras only
              odnn*), all at version libcudnn.so.9, SONAME libcudnn.so.9.
"""
import argparse
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import abi_common as ac  # noqa: E402

API_HEADERS = ["cudnn_version.h", "cudnn_graph.h", "cudnn_ops.h", "cudnn_cnn.h", "cudnn_adv.h"]
C_WORDS = {"void", "char", "short", "int", "long", "float", "double", "signed", "unsigned",
           "const", "volatile", "struct", "enum", "union", "restrict", "__restrict",
           "_Bool", "typedef", "extern", "static", "inline"}
STD_TYPES = {"size_t", "ptrdiff_t", "intptr_t", "uintptr_t"}


# ---------------------------------------------------------------- parsing

class Api:
    """Declarations found in one side's cuDNN headers (after preprocessing)."""

    def __init__(self):
        self.enums = {}       # typedef name -> [enumerator names]
        self.structs = {}     # typedef name (or 'struct tag') -> [field names]
        self.struct_tags = set()
        self.typedefs = {}    # name -> 'complete' | 'incomplete'
        self.functions = []   # (name, prototype text)
        self.type_words = set()  # identifiers used as types in declarations
        self.macros = {}      # name -> (params or None, body)
        self.full_text = ""   # everything preprocessed, CUDA headers included


def preprocess(cc, args, work, tag):
    """cc -E over a TU including the API headers; returns (cudnn-only text, full text)."""
    tu = os.path.join(work, "pp_%s.c" % tag)
    with open(tu, "w") as f:
        f.write("".join('#include "%s"\n' % h for h in API_HEADERS))
    base = [cc, "-x", "c", "-std=c11"] + args
    text = ac.run(base + ["-E", tu], "preprocessing (%s)" % tag, capture=True)
    macros = ac.run(base + ["-E", "-dM", tu], "macro dump (%s)" % tag, capture=True)
    cur, keep = "", []
    for line in text.split("\n"):
        m = re.match(r'#\s*\d+\s+"([^"]*)"', line)
        if m:
            cur = m.group(1)
            continue
        if line.startswith("#"):
            continue
        if os.path.basename(cur).startswith("cudnn"):
            keep.append(line)
    return "\n".join(keep), text, macros


def split_top(text, sep, opening="({[", closing=")}]"):
    out, depth, cur = [], 0, []
    for ch in text:
        if ch in opening:
            depth += 1
        elif ch in closing:
            depth -= 1
        if ch == sep and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur))
    return [" ".join(s.split()) for s in out if s.strip()]


def declarator_name(decl):
    decl = re.sub(r"\s*:\s*\d+\s*$", "", decl)           # bit-field width
    while re.search(r"\[[^\]]*\]\s*$", decl):
        decl = re.sub(r"\[[^\]]*\]\s*$", "", decl)       # array extents
    m = re.search(r"\(\s*\*\s*(\w+)\s*\)", decl)         # pointer to function
    if m:
        return m.group(1)
    m = re.search(r"(\w+)\s*$", decl)
    return m.group(1) if m else None


def type_words_of(decl, name):
    """Identifiers used as type names in a declaration of `name` (a function, a
    typedef or a field): parameter names, struct tags and C keywords removed."""
    decl = re.sub(r"\(\s*\*\s*%s\s*\)" % re.escape(name), " ", decl)  # (*name)
    decl = re.sub(r"\b%s\b" % re.escape(name), " ", decl, count=1)
    decl = re.sub(r"\b(struct|enum|union)\s+\w+", " ", decl)
    words = set()
    m = re.search(r"\((.*)\)", decl)
    if m:  # a parameter list: drop each parameter's name
        decl = decl[:m.start()] + " " + decl[m.end():]
        for p in split_top(m.group(1), ","):
            ids = re.findall(r"[A-Za-z_]\w*", re.sub(r"\[[^\]]*\]", "", p))
            if len(ids) >= 2 and ids[-1] not in C_WORDS:
                ids = ids[:-1]
            words |= set(ids)
    words |= set(re.findall(r"[A-Za-z_]\w*", decl))
    return {w for w in words if w not in C_WORDS}


def parse(cudnn_text, full_text, macro_dump):
    api = Api()
    api.full_text = full_text
    for st in split_top(cudnn_text, ";", "{", "}"):
        m = re.match(r"(typedef\s+)?enum\s*(\w+)?\s*\{(.*)\}\s*(\w+)?$", st)
        if m:
            name = m.group(4) if m.group(1) else "enum " + (m.group(2) or "?")
            items = [re.match(r"\s*(\w+)", e).group(1) for e in split_top(m.group(3), ",")]
            api.enums[name] = items
            continue
        m = re.match(r"(typedef\s+)?struct\s*(\w+)?\s*\{(.*)\}\s*(\w+)?$", st)
        if m:
            name = m.group(4) if m.group(1) else "struct " + (m.group(2) or "?")
            if m.group(2):
                api.struct_tags.add(m.group(2))
            fields = []
            for decl in split_top(m.group(3), ";", "{", "}"):
                parts = split_top(decl, ",")
                for i, p in enumerate(parts):
                    fname = declarator_name(p)
                    fields.append(fname)
                    if i == 0:
                        api.type_words |= type_words_of(p, fname)
            api.structs[name] = fields
            continue
        if st.startswith("typedef "):
            name = declarator_name(st)
            kind = "complete"
            sm = re.match(r"typedef\s+struct\s+(\w+)\s+(\w+)$", st)
            if sm:  # a struct by value: complete only if its body is known
                kind = "struct:" + sm.group(1)
            api.typedefs[name] = kind
            api.type_words |= type_words_of(st[len("typedef "):], name)
            continue
        if re.match(r"struct\s+\w+$", st):
            continue  # forward declaration of an opaque struct
        if "(" in st:
            names = [n for n in re.findall(r"(\w+)\s*\(", st) if not n.startswith("__")]
            fname = names[0]
            api.functions.append((fname, st))
            api.type_words |= type_words_of(st, fname)
            continue
        raise SystemExit("gen_abi_check: cannot classify declaration: %s" % st[:200])
    for name, kind in list(api.typedefs.items()):
        if kind.startswith("struct:"):
            api.typedefs[name] = "complete" if kind[7:] in api.struct_tags else "incomplete"
    for line in macro_dump.splitlines():
        m = re.match(r"#define (\w+)(\(([^)]*)\))? ?(.*)$", line)
        if m and m.group(1).startswith("CUDNN"):
            params = None if m.group(2) is None else [p.strip() for p in m.group(3).split(",")]
            api.macros[m.group(1)] = (params, m.group(4).strip())
    return api


def numeric_macro(name, params, body):
    """A CUDNN_* macro whose expansion is a number (include guards, attribute
    macros and the calling-convention macro are not)."""
    if not body or name.endswith("_H_") or "__" in body or "__" in name:
        return False
    if re.search(r"[\"'\[\]{};#]", body):
        return False
    return bool(re.search(r"\d", body)) or params is not None


def external_types(api):
    """Types the API uses but does not define (CUDA's cudaStream_t, libraryPropertyType...)."""
    defined = set(api.enums) | set(api.structs) | set(api.typedefs) | api.struct_tags
    return sorted(w for w in api.type_words
                  if w not in defined and w not in STD_TYPES
                  and not re.match(r"u?int\d+_t$", w))


def external_enum(full_text, name):
    m = re.search(r"typedef\s+enum\s*\w*\s*\{([^}]*)\}\s*" + name + r"\s*;", full_text)
    if not m:
        return None
    return [re.match(r"\s*(\w+)", e).group(1) for e in split_top(m.group(1), ",")]


# ---------------------------------------------------------------- values

VALUES_PRELUDE = r"""
#include <stddef.h>
#include <stdio.h>
static void p_s(const char *n, long long v, const char *t) { printf("macro %s %s %lld\n", n, t, v); }
static void p_u(const char *n, unsigned long long v, const char *t) { printf("macro %s %s %llu\n", n, t, v); }
static void p_f(const char *n, long double v, const char *t) { printf("macro %s %s %.21Lg\n", n, t, v); }
#define TYPE_OF(x) _Generic((x), float: "float", double: "double", long double: "long double", \
    int: "int", unsigned int: "unsigned", long: "long", unsigned long: "unsigned long", \
    long long: "long long", unsigned long long: "unsigned long long", default: "other")
#define PMACRO(n, x) _Generic((x), float: p_f, double: p_f, long double: p_f, \
    unsigned int: p_u, unsigned long: p_u, unsigned long long: p_u, default: p_s)(n, (x), TYPE_OF(x))
#define PSIZE(what, T) printf("%s sizeof=%zu align=%zu\n", what, sizeof(T), _Alignof(T))
#define PVALUE(what, v) printf("%s %lld\n", what, (long long)(v))
#define PFIELD(what, S, f) printf("%s offset=%zu size=%zu\n", what, offsetof(S, f), sizeof(((S *)0)->f))
"""


def guard_checks():
    odnn = " || ".join("defined(ODNN_%s)" % re.sub(r"\W", "_", h).upper() for h in API_HEADERS)
    nv = " || ".join("defined(%s)" % g for g in ac.NVIDIA_GUARDS)
    return """#if defined(ODNN_ABI_OURS)
#  if !defined(ODNN_CUDNN_GRAPH_H) || !defined(ODNN_CUDNN_ADV_H)
#    error "expected odnn's headers"
#  endif
#  if {nv}
#    error "NVIDIA's cuDNN headers were included in the odnn build"
#  endif
#else
#  if !defined(CUDNN_GRAPH_H_) || !defined(CUDNN_ADV_H_)
#    error "expected NVIDIA's headers"
#  endif
#  if {odnn}
#    error "odnn's headers were included in the NVIDIA build"
#  endif
#endif
""".format(nv=nv, odnn=odnn)


def emit(lines, label, code, in_nv, in_od):
    if in_nv and in_od:
        lines.append("    " + code)
        return
    only = "ODNN_ABI_OURS" if in_od else "ODNN_ABI_NVIDIA"
    lines.append("#if defined(%s)\n    %s\n#else\n    puts(\"%s <missing>\");\n#endif"
                 % (only, code, label))


def cstr(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def gen_values(nv, od):
    L = []
    # enums and their enumerators (cuDNN's own and the CUDA enums the API uses)
    def union(a, b):
        return list(a) + [x for x in b if x not in a]
    enum_names = union([e for e in nv.enums], [e for e in od.enums if e.startswith("cudnn")])
    for e in enum_names:
        a, b = e in nv.enums, e in od.enums
        if not e.startswith("enum "):
            emit(L, "enum " + e, "PSIZE(%s, %s);" % (cstr("enum " + e), e), a, b)
        for v in union(nv.enums.get(e, []), od.enums.get(e, [])):
            label = "value %s %s" % (e, v)
            emit(L, label, "PVALUE(%s, %s);" % (cstr(label), v),
                 v in nv.enums.get(e, []), v in od.enums.get(e, []))
    for s in union(list(nv.structs), [s for s in od.structs if "cudnn" in s]):
        a, b = s in nv.structs, s in od.structs
        emit(L, "struct " + s, "PSIZE(%s, %s);" % (cstr("struct " + s), s), a, b)
        for f in union(nv.structs.get(s, []), od.structs.get(s, [])):
            label = "field %s.%s" % (s, f)
            emit(L, label, "PFIELD(%s, %s, %s);" % (cstr(label), s, f),
                 f in nv.structs.get(s, []), f in od.structs.get(s, []))
    for t in union(list(nv.typedefs), [t for t in od.typedefs if t.startswith("cudnn")]):
        kind = nv.typedefs.get(t) or od.typedefs.get(t)
        label = "typedef " + t
        if kind == "complete":
            code = "PSIZE(%s, %s);" % (cstr(label), t)
        else:
            code = "{ %s *p = 0; (void)p; puts(%s); }" % (t, cstr(label + " incomplete"))
        emit(L, label, code, t in nv.typedefs, t in od.typedefs)
    for t in external_types(nv):
        L.append("    PSIZE(%s, %s);" % (cstr("external " + t), t))
        for v in external_enum(nv.full_text, t) or []:
            label = "value %s %s" % (t, v)
            L.append("    PVALUE(%s, %s);" % (cstr(label), v))
    macros = {}
    for api in (nv, od):
        for name, (params, body) in api.macros.items():
            if name not in macros and numeric_macro(name, params, body):
                macros[name] = params
    for name in sorted(macros):
        params = macros[name]
        call = name if params is None else "%s(%s)" % (
            name, ", ".join(str(2000 * (i + 1) + 7) for i in range(len(params))))
        L.append("#ifdef %s\n    PMACRO(%s, %s);\n#else\n    puts(%s);\n#endif"
                 % (name, cstr(call), call, cstr("macro %s <missing>" % call)))
    includes = "".join('#include "%s"\n' % h for h in API_HEADERS)
    return (includes + guard_checks() + VALUES_PRELUDE + "int main(void) {\n"
            + "\n".join(L) + "\n    return 0;\n}\n")


def cmd_values(a):
    work = a.work
    os.makedirs(work, exist_ok=True)
    ours = ac.copy_include(a.odnn_include, os.path.join(work, "odnn_include"))
    cuda_inc = ac.cuda_include_dir(a.cuda_include)
    nv_args = nvidia_args(a.nvidia_include, cuda_inc)
    nv = parse(*preprocess(a.cc, nv_args, work, "nvidia"))
    od = parse(*preprocess(a.cc, ["-I", ours, "-DODNN_NO_CUDA_HEADERS"], work, "odnn"))
    src = os.path.join(work, "abi_values.c")
    with open(src, "w") as f:
        f.write(gen_values(nv, od))
    builds = [("nvidia", nv_args + ["-DODNN_ABI_NVIDIA"], a.nvidia_include, True),
              ("odnn-nocuda", ["-I", ours, "-DODNN_NO_CUDA_HEADERS", "-DODNN_ABI_OURS"], ours, False)]
    if cuda_inc:
        builds.append(("odnn-cuda", ["-I", ours, "-isystem", cuda_inc, "-DODNN_ABI_OURS"], ours, True))
    outputs = {}
    for name, args, root, cuda in builds:
        exe = os.path.join(work, "abi_values_" + name)
        ac.compile_checked([a.cc, "-std=c11", "-w"] + args + [src, "-o", exe], exe + ".d",
                           "abi_values (%s)" % name, root, allow_cuda_runtime=cuda)
        out = ac.run([exe], "running abi_values (%s)" % name, capture=True)
        with open(exe + ".txt", "w") as f:
            f.write(out)
        outputs[name] = out.splitlines()
    ref = outputs["nvidia"]
    print("abi_values: %d lines from NVIDIA's headers (%d enums, %d structs, %d typedefs)"
          % (len(ref), len(nv.enums), len(nv.structs), len(nv.typedefs)))
    if len(ref) < 500:
        ac.fail("suspiciously few lines from NVIDIA's headers: the parser missed declarations")
    bad = False
    for name in outputs:
        if name == "nvidia":
            continue
        diffs = [(r, o) for r, o in zip(ref, outputs[name]) if r != o]
        if len(ref) != len(outputs[name]):
            diffs.append(("%d lines" % len(ref), "%d lines" % len(outputs[name])))
        if diffs:
            bad = True
            print("\n%d differences, NVIDIA vs odnn (%s):" % (len(diffs), name))
            for r, o in diffs:
                print("  nvidia: %s\n  odnn:   %s" % (r, o))
        else:
            print("abi_values: odnn (%s) identical to NVIDIA" % name)
    if bad:
        ac.fail("enum values / sizes / offsets / macros differ from NVIDIA's "
                "(outputs in %s)" % work)


def nvidia_args(nvidia_include, cuda_inc):
    args = ["-I", nvidia_include]
    if not os.path.isfile(os.path.join(nvidia_include, "cuda_runtime_api.h")):
        if not cuda_inc:
            ac.fail("NVIDIA's headers need CUDA's cuda_runtime_api.h; none found")
        args += ["-isystem", cuda_inc]
    return args


# ---------------------------------------------------------------- prototypes

PROTO_MAIN = r"""
static int same_file(const char *a, const char *b) {
    char ra[PATH_MAX], rb[PATH_MAX];
    return realpath(a, ra) && realpath(b, rb) && strcmp(ra, rb) == 0;
}

static void *object_pointer(odnn_abi_fn fn) {
    void *p;
    memcpy(&p, &fn, sizeof p); /* ISO C has no function-to-object pointer cast */
    return p;
}

int main(int argc, char **argv) {
    size_t i, resolved = 0, n = sizeof(odnn_abi_table) / sizeof(odnn_abi_table[0]);
    int errors = 0;
    void *is_odnn, *self;
    Dl_info info;
    FILE *maps;
    char line[4096];
    if (argc != 2) {
        fprintf(stderr, "usage: %s <path of odnn's libcudnn.so.9>\n", argv[0]);
        return 2;
    }
    /* The library the loader mapped for us, to look names up at their version. */
    self = dlopen(argv[1], RTLD_NOW | RTLD_NOLOAD);
    if (!self) {
        printf("%s is not the library this program loaded\n", argv[1]);
        return 1;
    }
    for (i = 0; i < n; ++i) {
        void *p = object_pointer(odnn_abi_table[i].fn);
        if (!p || !dladdr(p, &info) || !info.dli_fname) {
            printf("unresolved: %s\n", odnn_abi_table[i].name);
            ++errors;
        } else if (!same_file(info.dli_fname, argv[1])) {
            printf("%s resolves in %s, not in %s\n", odnn_abi_table[i].name, info.dli_fname, argv[1]);
            ++errors;
        } else if (dlvsym(self, odnn_abi_table[i].name, "libcudnn.so.9") != p) {
            printf("%s is not the library's %s@libcudnn.so.9\n", odnn_abi_table[i].name,
                   odnn_abi_table[i].name);
            ++errors;
        } else {
            ++resolved;
        }
    }
    is_odnn = dlsym(RTLD_DEFAULT, "odnnIsOdnn");
    if (!is_odnn || !dladdr(is_odnn, &info) || !same_file(info.dli_fname, argv[1])) {
        printf("odnnIsOdnn not found in %s: the library mapped is not odnn's\n", argv[1]);
        ++errors;
    } else {
        int (*fn)(void);
        memcpy(&fn, &is_odnn, sizeof fn);
        if (fn() != 1) {
            printf("odnnIsOdnn() != 1\n");
            ++errors;
        }
    }
    /* No other libcudnn may be mapped (NVIDIA's sits in the ldconfig cache). */
    maps = fopen("/proc/self/maps", "r");
    while (maps && fgets(line, sizeof line, maps)) {
        char *path = strchr(line, '/');
        if (path && strstr(path, "libcudnn")) {
            path[strcspn(path, "\n")] = 0;
            if (!same_file(path, argv[1])) {
                printf("another cuDNN library is mapped: %s\n", path);
                ++errors;
            }
        }
    }
    if (maps)
        fclose(maps);
    printf("%lu of %lu NVIDIA-declared functions resolve in %s (expected %d)\n",
           (unsigned long)resolved, (unsigned long)n, argv[1], ODNN_ABI_EXPECTED);
    if (resolved != (size_t)ODNN_ABI_EXPECTED)
        ++errors;
    return errors ? 1 : 0;
}
"""


def gen_prototypes_c(nv, expected):
    L = ["/* Generated by tests/abi/gen_abi_check.py from NVIDIA's headers at test time. */",
         "#define _GNU_SOURCE",
         "#include <dlfcn.h>", "#include <limits.h>", "#include <stdio.h>",
         "#include <stdlib.h>", "#include <string.h>",
         '#include "cudnn.h"',
         "#if !defined(ODNN_CUDNN_H) || !defined(ODNN_CUDNN_GRAPH_H)",
         '#error "expected odnn\'s cudnn.h"', "#endif",
         "#if " + " || ".join("defined(%s)" % g for g in ac.NVIDIA_GUARDS),
         '#error "NVIDIA\'s cuDNN headers were included"', "#endif",
         "#define ODNN_ABI_EXPECTED %d" % expected, "",
         "/* NVIDIA's prototypes, as its headers declare them (macros expanded). */"]
    for _, proto in nv.functions:
        L.append(proto + ";")
    L.append("")
    L.append("typedef void (*odnn_abi_fn)(void);")
    L.append("static const struct { const char *name; odnn_abi_fn fn; } odnn_abi_table[] = {")
    for name, _ in nv.functions:
        L.append('    {"%s", (odnn_abi_fn)&%s},' % (name, name))
    L.append("};")
    return "\n".join(L) + "\n" + PROTO_MAIN


def gen_linkage_cxx(nv):
    L = ['#include "cudnn.h"', "#include <cstdio>",
         "typedef void (*fn_t)();", "static const fn_t table[] = {"]
    for name, _ in nv.functions:
        L.append("    reinterpret_cast<fn_t>(&%s)," % name)
    L += ["};", "int main() {", "    unsigned n = 0;",
          "    for (fn_t f : table) n += f != nullptr;",
          '    std::printf("C++: %u functions linked with C linkage\\n", n);',
          "    return n == sizeof(table) / sizeof(table[0]) ? 0 : 1;", "}"]
    return "\n".join(L) + "\n"


def cmd_prototypes(a):
    work = a.work
    os.makedirs(work, exist_ok=True)
    ours = ac.copy_include(a.odnn_include, os.path.join(work, "odnn_include"))
    cuda_inc = ac.cuda_include_dir(a.cuda_include)
    nv = parse(*preprocess(a.cc, nvidia_args(a.nvidia_include, cuda_inc), work, "nvidia"))
    print("NVIDIA's headers declare %d functions" % len(nv.functions))
    if len(nv.functions) != a.expected_count:
        ac.fail("parsed %d functions from NVIDIA's headers, expected %d"
                % (len(nv.functions), a.expected_count))
    src = os.path.join(work, "abi_prototypes.c")
    with open(src, "w") as f:
        f.write(gen_prototypes_c(nv, a.expected_count))
    cxx_src = os.path.join(work, "abi_linkage.cpp")
    with open(cxx_src, "w") as f:
        f.write(gen_linkage_cxx(nv))
    lib = os.path.abspath(a.lib)
    libdir = os.path.dirname(lib)
    # RPATH (not RUNPATH): it beats LD_LIBRARY_PATH and the ldconfig cache, where
    # NVIDIA's libcudnn.so.9 is. The program checks what got mapped anyway.
    link = [lib, "-Wl,--disable-new-dtags,-rpath," + libdir, "-ldl"] + a.link_flag
    variants = [("nocuda", ["-DODNN_NO_CUDA_HEADERS"], False)]
    if cuda_inc:
        variants.append(("cuda", ["-isystem", cuda_inc], True))
    for name, extra, cuda in variants:
        exe = os.path.join(work, "abi_prototypes_" + name)
        ac.compile_checked([a.cc, "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror",
                            "-I", ours] + extra + [src, "-o", exe] + link, exe + ".d",
                           "abi_prototypes (%s)" % name, ours, allow_cuda_runtime=cuda)
        r = subprocess.run([exe, lib], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        print("[%s] %s" % (name, r.stdout.strip()))
        if r.returncode != 0:
            ac.fail("abi_prototypes (%s) exited %d" % (name, r.returncode))
        exe = os.path.join(work, "abi_linkage_" + name)
        ac.compile_checked([a.cxx, "-std=c++17", "-pedantic", "-Wall", "-Wextra", "-Werror",
                            "-I", ours] + extra + [cxx_src, "-o", exe] + link, exe + ".d",
                           "abi_linkage (%s)" % name, ours, allow_cuda_runtime=cuda)
        r = subprocess.run([exe], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        print("[%s] %s" % (name, r.stdout.strip()))
        if r.returncode != 0:
            ac.fail("abi_linkage (%s) exited %d" % (name, r.returncode))
    print("ok: NVIDIA's %d prototypes are compatible with ours and all resolve in %s"
          % (len(nv.functions), lib))


# ---------------------------------------------------------------- exports

def cmd_exports(a):
    work = a.work
    os.makedirs(work, exist_ok=True)
    cuda_inc = ac.cuda_include_dir(a.cuda_include)
    nv = parse(*preprocess(a.cc, nvidia_args(a.nvidia_include, cuda_inc), work, "nvidia"))
    declared = {n for n, _ in nv.functions}
    if len(declared) != a.expected_count:
        ac.fail("parsed %d functions from NVIDIA's headers, expected %d"
                % (len(declared), a.expected_count))
    node = "libcudnn.so.9"
    out = ac.run([a.nm, "-D", "--defined-only", a.lib], "nm", capture=True)
    problems, exported = [], set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 3:
            continue
        kind, sym = parts[-2], parts[-1]
        if sym == node and kind == "A":
            continue  # the version node itself
        name, sep, ver = sym.partition("@")
        if not (name.startswith("cudnn") or name.startswith("odnn")):
            problems.append("exported symbol outside cudnn*/odnn*: %s" % sym)
            continue
        if not (sep and ver == "@" + node):
            problems.append("%s is not at default version %s" % (sym, node))
        if kind not in ("T", "W", "i"):
            problems.append("%s is not a function (nm type %s)" % (sym, kind))
        exported.add(name)
    ours_cudnn = {n for n in exported if n.startswith("cudnn")}
    for n in sorted(declared - ours_cudnn):
        problems.append("missing export: %s" % n)
    for n in sorted(ours_cudnn - declared):
        problems.append("exported but not declared by NVIDIA: %s" % n)
    dyn = ac.run([a.readelf, "-d", a.lib], "readelf -d", capture=True)
    sonames = re.findall(r"\(SONAME\)\s+Library soname: \[([^\]]+)\]", dyn)
    if sonames != [node]:
        problems.append("SONAME is %s, expected [%s]" % (sonames, node))
    ver = ac.run([a.readelf, "-V", a.lib], "readelf -V", capture=True)
    if not re.search(r"Name: " + re.escape(node) + r"\b", ver.split("Version needs")[0]):
        problems.append("no version definition named %s" % node)
    print("exports: %d cudnn* (NVIDIA declares %d), %d odnn*"
          % (len(ours_cudnn), len(declared), len(exported) - len(ours_cudnn)))
    if a.odnn_include:
        # Allowed, but worth seeing: odnn* exports that odnn/odnn.h does not declare.
        with open(os.path.join(a.odnn_include, "odnn", "odnn.h")) as f:
            public = set(re.findall(r"\b(odnn\w+)\s*\(", f.read()))
        internal = sorted(n for n in exported if n.startswith("odnn") and n not in public)
        if internal:
            print("note: %d odnn* exports are not declared in odnn/odnn.h (e.g. %s)"
                  % (len(internal), ", ".join(internal[:3])))
    if problems:
        print("\n".join("  " + p for p in problems))
        ac.fail("%d export problems in %s" % (len(problems), a.lib))
    print("ok: exports, symbol versions and SONAME match NVIDIA's libcudnn.so.9")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("values", "prototypes", "exports"):
        p = sub.add_parser(name)
        p.add_argument("--cc", required=True)
        p.add_argument("--nvidia-include", required=True)
        p.add_argument("--work", required=True)
        p.add_argument("--cuda-include", default="")
        p.add_argument("--odnn-include", required=(name != "exports"), default="")
        if name != "values":
            p.add_argument("--lib", required=True)
            p.add_argument("--expected-count", type=int, default=220)
        if name == "prototypes":
            p.add_argument("--cxx", required=True)
            # e.g. -fsanitize=address,undefined when the library was built with sanitizers
            p.add_argument("--link-flag", action="append", default=[])
        if name == "exports":
            p.add_argument("--nm", default="nm")
            p.add_argument("--readelf", default="readelf")
    a = ap.parse_args()
    if hasattr(a, "lib") and not os.path.isfile(a.lib):
        ac.fail("%s does not exist: build the cudnn target first" % a.lib)
    {"values": cmd_values, "prototypes": cmd_prototypes, "exports": cmd_exports}[a.cmd](a)


if __name__ == "__main__":
    main()
