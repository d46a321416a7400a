// odnn doctor: finds the cuDNN libraries (odnn's or NVIDIA's) a program on this
// machine could load, says which one it gets and why, and checks that one: files,
// version, sub-libraries, dependencies, exported API, CUDA driver / GPU, and finally
// a tiny call sequence through it in a child process.
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <set>

#include "commands.hpp"
#include "discovery.hpp"
#include "doctor_common.hpp"
#include "elf_reader.hpp"
#include "loader.hpp"
#include "odnn/odnn.h"
#include "report.hpp"
#include "util.hpp"

namespace odnn_tool {

namespace {

const char* const kApiNameList[] = {
#include "doctor_api_names.inc"
};
static_assert(sizeof kApiNameList / sizeof kApiNameList[0] >= 200, "the embedded cuDNN API list is incomplete");

constexpr double kProbeTimeout = 180;  // NVIDIA's libraries are large; loading them takes a while on slow disks

// ---------------------------------------------------------------- options

struct Options {
    std::string lib, archive, ld_cache = "/etc/ld.so.cache";
    bool json = false, no_load = false;
};

void doctor_usage(FILE* to) {
    std::fprintf(to,
                 "usage: odnn doctor [--lib PATH] [--archive FILE] [--json] [--no-load] [--ld-cache FILE|none]\n"
                 "\n"
                 "Finds every cuDNN library (odnn's or NVIDIA's) a program here could load, says which\n"
                 "one it gets and why, and checks it: version, sub-libraries, dependencies, exported\n"
                 "API and symbol versions, CUDA driver and GPU, and a tiny cuDNN call sequence run in\n"
                 "a child process.\n"
                 "\n"
                 "  --lib PATH        check this library (a libcudnn*.so* / cudnn*.dll file or a folder)\n"
                 "                    instead of the one the loader picks\n"
                 "  --archive FILE    inspect a downloaded cuDNN .tar.xz / .zip without installing it\n"
                 "  --json            machine-readable output (stable keys)\n"
                 "  --no-load         read files only: do not load any library, even in a child process\n"
                 "  --ld-cache FILE   read this ld.so.cache instead of /etc/ld.so.cache ('none': no cache)\n"
                 "\n"
                 "exit status: 0 when no check failed, 1 when one did, 2 for bad usage.\n");
}

// ---------------------------------------------------------------- child probes

struct Probe {
    bool ran = false;
    std::string why_not;
    std::map<std::string, std::string> kv;
    std::vector<std::string> mapped;
    std::string stage;
    int signal = 0;
    bool timed_out = false;
    int exit_code = -1;

    bool has(const std::string& k) const { return kv.count(k) != 0; }
    std::string get(const std::string& k) const {
        auto it = kv.find(k);
        return it == kv.end() ? std::string() : it->second;
    }
    long long num(const std::string& k, long long def = -1) const {
        const std::string v = get(k);
        if (v.empty()) return def;
        char* end = nullptr;
        const long long n = std::strtoll(v.c_str(), &end, 10);
        return end && end != v.c_str() ? n : def;
    }
    std::vector<std::string> messages;  // what the library printed on stderr (last lines)
    // The child ended in the middle of a stage without a signal reaching us: e.g. a
    // sanitizer runtime caught the fatal signal and exited with its own status.
    bool died = false;
    bool crashed() const { return signal != 0 || timed_out || died; }
    std::string crash_text() const {
        if (timed_out) return "did not finish within " + std::to_string(static_cast<int>(kProbeTimeout)) + " s (hung at stage '" + stage + "')";
        if (died)
            return "crashed the child process (it exited with status " + std::to_string(exit_code) +
                   " before reporting a result) at stage '" + stage + "'";
        return "crashed the child process with " + describe_signal(signal) + " at stage '" + stage + "'";
    }
};

std::string unescape(const std::string& s) {
    std::string o;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\\' && i + 1 < s.size()) {
            const char c = s[++i];
            o += c == 'n' ? '\n' : c == 'r' ? '\r' : c;
        } else {
            o += s[i];
        }
    }
    return o;
}

Probe run_probe(const std::string& exe, const std::vector<std::string>& args) {
    Probe p;
    if (exe.empty()) {
        p.why_not = "odnn-probe (the helper program installed beside odnn) was not found";
        return p;
    }
    std::vector<std::string> argv = {exe};
    argv.insert(argv.end(), args.begin(), args.end());
    // The child must report in plain words: no cuDNN API log on stdout, and (in a
    // sanitizer build of odnn) no leak report about the library under test at exit.
    const std::string asan = getenv_str("ASAN_OPTIONS");
    ChildResult r = run_child(argv, kProbeTimeout, false,
                              {"CUDNN_LOGINFO_DBG=0", "CUDNN_LOGERR_DBG=0", "CUDNN_LOGWARN_DBG=0",
                               "CUDNN_LOGLEVEL_DBG=0", "ASAN_OPTIONS=" + (asan.empty() ? "" : asan + ":") + "detect_leaks=0"});
    if (!r.started) {
        p.why_not = r.start_error;
        return p;
    }
    p.ran = true;
    p.signal = r.signal;
    p.timed_out = r.timed_out;
    p.exit_code = r.exit_code;
    for (const std::string& line : split(r.output, "\n", false)) {
        const size_t eq = line.find('=');
        if (eq == std::string::npos || eq == 0 || eq > 64) continue;
        const std::string k = line.substr(0, eq), v = unescape(line.substr(eq + 1));
        if (k == "stage") p.stage = v;
        else if (k == "mapped") p.mapped.push_back(v);
        else if (!p.kv.count(k)) p.kv[k] = v;
    }
    for (const std::string& line : split(r.errors, "\n", false)) {
        const std::string t = trim(line);
        if (!t.empty()) p.messages.push_back(t.size() > 300 ? t.substr(0, 300) + "..." : t);
    }
    if (p.messages.size() > 8) p.messages.erase(p.messages.begin(), p.messages.end() - 8);
    if (r.exit_code == 127 && p.kv.empty()) {
        p.ran = false;
        p.why_not = "could not run odnn-probe: " + trim(r.output);
    }
    p.died = p.ran && !p.signal && !p.timed_out && p.exit_code != 0 && !p.stage.empty() && p.stage != "done" && !p.kv.count(p.stage);
    return p;
}

std::string find_probe() {
    const std::string dir = self_exe_dir();
    for (const char* rel : {"odnn-probe", "../libexec/odnn/odnn-probe", "../libexec/odnn-probe"}) {
        const std::string p = join_path(dir, rel);
        if (is_regular(p)) return p;
    }
    return "";
}

// ---------------------------------------------------------------- explanations

std::string explain_dlerror(const std::string& e) {
    if (e.find("cannot open shared object file") != std::string::npos) {
        const size_t colon = e.find(':');
        const std::string first = colon != std::string::npos ? e.substr(0, colon) : e;
        if (first.find('/') == std::string::npos)
            return "a library it needs (" + first + ") is not on the loader's search path";
        return "the file cannot be opened";
    }
    if (e.find("file too short") != std::string::npos || e.find("failed to map segment") != std::string::npos)
        return "the file is truncated or damaged (an interrupted copy, download or unpack)";
    if (e.find("invalid ELF header") != std::string::npos)
        return "the file is not a valid shared library (corrupt, or e.g. a Git LFS pointer / HTML error page)";
    if (e.find("wrong ELF class") != std::string::npos) return "it is built for another word size (32 vs 64 bit)";
    if (e.find("undefined symbol") != std::string::npos)
        return "a symbol it needs is missing from the libraries it was resolved against (mixed versions)";
    if (e.find("version `") != std::string::npos && e.find("not found") != std::string::npos)
        return "a library it depends on is older than it needs (e.g. libstdc++ or glibc)";
    return "";
}

std::string status_word(long long s) {
    switch (s) {
        case 0: return "CUDNN_STATUS_SUCCESS";
        case 1001: return "CUDNN_STATUS_NOT_INITIALIZED";
        case 1002: return "CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH";
        case 1008: return "CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED";
        case 2000: return "CUDNN_STATUS_BAD_PARAM";
        case 3000: return "CUDNN_STATUS_NOT_SUPPORTED";
        case 3005: return "CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDA_DRIVER";
        case 3006: return "CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDART";
        case 3007: return "CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH";
        case 3009: return "CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE";
        case 4000: return "CUDNN_STATUS_INTERNAL_ERROR";
        case 4004: return "CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED";
        case 5000: return "CUDNN_STATUS_EXECUTION_FAILED";
        default: return "status " + std::to_string(s);
    }
}

std::string cuda_version_text(long long v) {  // 13010 -> "13.1"
    if (v <= 0) return "none";
    return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

std::string cuda_error_text(long long r) {
    switch (r) {
        case 100: return "CUDA_ERROR_NO_DEVICE";
        case 35: return "CUDA_ERROR_INSUFFICIENT_DRIVER";
        case 999: return "CUDA_ERROR_UNKNOWN";
        case 3: return "CUDA_ERROR_NOT_INITIALIZED";
        case 101: return "CUDA_ERROR_INVALID_DEVICE";
        case 804: return "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE";
        case 803: return "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH";
        default: return "CUDA error " + std::to_string(r);
    }
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
    return s;
}

// dlopen treats a name without '/' as a name to search for: hand the probe a path.
std::string absolute(const std::string& p) {
    if (!p.empty() && p[0] == '/') return p;
    char buf[4096];
    if (!getcwd(buf, sizeof buf)) return "./" + p;
    return join_path(buf, p);
}

bool is_windows_system_dll(const std::string& raw) {
    const std::string n = to_lower(raw);
    if (starts_with(n, "api-ms-win-") || starts_with(n, "ext-ms-")) return true;
    static const std::set<std::string> k = {
        "kernel32.dll", "user32.dll",   "advapi32.dll", "msvcrt.dll",  "ntdll.dll",   "shell32.dll", "ole32.dll",
        "oleaut32.dll", "ws2_32.dll",   "bcrypt.dll",   "dbghelp.dll", "gdi32.dll",   "shlwapi.dll", "version.dll",
        "setupapi.dll", "crypt32.dll",  "ucrtbase.dll", "psapi.dll",   "rpcrt4.dll",  "secur32.dll", "cfgmgr32.dll",
        "nvcuda.dll",   "comdlg32.dll", "imm32.dll",    "winmm.dll",   "vcruntime140.dll", "vcruntime140_1.dll",
        "msvcp140.dll", "msvcp140_1.dll", "msvcp140_2.dll", "concrt140.dll", "vcomp140.dll"};
    return k.count(n) != 0;
}

// ---------------------------------------------------------------- the doctor

class Doctor {
public:
    explicit Doctor(const Options& o) : opt_(o) {}

    int run() {
        rep_.top.emplace_back("schema", jstr("odnn-doctor/1"));
        rep_.top.emplace_back("odnn_version", jstr(odnnGetVersionString()));
        if (!opt_.archive.empty()) {
            std::string archive_json;
            std::vector<Check> cs;
            archive_checks(opt_.archive, &cs, &archive_json);
            for (Check& c : cs) rep_.checks.push_back(std::move(c));
            rep_.top.emplace_back("archive", archive_json);
            if (opt_.lib.empty()) {
                rep_.subject_line = "archive: " + opt_.archive;
                return finish();
            }
        }
        env_ = current_loader_env(opt_.ld_cache);
        probe_exe_ = opt_.no_load ? "" : find_probe();
        struct utsname u;
        const std::string machine = uname(&u) == 0 ? u.machine : "";
        rep_.top.emplace_back("host", jobj({{"machine", jstr(machine)},
                                            {"ld_library_path", jstrs(env_.ld_library_path)},
                                            {"ld_preload", jstrs(env_.ld_preload)},
                                            {"ld_cache", jstr(env_.cache.source)},
                                            {"probe", jstr(probe_exe_)},
                                            {"loads_libraries", jbool(!opt_.no_load)}}));
        std::vector<std::pair<std::string, std::string>> extra;
        if (!subject_path_.empty()) extra.emplace_back(dir_name(subject_path_), "--lib");
        disc_ = discover(env_, extra);
        pick_model_ = std::make_unique<LoaderModel>(env_);
        pick_ = pick_model_->request("libcudnn.so.9", -1);
        choose_subject();
        check_installs();
        check_loader();
        check_shadowing();
        if (have_subject_) {
            check_file();
            if (subject_.readable) {
                if (!opt_.no_load && loadable_here()) {
                    subject_probe_ = run_probe(probe_exe_, {"lib", absolute(subject_.path)});
                    driver_probe_ = run_probe(probe_exe_, {"driver"});
                }
                check_version();
                check_sublibraries();
                check_dependencies();
                check_symbols();
                check_headers();
                if (!opt_.no_load && loadable_here()) {
                    check_driver_and_cuda();
                    check_gpu();
                    check_load();
                    check_smoke();
                } else if (subject_.format == "pe") {
                    Check c = make("runtime", "run-time checks");
                    c.summary = "not run: a Windows DLL cannot be loaded on this machine; the checks above read the file only";
                    rep_.checks.push_back(c);
                }
            }
        }
        return finish();
    }

    // Sets the subject from --lib; false with a message for bad usage.
    bool set_lib(const std::string& lib, std::string* err) {
        if (lib.empty()) return true;
        if (is_dir(lib)) {
            const std::string d = lib;
            for (const char* rel : {"libcudnn.so.9", "lib/libcudnn.so.9", "lib64/libcudnn.so.9",
                                    "lib/x86_64-linux-gnu/libcudnn.so.9", "cudnn64_9.dll", "bin/cudnn64_9.dll",
                                    "bin/x64/cudnn64_9.dll"}) {
                if (is_regular(join_path(d, rel)) || is_symlink(join_path(d, rel))) {
                    subject_path_ = join_path(d, rel);
                    return true;
                }
            }
            for (const char* sub : {"", "lib", "lib64", "bin"}) {
                const std::string dd = *sub ? join_path(d, sub) : d;
                for (const std::string& n : list_dir(dd)) {
                    std::string role, full;
                    int major;
                    if (is_cudnn_library_name(n) && cudnn_name_parts(n, &role, &major, &full) && role == "cudnn") {
                        subject_path_ = join_path(dd, n);
                        return true;
                    }
                }
            }
            *err = "no cuDNN library (libcudnn.so.9, cudnn64_9.dll) in folder " + lib;
            return false;
        }
        if (!is_regular(lib)) {
            if (is_symlink(lib)) {  // a dangling link is worth a report
                subject_path_ = lib;
                return true;
            }
            MappedFile f;
            f.open(lib);
            *err = lib + ": " + (f.error().empty() ? "not a regular file" : f.error());
            return false;
        }
        subject_path_ = lib;
        return true;
    }

private:
    int finish() {
        if (opt_.json) rep_.print_json(stdout);
        else rep_.print_text(stdout);
        return rep_.exit_code();
    }

    Check make(const std::string& id, const std::string& title) {
        Check c;
        c.id = id;
        c.title = title;
        return c;
    }

    bool loadable_here() const {
        return subject_.format == "elf" && subject_.elf_class == env_.elf_class &&
               (env_.machine == 0 || subject_.machine == env_.machine);
    }

    int api_major() const { return subject_.name_major > 0 ? subject_.name_major : 9; }

    std::string describe(const LibraryInfo& L) const {
        std::string v = L.vendor == "odnn" ? "odnn" : L.vendor == "nvidia" ? "NVIDIA cuDNN" : "cuDNN (unknown vendor)";
        return v + " " + L.version_text();
    }

    void choose_subject() {
        const auto& objs = pick_model_->objects();
        if (!subject_path_.empty()) {
            subject_how_ = "given with --lib";
        } else if (!objs[pick_].path.empty()) {
            subject_path_ = objs[pick_].path;
            subject_how_ = "the library a plain program loads";
        } else {
            for (const Install& i : disc_.installs)
                if (const LibraryInfo* m = i.main_lib()) {
                    subject_path_ = m->path;
                    subject_how_ = "not on the loader's search path; the first install found";
                    break;
                }
        }
        if (subject_path_.empty()) {
            rep_.subject_line = "subject: none (no cuDNN library found)";
            rep_.top.emplace_back("subject", "null");
            return;
        }
        have_subject_ = true;
        subject_ = inspect_library_file(subject_path_);
        if (is_symlink(subject_path_) && !is_regular(subject_path_))
            subject_.error = "broken symbolic link to " + read_link(subject_path_);
        rep_.subject_line = "subject: " + subject_.path + " (" + describe(subject_) + "), " + subject_how_;
        rep_.top.emplace_back("subject", library_json(subject_));
        rep_.top.emplace_back("subject_chosen_as", jstr(subject_how_));
    }

    // ---- installs
    void check_installs() {
        Check c = make("installs", "cuDNN installs found");
        std::vector<std::string> js;
        for (const Install& ins : disc_.installs) {
            int n = 0;
            for (const LibraryInfo& l : ins.libs) n += l.role.empty() ? 0 : 1;
            std::string line = ins.dir + ": " + (ins.vendor() == "odnn" ? "odnn" : ins.vendor() == "mixed" ? "MIXED odnn + NVIDIA" : "NVIDIA cuDNN") +
                               " " + ins.version() + " (" + std::to_string(n) + (n == 1 ? " library" : " libraries") +
                               "; found via " + join(ins.sources, ", ") + ")";
            if (ins.vendor() == "nvidia (windows)") line = ins.dir + ": Windows DLLs of NVIDIA cuDNN " + ins.version() + " (not loadable here)";
            c.details.push_back(line);
            std::vector<std::string> libs;
            for (const LibraryInfo& l : ins.libs) libs.push_back(library_json(l));
            js.push_back(jobj({{"dir", jstr(ins.dir)},
                               {"vendor", jstr(ins.vendor())},
                               {"version", jstr(ins.version())},
                               {"sources", jstrs(ins.sources)},
                               {"aliases", jstrs(ins.aliases)},
                               {"python_wheel", jbool(ins.python_wheel)},
                               {"on_default_path", jbool(ins.on_default_path)},
                               {"libraries", jarr(libs)}}));
        }
        rep_.top.emplace_back("installs", jarr(js));
        if (disc_.installs.empty()) {
            c.worst(Verdict::Fail);
            c.summary = "no cuDNN library found on this machine";
            c.fix = "install cuDNN 9 (pip install nvidia-cudnn-cu13 or -cu12, NVIDIA's .deb/.tar.xz) or build odnn, "
                    "then put its lib folder on the search path (ldconfig, or LD_LIBRARY_PATH)";
        } else {
            c.summary = std::to_string(disc_.installs.size()) + (disc_.installs.size() == 1 ? " install" : " installs") +
                        " of cuDNN found";
        }
        for (const StaleCacheEntry& s : disc_.stale) {
            c.worst(Verdict::Warn);
            c.details.push_back("ld.so.cache lists " + s.name + " at " + s.path + ", which no longer exists");
            c.fix = "run ldconfig (as root) to refresh the cache";
        }
        if (!env_.cache.ok && env_.use_cache)
            c.details.push_back("ld.so.cache unreadable (" + env_.cache.error + "); cache lookups not modelled");
        std::vector<std::string> stale;
        for (const StaleCacheEntry& s : disc_.stale) stale.push_back(jobj({{"name", jstr(s.name)}, {"path", jstr(s.path)}}));
        c.data.emplace_back("count", jint(static_cast<long long>(disc_.installs.size())));
        c.data.emplace_back("stale_cache_entries", jarr(stale));
        c.data.emplace_back("ld_cache", jobj({{"source", jstr(env_.cache.source)}, {"format", jstr(env_.cache.format)},
                                               {"ok", jbool(env_.cache.ok)}}));
        rep_.checks.push_back(c);
    }

    // Which condition makes a program get the library in this install.
    std::string how_reached(const Install& ins) const {
        std::vector<std::string> ways;
        for (const std::string& s : ins.sources) {
            if (starts_with(s, "LD_LIBRARY_PATH")) ways.push_back("on " + s + ": programs without DT_RPATH get it before the cache");
            else if (s == "LD_PRELOAD") ways.push_back("LD_PRELOAD: every program gets it");
        }
        if (ins.python_wheel)
            ways.push_back("a Python wheel: PyTorch/JAX in that environment load it through their RPATH or preloading, "
                           "plain programs do not see it");
        if (ways.empty() && !ins.on_default_path)
            ways.push_back("not on the default search path: only programs with an RPATH/RUNPATH to it, "
                           "or LD_LIBRARY_PATH / LD_PRELOAD naming it, get it");
        if (ways.empty()) ways.push_back("on the default search path (ld.so.cache / default directories)");
        return join(ways, "; ");
    }

    // ---- loader
    void check_loader() {
        Check c = make("loader", "what a plain program loads");
        const LoadedObject& o = pick_model_->objects()[pick_];
        const std::string order = "search order: " + pick_model_->search_order_text(-1);
        std::string preload;
        for (const std::string& p : env_.ld_preload)
            if (is_cudnn_library_name(base_name(p))) preload = p;
        if (o.path.empty()) {
            c.worst(Verdict::Fail);
            c.summary = "no libcudnn.so.9 on the loader's search path: programs fail with \"libcudnn.so.9: cannot open "
                        "shared object file\"";
            c.fix = "put the folder of libcudnn.so.9 in LD_LIBRARY_PATH, or add it to /etc/ld.so.conf.d/ and run ldconfig";
        } else if (!o.error.empty()) {
            c.worst(Verdict::Fail);
            c.summary = "the loader finds " + o.path + " first (" + o.via + ") and fails: " + o.error;
            c.details.push_back("the loader does not go on to another copy when the first one it finds is damaged");
            c.fix = "replace or remove " + o.path + " (reinstall it), or take its folder off the search path";
        } else {
            c.summary = "a plain program loads " + o.path + " (" + o.via + ")";
        }
        c.details.push_back(order);
        for (const std::string& s : o.skipped) c.details.push_back("passed over: " + s);
        if (!preload.empty()) {
            c.details.push_back("LD_PRELOAD=" + preload + " is set: every program started from this environment gets "
                                "that one instead, RPATH or not");
        }
        c.details.push_back("programs with a DT_RPATH to another copy (PyTorch wheels: $ORIGIN/../../nvidia/cudnn/lib) get "
                            "that copy whatever LD_LIBRARY_PATH says; LD_PRELOAD overrides even that");
        // What the real loader says, in a child process with no RPATH.
        Probe p;
        if (!opt_.no_load && !probe_exe_.empty()) {
            p = run_probe(probe_exe_, {"lib", "libcudnn.so.9"});
            pick_probe_ = p;
            if (p.ran && !p.crashed()) {
                if (p.get("dlopen") == "ok") {
                    const std::string got = p.get("path");
                    c.details.push_back("checked: dlopen(\"libcudnn.so.9\") in a child process mapped " + got);
                    if (!o.path.empty() && real_path(got) != real_path(o.path)) {
                        c.worst(Verdict::Warn);
                        c.details.push_back("the real loader disagrees with doctor's model of it (glibc-hwcaps "
                                            "subfolders or a loader feature the model lacks); trust the real one");
                    }
                } else {
                    c.details.push_back("checked: dlopen(\"libcudnn.so.9\") in a child process failed: " + p.get("dlerror"));
                    if (!o.path.empty() && o.error.empty()) {
                        c.worst(Verdict::Fail);
                        const std::string why = explain_dlerror(p.get("dlerror"));
                        if (!why.empty()) c.details.push_back("meaning: " + why);
                        c.fix = "see the dependencies check below";
                    }
                }
            } else if (p.crashed()) {
                c.worst(Verdict::Fail);
                c.details.push_back("checked: loading libcudnn.so.9 " + p.crash_text());
            }
        }
        if (have_subject_ && subject_.format == "pe") {
            c.details.push_back("the library given with --lib is a Windows DLL: the loader here never loads it");
        } else if (have_subject_ && !o.path.empty() && subject_how_ == "given with --lib" &&
                   real_path(o.path) != real_path(subject_.path)) {
            c.worst(Verdict::Warn);
            c.details.push_back("the library given with --lib is NOT the one plain programs get");
            const std::string dir = real_path(dir_name(subject_.path));
            const std::string abs = join_path(dir, base_name(subject_.path));
            c.fix = "to use " + abs + ": LD_LIBRARY_PATH=" + dir +
                    " (programs without RPATH), or LD_PRELOAD=" + abs +
                    " (every program, even PyTorch with its RPATH), or link with -Wl,-rpath," + dir;
        }
        c.data.emplace_back("name", jstr("libcudnn.so.9"));
        c.data.emplace_back("path", jstr(o.path));
        c.data.emplace_back("via", jstr(o.via));
        c.data.emplace_back("error", jstr(o.error));
        c.data.emplace_back("skipped", jstrs(o.skipped));
        c.data.emplace_back("ld_preload", jstr(preload));
        c.data.emplace_back("probe_path", jstr(p.get("path")));
        c.data.emplace_back("probe_error", jstr(p.get("dlerror")));
        rep_.checks.push_back(c);
    }

    // ---- shadowing
    void check_shadowing() {
        Check c = make("shadowing", "copies that shadow each other");
        struct Copy {
            std::string path, version, vendor, how;
            const Install* ins;
        };
        std::vector<Copy> copies;
        std::set<FileId> seen;
        for (const Install& ins : disc_.installs) {
            for (const LibraryInfo& l : ins.libs) {
                if (l.role != "cudnn" || l.format != "elf" || l.name_major != 9) continue;
                FileId id;
                if (file_id(l.path, &id) && !seen.insert(id).second) continue;
                copies.push_back({l.path, l.version_text(), l.vendor, how_reached(ins), &ins});
            }
        }
        const LoadedObject& o = pick_model_->objects()[pick_];
        std::set<std::string> versions, vendors;
        for (const Copy& k : copies) {
            versions.insert(k.version);
            vendors.insert(k.vendor);
        }
        std::vector<std::string> js;
        for (const Copy& k : copies) {
            const bool picked = !o.path.empty() && real_path(o.path) == real_path(k.path);
            c.details.push_back(k.path + ": " + (k.vendor == "odnn" ? "odnn " : "NVIDIA ") + k.version +
                                (picked ? "  <- plain programs get this one" : "") + "; " + k.how);
            js.push_back(jobj({{"path", jstr(k.path)}, {"version", jstr(k.version)}, {"vendor", jstr(k.vendor)},
                               {"picked", jbool(picked)}, {"reached", jstr(k.how)}}));
        }
        c.data.emplace_back("copies", jarr(js));
        if (copies.size() <= 1) {
            c.summary = copies.empty() ? "no libcudnn.so.9 found" : "one copy of libcudnn.so.9: nothing shadowed";
        } else if (versions.size() > 1) {
            c.worst(Verdict::Warn);
            c.summary = std::to_string(copies.size()) + " copies of libcudnn.so.9 with different versions (" +
                        join(std::vector<std::string>(versions.begin(), versions.end()), ", ") +
                        "): which one a program gets depends on its RPATH and your environment";
            c.fix = "remove the copies you do not use, or make sure each program's RPATH / LD_LIBRARY_PATH names the "
                    "intended one (check with: odnn doctor --lib <copy>)";
        } else {
            c.worst(Verdict::Warn);
            c.summary = std::to_string(copies.size()) + " copies of libcudnn.so.9" +
                        (vendors.size() > 1 ? " (odnn and NVIDIA's)" : "") + ", one shadowing the other";
            c.fix = "make sure each program loads the intended copy: LD_LIBRARY_PATH or LD_PRELOAD for the odnn one, "
                    "RPATH for frameworks (verify with /proc/<pid>/maps)";
        }
        rep_.checks.push_back(c);
    }

    // ---- file
    void check_file() {
        Check c = make("file", "library file");
        c.data.emplace_back("path", jstr(subject_.path));
        c.data.emplace_back("format", jstr(subject_.format));
        if (!subject_.readable) {
            c.worst(Verdict::Fail);
            c.summary = subject_.path + ": " + subject_.error;
            c.fix = "reinstall this library: the file is unusable";
            rep_.checks.push_back(c);
            return;
        }
        if (subject_.format == "elf") {
            c.summary = "ELF " + std::to_string(subject_.elf_class) + "-bit " + subject_.machine_name + " shared object, " +
                        human_size(subject_.size) + (subject_.soname.empty() ? "" : ", SONAME " + subject_.soname);
            if (!loadable_here()) {
                c.worst(Verdict::Fail);
                c.details.push_back("this machine runs " + std::string(env_.elf_class == 64 ? "64" : "32") +
                                    "-bit " + (env_.machine == kEmX86_64 ? "x86-64" : env_.machine == kEmAarch64 ? "aarch64" : "other") +
                                    " programs: the loader skips this file");
                c.fix = "install the cuDNN build for this machine's architecture";
            }
            if (subject_.role == "cudnn" && subject_.soname != "libcudnn.so." + std::to_string(api_major())) {
                c.worst(Verdict::Fail);
                c.details.push_back("SONAME is '" + subject_.soname + "', expected libcudnn.so." + std::to_string(api_major()) +
                                    ": programs linked against cuDNN record that name and will not find this file by it");
                c.fix = "relink the library with -Wl,-soname,libcudnn.so.9";
            }
        } else {
            c.summary = "PE DLL (" + subject_.machine_name + "), " + human_size(subject_.size) +
                        (subject_.pe_dll_name.empty() ? "" : ", export name " + subject_.pe_dll_name) +
                        ": a Windows library, inspected without loading";
        }
        for (const std::string& p : subject_.problems) {
            c.worst(Verdict::Fail);
            c.details.push_back("damage: " + p);
        }
        if (!subject_.problems.empty()) c.fix = "the file is damaged (truncated or corrupt): reinstall it";
        c.data.emplace_back("problems", jstrs(subject_.problems));
        rep_.checks.push_back(c);
    }

    // ---- version
    void check_version() {
        Check c = make("version", "version");
        for (const VersionFinding& v : subject_.versions) c.details.push_back(v.text() + ": " + v.source);
        std::vector<std::string> js;
        for (const VersionFinding& v : subject_.versions)
            js.push_back(jobj({{"version", jstr(v.text())}, {"source", jstr(v.source)}}));
        c.data.emplace_back("from_file", jarr(js));
        std::set<std::string> file_versions;
        for (const VersionFinding& v : subject_.versions) file_versions.insert(v.text());
        VersionFinding loaded;
        bool have_loaded = false;
        if (subject_probe_.ran && subject_probe_.get("dlopen") == "ok" && subject_probe_.num("version") > 0) {
            loaded = version_from_number(static_cast<uint64_t>(subject_probe_.num("version")), "cudnnGetVersion()");
            have_loaded = true;
            c.details.push_back(loaded.text() + ": cudnnGetVersion() = " + subject_probe_.get("version") +
                                " (loaded in a child process)" +
                                (subject_probe_.has("property") ? ", cudnnGetProperty: " + subject_probe_.get("property") : ""));
            if (subject_probe_.has("cudart"))
                c.details.push_back("cudnnGetCudartVersion() = " + subject_probe_.get("cudart") + " (CUDA " +
                                    cuda_version_text(subject_probe_.num("cudart")) + ")");
            if (subject_probe_.has("odnn_version"))
                c.details.push_back("odnn " + subject_probe_.get("odnn_version") + " (odnnGetVersionString)");
        }
        c.data.emplace_back("from_library", jstr(have_loaded ? loaded.text() : ""));
        const std::string best = have_loaded ? loaded.text() : subject_.version_text();
        c.data.emplace_back("version", jstr(best));
        c.summary = describe(subject_) + (have_loaded ? "" : " (read from the file)");
        if (have_loaded) c.summary = (subject_.vendor == "odnn" ? "odnn, cuDNN API " : "NVIDIA cuDNN ") + loaded.text();
        if (subject_.versions.empty() && !have_loaded) {
            c.worst(Verdict::Warn);
            c.summary = "version unknown: the file records none doctor can read, and it was not loaded";
        }
        // Disagreement between what the file's contents say (not names / metadata) and the running library.
        std::set<std::string> content;
        for (const VersionFinding& v : subject_.versions)
            if (v.source.find("file name") == std::string::npos && v.source.find("metadata") == std::string::npos)
                content.insert(v.text());
        if (have_loaded) content.insert(loaded.text());
        if (content.size() > 1) {
            c.worst(Verdict::Warn);
            c.details.push_back("the sources disagree: parts of this install come from different cuDNN versions");
            c.fix = "reinstall cuDNN so that every file comes from one release";
        } else if (file_versions.size() > 1 || (have_loaded && !file_versions.empty() && !file_versions.count(loaded.text()))) {
            c.worst(Verdict::Warn);
            c.details.push_back("the file name or package metadata names another version than the library's contents "
                                "(renamed file, or a copy from another release)");
            c.fix = "reinstall cuDNN so that every file comes from one release";
        }
        if (have_loaded && subject_.role == "cudnn" && loaded.major == 9 && loaded.minor < 19)
            c.details.push_back("note: PyTorch 2.11 wheels are built against cuDNN 9.19 and refuse an older runtime minor "
                                "(\"cuDNN version incompatibility\")");
        rep_.checks.push_back(c);
    }

    // ---- sub-libraries
    const LibraryInfo& info_for(const std::string& path) {
        auto it = infos_.find(path);
        if (it != infos_.end()) return it->second;
        return infos_.emplace(path, inspect_library_file(path)).first->second;
    }

    void check_sublibraries() {
        Check c = make("sublibraries", "sub-libraries");
        if (subject_.is_odnn) {
            c.summary = "odnn is one library (it exports odnnIsOdnn): no sub-libraries needed";
            c.data.emplace_back("layout", jstr("odnn"));
            rep_.checks.push_back(c);
            build_dependency_model({});
            return;
        }
        if (subject_.vendor == "unknown") {
            c.worst(Verdict::Warn);
            c.summary = "not checked: the file's exports are unreadable, so it is neither recognisably odnn nor NVIDIA's";
            c.fix = "see the file check";
            rep_.checks.push_back(c);
            build_dependency_model({});
            return;
        }
        if (subject_.role != "cudnn") {
            c.worst(Verdict::Warn);
            c.summary = subject_.file_name + " is a sub-library; programs load libcudnn.so.9, which loads the others";
            c.fix = "run odnn doctor --lib on libcudnn.so.9 of this install";
            rep_.checks.push_back(c);
            build_dependency_model({});
            return;
        }
        if (api_major() != 9) {
            c.worst(Verdict::Warn);
            c.summary = "cuDNN " + std::to_string(api_major()) + " layout: the sub-library check knows cuDNN 9's set only";
            rep_.checks.push_back(c);
            build_dependency_model({});
            return;
        }
        std::vector<std::string> names;
        for (const std::string& role : nvidia_sublibraries())
            names.push_back(subject_.format == "pe" ? role + "64_9.dll" : "lib" + role + ".so.9");
        std::vector<SublibFinding> found;
        const VersionFinding* main_v = subject_.best_version();
        std::string main_version = main_v ? main_v->text() : "";
        if (subject_probe_.num("version") > 0)
            main_version = version_from_number(static_cast<uint64_t>(subject_probe_.num("version")), "").text();
        int missing = 0, mixed = 0, elsewhere = 0;
        if (subject_.format == "pe") {
            const std::string dir = dir_name(subject_.path);
            std::map<std::string, std::string> lower;
            for (const std::string& n : list_dir(dir)) lower[to_lower(n)] = n;
            for (const std::string& n : names) {
                SublibFinding f;
                f.role = n;
                auto it = lower.find(n);
                if (it != lower.end()) {
                    f.path = join_path(dir, it->second);
                    const LibraryInfo& L = info_for(f.path);
                    f.version = L.version_text();
                    if (!L.readable) f.note = L.error;
                }
                found.push_back(f);
            }
            build_dependency_model({});
        } else {
            build_dependency_model(names);
            for (size_t i = 0; i < names.size(); ++i) {
                SublibFinding f;
                f.role = names[i];
                const LoadedObject& o = dep_model_->objects()[sub_index_[i]];
                if (!o.path.empty()) {
                    f.path = o.path;
                    f.note = o.error.empty() ? o.via : o.via + ": " + o.error;
                    if (!o.error.empty()) f.version = "unusable";
                    else f.version = info_for(o.path).version_text();
                    if (real_path(dir_name(o.path)) != real_path(dir_name(subject_.path))) ++elsewhere;
                }
                found.push_back(f);
            }
        }
        std::vector<std::string> js;
        for (const SublibFinding& f : found) {
            if (f.path.empty()) {
                ++missing;
                c.details.push_back(f.role + ": MISSING");
            } else {
                const bool differs = !main_version.empty() && f.version != "unknown" && f.version != main_version;
                if (differs || f.version == "unusable") ++mixed;
                c.details.push_back(f.role + ": " + f.version + (differs ? " (DIFFERENT VERSION)" : "") + "  " + f.path +
                                    (f.note.empty() ? "" : " (" + f.note + ")"));
            }
            js.push_back(jobj({{"name", jstr(f.role)}, {"path", jstr(f.path)}, {"version", jstr(f.version)},
                               {"note", jstr(f.note)}}));
        }
        c.data.emplace_back("layout", jstr("nvidia"));
        c.data.emplace_back("sublibraries", jarr(js));
        c.data.emplace_back("missing", jint(missing));
        c.data.emplace_back("mixed", jint(mixed));
        if (missing) {
            c.worst(Verdict::Fail);
            c.summary = std::to_string(missing) + " of " + std::to_string(found.size()) +
                        " sub-libraries missing: the calls they serve fail with CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED / "
                        "NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE";
            c.fix = subject_.format == "pe"
                        ? "reinstall cuDNN completely (every cudnn_*64_9.dll of the release belongs beside cudnn64_9.dll)"
                        : "reinstall cuDNN completely (every libcudnn_*.so.9 of the release belongs beside libcudnn.so.9)";
        } else if (mixed) {
            c.worst(Verdict::Fail);
            c.summary = std::to_string(mixed) + " sub-libraries are of another version than libcudnn.so.9 " + main_version +
                        " (or unusable): expect CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH";
            c.fix = "reinstall cuDNN so that all its libraries come from one release";
        } else {
            c.summary = "all " + std::to_string(found.size()) + " sub-libraries present" +
                        (main_version.empty() ? "" : ", all " + main_version);
        }
        if (elsewhere && !missing) {
            c.worst(Verdict::Warn);
            c.details.push_back(std::to_string(elsewhere) + " sub-libraries come from another folder than libcudnn.so.9 "
                                "(NVIDIA's libcudnn.so.9 loads them by name: LD_LIBRARY_PATH comes before its RUNPATH $ORIGIN)");
        }
        rep_.checks.push_back(c);
    }

    // The loader model of "the subject and everything it pulls in".
    void build_dependency_model(const std::vector<std::string>& sub_names) {
        dep_model_ = std::make_unique<LoaderModel>(env_);
        if (subject_.format != "elf") return;
        dep_root_ = dep_model_->add_root(subject_.path, -1, "the library checked");
        for (const std::string& n : sub_names) sub_index_.push_back(dep_model_->request(n, dep_root_));
        dep_model_->load_needed();
    }

    // ---- dependencies
    void check_dependencies() {
        Check c = make("dependencies", "dependencies");
        if (subject_.format == "pe") {
            const std::string dir = dir_name(subject_.path);
            std::set<std::string> beside;
            for (const std::string& n : list_dir(dir)) beside.insert(to_lower(n));
            std::vector<std::string> missing;
            auto look = [&](const std::vector<std::string>& dlls, const char* kind) {
                for (const std::string& d : dlls) {
                    if (is_windows_system_dll(d)) continue;
                    const bool here = beside.count(to_lower(d)) != 0;
                    c.details.push_back(std::string(kind) + " " + d + (here ? ": beside it" : ": not beside it"));
                    if (!here) missing.push_back(d);
                }
            };
            look(subject_.pe_imports, "imports");
            look(subject_.pe_delay_imports, "delay-loads");
            if (!missing.empty()) {
                c.worst(Verdict::Warn);
                c.summary = std::to_string(missing.size()) + " DLLs it needs are not beside it: " + join(missing, ", ");
                c.fix = "on Windows they must be in the application's folder, System32 or a folder on PATH "
                        "(cuBLAS/cuBLASLt and NVRTC come with the CUDA toolkit: add its bin folder to PATH)";
            } else {
                c.summary = "every non-system DLL it imports is beside it";
            }
            c.data.emplace_back("unresolved", jstrs(missing));
            rep_.checks.push_back(c);
            return;
        }
        if (subject_.format == "elf" && subject_.needed.empty() && !subject_.problems.empty()) {
            c.worst(Verdict::Warn);
            c.summary = "not checked: the dynamic section is unreadable (see the file check)";
            c.fix = "see the file check";
            rep_.checks.push_back(c);
            return;
        }
        const auto& objs = dep_model_->objects();
        std::vector<std::string> unresolved, js;
        std::set<std::string> shown;
        for (size_t i = 0; i < objs.size(); ++i) {
            const LoadedObject& o = objs[i];
            if (static_cast<int>(i) == dep_root_) continue;
            const std::string by = o.parent >= 0 ? base_name(objs[o.parent].path) : "the program";
            js.push_back(jobj({{"name", jstr(o.requested)}, {"needed_by", jstr(by)}, {"path", jstr(o.path)},
                               {"via", jstr(o.via)}, {"error", jstr(o.error)}}));
            if (o.path.empty() || !o.error.empty()) {
                const std::string order = dep_model_->search_order_text(o.parent);
                unresolved.push_back(o.requested);
                c.details.push_back(by + " needs " + o.requested + ": " + (o.path.empty() ? "NOT FOUND" : o.path + ": " + o.error) +
                                    " (searched " + order + ")");
                continue;
            }
            if (o.reused || !shown.insert(o.requested).second) continue;
            c.details.push_back(o.requested + " -> " + o.path + " (" + o.via + ")");
        }
        // Libraries the cuDNN files name in their data: loaded with dlopen at run time.
        std::vector<std::string> soft_missing;
        std::vector<std::string> rjs;
        std::set<std::string> asked;
        LoaderModel runtime(env_);
        std::map<std::string, int> roots;
        for (size_t i = 0; i < objs.size(); ++i) {
            const LoadedObject& o = objs[i];
            if (o.path.empty() || !o.error.empty() || o.reused) continue;
            const std::string b = base_name(o.path);
            if (!starts_with(b, "libcudnn")) continue;
            const LibraryInfo& L = info_for(o.path);
            for (const std::string& dep : L.runtime_deps) {
                if (starts_with(dep, "libcuda.so") || !asked.insert(dep).second) continue;  // the driver: own check
                if (!roots.count(o.path)) roots[o.path] = runtime.add_root(o.path);
                const int r = runtime.request(dep, roots[o.path]);
                const LoadedObject& d = runtime.objects()[r];
                const bool ok = !d.path.empty() && d.error.empty();
                rjs.push_back(jobj({{"name", jstr(dep)}, {"named_by", jstr(b)}, {"path", jstr(d.path)}, {"via", jstr(d.via)}}));
                if (ok) c.details.push_back(dep + " -> " + d.path + " (" + d.via + "; loaded at run time by " + b + ")");
                else {
                    soft_missing.push_back(dep);
                    c.details.push_back(b + " loads " + dep + " at run time: NOT FOUND");
                }
            }
        }
        c.data.emplace_back("needed", jarr(js));
        c.data.emplace_back("unresolved", jstrs(unresolved));
        c.data.emplace_back("runtime", jarr(rjs));
        c.data.emplace_back("runtime_unresolved", jstrs(soft_missing));
        if (!unresolved.empty()) {
            c.worst(Verdict::Fail);
            c.summary = std::to_string(unresolved.size()) + " dependencies will not resolve: " + join(unresolved, ", ") +
                        " (the library will not load: \"cannot open shared object file\")";
            c.fix = "install the missing libraries, or add their folder to LD_LIBRARY_PATH / ld.so.conf.d";
        } else {
            c.summary = "every DT_NEEDED dependency resolves";
        }
        if (!soft_missing.empty()) {
            c.worst(Verdict::Warn);
            std::string what;
            for (const std::string& m : soft_missing) {
                if (starts_with(m, "libcublas")) what += " " + m + ": matmul-based engines fail (pip install nvidia-cublas-cuNN, or the CUDA toolkit);";
                else if (starts_with(m, "libnvrtc")) what += " " + m + ": runtime-compiled (fusion) engines fail (pip install nvidia-cuda-nvrtc-cuNN);";
                else what += " " + m + ";";
            }
            c.details.push_back("missing at run time:" + what);
            if (unresolved.empty()) c.summary += "; " + std::to_string(soft_missing.size()) + " run-time libraries missing: " + join(soft_missing, ", ");
            if (c.fix.empty()) c.fix = "install the CUDA libraries cuDNN loads at run time (cuBLASLt, NVRTC) of the CUDA major it was built for";
        }
        rep_.checks.push_back(c);
    }

    // ---- symbols
    void check_symbols() {
        if (subject_.role != "cudnn" && !subject_.is_odnn) return;
        Check c = audit_symbols(subject_, "libcudnn.so." + std::to_string(api_major()));
        rep_.checks.push_back(c);
    }

    // ---- headers
    void check_headers() {
        Check c = make("headers", "cuDNN headers");
        std::vector<std::string> dirs = {join_path(dir_name(subject_.path), "../include"), "/usr/include",
                                         "/usr/local/include", "/usr/include/x86_64-linux-gnu"};
        for (const char* var : {"CUDNN_PATH", "CUDNN_HOME", "CUDA_PATH", "CUDA_HOME"})
            if (!getenv_str(var).empty()) dirs.push_back(getenv_str(var) + "/include");
        for (const std::string& g : glob_paths("/usr/local/cuda*/include")) dirs.push_back(g);
        std::set<std::string> seen;
        std::vector<std::string> js;
        const std::string lib_v = subject_probe_.num("version") > 0
                                      ? version_from_number(static_cast<uint64_t>(subject_probe_.num("version")), "").text()
                                      : subject_.version_text();
        VersionFinding lv;
        const auto lp = split(lib_v, ".", false);
        bool newer = false;
        for (const std::string& d : dirs) {
            const std::string h = join_path(d, "cudnn_version.h");
            if (!is_regular(h)) continue;
            const std::string rp = real_path(h);
            if (!seen.insert(rp).second) continue;
            std::string text;
            if (!read_text_file(rp, &text, 1 << 16)) continue;
            bool odnn = false;
            const std::string v = header_version(text, &odnn);
            if (v.empty()) continue;
            c.details.push_back(rp + ": " + (odnn ? "odnn's header, cuDNN API " : "cuDNN ") + v);
            js.push_back(jobj({{"path", jstr(rp)}, {"version", jstr(v)}, {"odnn", jbool(odnn)}}));
            const auto hp = split(v, ".", false);
            if (lp.size() >= 2 && hp.size() >= 2 && lp[0] == hp[0] && std::atoi(hp[1].c_str()) > std::atoi(lp[1].c_str()))
                newer = true;
            if (lp.size() >= 1 && hp.size() >= 1 && lp[0] != hp[0] && lib_v != "unknown") newer = true;
        }
        c.data.emplace_back("headers", jarr(js));
        if (js.empty()) {
            c.summary = "no cudnn_version.h found (headers are only needed to build programs)";
        } else if (newer) {
            c.worst(Verdict::Warn);
            c.summary = "headers of another or a newer cuDNN than the library (" + lib_v + ")";
            c.fix = "programs compiled against newer headers reject an older runtime (PyTorch: \"cuDNN version "
                    "incompatibility\"): install matching headers and library";
        } else {
            c.summary = std::to_string(js.size()) + " cudnn_version.h found" +
                        (lib_v == "unknown" ? " (the library's version is unknown)"
                                            : ", none newer than the library (" + lib_v + ")");
        }
        rep_.checks.push_back(c);
    }

    // ---- driver and CUDA versions
    int library_cuda_major(std::string* source) const {
        const long long cudart = subject_probe_.num("cudart", -1);
        if (cudart > 0) {
            *source = "cudnnGetCudartVersion() = " + std::to_string(cudart);
            return static_cast<int>(cudart / 1000);
        }
        if (cudart == 0) {
            *source = "cudnnGetCudartVersion() = 0";
            return 0;
        }
        *source = subject_.cuda_source;
        return subject_.cuda_major;
    }

    bool odnn_cpu_only() const {
        return subject_.is_odnn && subject_probe_.get("odnn_build").find("cuda=off") != std::string::npos;
    }

    void check_driver_and_cuda() {
        Check d = make("driver", "NVIDIA driver");
        const Probe& p = driver_probe_;
        std::string proc;
        read_text_file("/proc/driver/nvidia/version", &proc, 4096);
        proc = trim(split(proc, "\n", false).empty() ? "" : split(proc, "\n", false)[0]);
        const bool need_gpu = subject_.vendor == "nvidia";
        d.data.emplace_back("libcuda", jstr(p.get("libcuda")));
        d.data.emplace_back("path", jstr(p.get("path")));
        d.data.emplace_back("driver_version", jint(p.num("driver_version", 0)));
        d.data.emplace_back("cuInit", jint(p.num("cuInit", -1)));
        d.data.emplace_back("kernel_module", jstr(proc));
        if (!p.ran) {
            d.worst(Verdict::Warn);
            d.summary = "not checked: " + p.why_not;
        } else if (p.crashed()) {
            d.worst(Verdict::Fail);
            d.summary = "loading the driver library " + p.crash_text();
            d.fix = "reinstall the NVIDIA driver";
        } else if (p.get("libcuda") != "ok") {
            d.worst(need_gpu ? Verdict::Fail : odnn_cpu_only() ? Verdict::Ok : Verdict::Warn);
            d.summary = "no NVIDIA driver on this machine: libcuda.so.1 cannot be loaded (" + p.get("dlerror") + ")";
            if (need_gpu)
                d.details.push_back("NVIDIA's cuDNN needs a GPU and its driver: every cudnnCreate fails with "
                                    "CUDNN_STATUS_NOT_INITIALIZED here");
            else if (subject_.is_odnn)
                d.details.push_back("odnn runs on its CPU backend without a driver");
            if (!proc.empty()) d.details.push_back("the kernel module is loaded (" + proc + ") but its user-space library is not found");
            d.fix = need_gpu ? "install the NVIDIA driver (in a container: start it with --gpus / the NVIDIA container "
                               "toolkit), or use odnn's CPU backend: LD_PRELOAD=<odnn>/lib/libcudnn.so.9"
                             : "install the NVIDIA driver to use the GPU";
        } else {
            const long long dv = p.num("driver_version", 0);
            d.summary = "driver supports CUDA up to " + cuda_version_text(dv) + " (" + p.get("path") + ")";
            if (!proc.empty()) d.details.push_back(proc);
            if (p.num("cuInit", 0) != 0) {
                d.worst(need_gpu ? Verdict::Fail : Verdict::Warn);
                const long long r = p.num("cuInit");
                d.details.push_back("cuInit failed: " + cuda_error_text(r));
                d.summary += "; cuInit failed (" + cuda_error_text(r) + ")";
                d.fix = r == 100 ? "no GPU visible: check CUDA_VISIBLE_DEVICES, and in a container --gpus all"
                                 : r == 35 ? "the user-space driver library and the kernel module differ: reboot or reinstall the driver"
                                           : "check nvidia-smi and the driver installation";
            }
        }
        rep_.checks.push_back(d);

        Check c = make("cuda", "CUDA versions");
        std::string src;
        const int lib_major = library_cuda_major(&src);
        c.data.emplace_back("library_cuda_major", jint(lib_major));
        c.data.emplace_back("library_cuda_source", jstr(src));
        const long long dv = p.num("driver_version", 0);
        c.data.emplace_back("driver_cuda", jstr(dv > 0 ? cuda_version_text(dv) : ""));
        // The CUDA runtime a program of this CUDA major would load.
        std::string rt_path;
        if (lib_major > 0) {
            LoaderModel m(env_);
            const int r = m.request("libcudart.so." + std::to_string(lib_major), -1);
            if (m.objects()[r].error.empty()) rt_path = m.objects()[r].path;
        }
        c.data.emplace_back("runtime_path", jstr(rt_path));
        if (lib_major == 0 || odnn_cpu_only()) {
            c.summary = "odnn built without CUDA: CPU backend only, no CUDA version to match";
        } else if (lib_major < 0) {
            c.worst(Verdict::Warn);
            c.summary = "the CUDA version the library was built for is unknown";
        } else {
            c.summary = "library built for CUDA " + std::to_string(lib_major) + " (" + src + ")";
            if (!rt_path.empty()) c.details.push_back("CUDA runtime for programs: " + rt_path);
            else c.details.push_back("no libcudart.so." + std::to_string(lib_major) + " on the search path (cuDNN links "
                                     "the runtime statically; programs that use the CUDA runtime need their own)");
            if (dv > 0) {
                const int drv_major = static_cast<int>(dv / 1000);
                if (drv_major < lib_major) {
                    c.worst(Verdict::Fail);
                    c.summary += "; the driver supports only CUDA " + cuda_version_text(dv);
                    c.fix = "update the NVIDIA driver to one for CUDA " + std::to_string(lib_major) +
                            ", or use the cuDNN build for CUDA " + std::to_string(drv_major) +
                            " (e.g. pip install nvidia-cudnn-cu" + std::to_string(drv_major) + ")";
                } else {
                    c.summary += "; the driver supports CUDA " + cuda_version_text(dv) + ": compatible";
                }
            } else {
                c.worst(subject_.is_odnn ? Verdict::Ok : Verdict::Warn);
                c.summary += "; no driver to run it with";
                c.fix = "install an NVIDIA driver for CUDA " + std::to_string(lib_major) + " or newer";
            }
        }
        rep_.checks.push_back(c);
    }

    // ---- GPU
    void check_gpu() {
        Check c = make("gpu", "GPU and compute capability");
        const Probe& p = driver_probe_;
        const long long n = p.num("devices", 0);
        std::string src;
        const int lib_major = library_cuda_major(&src);
        // What the library serves: NVIDIA's cuDNN 9 for CUDA 13 starts at SM 7.5, for CUDA 12 at SM 5.0.
        int min_cc = -1, max_cc = -1;
        std::string archs;
        if (!subject_.is_odnn) {
            min_cc = lib_major >= 13 ? 75 : lib_major > 0 ? 50 : -1;
            max_cc = static_cast<int>(subject_probe_.num("max_device", -1));
            max_cc = max_cc > 0 ? max_cc / 10 : -1;
        } else {
            const std::string b = subject_probe_.get("odnn_build");
            const size_t a = b.find("cuda_archs=");
            if (a != std::string::npos) archs = split(b.substr(a + 11), "\n", false).empty() ? "" : split(b.substr(a + 11), "\n", false)[0];
        }
        c.data.emplace_back("devices", jint(n));
        c.data.emplace_back("min_cc", jint(min_cc));
        c.data.emplace_back("max_cc", jint(max_cc));
        c.data.emplace_back("odnn_cuda_archs", jstr(archs));
        std::vector<std::string> js;
        if (n <= 0) {
            c.worst(odnn_cpu_only() ? Verdict::Ok : subject_.vendor == "nvidia" ? Verdict::Fail : Verdict::Warn);
            c.summary = p.get("libcuda") == "ok" ? "the driver sees no GPU" : "no GPU visible (no NVIDIA driver)";
            if (subject_.is_odnn) c.summary += ": odnn runs on its CPU backend";
            else c.fix = "run on a machine (or container) with an NVIDIA GPU and its driver";
            if (min_cc > 0)
                c.details.push_back("this library serves compute capability " + std::to_string(min_cc / 10) + "." +
                                    std::to_string(min_cc % 10) +
                                    (max_cc > 0 ? " to " + std::to_string(max_cc / 10) + "." + std::to_string(max_cc % 10) : " and up"));
        } else {
            int unsupported = 0;
            for (long long i = 0; i < n && i < 64; ++i) {
                const std::string k = "device." + std::to_string(i);
                const std::string cc = p.get(k + ".cc");
                const auto parts = split(cc, ".", false);
                const int v = parts.size() == 2 ? std::atoi(parts[0].c_str()) * 10 + std::atoi(parts[1].c_str()) : -1;
                std::string note;
                if (min_cc > 0 && v >= 0 && v < min_cc) {
                    note = " (TOO OLD for this cuDNN)";
                    ++unsupported;
                } else if (max_cc > 0 && v > max_cc) {
                    note = " (newer than this cuDNN knows: may fail with CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH)";
                }
                if (subject_.is_odnn && !archs.empty()) {
                    bool ok = false;
                    for (const std::string& a : split(archs, ";, ", false)) {
                        const int av = std::atoi(a.c_str());
                        if (av / 10 == v / 10 && av <= v) ok = true;
                    }
                    if (!ok) note = " (odnn has no kernels compiled for it)";
                }
                c.details.push_back("GPU " + std::to_string(i) + ": " + p.get(k + ".name") + ", compute capability " + cc + note);
                js.push_back(jobj({{"name", jstr(p.get(k + ".name"))}, {"cc", jstr(cc)}}));
            }
            c.summary = std::to_string(n) + " GPU" + (n == 1 ? "" : "s") + " visible";
            if (odnn_cpu_only()) {
                c.worst(Verdict::Warn);
                c.summary += ", but this odnn was built without CUDA: the GPU stays unused";
                c.fix = "build odnn with CUDA (cmake -DODNN_WITH_CUDA=ON) to use the GPU";
            }
            if (unsupported) {
                c.worst(Verdict::Fail);
                c.summary += "; " + std::to_string(unsupported) + " too old for this cuDNN";
                c.fix = "use a cuDNN build for an older CUDA (CUDA 12 builds serve SM 5.0 and up) or a newer GPU";
            }
        }
        c.data.emplace_back("gpus", jarr(js));
        rep_.checks.push_back(c);
    }

    // ---- load
    void check_load() {
        Check c = make("load", "loading the library");
        const Probe& p = subject_probe_;
        c.data.emplace_back("dlopen", jstr(p.get("dlopen")));
        c.data.emplace_back("dlerror", jstr(p.get("dlerror")));
        c.data.emplace_back("mapped", jstrs(p.mapped));
        c.data.emplace_back("stage", jstr(p.stage));
        c.data.emplace_back("signal", jint(p.signal));
        c.data.emplace_back("messages", jstrs(p.messages));
        if (!p.ran) {
            c.worst(Verdict::Warn);
            c.summary = "not checked: " + p.why_not;
            rep_.checks.push_back(c);
            return;
        }
        if (p.get("dlopen") != "ok") {
            c.worst(Verdict::Fail);
            for (const std::string& m : p.messages) c.details.push_back("the library printed: " + m);
            if (p.crashed()) {
                c.summary = "loading it " + p.crash_text();
                if (p.stage == "dlopen")
                    c.details.push_back("the dynamic loader itself crashed on this file: it is damaged (a truncated "
                                        "file mapped past its end gives SIGBUS)");
            }
            else {
                c.summary = "dlopen failed: " + p.get("dlerror");
                const std::string why = explain_dlerror(p.get("dlerror"));
                if (!why.empty()) c.details.push_back("meaning: " + why);
            }
            c.fix = p.crashed() ? "reinstall the library: the file is damaged"
                                : "see the file and dependencies checks above";
            rep_.checks.push_back(c);
            return;
        }
        c.summary = "dlopen(RTLD_NOW|RTLD_LOCAL) in a child process: ok";
        for (const std::string& m : p.messages) c.details.push_back("the library printed: " + m);
        if (p.crashed()) {
            c.worst(Verdict::Fail);
            c.summary = "loaded, then " + p.crash_text();
            c.fix = "the library crashes on a plain call (" + p.stage +
                    "): typically a sub-library or dependency of another version was picked up (see the "
                    "sub-libraries check, and LD_LIBRARY_PATH); otherwise reinstall it";
        }
        std::vector<std::string> checks;
        for (const char* k : {"check.graph", "check.ops", "check.cnn", "check.adv"}) {
            if (!p.has(k)) continue;
            const std::string v = p.get(k);
            c.details.push_back(std::string(k + 6) + " version check: " + v);
            if (!starts_with(v, "0 ")) {
                c.worst(Verdict::Fail);
                c.fix = "a sub-library is missing or of another version: reinstall cuDNN from one release";
            }
        }
        const std::string mine = real_path(dir_name(subject_.path));
        int foreign = 0;
        for (const std::string& m : p.mapped) {
            const bool cudnn = base_name(m).find("cudnn") != std::string::npos;
            c.details.push_back("mapped: " + m);
            if (cudnn && real_path(dir_name(m)) != mine) ++foreign;
        }
        if (foreign) {
            c.worst(Verdict::Warn);
            c.details.push_back(std::to_string(foreign) + " cuDNN files were mapped from another folder than the library's");
        }
        rep_.checks.push_back(c);
    }

    // ---- smoke
    void check_smoke() {
        Check c = make("smoke", "tiny cuDNN call sequence");
        if (subject_probe_.get("dlopen") != "ok") {
            c.worst(Verdict::Fail);
            c.summary = "not run: the library does not load";
            c.fix = "see the load check: the library must load before it can be used";
            rep_.checks.push_back(c);
            return;
        }
        if (subject_.role != "cudnn" && !subject_.is_odnn) return;
        const Probe p = run_probe(probe_exe_, {"smoke", absolute(subject_.path)});
        for (const char* k : {"create", "create_name", "create_error", "backend", "memory", "descriptor", "settensor",
                              "scale", "check", "check_detail", "op_error"})
            c.data.emplace_back(k, jstr(p.get(k)));
        if (!p.ran) {
            c.worst(Verdict::Warn);
            c.summary = "not run: " + p.why_not;
            rep_.checks.push_back(c);
            return;
        }
        for (const std::string& m : p.messages) c.details.push_back("the library printed: " + m);
        if (p.crashed()) {
            c.worst(Verdict::Fail);
            c.summary = "the call sequence " + p.crash_text();
            c.fix = "the library crashes on cudnnCreate / cudnnSetTensor: if the sub-libraries check shows another "
                    "version, fix that first; otherwise reinstall it, and report it if it persists";
            rep_.checks.push_back(c);
            return;
        }
        const long long s = p.num("create", -1);
        if (s != 0) {
            c.worst(Verdict::Fail);
            c.summary = "cudnnCreate returned " + (p.has("create_name") ? p.get("create_name") : status_word(s));
            if (!p.get("create_error").empty()) c.details.push_back("cuDNN says: " + p.get("create_error"));
            if (s == 1001) {
                c.details.push_back("NOT_INITIALIZED means cuDNN could not set up CUDA for the handle");
                if (driver_probe_.get("libcuda") != "ok")
                    c.details.push_back("here: there is no NVIDIA driver (libcuda.so.1 not found), so no GPU can be used");
                else if (driver_probe_.num("cuInit", 0) != 0)
                    c.details.push_back("here: the driver's cuInit fails (" + cuda_error_text(driver_probe_.num("cuInit")) + ")");
                else if (driver_probe_.num("devices", 0) == 0)
                    c.details.push_back("here: the driver sees no GPU");
                else
                    c.details.push_back("the driver and a GPU are there: the driver may be too old for this cuDNN's CUDA, "
                                        "or the GPU is busy / in exclusive mode");
                c.fix = "make a GPU and its driver visible (see the driver and gpu checks), or use odnn, whose CPU "
                        "backend needs neither: LD_PRELOAD=<odnn>/lib/libcudnn.so.9";
            } else if (s == 3007) {
                c.fix = "this cuDNN has no kernels for the GPU's compute capability: use a build that supports it";
            } else if (s == 1002 || s == 1008 || s == 3009) {
                c.fix = "reinstall cuDNN completely from one release (see the sub-libraries check)";
            } else {
                c.fix = "see cuDNN's message above; CUDNN_LOGLEVEL_DBG=3 CUDNN_LOGDEST_DBG=stderr shows more";
            }
            rep_.checks.push_back(c);
            return;
        }
        const std::string where = p.get("memory");
        const std::string backend = p.get("backend");
        std::string head = "cudnnCreate ok" + (backend.empty() ? std::string() : " (backend " + backend + ")");
        if (where == "none") {
            c.worst(Verdict::Warn);
            c.summary = head + "; no operation run: " + p.get("op_error");
            c.fix = "install the CUDA runtime (libcudart) of the library's CUDA major to let doctor run an operation";
        } else if (p.get("check") == "ok") {
            c.summary = head + "; cudnnSetTensor + cudnnScaleTensor on a 1x2x3x4 float tensor in " + where +
                        " memory gave the expected 3.0 everywhere";
            // A GPU that is there but not used: the silent case.
            if (backend == "cpu" && !odnn_cpu_only() && driver_probe_.num("devices", 0) > 0) {
                c.worst(Verdict::Warn);
                const std::string forced = getenv_str("ODNN_BACKEND");
                c.details.push_back("a GPU is visible, yet the handle runs on the CPU backend" +
                                    (forced.empty() ? std::string() : " because ODNN_BACKEND=" + forced + " is set"));
                c.fix = forced.empty() ? "see `odnn info` for why the CUDA backend was not chosen"
                                       : "unset ODNN_BACKEND to let odnn use the GPU";
            }
        } else if (p.has("check")) {
            c.worst(Verdict::Fail);
            c.summary = head + "; WRONG RESULT from cudnnSetTensor / cudnnScaleTensor: " + p.get("check_detail");
            c.fix = "the library computes wrong values: reinstall it, and report it";
        } else {
            c.worst(Verdict::Fail);
            std::string why = p.get("settensor_error");
            if (why.empty()) why = p.get("scale_error");
            if (why.empty() && p.get("op") == "missing") why = "the library lacks cudnnSetTensor / cudnnScaleTensor";
            c.summary = head + "; the operation failed: " + why;
            c.fix = "see cuDNN's message; CUDNN_LOGLEVEL_DBG=3 CUDNN_LOGDEST_DBG=stderr shows more";
        }
        rep_.checks.push_back(c);
    }

    Options opt_;
    LoaderEnv env_;
    Discovery disc_;
    Report rep_;
    std::string probe_exe_;
    std::unique_ptr<LoaderModel> pick_model_;
    int pick_ = -1;
    std::string subject_path_, subject_how_;
    bool have_subject_ = false;
    LibraryInfo subject_;
    Probe subject_probe_, driver_probe_, pick_probe_;
    std::unique_ptr<LoaderModel> dep_model_;
    int dep_root_ = -1;
    std::vector<int> sub_index_;
    std::map<std::string, LibraryInfo> infos_;
};

}  // namespace

const std::vector<std::string>& cudnn_api_names() {
    static const std::vector<std::string> v(std::begin(kApiNameList), std::end(kApiNameList));
    return v;
}

int cmd_doctor(const Args& args) {
    Options o;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        auto value = [&](const char* flag, std::string* out) -> int {
            const std::string f = flag;
            if (a == f) {
                if (i + 1 >= args.size() || args[i + 1].empty()) {
                    std::fprintf(stderr, "odnn doctor: %s needs a value\n", flag);
                    return -1;
                }
                *out = args[++i];
                return 1;
            }
            if (starts_with(a, f + "=")) {
                *out = a.substr(f.size() + 1);
                if (out->empty()) {
                    std::fprintf(stderr, "odnn doctor: %s needs a value\n", flag);
                    return -1;
                }
                return 1;
            }
            return 0;
        };
        int r;
        if ((r = value("--lib", &o.lib)) != 0 || (r = value("--archive", &o.archive)) != 0 ||
            (r = value("--ld-cache", &o.ld_cache)) != 0) {
            if (r < 0) return 2;
            continue;
        }
        if (a == "--json") o.json = true;
        else if (a == "--no-load") o.no_load = true;
        else if (a == "-h" || a == "--help") {
            doctor_usage(stdout);
            return 0;
        } else {
            std::fprintf(stderr, "odnn doctor: unknown option '%s'\n", a.c_str());
            doctor_usage(stderr);
            return 2;
        }
    }
    if (!o.archive.empty() && !is_regular(o.archive)) {
        MappedFile f;
        f.open(o.archive);
        std::fprintf(stderr, "odnn doctor: --archive %s: %s\n", o.archive.c_str(),
                     f.error().empty() ? "not a regular file" : f.error().c_str());
        return 2;
    }
    if (o.ld_cache != "none" && o.ld_cache != "/etc/ld.so.cache" && !is_regular(o.ld_cache)) {
        std::fprintf(stderr, "odnn doctor: --ld-cache %s: no such file\n", o.ld_cache.c_str());
        return 2;
    }
    Doctor d(o);
    std::string err;
    if (!d.set_lib(o.lib, &err)) {
        std::fprintf(stderr, "odnn doctor: --lib %s\n", err.c_str());
        return 2;
    }
    return d.run();
}

}  // namespace odnn_tool
