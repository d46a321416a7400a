#include "report.hpp"

#include <unistd.h>

#include <cstdio>

#include "util.hpp"

namespace odnn_tool {

const char* verdict_name(Verdict v) {
    switch (v) {
        case Verdict::Ok: return "ok";
        case Verdict::Warn: return "warn";
        case Verdict::Fail: return "fail";
    }
    return "?";
}

std::string jstr(const std::string& s) { return "\"" + json_escape(s) + "\""; }

std::string jarr(const std::vector<std::string>& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + v[i];
    return s + "]";
}

std::string jstrs(const std::vector<std::string>& v) {
    std::vector<std::string> q;
    q.reserve(v.size());
    for (const std::string& x : v) q.push_back(jstr(x));
    return jarr(q);
}

std::string jobj(const std::vector<std::pair<std::string, std::string>>& m) {
    std::string s = "{";
    for (size_t i = 0; i < m.size(); ++i) s += (i ? "," : "") + jstr(m[i].first) + ":" + m[i].second;
    return s + "}";
}

std::string jint(long long v) { return std::to_string(v); }
std::string jbool(bool b) { return b ? "true" : "false"; }

Verdict Report::overall() const {
    Verdict v = Verdict::Ok;
    for (const Check& c : checks)
        if (static_cast<int>(c.verdict) > static_cast<int>(v)) v = c.verdict;
    return v;
}

void Report::print_text(FILE* out) const {
    const bool color = isatty(fileno(out)) && getenv_str("NO_COLOR").empty();
    auto tag = [&](Verdict v) -> std::string {
        const char* t = v == Verdict::Ok ? " ok " : v == Verdict::Warn ? "warn" : "FAIL";
        if (!color) return std::string("[") + t + "]";
        const char* c = v == Verdict::Ok ? "\033[32m" : v == Verdict::Warn ? "\033[33m" : "\033[31;1m";
        return std::string("[") + c + t + "\033[0m]";
    };
    std::fprintf(out, "odnn doctor\n");
    if (!subject_line.empty()) std::fprintf(out, "%s\n", subject_line.c_str());
    std::fprintf(out, "\n");
    for (const Check& c : checks) {
        std::fprintf(out, "%s %-13s %s\n", tag(c.verdict).c_str(), c.id.c_str(), c.summary.c_str());
        for (const std::string& d : c.details) std::fprintf(out, "       %13s   %s\n", "", d.c_str());
        if (c.verdict != Verdict::Ok && !c.fix.empty())
            std::fprintf(out, "       %13s   fix: %s\n", "", c.fix.c_str());
    }
    int fails = 0, warns = 0;
    for (const Check& c : checks) {
        fails += c.verdict == Verdict::Fail;
        warns += c.verdict == Verdict::Warn;
    }
    std::fprintf(out, "\nresult: %s (%d checks: %d failed, %d warnings)\n", verdict_name(overall()),
                 static_cast<int>(checks.size()), fails, warns);
}

void Report::print_json(FILE* out) const {
    std::vector<std::pair<std::string, std::string>> m = top;
    std::vector<std::string> cs;
    for (const Check& c : checks) {
        std::vector<std::pair<std::string, std::string>> o = {
            {"id", jstr(c.id)},           {"title", jstr(c.title)},     {"verdict", jstr(verdict_name(c.verdict))},
            {"summary", jstr(c.summary)}, {"details", jstrs(c.details)}, {"fix", jstr(c.verdict == Verdict::Ok ? "" : c.fix)},
            {"data", jobj(c.data)}};
        cs.push_back(jobj(o));
    }
    m.emplace_back("checks", jarr(cs));
    m.emplace_back("result", jstr(verdict_name(overall())));
    m.emplace_back("exit_code", jint(exit_code()));
    std::fprintf(out, "%s\n", jobj(m).c_str());
}

}  // namespace odnn_tool
