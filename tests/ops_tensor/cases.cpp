#include "ops_tensor/cases.hpp"

#include <algorithm>
#include <dirent.h>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace ops_test {

std::string Case::text() const {
    std::string s = op;
    for (const auto& [k, v] : kv) s += " " + k + "=" + v;
    return s;
}

std::string Case::where() const { return file + ":" + std::to_string(line) + ": " + text(); }

std::string Case::name() const {
    std::string s = file.substr(0, file.find('.')) + "_L" + std::to_string(line) + "_" + op;
    for (const auto& [k, v] : kv) s += "_" + k + "_" + v;
    for (char& ch : s)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
    return s;
}

uint64_t Case::seed() const {
    uint64_t h = 1469598103934665603ull;  // FNV-1a of the expanded text
    for (char ch : text()) h = (h ^ static_cast<unsigned char>(ch)) * 1099511628211ull;
    return h;
}

std::string Case::str(const std::string& k, const std::string& def) const {
    auto it = kv.find(k);
    return it == kv.end() ? def : it->second;
}

double Case::num(const std::string& k, double def) const {
    auto it = kv.find(k);
    return it == kv.end() ? def : std::stod(it->second);
}

std::vector<int64_t> Case::list(const std::string& k) const {
    std::vector<int64_t> out;
    std::stringstream ss(str(k));
    std::string tok;
    while (std::getline(ss, tok, 'x'))
        if (!tok.empty()) out.push_back(std::stoll(tok));
    return out;
}

std::vector<Case> expand_line(const std::string& file, int line, const std::string& text) {
    std::string body = text.substr(0, text.find('#'));
    std::stringstream ss(body);
    std::string op, tok;
    if (!(ss >> op)) return {};
    std::vector<std::pair<std::string, std::vector<std::string>>> keys;
    while (ss >> tok) {
        const size_t eq = tok.find('=');
        if (eq == std::string::npos) throw std::runtime_error(file + ":" + std::to_string(line) + ": bad token " + tok);
        std::vector<std::string> values;
        std::stringstream vs(tok.substr(eq + 1));
        std::string v;
        while (std::getline(vs, v, ',')) values.push_back(v);
        keys.emplace_back(tok.substr(0, eq), values);
    }
    std::vector<Case> out(1);
    out[0].file = file;
    out[0].line = line;
    out[0].op = op;
    for (const auto& [k, values] : keys) {
        std::vector<Case> next;
        for (const Case& c : out)
            for (const std::string& v : values) {
                Case d = c;
                d.kv[k] = v;
                next.push_back(d);
            }
        out.swap(next);
    }
    return out;
}

std::vector<Case> load_cases(const std::string& dir) {
    std::vector<std::string> files;
    if (DIR* d = opendir(dir.c_str())) {
        while (dirent* e = readdir(d)) {
            const std::string n = e->d_name;
            if (n.size() > 4 && n.substr(n.size() - 4) == ".txt") files.push_back(n);
        }
        closedir(d);
    }
    std::sort(files.begin(), files.end());
    std::vector<Case> all;
    for (const std::string& f : files) {
        std::ifstream in(dir + "/" + f);
        std::string text;
        int line = 0;
        while (std::getline(in, text)) {
            ++line;
            for (Case& c : expand_line(f, line, text)) all.push_back(std::move(c));
        }
    }
    return all;
}

}  // namespace ops_test
