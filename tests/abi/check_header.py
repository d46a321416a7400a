#!/usr/bin/env python3
"""Header self-containment: one translation unit that includes only one public header.

Compiled strictly (C: -std=c99 -pedantic -Wall -Wextra -Werror; C++: -std=c++17
-pedantic -Wall -Wextra -Werror) against a private copy of our include/, twice:
  nocuda: -DODNN_NO_CUDA_HEADERS, our own CUDA type declarations, no CUDA header opened;
  cuda:   CUDA's include dir added with -isystem after ours (when the machine has it);
          ODNN_HAVE_CUDA_HEADERS must get defined.
Fails on any diagnostic, and when a cuDNN header other than ours got opened.
"""
import argparse
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import abi_common as ac  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compiler", required=True)
    ap.add_argument("--lang", choices=["c", "cxx"], required=True)
    ap.add_argument("--header", required=True, help="path relative to include/, e.g. odnn/odnn.h")
    ap.add_argument("--include-src", required=True, help="our include/ directory")
    ap.add_argument("--work", required=True)
    ap.add_argument("--cuda-include", default="")
    a = ap.parse_args()

    os.makedirs(a.work, exist_ok=True)
    inc = ac.copy_include(a.include_src, os.path.join(a.work, "include"))
    guard = ac.odnn_guard(a.header)
    # cudnn_version.h alone is only macros: it neither needs nor pulls in CUDA types.
    uses_cuda_types = os.path.basename(a.header) != "cudnn_version.h"
    nvidia_guards = " || ".join("defined(%s)" % g for g in ac.NVIDIA_GUARDS)
    src_text = """#include "{hdr}"
#ifndef {guard}
#error "{hdr} is not odnn's header ({guard} undefined)"
#endif
#if {nvg}
#error "one of NVIDIA's cuDNN headers was included"
#endif
#if defined(ODNN_TEST_EXPECT_CUDA) && {uses} && !defined(ODNN_HAVE_CUDA_HEADERS)
#error "CUDA headers present but ODNN_HAVE_CUDA_HEADERS not defined"
#endif
#if defined(ODNN_NO_CUDA_HEADERS) && defined(ODNN_HAVE_CUDA_HEADERS)
#error "ODNN_NO_CUDA_HEADERS given but ODNN_HAVE_CUDA_HEADERS defined"
#endif
int odnn_header_test_anchor; /* an empty translation unit is not ISO C */
""".format(hdr=a.header, guard=guard, nvg=nvidia_guards, uses=int(uses_cuda_types))
    ext = "c" if a.lang == "c" else "cpp"
    src = os.path.join(a.work, "tu." + ext)
    with open(src, "w") as f:
        f.write(src_text)
    flags = (["-x", "c", "-std=c99"] if a.lang == "c" else ["-x", "c++", "-std=c++17"])
    flags += ["-pedantic", "-Wall", "-Wextra", "-Werror"]

    cuda_inc = ac.cuda_include_dir(a.cuda_include)
    variants = [("nocuda", ["-DODNN_NO_CUDA_HEADERS"], False)]
    if cuda_inc:
        variants.append(("cuda", ["-isystem", cuda_inc, "-DODNN_TEST_EXPECT_CUDA"], True))
    for name, extra, cuda in variants:
        obj = os.path.join(a.work, "tu_%s.o" % name)
        cmd = [a.compiler] + flags + ["-I", inc] + extra + ["-c", src, "-o", obj]
        ac.compile_checked(cmd, obj + ".d", "%s [%s, %s]" % (a.header, a.lang, name), inc,
                           allow_cuda_runtime=cuda)
        print("ok: %s compiles alone as %s (%s)" % (a.header, a.lang, name))
    if not cuda_inc:
        print("note: no CUDA headers on this machine; the 'cuda' variant was not run")


if __name__ == "__main__":
    main()
