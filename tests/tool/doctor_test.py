#!/usr/bin/env python3
"""Tests of `odnn doctor` against real files: odnn's own build, NVIDIA's cuDNN where
the machine has it, and deliberately broken installs built here in a temporary folder
(fake NVIDIA-style libraries compiled with the C compiler, a PE DLL, archives).

    doctor_test.py --odnn BIN --lib OUR_LIBCUDNN --cc CC --api-names FILE --work DIR SCENARIO

Exit status: 0 pass, 1 fail, 77 skipped (what the scenario needs is absent).
"""
import argparse
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_pe  # noqa: E402

SUBLIBS = ["cudnn_graph", "cudnn_ops", "cudnn_cnn", "cudnn_adv", "cudnn_engines_precompiled",
           "cudnn_engines_runtime_compiled", "cudnn_heuristic"]
NVIDIA_CANDIDATES = ["/usr/local/cuda-13.0/lib/libcudnn.so.9", "/usr/local/cuda/lib64/libcudnn.so.9",
                     "/usr/local/cuda/lib/libcudnn.so.9", "/usr/lib/x86_64-linux-gnu/libcudnn.so.9"]

A = None  # parsed arguments


class Skip(Exception):
    pass


def fail(msg):
    raise AssertionError(msg)


def check(cond, msg):
    if not cond:
        fail(msg)


# ---------------------------------------------------------------- running the tool

def run(args, env=None, expect=None):
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run([A.odnn] + args, capture_output=True, text=True, env=e, timeout=600)
    if p.returncode < 0:
        fail(f"odnn {' '.join(args)} died with signal {-p.returncode}\n{p.stdout}\n{p.stderr}")
    if expect is not None and p.returncode != expect:
        fail(f"odnn {' '.join(args)}: exit {p.returncode}, expected {expect}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}")
    return p


def doctor(args, env=None, expect=None):
    p = run(["doctor", "--json"] + args, env=env, expect=expect)
    try:
        d = json.loads(p.stdout)
    except json.JSONDecodeError as ex:
        fail(f"doctor --json printed no valid JSON ({ex}):\n{p.stdout}\n{p.stderr}")
    check(d["schema"] == "odnn-doctor/1", "schema key")
    check(d["exit_code"] == p.returncode, f"exit_code {d['exit_code']} but the process exited {p.returncode}")
    failed = any(c["verdict"] == "fail" for c in d["checks"])
    check(p.returncode == (1 if failed else 0), f"exit {p.returncode} does not match the verdicts")
    for c in d["checks"]:
        check(c["verdict"] in ("ok", "warn", "fail"), f"verdict {c['verdict']}")
        for k in ("id", "title", "summary", "details", "fix", "data"):
            check(k in c, f"check {c.get('id')} lacks key {k}")
        if c["verdict"] == "fail":
            check(c["fix"], f"failed check {c['id']} says nothing about what to do")
    d["_text"] = p.stdout
    return d


def chk(d, cid):
    for c in d["checks"]:
        if c["id"] == cid:
            return c
    fail(f"no check '{cid}' in: {[c['id'] for c in d['checks']]}")


def verdict(d, cid, want, contains=None):
    c = chk(d, cid)
    if isinstance(want, str):
        want = (want,)
    check(c["verdict"] in want, f"check {cid}: verdict {c['verdict']}, expected {want}: {c['summary']}\n" +
          "\n".join(c["details"]))
    if contains:
        text = c["summary"] + "\n" + "\n".join(c["details"])
        check(contains in text, f"check {cid}: '{contains}' not in:\n{text}")
    return c


# ---------------------------------------------------------------- building fake installs

def sh(cmd, cwd=None):
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
    if p.returncode != 0:
        fail(f"{' '.join(cmd)} failed:\n{p.stdout}\n{p.stderr}")


def api_names():
    with open(A.api_names) as f:
        return [l.strip() for l in f if l.strip()]


def build_so(out, soname, src, needed=(), runpath="$ORIGIN", version_node=None, opt="-O2"):
    c = out + ".c"
    with open(c, "w") as f:
        f.write(src)
    cmd = [A.cc, "-shared", "-fPIC", opt, "-o", out, c, f"-Wl,-soname,{soname}"]
    if runpath:
        cmd += [f"-Wl,-rpath,{runpath}", "-Wl,--enable-new-dtags"]
    if version_node:
        m = out + ".map"
        with open(m, "w") as f:
            f.write(f"{version_node} {{ global: *; }};\n")
        cmd += [f"-Wl,--version-script={m}"]
    cmd += ["-Wl,--no-as-needed"] + list(needed)  # keep DT_NEEDED even for unused libraries
    sh(cmd)
    os.remove(c)


def shim_source(version, cudart=13000, missing=()):
    major, minor, patch = version
    number = major * 10000 + minor * 100 + patch
    special = {
        "cudnnGetVersion": f"size_t cudnnGetVersion(void) {{ return {number}; }}",
        "cudnnGetCudartVersion": f"size_t cudnnGetCudartVersion(void) {{ return {cudart}; }}",
        "cudnnGetMaxDeviceVersion": "size_t cudnnGetMaxDeviceVersion(void) { return 1210; }",
        "cudnnGetErrorString": 'const char* cudnnGetErrorString(int s) { return s == 1001 ? '
                               '"CUDNN_STATUS_NOT_INITIALIZED" : s ? "CUDNN_STATUS_ERROR" : "CUDNN_STATUS_SUCCESS"; }',
        "cudnnGetLastErrorString": 'void cudnnGetLastErrorString(char* m, size_t n) { '
                                   'const char* t = "fake cuDNN: no GPU"; size_t i = 0; '
                                   'for (; n && i + 1 < n && t[i]; ++i) m[i] = t[i]; if (n) m[i] = 0; }',
        # a machine without GPU, as NVIDIA's answers there
        "cudnnCreate": "int cudnnCreate(void** h) { return 1001; }",
        "cudnnGetProperty": f"int cudnnGetProperty(int t, int* v) {{ *v = t == 0 ? {major} : t == 1 ? {minor} : {patch}; return 0; }}",
    }
    lines = ["#include <stddef.h>"]
    for n in api_names():
        if n in missing:
            continue
        lines.append(special.get(n, f"int {n}(void) {{ return 0; }}"))
    return "\n".join(lines) + "\n"


def sublib_source(role, version):
    major, minor, patch = version
    src = "int %s_dummy(void) { return 1; }\n" % role
    if role in ("cudnn_graph", "cudnn_ops", "cudnn_adv"):
        sym = {"cudnn_graph": "cudnn_graph_version", "cudnn_ops": "cudnn_ops_infer_version",
               "cudnn_adv": "cudnn_adv_infer_version"}[role]
        src += "const unsigned int %s = 0x%02x%02x%02x;\n" % (sym, major, minor, patch)
    if role == "cudnn_graph":
        src += 'const char cudnn_graph_build_tag[] = "cudnn_version_%d_%d_%d_1_";\n' % version
    return src


def fake_nvidia(d, version=(9, 19, 0), omit=(), shim_needed=(), adv_needed=(), shim_missing_api=()):
    """A cuDNN-9-shaped install in d: libcudnn.so.9 (all API functions) and the seven
    sub-libraries, each versioned and with RUNPATH $ORIGIN like NVIDIA's."""
    os.makedirs(d, exist_ok=True)
    built = {}
    for role in SUBLIBS:
        out = os.path.join(d, f"lib{role}.so.9")
        needed = [] if role == "cudnn_graph" else [built["cudnn_graph"]]
        if role == "cudnn_adv":
            needed += list(adv_needed)
        build_so(out, f"lib{role}.so.9", sublib_source(role, version), needed=needed, version_node=f"lib{role}.so.9")
        built[role] = out
    build_so(os.path.join(d, "libcudnn.so.9"), "libcudnn.so.9", shim_source(version, missing=shim_missing_api),
             needed=list(shim_needed), version_node="libcudnn.so.9")
    for role in omit:
        os.remove(os.path.join(d, f"lib{role}.so.9"))
    return os.path.join(d, "libcudnn.so.9")


def missing_dependency(d, name="libodnn_doctor_missing.so.1"):
    """A library to link against and then take away: its SONAME stays in DT_NEEDED."""
    side = os.path.join(d, "side")
    os.makedirs(side, exist_ok=True)
    out = os.path.join(side, name)
    build_so(out, name, "int odnn_doctor_missing(void) { return 0; }\n", runpath=None)
    return out, side


def nvidia_lib():
    for p in ([A.nvidia] if A.nvidia else []) + NVIDIA_CANDIDATES:
        if p and os.path.exists(p):
            return p
    raise Skip("NVIDIA's cuDNN is not on this machine")


def fresh(name):
    d = os.path.join(A.work, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


# ---------------------------------------------------------------- scenarios

def t_own_build():
    d = doctor(["--lib", A.lib], expect=None)
    s = d["subject"]
    check(s["vendor"] == "odnn" and s["is_odnn"], f"odnn not recognised: {s['vendor']}")
    check(s["version"].startswith("9."), f"version {s['version']}")
    verdict(d, "file", "ok")
    verdict(d, "sublibraries", "ok", "odnnIsOdnn")
    sym = verdict(d, "symbols", "ok")
    check(sym["data"]["exported"] == len(api_names()) and not sym["data"]["missing"], "exports")
    check(sym["data"]["wrong_version"] == [], f"versions: {sym['data']['wrong_version']}")
    check("odnnIsOdnn" in sym["data"]["odnn_extensions"], "odnn extensions")
    verdict(d, "dependencies", ("ok", "warn"))
    verdict(d, "load", "ok")
    v = verdict(d, "version", ("ok", "warn"))
    check(v["data"]["from_library"] == s["version"], f"file says {s['version']}, library {v['data']['from_library']}")
    # The tests force ODNN_BACKEND=cpu. On a machine with a GPU, doctor rightly warns that
    # the forced CPU backend leaves it unused: exactly that warning is accepted there, and
    # only when doctor's own gpu check saw a device; anywhere else the smoke check is ok.
    gpu_visible = chk(d, "gpu")["data"].get("devices", 0) > 0
    forced_cpu = os.environ.get("ODNN_BACKEND") == "cpu"
    sm = verdict(d, "smoke", ("ok", "warn") if gpu_visible and forced_cpu else "ok")
    if sm["verdict"] == "warn":
        check(sm["details"] == ["a GPU is visible, yet the handle runs on the CPU backend because ODNN_BACKEND=cpu is set"],
              f"the only warning accepted is the unused GPU: {sm['details']}")
        check("unset ODNN_BACKEND" in sm["fix"], f"fix: {sm['fix']}")
    check(sm["data"]["check"] == "ok" and sm["data"]["create"] == "0", f"smoke: {sm['data']}")
    # its folder is not where plain programs look: doctor says how to use it
    lo = chk(d, "loader")
    if lo["data"]["path"] and os.path.realpath(lo["data"]["path"]) != os.path.realpath(A.lib):
        check(lo["verdict"] == "warn" and "LD_PRELOAD=" in lo["fix"], "loader advice for --lib")
    check(d["exit_code"] == 0, "our own build must pass:\n" + d["_text"])
    # text output too
    p = run(["doctor", "--lib", A.lib], expect=0)
    check("[ ok ] symbols" in p.stdout and "result: " in p.stdout, p.stdout)


def t_own_build_folder():
    # --lib with the build's lib folder (and with its parent) finds libcudnn.so.9 there
    for target in (os.path.dirname(A.lib), os.path.dirname(os.path.dirname(A.lib))):
        d = doctor(["--lib", target, "--no-load"])
        check(d["subject"]["is_odnn"], f"--lib {target}: subject {d['subject']['path']}")


def t_nvidia_system():
    lib = nvidia_lib()
    d = doctor(["--lib", lib])
    s = d["subject"]
    check(s["vendor"] == "nvidia", s["vendor"])
    check(s["version"].startswith("9."), f"version from the file: {s['version']}")
    check(not s["version_source"].startswith("file name"), "version must come from the contents")
    sub = verdict(d, "sublibraries", "ok")
    check(sub["data"]["missing"] == 0 and len(sub["data"]["sublibraries"]) == 7, "sub-libraries")
    sym = verdict(d, "symbols", "ok")
    check(sym["data"]["exported"] == len(api_names()), "API exports")
    check("cudnnGetBackdoor" in sym["data"]["extra"], "NVIDIA's internal exports are listed")
    verdict(d, "load", "ok")
    drv = chk(d, "driver")
    sm = chk(d, "smoke")
    if drv["data"]["libcuda"] != "ok":
        # no driver: NVIDIA's library cannot create a handle, and doctor says why
        check(drv["verdict"] == "fail", "no driver must fail for NVIDIA's library")
        check(sm["verdict"] == "fail" and sm["data"]["create"] == "1001", f"smoke: {sm['data']}")
        check("no NVIDIA driver" in "\n".join(sm["details"]), "explanation of NOT_INITIALIZED")
        check(d["exit_code"] == 1, "exit code")
    cu = chk(d, "cuda")
    check(cu["data"]["library_cuda_major"] >= 11, f"CUDA major {cu['data']['library_cuda_major']}")


def t_nvidia_stray_sublibs():
    # NVIDIA's shim loads its sub-libraries by name: LD_LIBRARY_PATH beats its RUNPATH
    # $ORIGIN, so another install on LD_LIBRARY_PATH lends it sub-libraries of another version.
    lib = nvidia_lib()
    w = fresh("nvidia_stray")
    other = os.path.dirname(fake_nvidia(os.path.join(w, "old"), version=(9, 1, 0)))
    d = doctor(["--lib", lib], env={"LD_LIBRARY_PATH": other}, expect=1)
    s = verdict(d, "sublibraries", "fail", "DIFFERENT VERSION")
    check(s["data"]["mixed"] == 7, s["data"])
    check("LD_LIBRARY_PATH" in "\n".join(s["details"]), "names the cause")
    ld = verdict(d, "load", "fail")
    check(ld["data"]["signal"] != 0 or any(not v.startswith("0 ") for k, v in ld["data"].items() if k.startswith("check")),
          f"NVIDIA's shim with foreign sub-libraries: {ld}")


def t_default():
    d = doctor([])
    lo = chk(d, "loader")
    if lo["data"]["path"] and lo["data"]["probe_path"]:
        check(os.path.realpath(lo["data"]["path"]) == os.path.realpath(lo["data"]["probe_path"]),
              f"model {lo['data']['path']} vs loader {lo['data']['probe_path']}")
    check(chk(d, "installs")["data"]["count"] == len(d["installs"]), "install count")


def t_missing_sublib():
    w = fresh("missing_sublib")
    lib = fake_nvidia(os.path.join(w, "cudnn", "lib"), omit=("cudnn_cnn",))
    # without the machine's cache, nothing else can stand in for the missing library
    d = doctor(["--lib", lib, "--no-load", "--ld-cache", "none"], expect=1)
    # The loader still searches the default directories, which the test does not control:
    # a machine with a system cuDNN there (the GPU machine has 9.14 in /usr/lib) lends its
    # libcudnn_cnn.so.9. Only that stand-in is accepted, and only from a default directory.
    s = verdict(d, "sublibraries", "fail")
    subs = {x["name"]: x for x in s["data"]["sublibraries"]}
    check(len(subs) == 7, s["data"])
    ours = os.path.realpath(os.path.dirname(lib))
    for name, x in subs.items():
        if name != "libcudnn_cnn.so.9":
            check(x["path"] and os.path.realpath(os.path.dirname(x["path"])) == ours,
                  f"{name} must come from the test's install: {x}")
    cnn = subs["libcudnn_cnn.so.9"]
    if not cnn["path"]:
        check("libcudnn_cnn.so.9: MISSING" in s["details"], s["details"])
        check(s["data"]["missing"] == 1 and s["data"]["mixed"] == 0, s["data"])
    else:
        system_dirs = {os.path.realpath(x) for x in ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
                                                      "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
                                                      "/lib64", "/usr/lib64", "/lib", "/usr/lib")}
        check(os.path.realpath(os.path.dirname(cnn["path"])) in system_dirs and
              cnn["note"].startswith("default directory"), f"libcudnn_cnn.so.9 found outside the default directories: {cnn}")
        check(os.path.realpath(os.path.dirname(cnn["path"])) != ours, cnn)
        # the stand-in is not the test's 9.19.0: doctor must flag it (a failing verdict either way)
        check(cnn["version"] != "9.19.0" and s["data"]["mixed"] == 1 and s["data"]["missing"] == 0, s["data"])
        check("libcudnn_cnn.so.9: " + cnn["version"] + " (DIFFERENT VERSION)" in "\n".join(s["details"]), s["details"])
    verdict(d, "symbols", "ok")
    verdict(d, "version", ("ok", "warn"))
    check(d["subject"]["version"] == "9.19.0", d["subject"]["version"])


def t_mixed_versions():
    # An old install lacking a sub-library: the shim takes it from elsewhere on the path.
    w = fresh("mixed_versions")
    new = fake_nvidia(os.path.join(w, "new"), version=(9, 19, 0))
    old = fake_nvidia(os.path.join(w, "old"), version=(9, 1, 0), omit=("cudnn_ops",))
    d = doctor(["--lib", old, "--no-load", "--ld-cache", "none"], env={"LD_LIBRARY_PATH": os.path.dirname(new)}, expect=1)
    s = verdict(d, "sublibraries", "fail", "DIFFERENT VERSION")
    check(s["data"]["mixed"] >= 1, s["data"])
    check("LD_LIBRARY_PATH" in "\n".join(s["details"]), "says where the stray library came from")


def t_unresolved_dependency():
    w = fresh("unresolved")
    dep, side = missing_dependency(w)
    lib = fake_nvidia(os.path.join(w, "lib"), shim_needed=[dep], adv_needed=[dep])
    d = doctor(["--lib", lib], expect=1)
    dc = verdict(d, "dependencies", "fail", "libodnn_doctor_missing.so.1")
    check("libodnn_doctor_missing.so.1" in dc["data"]["unresolved"], dc["data"])
    ld = verdict(d, "load", "fail", "cannot open shared object file")
    check("libodnn_doctor_missing.so.1" in ld["data"]["dlerror"], ld["data"])
    verdict(d, "smoke", "fail")
    # with the dependency's folder on LD_LIBRARY_PATH it resolves, and loads
    d = doctor(["--lib", lib], env={"LD_LIBRARY_PATH": side})
    verdict(d, "dependencies", ("ok", "warn"))
    verdict(d, "load", "ok")
    sm = verdict(d, "smoke", "fail")  # the fake answers like NVIDIA's without a GPU
    check(sm["data"]["create"] == "1001", sm["data"])


def t_two_versions():
    w = fresh("two_versions")
    a = fake_nvidia(os.path.join(w, "a"), version=(9, 1, 0))
    b = fake_nvidia(os.path.join(w, "b"), version=(9, 19, 0))
    env = {"LD_LIBRARY_PATH": os.path.dirname(a) + ":" + os.path.dirname(b)}
    d = doctor([], env=env)
    lo = chk(d, "loader")
    check(lo["data"]["path"] == a and lo["data"]["via"] == "LD_LIBRARY_PATH entry 1", lo["data"])
    check(os.path.realpath(lo["data"]["probe_path"]) == os.path.realpath(a), f"real loader: {lo['data']}")
    sh_ = verdict(d, "shadowing", "warn", "different versions")
    versions = {c["version"] for c in sh_["data"]["copies"]}
    check({"9.1.0", "9.19.0"} <= versions, versions)
    picked = [c for c in sh_["data"]["copies"] if c["picked"]]
    check(len(picked) == 1 and picked[0]["path"] == a, picked)
    check(d["subject"]["path"] == a and d["subject"]["version"] == "9.1.0", d["subject"]["path"])
    v = chk(d, "version")
    check(v["data"]["from_library"] == "9.1.0", v["data"])


def truncated_copy(w):
    data = open(A.lib, "rb").read()
    p = os.path.join(w, "libcudnn.so.9")
    with open(p, "wb") as f:
        f.write(data[: len(data) * 2 // 5])
    return p


def t_truncated():
    w = fresh("truncated")
    p = truncated_copy(w)
    d = doctor(["--lib", p], expect=1)
    f = verdict(d, "file", "fail", "truncated")
    check(f["data"]["problems"], f["data"])
    ld = verdict(d, "load", "fail")
    # glibc either refuses it or dies mapping it (SIGBUS): the child takes the blow, not doctor
    check(ld["data"]["dlerror"] or "crashed" in ld["summary"], ld)
    # on LD_LIBRARY_PATH it hides every good copy behind it: the loader stops at it
    d = doctor([], env={"LD_LIBRARY_PATH": w}, expect=1)
    lo = verdict(d, "loader", "fail", "fails")
    check(lo["data"]["path"] == p and lo["data"]["error"], lo["data"])
    # tiny truncations: shorter than the ELF header, empty
    for n in (0, 3, 20, 63):
        with open(p, "wb") as f:
            f.write(open(A.lib, "rb").read()[:n])
        d = doctor(["--lib", p, "--no-load"], expect=1)
        verdict(d, "file", "fail")


def t_corrupt_header():
    w = fresh("corrupt")
    data = bytearray(open(A.lib, "rb").read())
    p = os.path.join(w, "libcudnn.so.9")
    cases = {
        "absurd offsets": lambda b: (b.__setitem__(slice(32, 48), b"\xff" * 16), b.__setitem__(slice(56, 64), b"\xff" * 8)),
        "bad class": lambda b: b.__setitem__(4, 7),
        "no magic": lambda b: b.__setitem__(slice(0, 4), b"\0ELF"),
        "garbage program headers": lambda b: b.__setitem__(slice(64, 64 + 56 * 4), bytes((i * 37) & 0xff for i in range(224))),
    }
    for name, mutate in cases.items():
        b = bytearray(data)
        mutate(b)
        with open(p, "wb") as f:
            f.write(b)
        d = doctor(["--lib", p], expect=1)
        verdict(d, "file", "fail")
        ld = chk(d, "load") if any(c["id"] == "load" for c in d["checks"]) else None
        if ld:
            check(ld["verdict"] == "fail", f"{name}: a corrupt library must not load: {ld['summary']}")
    # a text file where the library should be
    with open(p, "w") as f:
        f.write("version https://git-lfs.github.com/spec/v1\noid sha256:0\nsize 123\n")
    d = doctor(["--lib", p], expect=1)
    verdict(d, "file", "fail", "neither an ELF")


def pe_dir(w, complete=True):
    d = os.path.join(w, "bin")
    os.makedirs(d, exist_ok=True)
    names = api_names()
    with open(os.path.join(d, "cudnn64_9.dll"), "wb") as f:
        f.write(make_pe.make_pe("cudnn64_9.dll", "9.19.0.56", names if complete else names[:20],
                                ["KERNEL32.dll", "cudnn_graph64_9.dll"], ["cublasLt64_13.dll"]))
    for role in SUBLIBS:
        if not complete and role == "cudnn_heuristic":
            continue
        with open(os.path.join(d, f"{role}64_9.dll"), "wb") as f:
            f.write(make_pe.make_pe(f"{role}64_9.dll", "9.19.0.56", [f"{role}Dummy"], ["KERNEL32.dll"], []))
    return d


def mingw_dll(w):
    """A real DLL from MinGW-w64, when it is installed: every API function exported,
    imports of a sub-library DLL, and a VERSIONINFO resource."""
    gcc = shutil.which("x86_64-w64-mingw32-gcc")
    windres = shutil.which("x86_64-w64-mingw32-windres")
    if not gcc or not windres:
        return None
    d = os.path.join(w, "mingw")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "graph.c"), "w") as f:
        f.write("__declspec(dllexport) int cudnnGraphDummy(void) { return 9; }\n")
    sh([gcc, "-shared", "-s", "-o", os.path.join(d, "cudnn_graph64_9.dll"), os.path.join(d, "graph.c"),
        "-Wl,--out-implib," + os.path.join(d, "libgraph.a")])
    with open(os.path.join(d, "ver.rc"), "w") as f:
        f.write('1 VERSIONINFO\nFILEVERSION 9,19,0,56\nPRODUCTVERSION 9,19,0,56\nBEGIN\nEND\n')
    sh([windres, os.path.join(d, "ver.rc"), "-O", "coff", "-o", os.path.join(d, "ver.o")])
    with open(os.path.join(d, "shim.c"), "w") as f:
        f.write("int cudnnGraphDummy(void);\n")
        for n in api_names():
            f.write(f"__declspec(dllexport) int {n}(void) {{ return cudnnGraphDummy(); }}\n")
    sh([gcc, "-shared", "-s", "-o", os.path.join(d, "cudnn64_9.dll"), os.path.join(d, "shim.c"),
        os.path.join(d, "ver.o"), os.path.join(d, "libgraph.a")])
    return os.path.join(d, "cudnn64_9.dll")


def t_pe_dll():
    w = fresh("pe")
    d = pe_dir(w)
    r = doctor(["--lib", os.path.join(d, "cudnn64_9.dll")])
    s = r["subject"]
    check(s["format"] == "pe" and s["version"] == "9.19.0", f"{s['format']} {s['version']}")
    check(s["version_source"].startswith("version resource"), s["version_source"])
    check(s["cuda_major"] == 13, s["cuda_major"])
    check("cublasLt64_13.dll" in s["pe_delay_imports"], s["pe_delay_imports"])
    verdict(r, "file", "ok")
    verdict(r, "symbols", "ok")
    verdict(r, "sublibraries", "ok")
    verdict(r, "dependencies", "warn", "cublasLt64_13.dll")
    check(not any(c["id"] in ("load", "smoke") for c in r["checks"]), "a DLL is not loaded")
    # an incomplete one: exports missing, a sub-library missing
    w2 = fresh("pe_incomplete")
    d2 = pe_dir(w2, complete=False)
    r = doctor(["--lib", d2], expect=1)
    verdict(r, "symbols", "fail", "missing")
    verdict(r, "sublibraries", "fail", "cudnn_heuristic64_9.dll: MISSING")
    # a truncated DLL
    data = open(os.path.join(d, "cudnn64_9.dll"), "rb").read()
    for n in (2, 100, 0x200, len(data) // 2):
        with open(os.path.join(d2, "cudnn64_9.dll"), "wb") as f:
            f.write(data[:n])
        r = doctor(["--lib", os.path.join(d2, "cudnn64_9.dll")], expect=1)
        verdict(r, "file", "fail")
    # MinGW-w64's real DLL, if the cross compiler is installed
    m = mingw_dll(w)
    if m:
        r = doctor(["--lib", m])
        s = r["subject"]
        check(s["format"] == "pe" and s["version"] == "9.19.0", f"mingw dll: {s['version']} {s['error']}")
        check("cudnn_graph64_9.dll" in s["pe_imports"], s["pe_imports"])
        verdict(r, "symbols", "ok")
    else:
        print("note: x86_64-w64-mingw32-gcc not installed; the MinGW DLL case was not run")


def linux_archive_tree(root, version=(9, 19, 0), omit=(), header_version=None):
    top = os.path.join(root, "cudnn-linux-x86_64-%d.%d.%d.56_cuda13-archive" % version)
    lib = os.path.join(top, "lib")
    fake_nvidia(lib, version=version, omit=omit)
    os.makedirs(os.path.join(top, "include"))
    hv = header_version or version
    with open(os.path.join(top, "include", "cudnn_version.h"), "w") as f:
        f.write("#ifndef CUDNN_VERSION_H_\n#define CUDNN_VERSION_H_\n#define CUDNN_MAJOR %d\n#define CUDNN_MINOR %d\n"
                "#define CUDNN_PATCHLEVEL %d\n#endif\n" % hv)
    with open(os.path.join(top, "include", "cudnn.h"), "w") as f:
        f.write("#include \"cudnn_version.h\"\n")
    os.symlink("libcudnn.so.9", os.path.join(lib, "libcudnn.so"))
    for n in os.listdir(lib):
        if n.endswith(".map"):
            os.remove(os.path.join(lib, n))
    return top


def t_archive_tar():
    w = fresh("archive_tar")
    top = linux_archive_tree(w)
    good = os.path.join(w, os.path.basename(top) + ".tar.xz")
    with tarfile.open(good, "w:xz") as t:
        t.add(top, arcname=os.path.basename(top))
    d = doctor(["--archive", good], expect=0)
    verdict(d, "archive_read", "ok")
    verdict(d, "archive_layout", "ok")
    verdict(d, "archive_versions", "ok", "9.19.0")
    verdict(d, "archive_symbols", "ok")
    check(d["archive"]["platform"] == "linux" and d["archive"]["header_version"] == "9.19.0", d["archive"])
    # a broken one: a missing library, headers of another version
    w2 = fresh("archive_tar_bad")
    top = linux_archive_tree(w2, omit=("cudnn_adv",), header_version=(9, 20, 0))
    bad = os.path.join(w2, "bad.tar.xz")
    with tarfile.open(bad, "w:xz") as t:
        t.add(top, arcname=os.path.basename(top))
    d = doctor(["--archive", bad], expect=1)
    verdict(d, "archive_layout", "fail", "lib/libcudnn_adv.so.9")
    verdict(d, "archive_versions", "fail", "mixed versions")
    # a truncated download, and something that is no archive at all
    data = open(good, "rb").read()
    with open(bad, "wb") as f:
        f.write(data[: len(data) // 2])
    d = doctor(["--archive", bad], expect=1)
    verdict(d, "archive_read", "fail")
    with open(bad, "wb") as f:
        f.write(os.urandom(4096))
    d = doctor(["--archive", bad], expect=1)
    verdict(d, "archive_read", "fail", "not a readable archive")
    p = run(["doctor", "--archive", bad], expect=1)
    check("[FAIL] archive_read" in p.stdout, p.stdout)


def t_archive_zip():
    w = fresh("archive_zip")
    top = "cudnn-windows-x86_64-9.19.0.56_cuda13-archive"
    bindir = pe_dir(os.path.join(w, "tree"))
    z = os.path.join(w, top + ".zip")
    with zipfile.ZipFile(z, "w", zipfile.ZIP_DEFLATED) as f:
        f.writestr(top + "/include/cudnn.h", '#include "cudnn_version.h"\n')
        f.writestr(top + "/include/cudnn_version.h", "#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 19\n#define CUDNN_PATCHLEVEL 0\n")
        f.writestr(top + "/lib/x64/cudnn.lib", "!<arch>\n")
        for n in sorted(os.listdir(bindir)):
            f.write(os.path.join(bindir, n), top + "/bin/" + n)
    d = doctor(["--archive", z], expect=0)
    check(d["archive"]["platform"] == "windows", d["archive"])
    verdict(d, "archive_layout", "ok", "Windows layout")
    verdict(d, "archive_versions", "ok")
    verdict(d, "archive_symbols", "ok")
    # odnn's own install tree, packed
    w2 = fresh("archive_odnn")
    z2 = os.path.join(w2, "odnn.zip")
    with zipfile.ZipFile(z2, "w", zipfile.ZIP_DEFLATED) as f:
        f.write(A.lib, "odnn/lib/libcudnn.so.9")
        f.writestr("odnn/include/cudnn.h", "\n")
        f.writestr("odnn/include/cudnn_version.h",
                   "#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 19\n#define CUDNN_PATCHLEVEL 0\n#define ODNN_VERSION_MAJOR 0\n")
    d = doctor(["--archive", z2], expect=0)
    verdict(d, "archive_layout", "ok", "odnn tree")
    verdict(d, "archive_symbols", "ok")


def t_bad_usage():
    for args, code in [(["doctor", "--frobnicate"], 2), (["doctor", "--lib"], 2), (["doctor", "--lib="], 2),
                       (["doctor", "--lib", "/nonexistent/libcudnn.so.9"], 2), (["doctor", "--archive"], 2),
                       (["doctor", "--archive", "/nonexistent.tar.xz"], 2), (["doctor", "--lib", "/proc"], 2),
                       (["doctor", "--ld-cache", "/nonexistent"], 2), (["doctor", "--help"], 0), (["doctor", "-h"], 0),
                       (["info"], 0), (["info", "--api"], 0), (["info", "--frobnicate"], 2), (["help"], 0),
                       (["--help"], 0), ([], 2), (["frobnicate"], 2), (["bench", "--frobnicate"], 2),
                       (["bench", "--help"], 0),
                       (["selftest", "--frobnicate"], 2), (["selftest", "--backend", "tpu"], 2),
                       (["selftest", "--help"], 0)]:
        p = run(args, expect=code)
        if code == 2:
            msg = p.stderr.strip()
            check(msg, f"odnn {' '.join(args)}: no message")
            check("Traceback" not in msg and "terminate" not in msg, msg)
    # an unreadable file given to --lib
    w = fresh("bad_usage")
    p = os.path.join(w, "libcudnn.so.9")
    open(p, "wb").close()
    d = doctor(["--lib", p], expect=1)
    verdict(d, "file", "fail", "empty")
    if os.geteuid() != 0:
        os.chmod(p, 0)
        run(["doctor", "--lib", p], expect=1)


def t_ld_cache():
    # doctor reads the ld.so.cache format itself: a cache made by ldconfig for a fake install
    ldconfig = shutil.which("ldconfig") or "/sbin/ldconfig"
    if not os.path.exists(ldconfig):
        raise Skip("no ldconfig")
    w = fresh("ld_cache")
    lib = fake_nvidia(os.path.join(w, "cudnn"), version=(9, 2, 0))
    conf = os.path.join(w, "ld.so.conf")
    with open(conf, "w") as f:
        f.write(os.path.dirname(lib) + "\n")
    cache = os.path.join(w, "ld.so.cache")
    p = subprocess.run([ldconfig, "-C", cache, "-f", conf], capture_output=True, text=True)
    if p.returncode != 0 or not os.path.exists(cache):
        raise Skip("ldconfig cannot write a cache here: " + p.stderr.strip())
    d = doctor(["--ld-cache", cache, "--no-load"])
    lo = chk(d, "loader")
    check(lo["data"]["path"] == lib and lo["data"]["via"] == "ld.so.cache", lo["data"])
    check(d["subject"]["version"] == "9.2.0", d["subject"]["version"])


SCENARIOS = {n[2:]: f for n, f in globals().items() if n.startswith("t_")}


def main():
    global A
    ap = argparse.ArgumentParser()
    ap.add_argument("--odnn", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--cc", required=True)
    ap.add_argument("--api-names", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--nvidia", default="")
    ap.add_argument("scenario", choices=sorted(SCENARIOS))
    A = ap.parse_args()
    A.work = os.path.abspath(A.work)
    A.lib = os.path.abspath(A.lib)
    os.makedirs(A.work, exist_ok=True)
    try:
        SCENARIOS[A.scenario]()
    except Skip as s:
        print(f"skipped: {s}")
        return 77
    except AssertionError as e:
        print(f"FAIL {A.scenario}: {e}")
        return 1
    print(f"pass {A.scenario}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
