// Reads the facts of one cuDNN library file: see lib_inspect.hpp.
#include "lib_inspect.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <set>

#include "elf_reader.hpp"
#include "pe_reader.hpp"
#include "util.hpp"

namespace odnn_tool {

namespace {

bool all_digits(const std::string& s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

int to_int(const std::string& s, int fallback = -1) {
    if (!all_digits(s) || s.size() > 9) return fallback;
    return std::stoi(s);
}

bool name_char(uint8_t c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
           c == '+' || c == '.';
}

// Every "lib<name>.so[.N...]" spelled out in the bytes (as strings passed to dlopen are).
void find_so_names(ByteView b, std::set<std::string>* out) {
    const uint8_t* d = b.data();
    const size_t n = b.size();
    if (n < 4) return;
    const uint8_t* p = d;
    while (out->size() < 512) {
        const void* hit = memmem(p, static_cast<size_t>(d + n - p), ".so", 3);
        if (!hit) break;
        const uint8_t* h = static_cast<const uint8_t*>(hit);
        p = h + 3;
        // Walk back to the start of the name.
        const uint8_t* s = h;
        while (s > d && name_char(s[-1]) && h - s < 200) --s;
        // Forward over ".N" parts.
        const uint8_t* e = h + 3;
        while (e + 1 < d + n && e[0] == '.' && e[1] >= '0' && e[1] <= '9') {
            ++e;
            while (e < d + n && *e >= '0' && *e <= '9') ++e;
        }
        if (e < d + n && name_char(*e)) continue;  // e.g. ".so_foo", ".sonar"
        std::string name(reinterpret_cast<const char*>(s), static_cast<size_t>(e - s));
        const size_t lib = name.find("lib");
        if (lib == std::string::npos) continue;
        name = name.substr(lib);
        if (name.size() < 7 || name.size() > 120) continue;
        out->insert(name);
    }
}

// cuDNN's version string in the graph library: "cudnn_version_9_19_0_56_".
bool find_version_string(ByteView b, VersionFinding* v) {
    static const char kTag[] = "cudnn_version_";
    const uint8_t* d = b.data();
    const size_t n = b.size();
    const uint8_t* p = d;
    while (p < d + n) {
        const void* hit = memmem(p, static_cast<size_t>(d + n - p), kTag, sizeof kTag - 1);
        if (!hit) return false;
        const uint8_t* h = static_cast<const uint8_t*>(hit) + sizeof kTag - 1;
        p = h;
        std::string s;
        while (h < d + n && s.size() < 40 && ((*h >= '0' && *h <= '9') || *h == '_')) s += static_cast<char>(*h++);
        const auto parts = split(s, "_", false);
        if (parts.size() < 3) continue;
        v->major = to_int(parts[0]);
        v->minor = to_int(parts[1]);
        v->patch = to_int(parts[2]);
        v->build = parts.size() > 3 ? to_int(parts[3]) : -1;
        if (v->major < 0 || v->minor < 0 || v->patch < 0) continue;
        v->source = "version string \"cudnn_version_" + s + "\" in the file's read-only data";
        return true;
    }
    return false;
}

// A CUDA major version from the names of the CUDA libraries a file refers to.
bool cuda_major_from_name(const std::string& raw, int* major) {
    const std::string n = to_lower(raw);
    for (const char* pre : {"libcublaslt.so.", "libcublas.so.", "libnvrtc.so.", "libcudart.so.", "libcufft.so."}) {
        if (starts_with(n, pre)) {
            const int m = to_int(split(n.substr(std::strlen(pre)), ".", false).empty()
                                     ? ""
                                     : split(n.substr(std::strlen(pre)), ".", false)[0]);
            if (m >= 7 && m < 100) {
                *major = m;
                return true;
            }
        }
    }
    for (const char* pre : {"cublaslt64_", "cublas64_", "cudart64_"}) {
        if (starts_with(n, pre) && ends_with(n, ".dll")) {
            const int m = to_int(n.substr(std::strlen(pre), n.size() - std::strlen(pre) - 4));
            if (m >= 7 && m < 100) {
                *major = m;
                return true;
            }
        }
    }
    if (starts_with(n, "nvrtc64_") && ends_with(n, ".dll")) {  // nvrtc64_120_0.dll -> 12
        const auto parts = split(n.substr(8), "_.", false);
        if (!parts.empty() && parts[0].size() >= 3) {
            const int m = to_int(parts[0].substr(0, parts[0].size() - 1));
            if (m >= 7 && m < 100) {
                *major = m;
                return true;
            }
        }
    }
    return false;
}

bool is_runtime_dep_name(const std::string& n) {
    for (const char* pre : {"libcuda.so", "libcublasLt.so.", "libcublas.so.", "libnvrtc.so.", "libnvrtc-builtins.so.",
                            "libcudart.so.", "libz.so."})
        if (starts_with(n, pre)) return true;
    return false;
}

// x86-64 code of a function that just returns a constant: [endbr64] mov eax, imm32 / mov rax, imm32; ret.
bool constant_return_x86_64(ByteView b, uint64_t off, uint64_t* value) {
    uint8_t c[12] = {0};
    size_t n = 0;
    for (; n < sizeof c && b.has(off + n, 1); ++n) b.u8(off + n, &c[n]);
    size_t i = 0;
    if (n >= 4 && c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e && c[3] == 0xfa) i = 4;
    if (i + 6 <= n && c[i] == 0xb8 && c[i + 5] == 0xc3) {
        *value = uint64_t(c[i + 1]) | uint64_t(c[i + 2]) << 8 | uint64_t(c[i + 3]) << 16 | uint64_t(c[i + 4]) << 24;
        return true;
    }
    if (i + 8 <= n && c[i] == 0x48 && c[i + 1] == 0xc7 && c[i + 2] == 0xc0 && c[i + 7] == 0xc3) {
        *value = uint64_t(c[i + 3]) | uint64_t(c[i + 4]) << 8 | uint64_t(c[i + 5]) << 16 | uint64_t(c[i + 6]) << 24;
        return true;
    }
    return false;
}

void inspect_elf(ByteView b, LibraryInfo* L) {
    ElfFile e = parse_elf(b);
    if (!e.ok) {
        L->error = e.error;
        return;
    }
    L->readable = true;
    L->problems = e.problems;
    L->elf_class = e.elf_class;
    L->machine = e.machine;
    L->machine_name = e.machine_name();
    L->soname = e.soname;
    L->rpath = e.rpath;
    L->runpath = e.runpath;
    L->needed = e.needed;
    if (!e.has_dynamic) L->problems.push_back("no dynamic section: not a shared library the loader can use");
    for (const ElfSymbol& s : e.dynsyms) {
        if (!s.defined) continue;
        ++L->export_count;
        if (s.bind == 0) continue;  // STB_LOCAL
        if (starts_with(s.name, "cudnn") || starts_with(s.name, "odnn")) L->exports.push_back({s.name, s.version});
    }
    L->is_odnn = L->has_export("odnnIsOdnn");

    // Version constants NVIDIA's sub-libraries export (4 bytes: major<<16 | minor<<8 | patch).
    for (const ElfSymbol& s : e.dynsyms) {
        if (!s.defined || s.type != kSttObject || s.size != 4) continue;
        if (!(starts_with(s.name, "cudnn_") && ends_with(s.name, "_version"))) continue;
        uint64_t off, v;
        if (!e.vaddr_to_offset(s.value, 4, &off) || !b.uint(off, 4, e.big_endian, &v)) continue;
        VersionFinding f;
        f.major = static_cast<int>((v >> 16) & 0xff);
        f.minor = static_cast<int>((v >> 8) & 0xff);
        f.patch = static_cast<int>(v & 0xff);
        if (f.major < 7 || f.major > 30 || (v >> 24) != 0) continue;
        char hex[16];
        std::snprintf(hex, sizeof hex, "0x%06llx", static_cast<unsigned long long>(v));
        f.source = "exported constant " + s.name + " = " + hex + " (read as major<<16|minor<<8|patch)";
        L->versions.push_back(f);
        break;
    }
    // Read-only data: the version string and the names of libraries loaded at run time.
    std::vector<ByteView> data;
    for (const ElfSection& s : e.sections)
        if ((s.name == ".rodata" || s.name == ".dynstr" || s.name == ".lrodata") && s.type != 8 &&
            b.has(s.offset, s.size))
            data.push_back(b.sub(s.offset, s.size));
    if (data.empty()) data.push_back(b.sub(0, std::min<uint64_t>(b.size(), 256u << 20)));
    VersionFinding vs;
    std::set<std::string> names;
    bool have_vs = false;
    for (const ByteView& d : data) {
        if (!have_vs && find_version_string(d, &vs)) have_vs = true;
        find_so_names(d, &names);
    }
    if (have_vs) L->versions.push_back(vs);
    // cudnnGetVersion compiled to "return constant" (odnn's is).
    if (const ElfSymbol* gv = e.find_dynsym("cudnnGetVersion")) {
        uint64_t off, v;
        if (e.machine == kEmX86_64 && e.vaddr_to_offset(gv->value, 6, &off) && constant_return_x86_64(b, off, &v) &&
            v >= 1000 && v < 1000000) {
            L->versions.push_back(version_from_number(
                v, "constant " + std::to_string(v) + " returned by cudnnGetVersion (read from its x86-64 code)"));
        }
    }
    std::set<std::string> needed(e.needed.begin(), e.needed.end());
    for (const std::string& n : names) {
        if (!is_runtime_dep_name(n) || needed.count(n)) continue;
        if (n.find('.') == std::string::npos) continue;
        L->runtime_deps.push_back(n);
    }
    for (const std::string& n : L->runtime_deps) {
        int m;
        if (L->cuda_major < 0 && n != "libcuda.so.1" && cuda_major_from_name(n, &m)) {
            L->cuda_major = m;
            L->cuda_source = "names " + n;
        }
    }
    for (const std::string& n : e.needed) {
        int m;
        if (L->cuda_major < 0 && cuda_major_from_name(n, &m)) {
            L->cuda_major = m;
            L->cuda_source = "needs " + n;
        }
    }
}

void inspect_pe(ByteView b, LibraryInfo* L) {
    PeFile p = parse_pe(b);
    if (!p.ok) {
        L->error = p.error;
        return;
    }
    L->readable = true;
    L->problems = p.problems;
    L->machine_name = p.machine_name();
    L->pe_dll_name = p.export_dll_name;
    if (!p.is_dll) L->problems.push_back("not marked as a DLL (IMAGE_FILE_DLL clear)");
    for (const PeImport& i : p.imports) (i.delay_load ? L->pe_delay_imports : L->pe_imports).push_back(i.dll);
    L->export_count = p.exports.size();
    for (const std::string& n : p.exports)
        if (starts_with(n, "cudnn") || starts_with(n, "odnn")) L->exports.push_back({n, ""});
    L->is_odnn = L->has_export("odnnIsOdnn");
    if (p.has_file_version && p.file_version[0] >= 7 && p.file_version[0] < 100) {
        VersionFinding f;
        f.major = p.file_version[0];
        f.minor = p.file_version[1];
        f.patch = p.file_version[2];
        f.build = p.file_version[3];
        f.source = "version resource (FileVersion)";
        L->versions.push_back(f);
    }
    std::vector<std::string> dlls = L->pe_imports;
    dlls.insert(dlls.end(), L->pe_delay_imports.begin(), L->pe_delay_imports.end());
    for (const PeSection& s : p.sections) {
        if (s.name != ".rdata" || !b.has(s.raw_offset, s.raw_size)) continue;
        VersionFinding vs;
        if (find_version_string(b.sub(s.raw_offset, s.raw_size), &vs)) L->versions.push_back(vs);
    }
    for (const std::string& d : dlls) {
        int m;
        if (L->cuda_major < 0 && cuda_major_from_name(d, &m)) {
            L->cuda_major = m;
            L->cuda_source = "imports " + d;
        }
    }
}

bool parse_version_text(const std::string& s, VersionFinding* v) {
    const auto parts = split(s, ".", false);
    if (parts.size() < 3) return false;
    v->major = to_int(parts[0]);
    v->minor = to_int(parts[1]);
    v->patch = to_int(parts[2]);
    v->build = parts.size() > 3 ? to_int(parts[3]) : -1;
    return v->major >= 0 && v->minor >= 0 && v->patch >= 0;
}

}  // namespace

std::string VersionFinding::text() const {
    if (major < 0) return "unknown";
    std::string s = std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
    return s;
}

std::string LibraryInfo::version_text() const { return versions.empty() ? "unknown" : versions.front().text(); }

bool LibraryInfo::has_export(const std::string& name) const {
    for (const ExportedSymbol& s : exports)
        if (s.name == name) return true;
    return false;
}

const std::vector<std::string>& nvidia_sublibraries() {
    static const std::vector<std::string> k = {"cudnn_graph",
                                               "cudnn_ops",
                                               "cudnn_cnn",
                                               "cudnn_adv",
                                               "cudnn_engines_precompiled",
                                               "cudnn_engines_runtime_compiled",
                                               "cudnn_heuristic"};
    return k;
}

bool cudnn_name_parts(const std::string& file_name, std::string* role, int* major, std::string* full_version) {
    *major = -1;
    full_version->clear();
    const std::string n = file_name;
    const std::string low = to_lower(n);
    if (starts_with(n, "libcudnn")) {
        const size_t so = n.find(".so");
        if (so == std::string::npos) return false;
        const std::string rest = n.substr(so + 3);
        if (!rest.empty() && rest[0] != '.') return false;
        *role = n.substr(3, so - 3);
        const auto parts = split(rest, ".", false);
        if (!parts.empty()) *major = to_int(parts[0]);
        if (parts.size() >= 3 && all_digits(parts[1]) && all_digits(parts[2]))
            *full_version = parts[0] + "." + parts[1] + "." + parts[2];
        return true;
    }
    if (starts_with(low, "cudnn") && ends_with(low, ".dll")) {
        const std::string stem = low.substr(0, low.size() - 4);
        const size_t p = stem.rfind("64_");
        if (p == std::string::npos) {
            *role = stem;
            return true;
        }
        *role = stem.substr(0, p);
        *major = to_int(stem.substr(p + 3));
        return true;
    }
    return false;
}

VersionFinding version_from_number(uint64_t v, const std::string& source) {
    VersionFinding f;
    if (v >= 90000) {
        f.major = static_cast<int>(v / 10000);
        f.minor = static_cast<int>((v % 10000) / 100);
        f.patch = static_cast<int>(v % 100);
    } else {
        f.major = static_cast<int>(v / 1000);
        f.minor = static_cast<int>((v % 1000) / 100);
        f.patch = static_cast<int>(v % 100);
    }
    f.source = source;
    return f;
}

int compare_versions(const VersionFinding& a, const VersionFinding& b) {
    if (a.major != b.major) return a.major < b.major ? -1 : 1;
    if (a.minor != b.minor) return a.minor < b.minor ? -1 : 1;
    if (a.patch != b.patch) return a.patch < b.patch ? -1 : 1;
    return 0;
}

LibraryInfo inspect_library_bytes(ByteView bytes, const std::string& file_name) {
    LibraryInfo L;
    L.file_name = file_name;
    L.size = bytes.size();
    std::string full;
    if (!cudnn_name_parts(file_name, &L.role, &L.name_major, &full)) L.role.clear();
    if (looks_like_elf(bytes)) {
        L.format = "elf";
        inspect_elf(bytes, &L);
    } else if (looks_like_pe(bytes)) {
        L.format = "pe";
        inspect_pe(bytes, &L);
    } else {
        L.format = "unknown";
        L.error = bytes.size() == 0 ? "empty file" : "neither an ELF shared object nor a PE DLL (unknown header)";
    }
    // A damaged file may be either: only what it exports tells odnn from NVIDIA.
    if (L.is_odnn) L.vendor = "odnn";
    else if (!L.role.empty() && L.readable && L.export_count > 0) L.vendor = "nvidia";
    else L.vendor = "unknown";
    if (!full.empty()) {
        VersionFinding f;
        if (parse_version_text(full, &f)) {
            f.source = "file name " + file_name;
            L.versions.push_back(f);
        }
    }
    return L;
}

LibraryInfo inspect_library_file(const std::string& path) {
    LibraryInfo L;
    MappedFile f;
    if (!f.open(path)) {
        L.path = path;
        L.file_name = base_name(path);
        L.real_path = real_path(path);
        std::string full;
        cudnn_name_parts(L.file_name, &L.role, &L.name_major, &full);
        L.error = "cannot read: " + f.error();
        L.format = "unknown";
        return L;
    }
    L = inspect_library_bytes(f.bytes(), base_name(path));
    L.path = path;
    L.real_path = real_path(path);
    // The real file's name often carries the full version (libcudnn.so.9 -> libcudnn.so.9.19.0).
    if (L.real_path != path) {
        std::string role, full;
        int major;
        if (cudnn_name_parts(base_name(L.real_path), &role, &major, &full) && !full.empty()) {
            VersionFinding v;
            if (parse_version_text(full, &v)) {
                v.source = "file name " + base_name(L.real_path) + " (behind the symlink)";
                L.versions.push_back(v);
            }
        }
    }
    // Python wheels and installs made from them keep nvidia_cudnn_cuNN-<version>.dist-info nearby.
    const std::string dir = dir_name(L.real_path);
    std::vector<std::string> infos = glob_paths(dir + "/../../../nvidia_cudnn_cu*-*.dist-info");
    for (const std::string& g : glob_paths(dir + "/../dist-info/nvidia_cudnn_cu*-*.dist-info")) infos.push_back(g);
    for (const std::string& g : infos) {
        const std::string b = base_name(g);  // nvidia_cudnn_cu13-9.19.0.56.dist-info
        const size_t dash = b.find('-');
        VersionFinding v;
        if (dash == std::string::npos || !parse_version_text(b.substr(dash + 1, b.size() - dash - 1 - 10), &v))
            continue;
        v.source = "Python package metadata " + real_path(g) + " (describes the install, not this file)";
        L.versions.push_back(v);
        const int cu = to_int(b.substr(std::strlen("nvidia_cudnn_cu"), dash - std::strlen("nvidia_cudnn_cu")));
        if (L.cuda_major < 0 && cu > 0) {
            L.cuda_major = cu;
            L.cuda_source = "package name " + b.substr(0, dash);
        }
        break;
    }
    // NVIDIA's shim libcudnn.so.9 (and cnn, engines, heuristic) record no version: the
    // graph sub-library beside them does.
    bool content = false;
    for (const VersionFinding& v : L.versions)
        if (!starts_with(v.source, "file name") && !starts_with(v.source, "Python package")) content = true;
    if (L.vendor == "nvidia" && L.role != "cudnn_graph" && !content && L.format == "elf" && L.name_major > 0) {
        const std::string graph = join_path(dir_name(path), "libcudnn_graph.so." + std::to_string(L.name_major));
        if (is_regular(graph)) {
            LibraryInfo g = inspect_library_file(graph);
            for (const VersionFinding& v : g.versions) {
                if (v.source.find("file name") != std::string::npos || v.source.find("metadata") != std::string::npos)
                    continue;
                VersionFinding c = v;
                c.source = "from " + base_name(graph) + " beside it: " + v.source;
                L.versions.push_back(c);
                break;
            }
            if (L.cuda_major < 0 && g.cuda_major >= 0) {
                L.cuda_major = g.cuda_major;
                L.cuda_source = base_name(graph) + " beside it " + g.cuda_source;
            }
        }
    }
    // Best first: what the file itself records, then a sibling's record, then names and metadata.
    auto rank = [](const VersionFinding& v) {
        if (starts_with(v.source, "from ")) return 1;
        if (starts_with(v.source, "file name")) return 2;
        if (starts_with(v.source, "Python package")) return 3;
        return 0;
    };
    std::stable_sort(L.versions.begin(), L.versions.end(),
                     [&](const VersionFinding& a, const VersionFinding& b) { return rank(a) < rank(b); });
    return L;
}

}  // namespace odnn_tool
