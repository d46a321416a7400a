#include "doctor_common.hpp"

#include <map>
#include <set>

#include "util.hpp"

namespace odnn_tool {

std::string library_json(const LibraryInfo& L) {
    std::vector<std::string> vs;
    for (const VersionFinding& v : L.versions) vs.push_back(jobj({{"version", jstr(v.text())}, {"source", jstr(v.source)}}));
    const VersionFinding* b = L.best_version();
    return jobj({{"path", jstr(L.path)},
                 {"real_path", jstr(L.real_path)},
                 {"file_name", jstr(L.file_name)},
                 {"size", jint(static_cast<long long>(L.size))},
                 {"format", jstr(L.format)},
                 {"readable", jbool(L.readable)},
                 {"error", jstr(L.error)},
                 {"problems", jstrs(L.problems)},
                 {"role", jstr(L.role)},
                 {"vendor", jstr(L.vendor)},
                 {"is_odnn", jbool(L.is_odnn)},
                 {"name_major", jint(L.name_major)},
                 {"version", jstr(L.version_text())},
                 {"version_source", jstr(b ? b->source : "")},
                 {"versions", jarr(vs)},
                 {"cuda_major", jint(L.cuda_major)},
                 {"cuda_source", jstr(L.cuda_source)},
                 {"machine", jstr(L.machine_name)},
                 {"soname", jstr(L.soname)},
                 {"needed", jstrs(L.needed)},
                 {"rpath", jstr(L.rpath)},
                 {"runpath", jstr(L.runpath)},
                 {"runtime_deps", jstrs(L.runtime_deps)},
                 {"pe_imports", jstrs(L.pe_imports)},
                 {"pe_delay_imports", jstrs(L.pe_delay_imports)},
                 {"export_count", jint(static_cast<long long>(L.export_count))},
                 {"cudnn_exports", jint(static_cast<long long>(L.exports.size()))}});
}

Check audit_symbols(const LibraryInfo& L, const std::string& expected_version) {
    Check c;
    c.id = "symbols";
    c.title = "exported cuDNN API";
    const auto& api = cudnn_api_names();
    std::map<std::string, std::string> exported;
    for (const ExportedSymbol& s : L.exports) exported.emplace(s.name, s.version);
    std::vector<std::string> missing, wrong, extra, ext;
    std::set<std::string> api_set(api.begin(), api.end());
    for (const std::string& n : api) {
        auto it = exported.find(n);
        if (it == exported.end()) missing.push_back(n);
        else if (L.format == "elf" && it->second != expected_version)
            wrong.push_back(n + (it->second.empty() ? " (unversioned)" : "@" + it->second));
    }
    for (const auto& [n, v] : exported) {
        if (api_set.count(n)) continue;
        if (starts_with(n, "odnn")) ext.push_back(n);
        else extra.push_back(n);
    }
    const size_t present = api.size() - missing.size();
    c.data.emplace_back("api_count", jint(static_cast<long long>(api.size())));
    c.data.emplace_back("exported", jint(static_cast<long long>(present)));
    c.data.emplace_back("missing", jstrs(missing));
    c.data.emplace_back("wrong_version", jstrs(wrong));
    c.data.emplace_back("extra", jstrs(extra));
    c.data.emplace_back("odnn_extensions", jstrs(ext));
    c.data.emplace_back("expected_version", jstr(L.format == "elf" ? expected_version : ""));
    auto firsts = [](const std::vector<std::string>& v) {
        std::string s;
        for (size_t i = 0; i < v.size() && i < 8; ++i) s += (i ? ", " : "") + v[i];
        if (v.size() > 8) s += ", ... (" + std::to_string(v.size() - 8) + " more)";
        return s;
    };
    if (!missing.empty()) {
        c.worst(Verdict::Fail);
        c.summary = std::to_string(missing.size()) + " of " + std::to_string(api.size()) + " cuDNN 9 API functions missing";
        c.details.push_back("missing: " + firsts(missing));
        c.details.push_back("a program that takes such a function's address (PyTorch does) fails to start with \"undefined "
                            "symbol\"; one that calls it fails at that call");
        c.fix = "use a complete cuDNN 9 library (every declared function must be exported, as a stub if need be)";
    } else {
        c.summary = "all " + std::to_string(api.size()) + " cuDNN 9 API functions exported";
    }
    if (L.format == "elf") {
        if (!wrong.empty()) {
            c.worst(Verdict::Fail);
            c.details.push_back(std::to_string(wrong.size()) + " exports lack the symbol version " + expected_version + ": " +
                                firsts(wrong));
            c.details.push_back("programs linked against NVIDIA's cuDNN ask for name@" + expected_version +
                                ": without that version node ld.so fails (\"undefined symbol: X, version " +
                                expected_version + "\") or asserts");
            if (c.fix.empty()) c.fix = "link the library with a version script: " + expected_version + " { global: cudnn*; local: *; };";
            c.summary += "; " + std::to_string(wrong.size()) + " without version " + expected_version;
        } else if (present > 0) {
            c.summary += ", each versioned " + expected_version;
        }
    } else if (L.format == "pe") {
        c.details.push_back("PE exports carry no symbol versions");
    }
    if (!extra.empty()) c.details.push_back(std::to_string(extra.size()) + " further cudnn* exports beyond the API: " + firsts(extra));
    if (!ext.empty()) c.details.push_back(std::to_string(ext.size()) + " odnn extensions: " + firsts(ext));
    return c;
}

std::string header_version(const std::string& text, bool* is_odnn) {
    auto macro = [&](const std::string& name) -> int {
        size_t p = 0;
        while ((p = text.find(name, p)) != std::string::npos) {
            const size_t line = text.rfind('\n', p);
            const std::string head = trim(text.substr(line == std::string::npos ? 0 : line + 1,
                                                      p - (line == std::string::npos ? 0 : line + 1)));
            const size_t end = p + name.size();
            p = end;
            if (head != "#define" && head != "# define") continue;
            if (end < text.size() && text[end] != ' ' && text[end] != '\t') continue;
            size_t q = end;
            while (q < text.size() && (text[q] == ' ' || text[q] == '\t' || text[q] == '(')) ++q;
            std::string digits;
            while (q < text.size() && text[q] >= '0' && text[q] <= '9' && digits.size() < 6) digits += text[q++];
            if (!digits.empty()) return std::stoi(digits);
        }
        return -1;
    };
    *is_odnn = text.find("ODNN_VERSION_MAJOR") != std::string::npos;
    const int a = macro("CUDNN_MAJOR"), b = macro("CUDNN_MINOR"), c = macro("CUDNN_PATCHLEVEL");
    if (a < 0 || b < 0 || c < 0) return "";
    return std::to_string(a) + "." + std::to_string(b) + "." + std::to_string(c);
}

}  // namespace odnn_tool
