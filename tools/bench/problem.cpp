#include "problem.hpp"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

namespace odnn_bench {

namespace {

const std::set<std::string> kConvKeys = {"n", "c", "d", "h", "w", "k", "t", "r", "s", "pad", "pad_d", "pad_h",
                                         "pad_w", "stride", "stride_d", "stride_h", "stride_w", "dil", "dil_d",
                                         "dil_h", "dil_w", "g", "algo"};
const std::set<std::string> kDtypes = {"f32", "f64", "f16", "bf16", "i8"};

// Element-wise and normalization ops: their directions and word, integer and real
// parameters. Word parameters are required unless listed optional.
struct OpSpec {
    std::set<std::string> dirs;
    std::map<std::string, std::set<std::string>> words;
    std::set<std::string> ints;
    std::set<std::string> reals;
    std::set<std::string> optional_words;
};

const std::map<std::string, OpSpec>& op_specs() {
    static const std::set<std::string> shape = {"n", "c", "d", "h", "w"};
    static const std::map<std::string, OpSpec> specs = [] {
        std::map<std::string, OpSpec> m;
        m["act"] = {{"fwd", "bwd"}, {{"mode", {"relu", "sigmoid", "tanh", "clipped_relu", "elu", "identity", "swish"}}}, shape, {}, {}};
        m["softmax"] = {{"fwd", "bwd"}, {{"alg", {"fast", "accurate", "log"}}, {"mode", {"channel", "instance"}}}, shape, {}, {}};
        std::set<std::string> pool_ints = shape;
        for (const char* k : {"r", "s", "t", "pad", "pad_d", "pad_h", "pad_w", "stride", "stride_d", "stride_h", "stride_w"})
            pool_ints.insert(k);
        m["pool"] = {{"fwd", "bwd"}, {{"mode", {"max", "max_det", "avg_in", "avg_ex"}}}, pool_ints, {}, {}};
        // api=ex: training and backward through the Ex calls with a caller's workspace (as
        // PyTorch calls them); legacy (default): the calls without one.
        m["bn"] = {{"fwd_inf", "fwd_train", "bwd"},
                   {{"mode", {"spatial", "persistent", "per_act"}}, {"api", {"legacy", "ex"}}},
                   shape,
                   {},
                   {"api"}};
        m["optensor"] = {{""}, {{"op", {"add", "mul", "min", "max", "sqrt", "not"}}}, shape, {}, {}};
        m["bias"] = {{""}, {}, shape, {}, {}};
        std::set<std::string> lrn_ints = shape;
        lrn_ints.insert("size");
        m["lrn"] = {{"fwd", "bwd"}, {}, lrn_ints, {"alpha", "beta", "k"}, {}};
        m["divnorm"] = {{"fwd", "bwd"}, {}, lrn_ints, {"alpha", "beta", "k"}, {}};
        m["dropout"] = {{"fwd", "bwd"}, {}, shape, {"p"}, {}};
        m["stf"] = {{"fwd", "bwd", "grid_fwd", "grid_bwd"}, {}, shape, {}, {}};
        std::set<std::string> reduce_ints = shape;
        for (const char* k : {"on", "oc", "od", "oh", "ow", "indices"}) reduce_ints.insert(k);
        m["reduce"] = {{""}, {{"op", {"add", "mul", "min", "max", "amax", "avg", "norm1", "norm2", "mul_nz"}}}, reduce_ints, {}, {}};
        m["transform"] = {{""}, {{"to", {"nchw", "nhwc"}}, {"ydt", {"f32", "f64", "f16", "bf16", "i8"}}}, shape, {}, {"ydt"}};
        m["scale"] = {{""}, {}, shape, {}, {}};
        m["set"] = {{""}, {}, shape, {}, {}};
        return m;
    }();
    return specs;
}

bool parse_real(const std::string& s, double* out) {
    if (s.empty()) return false;
    errno = 0;
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (errno != 0 || *end != '\0' || !std::isfinite(v)) return false;
    *out = v;
    return true;
}

bool parse_int(const std::string& s, long long* out) {
    if (s.empty()) return false;
    errno = 0;
    char* end = nullptr;
    const long long v = std::strtoll(s.c_str(), &end, 10);
    if (errno != 0 || *end != '\0') return false;
    *out = v;
    return true;
}

bool parse_resnet_line(const std::vector<std::string>& tok, Problem* p, std::string* error) {
    static const char* names[] = {"n", "c", "h", "w", "k", "r", "s", "pad", "stride", "dil", "g"};
    if (tok.size() != 11) {
        *error = "expected 11 numbers (n c h w k r s pad stride dil groups), got " + std::to_string(tok.size());
        return false;
    }
    p->op = "conv";
    p->dir = "fwd";
    for (size_t i = 0; i < tok.size(); ++i) {
        long long v;
        if (!parse_int(tok[i], &v)) {
            *error = std::string("'") + tok[i] + "' is not an integer (field " + names[i] + ")";
            return false;
        }
        p->v[names[i]] = v;
    }
    return true;
}

// Values the ops constrain beyond "a non-negative integer".
bool check_op_values(const Problem& p, std::string* error) {
    if (p.op == "pool") {
        for (const char* k : {"r", "s", "t", "stride", "stride_d", "stride_h", "stride_w"})
            if (p.v.count(k) && p.get(k, 1) <= 0) {
                *error = std::string("pool: ") + k + " must be positive";
                return false;
            }
    } else if (p.op == "lrn" || p.op == "divnorm") {
        const long long n = p.get("size", 5);
        if (n < 1 || n > 16) {
            *error = p.op + ": size=" + std::to_string(n) + " is outside [1, 16]";
            return false;
        }
    } else if (p.op == "stf") {
        if (p.v.count("d")) {
            *error = "stf: the spatial transformer is 4-D (no d=)";
            return false;
        }
    } else if (p.op == "dropout") {
        const double q = p.real("p", 0.5);
        if (!(q >= 0 && q < 1)) {
            *error = "dropout: p=" + real_text(q) + " is outside [0, 1)";
            return false;
        }
    } else if (p.op == "reduce") {
        const char* in[] = {"n", "c", "d", "h", "w"};
        const char* out[] = {"on", "oc", "od", "oh", "ow"};
        bool reduces = false;
        for (int i = 0; i < 5; ++i) {
            if (!p.v.count(out[i])) continue;
            if (i == 2 && !p.v.count("d")) {
                *error = "reduce: od= needs d=";
                return false;
            }
            const long long o = p.get(out[i], 1), x = p.get(in[i], 1);
            if (o != 1 && o != x) {
                *error = std::string("reduce: ") + out[i] + "=" + std::to_string(o) + " must be 1 or " + in[i] + " (" +
                         std::to_string(x) + ")";
                return false;
            }
            reduces = reduces || (o == 1 && x > 1);
        }
        if (!reduces) {
            *error = "reduce: nothing is reduced (give an output dim of 1, e.g. oh=1 ow=1)";
            return false;
        }
        const long long ind = p.get("indices", 0);
        const std::string op = p.word("op", "add");
        if (ind != 0 && ind != 1) {
            *error = "reduce: indices is 0 or 1";
            return false;
        }
        if (ind == 1 && op != "min" && op != "max" && op != "amax") {
            *error = "reduce: indices=1 needs op=min, max or amax";
            return false;
        }
    }
    return true;
}

}  // namespace

std::string Problem::word(const std::string& key, const std::string& fallback) const {
    auto it = s.find(key);
    return it == s.end() ? fallback : it->second;
}

long long Problem::get(const std::string& key, long long fallback) const {
    auto it = v.find(key);
    return it == v.end() ? fallback : it->second;
}

double Problem::real(const std::string& key, double fallback) const {
    auto it = f.find(key);
    return it == f.end() ? fallback : it->second;
}

std::string real_text(double v) {
    char buf[40];
    for (int prec = 1; prec <= 17; ++prec) {
        std::snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (std::strtod(buf, nullptr) == v) break;
    }
    return buf;
}

std::string Problem::str() const {
    std::string s = op;
    if (!dir.empty()) s += " " + dir;
    for (const auto& kv : this->s) s += " " + kv.first + "=" + kv.second;
    s += " dt=" + dt;
    if (op != "copy") s += " layout=" + layout;
    if (op == "conv" && math != "default") s += " math=" + math;
    // A stable key order: the conventional one first, the rest alphabetically.
    static const char* order[] = {"n", "c", "d", "h", "w", "k", "t", "r", "s", "pad", "stride", "dil", "g"};
    std::set<std::string> done;
    for (const char* k : order) {
        auto it = v.find(k);
        if (it == v.end()) continue;
        s += " " + it->first + "=" + std::to_string(it->second);
        done.insert(k);
    }
    for (const auto& kv : v)
        if (!done.count(kv.first)) s += " " + kv.first + "=" + std::to_string(kv.second);
    for (const auto& kv : f) s += " " + kv.first + "=" + real_text(kv.second);
    return s;
}

bool parse_problem(const std::string& line, Problem* out, std::string* error) {
    std::istringstream in(line);
    std::vector<std::string> tok;
    for (std::string t; in >> t;) tok.push_back(t);
    if (tok.empty()) {
        *error = "empty problem";
        return false;
    }
    Problem p;
    if (std::isdigit(static_cast<unsigned char>(tok[0][0]))) {
        if (!parse_resnet_line(tok, &p, error)) return false;
        *out = p;
        return true;
    }
    p.op = tok[0];
    size_t i = 1;
    if (p.op == "conv") {
        if (tok.size() < 2 || tok[1].find('=') != std::string::npos) {
            *error = "conv needs a direction: fwd, bwd_data or bwd_filter";
            return false;
        }
        p.dir = tok[1];
        if (p.dir != "fwd" && p.dir != "bwd_data" && p.dir != "bwd_filter") {
            *error = "unknown conv direction '" + p.dir + "' (fwd, bwd_data, bwd_filter)";
            return false;
        }
        i = 2;
    } else if (op_specs().count(p.op)) {
        const OpSpec& spec = op_specs().at(p.op);
        if (!spec.dirs.count("")) {
            if (tok.size() < 2 || !spec.dirs.count(tok[1])) {
                std::string all;
                for (const auto& d : spec.dirs) all += (all.empty() ? "" : ", ") + d;
                *error = p.op + " needs a direction: " + all;
                return false;
            }
            p.dir = tok[1];
            i = 2;
        }
    } else if (p.op != "copy") {
        *error = "unknown operation '" + p.op +
                 "' (conv, copy, act, softmax, pool, bn, optensor, bias, lrn, divnorm, dropout, stf, reduce, transform, scale, set)";
        return false;
    }
    const OpSpec* spec = op_specs().count(p.op) ? &op_specs().at(p.op) : nullptr;
    for (; i < tok.size(); ++i) {
        const size_t eq = tok[i].find('=');
        if (eq == std::string::npos || eq == 0) {
            *error = "'" + tok[i] + "' is not key=value";
            return false;
        }
        const std::string key = tok[i].substr(0, eq), val = tok[i].substr(eq + 1);
        if (key == "dt") {
            if (!kDtypes.count(val)) {
                *error = "unknown dt '" + val + "' (f32, f64, f16, bf16, i8)";
                return false;
            }
            p.dt = val;
        } else if (key == "layout") {
            if (val != "nchw" && val != "nhwc") {
                *error = "unknown layout '" + val + "' (nchw, nhwc)";
                return false;
            }
            p.layout = val;
        } else if (key == "math") {
            if (val != "default" && val != "fma" && val != "tensor_op") {
                *error = "unknown math '" + val + "' (default, fma, tensor_op)";
                return false;
            }
            p.math = val;
        } else if (spec && spec->words.count(key)) {
            if (!spec->words.at(key).count(val)) {
                std::string all;
                for (const auto& w : spec->words.at(key)) all += (all.empty() ? "" : ", ") + w;
                *error = p.op + ": " + key + "=" + val + " is not one of " + all;
                return false;
            }
            p.s[key] = val;
        } else if (spec && spec->reals.count(key)) {
            double x;
            if (!parse_real(val, &x)) {
                *error = "'" + key + "=" + val + "': not a finite number";
                return false;
            }
            p.f[key] = x;
        } else {
            long long v;
            if (!parse_int(val, &v)) {
                *error = "'" + key + "=" + val + "': not an integer";
                return false;
            }
            if (p.op == "conv" && !kConvKeys.count(key)) {
                *error = "unknown conv parameter '" + key + "'";
                return false;
            }
            if (p.op == "copy" && key != "n") {
                *error = "unknown copy parameter '" + key + "' (n)";
                return false;
            }
            if (spec && !spec->ints.count(key)) {
                *error = "unknown " + p.op + " parameter '" + key + "'";
                return false;
            }
            if (v < 0 || v > INT_MAX) {
                *error = "'" + key + "=" + val + "': out of range [0, 2^31)";
                return false;
            }
            p.v[key] = v;
        }
    }
    if (p.op == "conv") {
        for (const char* k : {"n", "c", "h", "w", "k", "r", "s"})
            if (p.get(k, 0) <= 0) {
                *error = std::string("conv needs ") + k + " > 0";
                return false;
            }
        for (const char* k : {"stride", "dil", "g"})
            if (p.v.count(k) && p.get(k, 1) <= 0) {
                *error = std::string(k) + " must be positive";
                return false;
            }
    } else if (p.op == "copy") {
        if (p.get("n", 0) <= 0) {
            *error = "copy needs n > 0 (elements)";
            return false;
        }
    } else {
        for (const char* k : {"n", "c", "h", "w"})
            if (p.get(k, 0) <= 0) {
                *error = p.op + " needs " + k + " > 0";
                return false;
            }
        for (const auto& kv : spec->words)  // no defaults: every word parameter is given
            if (!p.s.count(kv.first) && !spec->optional_words.count(kv.first)) {
                *error = p.op + " needs " + kv.first + "=...";
                return false;
            }
        if (!check_op_values(p, error)) return false;
    }
    *out = p;
    return true;
}

bool read_problem_file(const std::string& path, std::vector<Problem>* out, std::string* error) {
    std::ifstream in(path);
    if (!in) {
        *error = path + ": cannot open";
        return false;
    }
    std::string line;
    int lineno = 0;
    while (std::getline(in, line)) {
        ++lineno;
        const size_t hash = line.find('#');
        if (hash != std::string::npos) line.resize(hash);
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        Problem p;
        std::string why;
        if (!parse_problem(line, &p, &why)) {
            *error = path + ":" + std::to_string(lineno) + ": " + why;
            return false;
        }
        out->push_back(p);
    }
    return true;
}

}  // namespace odnn_bench
