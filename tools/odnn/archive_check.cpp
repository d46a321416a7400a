// odnn doctor --archive: inspects a downloaded cuDNN archive (.tar.xz for Linux,
// .zip for Windows, or odnn's own packaged tree) without installing it. libarchive
// does the decompression; the libraries are read from memory by the same ELF/PE
// readers as installed ones.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include "doctor_common.hpp"
#include "util.hpp"

#ifdef ODNN_HAVE_LIBARCHIVE
#include <archive.h>
#include <archive_entry.h>
#endif

namespace odnn_tool {

#ifndef ODNN_HAVE_LIBARCHIVE

void archive_checks(const std::string& file, std::vector<Check>* checks, std::string* json) {
    Check c;
    c.id = "archive_read";
    c.title = "archive";
    c.verdict = Verdict::Fail;
    c.summary = "this odnn was built without libarchive: --archive is not available";
    c.fix = "install libarchive-dev (scripts/deps.sh) and rebuild odnn";
    checks->push_back(c);
    *json = jobj({{"file", jstr(file)}, {"readable", jbool(false)}, {"error", jstr(c.summary)}});
}

#else

namespace {

struct Entry {
    std::string path;  // without the top-level folder
    bool is_link = false;
    std::string link_target;
    uint64_t size = 0;
};

std::string strip_top(const std::string& p, const std::string& top) {
    if (!top.empty() && starts_with(p, top + "/")) return p.substr(top.size() + 1);
    return p;
}

// "cudnn-linux-x86_64-9.19.0.56_cuda13-archive" -> version 9.19.0(.56), CUDA 13.
bool version_from_archive_name(const std::string& name, std::string* version, int* cuda) {
    const std::string n = base_name(name);
    const size_t cu = n.find("_cuda");
    if (cu == std::string::npos) return false;
    const size_t dash = n.rfind('-', cu);
    if (dash == std::string::npos) return false;
    const auto parts = split(n.substr(dash + 1, cu - dash - 1), ".", false);
    if (parts.size() < 3) return false;
    *version = parts[0] + "." + parts[1] + "." + parts[2];
    *cuda = std::atoi(n.c_str() + cu + 5);
    return true;
}

}  // namespace

void archive_checks(const std::string& file, std::vector<Check>* checks, std::string* json) {
    Check rd;
    rd.id = "archive_read";
    rd.title = "archive";
    struct archive* a = archive_read_new();
    archive_read_support_filter_all(a);
    archive_read_support_format_all(a);
    std::vector<Entry> entries;
    std::vector<LibraryInfo> libs;
    std::map<std::string, std::string> headers;  // path -> text
    std::string format_name, error;
    bool readable = true;
    if (archive_read_open_filename(a, file.c_str(), 1 << 16) != ARCHIVE_OK) {
        readable = false;
        error = archive_error_string(a) ? archive_error_string(a) : "unreadable";
    } else {
        struct archive_entry* e;
        int r;
        while (entries.size() < 200000 && (r = archive_read_next_header(a, &e)) != ARCHIVE_EOF) {
            if (r == ARCHIVE_FATAL) {
                readable = false;
                error = archive_error_string(a) ? archive_error_string(a) : "damaged archive";
                break;
            }
            if (format_name.empty() && archive_format_name(a)) format_name = archive_format_name(a);
            Entry en;
            const char* p = archive_entry_pathname_utf8(e);
            if (!p) p = archive_entry_pathname(e);
            en.path = p ? p : "";
            while (starts_with(en.path, "./")) en.path = en.path.substr(2);
            for (char& ch : en.path)
                if (ch == '\\') ch = '/';
            const mode_t type = archive_entry_filetype(e);
            if (type == AE_IFLNK) {
                en.is_link = true;
                const char* t = archive_entry_symlink(e);
                en.link_target = t ? t : "";
            } else if (type == AE_IFDIR) {
                continue;
            } else if (archive_entry_hardlink(e)) {
                en.is_link = true;
                en.link_target = base_name(archive_entry_hardlink(e));
            }
            en.size = archive_entry_size_is_set(e) ? static_cast<uint64_t>(archive_entry_size(e)) : 0;
            const std::string base = base_name(en.path);
            const bool want_lib = !en.is_link && (base.find("cudnn") != std::string::npos) &&
                                  (base.find(".so") != std::string::npos || ends_with(to_lower(base), ".dll"));
            const bool want_header = !en.is_link && base == "cudnn_version.h";
            if (want_lib || want_header) {
                std::vector<uint8_t> buf;
                if (en.size) buf.reserve(static_cast<size_t>(std::min<uint64_t>(en.size, 4ull << 30)));
                char chunk[1 << 16];
                la_ssize_t n;
                while ((n = archive_read_data(a, chunk, sizeof chunk)) > 0) {
                    buf.insert(buf.end(), chunk, chunk + n);
                    if (buf.size() > (4ull << 30)) break;
                }
                if (n < 0) {
                    readable = false;
                    error = std::string("damaged while reading ") + en.path + ": " +
                            (archive_error_string(a) ? archive_error_string(a) : "read error");
                    entries.push_back(en);
                    break;
                }
                if (want_header) headers[en.path] = std::string(buf.begin(), buf.end());
                else {
                    LibraryInfo L = inspect_library_bytes(ByteView(buf.data(), buf.size()), base);
                    L.path = en.path;
                    L.real_path = en.path;
                    libs.push_back(std::move(L));
                }
            } else {
                archive_read_data_skip(a);
            }
            entries.push_back(en);
        }
    }
    archive_read_free(a);

    // The common top-level folder.
    std::string top;
    if (!entries.empty()) {
        const std::string first = entries.front().path;
        const size_t slash = first.find('/');
        if (slash != std::string::npos) {
            top = first.substr(0, slash);
            for (const Entry& en : entries)
                if (!starts_with(en.path, top + "/")) top.clear();
        }
    }
    std::set<std::string> files;  // relative paths, links included
    std::map<std::string, std::string> links;
    for (const Entry& en : entries) {
        files.insert(strip_top(en.path, top));
        if (en.is_link) links[strip_top(en.path, top)] = en.link_target;
    }

    rd.data.emplace_back("file", jstr(file));
    rd.data.emplace_back("format", jstr(format_name));
    rd.data.emplace_back("entries", jint(static_cast<long long>(entries.size())));
    rd.data.emplace_back("top_dir", jstr(top));
    if (!readable) {
        rd.verdict = Verdict::Fail;
        rd.summary = (entries.empty() ? "not a readable archive: " : "archive damaged after " + std::to_string(entries.size()) +
                                                                         " entries: ") + error;
        rd.fix = "download the archive again (compare its SHA-256 with NVIDIA's published checksum)";
    } else {
        rd.summary = format_name + ", " + std::to_string(entries.size()) + " entries" +
                     (top.empty() ? "" : ", top folder " + top);
    }
    checks->push_back(rd);

    std::vector<std::string> ljs;
    for (const LibraryInfo& L : libs) ljs.push_back(library_json(L));
    std::vector<std::pair<std::string, std::string>> j = {{"file", jstr(file)},         {"readable", jbool(readable)},
                                                           {"error", jstr(error)},       {"format", jstr(format_name)},
                                                           {"top_dir", jstr(top)},       {"libraries", jarr(ljs)}};
    if (entries.empty()) {
        *json = jobj(j);
        return;
    }

    // ---- layout
    Check lay;
    lay.id = "archive_layout";
    lay.title = "archive layout";
    bool linux_libs = false, win_dlls = false, odnn = false;
    for (const LibraryInfo& L : libs) {
        linux_libs = linux_libs || L.format == "elf";
        win_dlls = win_dlls || L.format == "pe";
        odnn = odnn || L.is_odnn;
    }
    for (const std::string& f : files) {
        const std::string b = base_name(f);
        if (starts_with(b, "libcudnn") && b.find(".so") != std::string::npos) linux_libs = true;
    }
    const std::string platform = linux_libs && !win_dlls ? "linux" : win_dlls && !linux_libs ? "windows" : linux_libs ? "mixed" : "unknown";
    j.emplace_back("platform", jstr(platform));
    lay.data.emplace_back("platform", jstr(platform));
    std::vector<std::string> missing;
    auto present = [&](const std::string& rel) { return files.count(rel) != 0; };
    if (!present("include/cudnn.h")) missing.push_back("include/cudnn.h");
    if (!present("include/cudnn_version.h")) missing.push_back("include/cudnn_version.h");
    // Where the libraries are, relative to the top folder.
    std::set<std::string> lib_dirs;
    for (const LibraryInfo& L : libs) lib_dirs.insert(dir_name(strip_top(L.path, top)));
    for (const auto& [l, t] : links) {
        const std::string b = base_name(l);
        if (starts_with(b, "libcudnn")) lib_dirs.insert(dir_name(l));
    }
    std::string lib_dir = lib_dirs.empty() ? "" : *lib_dirs.begin();
    for (const std::string& d : lib_dirs)
        if (d == "lib" || d == "lib64" || d == "bin") lib_dir = d;
    lay.data.emplace_back("library_dir", jstr(lib_dir));
    std::vector<std::string> expected;
    if (odnn) {
        expected.push_back(lib_dir + "/libcudnn.so.9");
    } else if (platform == "windows") {
        expected.push_back(lib_dir + "/cudnn64_9.dll");
        for (const std::string& r : nvidia_sublibraries()) expected.push_back(lib_dir + "/" + r + "64_9.dll");
    } else {
        expected.push_back(lib_dir + "/libcudnn.so.9");
        for (const std::string& r : nvidia_sublibraries()) expected.push_back(lib_dir + "/lib" + r + ".so.9");
    }
    std::map<std::string, std::string> lower;
    for (const std::string& f : files) lower[to_lower(f)] = f;
    for (const std::string& e : expected) {
        auto it = lower.find(to_lower(e));
        if (it == lower.end()) {
            missing.push_back(e);
            continue;
        }
        // A link must lead to a file that is in the archive.
        std::string cur = it->second;
        for (int hops = 0; hops < 8 && links.count(cur); ++hops) {
            const std::string t = links[cur];
            cur = t.find('/') == std::string::npos ? join_path(dir_name(cur), t) : t;
        }
        if (!present(cur) || links.count(cur)) missing.push_back(e + " (link to " + cur + ", not in the archive)");
    }
    if (platform == "windows" && !present("lib/x64/cudnn.lib") && !present("lib/cudnn.lib"))
        lay.details.push_back("no import library lib/x64/cudnn.lib (needed to link programs with MSVC)");
    lay.data.emplace_back("missing", jstrs(missing));
    if (!missing.empty()) {
        lay.verdict = Verdict::Fail;
        lay.summary = std::to_string(missing.size()) + " expected files missing: " + [&] {
            std::string s;
            for (size_t i = 0; i < missing.size(); ++i) s += (i ? ", " : "") + missing[i];
            return s;
        }();
        lay.fix = "the archive is incomplete: download the full cuDNN archive for your platform again";
    } else {
        lay.summary = (odnn ? std::string("odnn tree: ") : platform == "windows" ? "Windows layout: " : "Linux layout: ") +
                      "include/ and " + lib_dir + "/ with every runtime library";
    }
    if (!lay.details.empty() && lay.verdict == Verdict::Ok) lay.verdict = Verdict::Warn;
    for (const LibraryInfo& L : libs) {
        std::string line = strip_top(L.path, top) + ": " + (L.readable ? L.version_text() : "UNREADABLE (" + L.error + ")");
        if (!L.problems.empty()) line += " DAMAGED: " + L.problems.front();
        lay.details.push_back(line);
        if (!L.readable || !L.problems.empty()) {
            lay.verdict = Verdict::Fail;
            if (lay.fix.empty()) lay.fix = "a library in the archive is damaged: download the archive again";
        }
    }
    checks->push_back(lay);

    // ---- versions: header, libraries, archive name
    Check ver;
    ver.id = "archive_versions";
    ver.title = "archive versions";
    std::string hv;
    bool hodnn = false;
    for (const auto& [p, t] : headers) {
        const std::string v = header_version(t, &hodnn);
        if (!v.empty()) {
            hv = v;
            ver.details.push_back(strip_top(p, top) + ": " + v);
        }
    }
    j.emplace_back("header_version", jstr(hv));
    ver.data.emplace_back("header_version", jstr(hv));
    std::string graph_v;
    for (const LibraryInfo& L : libs)
        if (L.role == "cudnn_graph" && L.best_version()) graph_v = L.version_text();
    std::set<std::string> lib_versions;
    int unknown = 0;
    std::vector<std::string> ljv;
    for (const LibraryInfo& L : libs) {
        std::string v = L.version_text();
        std::string src = L.best_version() ? L.best_version()->source : "";
        if (v == "unknown" && L.vendor == "nvidia" && !graph_v.empty() && L.role == "cudnn") {
            v = graph_v;
            src = "from the graph library in the archive";
        }
        if (v == "unknown") ++unknown;
        else lib_versions.insert(v);
        ver.details.push_back(base_name(L.path) + ": " + v + (src.empty() ? "" : " (" + src + ")"));
        ljv.push_back(jobj({{"file", jstr(base_name(L.path))}, {"version", jstr(v)}, {"source", jstr(src)}}));
    }
    ver.data.emplace_back("libraries", jarr(ljv));
    std::string nv;
    int ncuda = -1;
    if (version_from_archive_name(top.empty() ? file : top, &nv, &ncuda)) {
        ver.details.push_back("archive name: cuDNN " + nv + " for CUDA " + std::to_string(ncuda));
        ver.data.emplace_back("name_version", jstr(nv));
        ver.data.emplace_back("name_cuda", jint(ncuda));
    }
    std::set<std::string> all = lib_versions;
    if (!hv.empty()) all.insert(hv);
    if (hv.empty() && !present("include/cudnn_version.h")) {
        ver.verdict = Verdict::Warn;
    }
    if (all.size() > 1) {
        ver.verdict = Verdict::Fail;
        std::string s;
        for (const std::string& v : all) s += (s.empty() ? "" : ", ") + v;
        ver.summary = "mixed versions in one archive: " + s;
        ver.fix = "headers and every library must come from one cuDNN release: download the archive again";
    } else if (all.empty()) {
        ver.verdict = Verdict::Warn;
        ver.summary = "no version could be read from the headers or libraries";
    } else {
        ver.summary = "headers and libraries agree: " + *all.begin();
        if (unknown) ver.summary += " (" + std::to_string(unknown) + " libraries record no version)";
        if (!nv.empty() && nv != *all.begin()) {
            ver.verdict = Verdict::Warn;
            ver.summary += "; but the archive's name says " + nv;
            ver.fix = "the archive was renamed or repacked: check where it came from";
        }
    }
    checks->push_back(ver);

    // ---- the API of the main library
    for (const LibraryInfo& L : libs) {
        std::string role, full;
        int major;
        if (!cudnn_name_parts(base_name(L.path), &role, &major, &full) || role != "cudnn" || !L.readable) continue;
        Check s = audit_symbols(L, "libcudnn.so." + std::to_string(major > 0 ? major : 9));
        s.id = "archive_symbols";
        s.title = "exported cuDNN API (archive)";
        s.summary = base_name(L.path) + ": " + s.summary;
        checks->push_back(s);
        break;
    }
    *json = jobj(j);
}

#endif

}  // namespace odnn_tool
