// The doctor's findings: checks with a verdict, printed for people or as JSON.
#pragma once

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace odnn_tool {

enum class Verdict { Ok, Warn, Fail };
const char* verdict_name(Verdict v);

struct Check {
    std::string id;     // stable key, e.g. "symbols"
    std::string title;  // e.g. "exported API"
    Verdict verdict = Verdict::Ok;
    std::string summary;               // one line
    std::vector<std::string> details;  // more lines
    std::string fix;                   // what to do, when not ok
    // Machine-readable facts of this check (stable keys; values are JSON text).
    std::vector<std::pair<std::string, std::string>> data;

    Check& worst(Verdict v) {
        if (static_cast<int>(v) > static_cast<int>(verdict)) verdict = v;
        return *this;
    }
};

// JSON value helpers.
std::string jstr(const std::string& s);
std::string jarr(const std::vector<std::string>& json_values);
std::string jstrs(const std::vector<std::string>& strings);
std::string jobj(const std::vector<std::pair<std::string, std::string>>& members);
std::string jint(long long v);
std::string jbool(bool b);

struct Report {
    std::string subject_line;                                // for people
    std::vector<std::pair<std::string, std::string>> top;    // top-level JSON members before "checks"
    std::vector<Check> checks;

    Verdict overall() const;
    int exit_code() const { return overall() == Verdict::Fail ? 1 : 0; }
    void print_text(FILE* out) const;
    void print_json(FILE* out) const;
};

}  // namespace odnn_tool
