"""Helpers shared by the header and ABI test drivers (no third-party modules).

Every compile here must see exactly one cuDNN: ours (a private copy of include/)
or NVIDIA's. /usr/local/include on the development machines holds NVIDIA's
cudnn*.h, so besides #error guards in the test sources we ask the compiler for its
dependency list (-MD) and check where every cudnn*.h / odnn.h it opened lives.
"""
import os
import re
import shlex
import shutil
import subprocess
import sys

# Include guards of NVIDIA's headers. Ours are ODNN_<FILE>_H (see include/).
NVIDIA_GUARDS = ["CUDNN_H_", "CUDNN_VERSION_H_", "CUDNN_GRAPH_H_", "CUDNN_OPS_H_",
                 "CUDNN_CNN_H_", "CUDNN_ADV_H_", "_CUDNN_BACKEND_H_"]


def odnn_guard(header):
    """include/cudnn_ops.h -> ODNN_CUDNN_OPS_H, odnn/odnn.h -> ODNN_ODNN_H."""
    base = os.path.basename(header)
    return "ODNN_" + re.sub(r"[^A-Za-z0-9]", "_", base).upper()


def fail(msg):
    print("FAIL: " + msg, flush=True)
    sys.exit(1)


def copy_include(src, dst):
    """A private copy of our include/ that no other search path can shadow or extend."""
    if os.path.exists(dst):
        shutil.rmtree(dst)
    shutil.copytree(src, dst)
    return dst


def run(cmd, what, capture=False, check=True):
    """Runs cmd; on failure prints the command and everything it said, then fails."""
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if check and r.returncode != 0:
        print("$ " + " ".join(shlex.quote(c) for c in cmd))
        print(r.stdout)
        fail("%s (exit %d)" % (what, r.returncode))
    said = r.stdout
    if not capture:
        # The sanitizer runtime an ODNN_SANITIZE library links in makes the linker warn
        # about its own use of tmpnam & co.: not a diagnostic of ours.
        said = "\n".join(l for l in said.splitlines() if not re.search(r"libasan\.so[.\d]*: warning: the use of", l))
    if not capture and said.strip():
        # A clean compile says nothing; anything it said counts as a diagnostic.
        print("$ " + " ".join(shlex.quote(c) for c in cmd))
        print(r.stdout)
        fail("%s printed diagnostics" % what)
    return r.stdout


def compile_checked(cmd, depfile, what, cudnn_root, allow_cuda_runtime=True):
    """Compiles with -MD -MF depfile, then checks the headers it opened.

    cudnn_root: every cudnn*.h / odnn.h opened must be inside this directory.
    allow_cuda_runtime: False -> cuda_runtime_api.h must not have been opened.
    """
    run(cmd + ["-MD", "-MF", depfile], what)
    check_deps(depfile, cudnn_root, what, allow_cuda_runtime)


def read_deps(depfile):
    text = open(depfile).read().replace("\\\n", " ")
    deps = []
    for line in text.splitlines():
        if ":" not in line:
            continue
        for tok in line.split(":", 1)[1].split():
            deps.append(tok)
    return deps


def check_deps(depfile, cudnn_root, what, allow_cuda_runtime=True):
    root = os.path.realpath(cudnn_root) + os.sep
    bad = []
    for dep in read_deps(depfile):
        base = os.path.basename(dep)
        if re.match(r"cudnn.*\.h$", base) or base == "odnn.h":
            # realpath: /usr/local/include/cudnn.h is a link into NVIDIA's tree.
            if not os.path.realpath(dep).startswith(root):
                bad.append("%s (expected under %s)" % (dep, cudnn_root))
        if base == "cuda_runtime_api.h" and not allow_cuda_runtime:
            bad.append("%s (CUDA headers must not be used in this variant)" % dep)
    if bad:
        fail("%s opened the wrong headers:\n  %s" % (what, "\n  ".join(bad)))


def cuda_include_dir(arg):
    """The CUDA include dir to use, or None when this machine has no CUDA headers."""
    for d in ([arg] if arg else []) + ["/usr/local/cuda/include"]:
        if d and os.path.isfile(os.path.join(d, "cuda_runtime_api.h")):
            return d
    return None
