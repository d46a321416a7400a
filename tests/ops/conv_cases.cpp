#include "ops/conv_cases.hpp"

#include <dirent.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace conv_test {

std::string Case::where() const { return file + ":" + std::to_string(line) + ": " + text; }

std::string Case::name() const {
    std::string base = file;
    const size_t slash = base.find_last_of('/');
    if (slash != std::string::npos) base = base.substr(slash + 1);
    if (base.size() > 4 && base.compare(base.size() - 4, 4, ".txt") == 0) base.resize(base.size() - 4);
    return base + "_" + std::to_string(line);
}

uint64_t Case::seed() const {
    // FNV-1a of the case text: stable across runs and machines.
    uint64_t h = 1469598103934665603ull;
    for (unsigned char ch : text) h = (h ^ ch) * 1099511628211ull;
    return h;
}

namespace {

bool parse_int(const std::string& s, int64_t* v) {
    if (s.empty()) return false;
    char* end = nullptr;
    const long long x = std::strtoll(s.c_str(), &end, 10);
    if (*end != '\0') return false;
    *v = x;
    return true;
}

// "1" or "1x2" or "1x2x3" -> per spatial dim (right-aligned onto D, H, W).
bool parse_dims(const std::string& s, int64_t* out, int* count) {
    std::vector<int64_t> vals;
    std::stringstream ss(s);
    std::string part;
    while (std::getline(ss, part, 'x')) {
        int64_t v;
        if (!parse_int(part, &v)) return false;
        vals.push_back(v);
    }
    if (vals.empty() || vals.size() > 3) return false;
    *count = static_cast<int>(vals.size());
    if (vals.size() == 1) {
        out[0] = out[1] = out[2] = vals[0];
    } else {
        for (size_t i = 0; i < vals.size(); ++i) out[3 - vals.size() + i] = vals[i];
    }
    return true;
}

}  // namespace

bool parse_case(const std::string& raw, Case* out, std::string* why) {
    std::string text = raw.substr(0, raw.find('#'));
    std::stringstream ss(text);
    std::string word;
    Case c;
    if (!(ss >> word) || word != "conv") {
        *why = "a case starts with 'conv'";
        return false;
    }
    if (!(ss >> c.dir)) {
        *why = "missing direction";
        return false;
    }
    static const char* const dirs[] = {"fwd", "bwd_data", "bwd_filter", "bias_act", "all"};
    if (std::find(std::begin(dirs), std::end(dirs), c.dir) == std::end(dirs)) {
        *why = "unknown direction '" + c.dir + "'";
        return false;
    }
    bool three_d = false;
    int pad_count = 1, stride_count = 1, dil_count = 1;
    while (ss >> word) {
        const size_t eq = word.find('=');
        if (eq == std::string::npos) {
            *why = "expected key=value, got '" + word + "'";
            return false;
        }
        const std::string key = word.substr(0, eq), val = word.substr(eq + 1);
        int64_t v = 0;
        bool ok = true;
        if (key == "dt") {
            static const char* const dts[] = {"f32", "f64", "f16", "f16c16", "bf16", "i8", "i8f32"};
            ok = std::find(std::begin(dts), std::end(dts), val) != std::end(dts);
            c.dt = val;
        } else if (key == "layout") {
            ok = val == "nchw" || val == "nhwc" || val == "strided";
            c.layout = val;
        } else if (key == "wlayout") {
            ok = val == "nchw" || val == "nhwc";
            c.wlayout = val;
        } else if (key == "mode") {
            ok = val == "xcorr" || val == "conv";
            c.conv_mode = val == "conv";
        } else if (key == "fill") {
            ok = val == "int" || val == "real";
            c.real_fill = val == "real";
        } else if (key == "pad") {
            ok = parse_dims(val, c.pad, &pad_count);
        } else if (key == "stride") {
            ok = parse_dims(val, c.stride, &stride_count);
        } else if (key == "dil") {
            ok = parse_dims(val, c.dil, &dil_count);
        } else if (key == "dims") {
            ok = parse_int(val, &v) && (v == 2 || v == 3);
            c.dims = static_cast<int>(v);
            three_d = v == 3;
        } else {
            ok = parse_int(val, &v) && v > 0;
            if (key == "n") c.n = v;
            else if (key == "c") c.c = v;
            else if (key == "k") c.k = v;
            else if (key == "g") c.g = v;
            else if (key == "d") c.in[0] = v, three_d = true;
            else if (key == "h") c.in[1] = v;
            else if (key == "w") c.in[2] = v;
            else if (key == "t") c.filt[0] = v, three_d = true;
            else if (key == "r") c.filt[1] = v;
            else if (key == "s") c.filt[2] = v;
            else {
                *why = "unknown key '" + key + "'";
                return false;
            }
        }
        if (!ok) {
            *why = "bad value in '" + word + "'";
            return false;
        }
    }
    c.dims = three_d ? 3 : 2;
    if (!three_d) {
        // A 2-d problem: D is a unit dim with no padding, stride or dilation.
        c.pad[0] = 0;
        c.stride[0] = 1;
        c.dil[0] = 1;
        if (pad_count == 3 || stride_count == 3 || dil_count == 3) {
            *why = "three values for pad/stride/dil in a 2-d problem";
            return false;
        }
    }
    if (c.c % c.g != 0 || c.k % c.g != 0) {
        *why = "c and k must be multiples of g";
        return false;
    }
    if (c.wlayout.empty()) c.wlayout = c.layout == "nhwc" ? "nhwc" : "nchw";
    c.text = raw;
    while (!c.text.empty() && (c.text.back() == ' ' || c.text.back() == '\r')) c.text.pop_back();
    *out = c;
    return true;
}

std::vector<Case> load_cases(const std::string& dir) {
    std::vector<std::string> files;
    if (DIR* d = opendir(dir.c_str())) {
        while (dirent* e = readdir(d)) {
            const std::string name = e->d_name;
            if (name.rfind("conv_", 0) == 0 && name.size() > 4 && name.compare(name.size() - 4, 4, ".txt") == 0)
                files.push_back(dir + "/" + name);
        }
        closedir(d);
    }
    std::sort(files.begin(), files.end());
    std::vector<Case> cases;
    for (const std::string& f : files) {
        std::ifstream in(f);
        std::string line;
        int no = 0;
        while (std::getline(in, line)) {
            ++no;
            const size_t first = line.find_first_not_of(" \t");
            if (first == std::string::npos || line[first] == '#') continue;
            Case c;
            std::string why;
            if (!parse_case(line, &c, &why)) throw std::runtime_error(f + ":" + std::to_string(no) + ": " + why);
            c.file = f;
            c.line = no;
            cases.push_back(c);
        }
    }
    return cases;
}

}  // namespace conv_test
