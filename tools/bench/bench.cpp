// odnn bench: the same problems through one or several cuDNN libraries in one
// process, side by side: time, rate, fraction of the nearer ceiling, numeric
// agreement and speed ratio against the first library.
#include "bench.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <sstream>

#include "conv_bench.hpp"
#include "gemm_baseline.hpp"
#include "problem.hpp"
#include "runtime.hpp"

namespace odnn_bench {

namespace {

const char* kUsage =
    "usage: odnn bench [options] [problem ...]\n"
    "  problem            e.g. 'conv fwd dt=f16 layout=nhwc n=32 c=64 h=56 w=56 k=64 r=3 s=3 pad=1'\n"
    "                     or 'copy dt=f32 n=268435456'; element-wise and normalization ops:\n"
    "                     act softmax pool bn optensor bias lrn divnorm dropout stf reduce transform\n"
    "                     scale set (e.g. 'lrn fwd size=5 n=32 c=64 h=56 w=56', 'divnorm bwd size=5\n"
    "                     ...' (NULL means), 'reduce op=add n=32 c=64 h=56 w=56 oh=1 ow=1',\n"
    "                     'transform to=nhwc n=32 c=64 h=56 w=56', 'dropout fwd p=0.5 ...',\n"
    "                     'bn fwd_train mode=spatial api=ex ...': training / backward through\n"
    "                     the Ex calls with a workspace, as PyTorch calls them;\n"
    "                     'stf bwd n=8 c=64 h=56 w=56': the spatial transformer's sampler;\n"
    "                     'stf grid_fwd|grid_bwd n=8 c=1 h=56 w=56': its grid generator)\n"
    "  --batch FILE       read problems from FILE (one per line; '#' comments; also the\n"
    "                     'n c h w k r s pad stride dil groups' lines of resnet50_conv.txt)\n"
    "  --lib PATH         a cuDNN library to measure (repeat to compare; the first is the\n"
    "                     baseline of the ratios; default: the odnn this tool runs with)\n"
    "  --dir LIST         conv directions, e.g. fwd,bwd_data,bwd_filter (expands each problem)\n"
    "  --dt LIST          data types, e.g. f16,bf16,f32     --layout LIST   nchw,nhwc\n"
    "  --math M           default | fma | tensor_op          --n N           batch size\n"
    "  --algo N           algorithm id (default: the library's first choice)\n"
    "  --find             conv: each library's fastest algorithm by its cudnnFind*Algorithm\n"
    "                     (what frameworks' benchmark mode uses) instead of Get*_v7's first\n"
    "  --warmup N --reps N  (default 5, 20)                  --no-check   skip comparison\n"
    "  --peak-tflops X --peak-gbs Y   ceilings (default on a GPU: H200 tensor rates and the\n"
    "                     copy bandwidth measured at start)\n"
    "  --gemm-baseline    for convolutions on the CPU backend, also time a GEMM of equal FLOPs\n"
    "                     through the same BLAS (after all problems) and report each\n"
    "                     direction's rate against it\n"
    "  --overhead         GPU: also report each call's host time (median) and its time when\n"
    "                     reps calls are queued back to back (host work and launch gaps\n"
    "                     hidden), on a line under its row (table format)\n"
    "  --format table|csv|json\n";

std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream in(s);
    for (std::string t; std::getline(in, t, ',');)
        if (!t.empty()) out.push_back(t);
    return out;
}

bool to_int(const std::string& s, long long lo, long long hi, long long* out) {
    char* end = nullptr;
    const long long v = std::strtoll(s.c_str(), &end, 10);
    if (s.empty() || *end || v < lo || v > hi) return false;
    *out = v;
    return true;
}

struct Row {
    Problem p;
    std::string lib;
    RunResult r;
    double rate = 0;        // TFLOP/s or GB/s
    double ceiling = 0;     // fraction of the nearer ceiling (0: unknown)
    double max_diff = -1;   // vs the first library
    double speed = 0;       // first library's time / this time
};

double peak_tflops(const Problem& p, double user) {
    if (user > 0) return user;
    if (p.dt == "f16" || p.dt == "bf16") return 989.4;  // H200 dense
    if (p.dt == "f32") return p.math == "fma" ? 66.9 : 494.7;  // TF32 allowed unless FMA
    if (p.dt == "f64") return 66.9;
    return 0;
}

double compare(const std::vector<double>& a, const std::vector<double>& b) {
    if (a.size() != b.size() || a.empty()) return -1;
    double scale = 1, diff = 0;
    for (double v : a) scale = std::max(scale, std::fabs(v));
    for (size_t i = 0; i < a.size(); ++i) {
        const double d = std::fabs(a[i] - b[i]);
        if (std::isnan(d)) return INFINITY;
        diff = std::max(diff, d);
    }
    return diff / scale;
}

}  // namespace

int cmd_bench(const std::vector<std::string>& args, const std::string& default_lib) {
    std::vector<std::string> libs, files, inline_problems;
    std::vector<std::string> dirs, dts, layouts;
    std::string math, format = "table";
    long long batch = -1;
    Options opt;
    double user_tflops = 0, user_gbs = 0;
    bool gemm_baseline = false;
    // Per library and conv direction: FLOPs and seconds of the conv runs, and of the
    // equal-FLOP GEMMs timed beside them (--gemm-baseline).
    std::map<std::string, std::map<std::string, double[4]>> vs_gemm;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        auto value = [&](const char* what) -> const std::string* {
            if (i + 1 >= args.size()) {
                std::fprintf(stderr, "odnn bench: %s needs a value\n", what);
                return nullptr;
            }
            return &args[++i];
        };
        long long n = 0;
        const std::string* v = nullptr;
        if (a == "--help" || a == "-h") {
            std::fputs(kUsage, stdout);
            return 0;
        } else if (a == "--lib") {
            if (!(v = value("--lib"))) return 2;
            libs.push_back(*v);
        } else if (a == "--batch") {
            if (!(v = value("--batch"))) return 2;
            files.push_back(*v);
        } else if (a == "--dir" || a == "--dt" || a == "--layout") {
            if (!(v = value(a.c_str()))) return 2;
            (a == "--dir" ? dirs : a == "--dt" ? dts : layouts) = split(*v);
        } else if (a == "--math") {
            if (!(v = value("--math"))) return 2;
            math = *v;
        } else if (a == "--format") {
            if (!(v = value("--format"))) return 2;
            format = *v;
            if (format != "table" && format != "csv" && format != "json") {
                std::fprintf(stderr, "odnn bench: --format %s: expected table, csv or json\n", format.c_str());
                return 2;
            }
        } else if (a == "--n" || a == "--algo" || a == "--warmup" || a == "--reps") {
            if (!(v = value(a.c_str()))) return 2;
            if (!to_int(*v, a == "--algo" ? 0 : (a == "--warmup" ? 0 : 1), 1 << 30, &n)) {
                std::fprintf(stderr, "odnn bench: %s %s: not a valid count\n", a.c_str(), v->c_str());
                return 2;
            }
            if (a == "--n") batch = n;
            else if (a == "--algo") opt.algo = static_cast<int>(n);
            else if (a == "--warmup") opt.warmup = static_cast<int>(n);
            else opt.reps = static_cast<int>(n);
        } else if (a == "--peak-tflops" || a == "--peak-gbs") {
            if (!(v = value(a.c_str()))) return 2;
            const double x = std::atof(v->c_str());
            if (!(x > 0)) {
                std::fprintf(stderr, "odnn bench: %s %s: expected a positive number\n", a.c_str(), v->c_str());
                return 2;
            }
            (a == "--peak-tflops" ? user_tflops : user_gbs) = x;
        } else if (a == "--find") {
            opt.find = true;
        } else if (a == "--overhead") {
            opt.overhead = true;
        } else if (a == "--no-check") {
            opt.check = false;
        } else if (a == "--gemm-baseline") {
            gemm_baseline = true;
        } else if (!a.empty() && a[0] == '-') {
            std::fprintf(stderr, "odnn bench: unknown option '%s'\n%s", a.c_str(), kUsage);
            return 2;
        } else {
            inline_problems.push_back(a);
        }
    }

    // Problems: from files and the command line, expanded over --dir/--dt/--layout.
    std::vector<Problem> base;
    for (const std::string& f : files) {
        std::string err;
        if (!read_problem_file(f, &base, &err)) {
            std::fprintf(stderr, "odnn bench: %s\n", err.c_str());
            return 2;
        }
    }
    for (const std::string& s : inline_problems) {
        Problem p;
        std::string err;
        if (!parse_problem(s, &p, &err)) {
            std::fprintf(stderr, "odnn bench: '%s': %s\n", s.c_str(), err.c_str());
            return 2;
        }
        base.push_back(p);
    }
    if (base.empty()) {
        std::fprintf(stderr, "odnn bench: no problems given\n%s", kUsage);
        return 2;
    }
    for (const std::string& d : dirs)
        if (d != "fwd" && d != "bwd_data" && d != "bwd_filter") {
            std::fprintf(stderr, "odnn bench: --dir %s: expected fwd, bwd_data, bwd_filter\n", d.c_str());
            return 2;
        }
    std::vector<Problem> problems;
    for (const Problem& b : base) {
        const auto ds = b.op == "conv" && !dirs.empty() ? dirs : std::vector<std::string>{b.dir};
        const auto ts = !dts.empty() ? dts : std::vector<std::string>{b.dt};
        const auto ls = b.op != "copy" && !layouts.empty() ? layouts : std::vector<std::string>{b.layout};
        for (const auto& d : ds)
            for (const auto& t : ts)
                for (const auto& l : ls) {
                    Problem p = b;
                    p.dir = d;
                    p.layout = l;
                    p.dt = t;
                    if (!math.empty()) p.math = math;
                    if (batch > 0 && p.op == "conv") p.v["n"] = batch;
                    std::string line = p.str(), err;
                    Problem q;
                    if (!parse_problem(line, &q, &err)) {  // validates the expanded values
                        std::fprintf(stderr, "odnn bench: '%s': %s\n", line.c_str(), err.c_str());
                        return 2;
                    }
                    problems.push_back(q);
                }
    }

    // Libraries.
    if (libs.empty()) libs.push_back(default_lib);
    std::vector<std::unique_ptr<CudnnLib>> loaded;
    std::map<std::string, int> label_count;
    for (const std::string& path : libs) {
        std::string err;
        auto lib = CudnnLib::open(path, &err);
        if (!lib || !lib->init(&err)) {
            std::fprintf(stderr, "odnn bench: %s\n", err.c_str());
            return 1;
        }
        ++label_count[lib->label()];
        loaded.push_back(std::move(lib));
    }
    const bool any_gpu = std::any_of(loaded.begin(), loaded.end(), [](const auto& l) { return l->on_gpu(); });
    double gbs = user_gbs;
    if (any_gpu && gbs <= 0) {
        Problem copy;
        std::string err;
        parse_problem("copy dt=f32 n=268435456", &copy, &err);  // 1 GiB
        Options co = opt;
        co.check = false;
        for (auto& l : loaded)
            if (l->on_gpu()) {
                RunResult r = run_problem(*l, copy, co);
                if (r.ok) gbs = problem_bytes(copy) / (r.ms * 1e-3) / 1e9;
                break;
            }
    }
    const bool progress = isatty(2) && format == "table";

    std::vector<Row> rows;
    std::vector<size_t> row_lib;  // index into `loaded` of each row (loaded.size(): the GEMM baseline)
    std::vector<std::vector<Row>> groups;  // each problem's rows, in `problems` order
    int failures = 0;
    for (size_t pi = 0; pi < problems.size(); ++pi) {
        const Problem& p = problems[pi];
        if (progress) {
            const int width = 30, done = static_cast<int>(width * pi / problems.size());
            std::fprintf(stderr, "\r[%.*s%*s] %zu/%zu %s", done, "##############################", width - done, "",
                         pi + 1, problems.size(), p.str().substr(0, 60).c_str());
            std::fflush(stderr);
        }
        std::vector<Row> group;
        for (auto& l : loaded) {
            Row row;
            row.p = p;
            row.lib = l->label();
            if (label_count[row.lib] > 1) row.lib += "#" + std::to_string(&l - &loaded[0] + 1);
            row.r = run_problem(*l, p, opt);
            if (!row.r.ok) ++failures;
            const double s = row.r.ms * 1e-3;
            const double flops = problem_flops(p), bytes = problem_bytes(p);
            if (row.r.ok && s > 0) {
                row.rate = flops > 0 ? flops / s / 1e12 : bytes / s / 1e9;
                if (l->on_gpu()) {
                    // Time at each ceiling; the nearer (larger) one bounds the problem.
                    const double pt = peak_tflops(p, user_tflops);
                    const double t_flop = flops > 0 && pt > 0 ? flops / (pt * 1e12) : 0;
                    const double t_byte = gbs > 0 ? bytes / (gbs * 1e9) : 0;
                    const double bound = std::max(t_flop, t_byte);
                    row.ceiling = bound > 0 ? bound / s : 0;
                } else if (user_tflops > 0 || user_gbs > 0) {
                    const double bound = std::max(flops > 0 && user_tflops > 0 ? flops / (user_tflops * 1e12) : 0,
                                                  user_gbs > 0 ? bytes / (user_gbs * 1e9) : 0);
                    row.ceiling = bound > 0 ? bound / s : 0;
                }
            }
            group.push_back(row);
        }
        for (size_t i = 1; i < group.size(); ++i) {
            if (group[0].r.ok && group[i].r.ok) {
                group[i].speed = group[0].r.ms / group[i].r.ms;
                if (opt.check) group[i].max_diff = compare(group[0].r.out, group[i].r.out);
            }
        }
        for (Row& r : group) {
            r.r.out.clear();
            r.r.out.shrink_to_fit();
        }
        groups.push_back(std::move(group));
    }
    // The equal-FLOP GEMMs after every library's measurements: a multi-threaded BLAS
    // keeps its workers spinning for a while after a call, and a convolution timed right
    // after one would share the cores with them (on 16 cores: whole 4 ms scheduler ticks).
    for (size_t pi = 0; pi < problems.size(); ++pi) {
        const Problem& p = problems[pi];
        std::vector<Row>& group = groups[pi];
        if (gemm_baseline && p.op == "conv" && (p.dt == "f32" || p.dt == "f64")) {
            bool any_cpu = false;
            for (auto& l : loaded) any_cpu |= !l->on_gpu();
            if (any_cpu) {
                double gflops = 0;
                const double gms = gemm_baseline_ms(problem_flops(p), p.dt == "f64", opt.warmup, opt.reps, &gflops);
                Row g;
                g.p = p;
                g.lib = "blas-gemm";
                g.r.ok = gms > 0;
                g.r.ms = gms;
                g.rate = gflops / (gms * 1e-3) / 1e12;
                for (size_t li = 0; li < loaded.size(); ++li) {
                    if (loaded[li]->on_gpu() || !group[li].r.ok) continue;
                    double* acc = vs_gemm[group[li].lib][p.dir];
                    acc[0] += problem_flops(p);
                    acc[1] += group[li].r.ms * 1e-3;
                    acc[2] += gflops;
                    acc[3] += gms * 1e-3;
                }
                group.push_back(g);
            }
        }
        for (size_t gi = 0; gi < group.size(); ++gi) {
            rows.push_back(group[gi]);
            row_lib.push_back(gi);
        }
    }
    if (progress) std::fprintf(stderr, "\r%*s\r", 100, "");

    // Output.
    if (format == "csv") {
        std::printf("problem,lib,ok,ms,rate,unit,ceiling_fraction,algo,workspace_bytes,max_rel_diff,speed_vs_first,error\n");
        for (const Row& r : rows)
            std::printf("\"%s\",%s,%d,%.4f,%.3f,%s,%.3f,%d,%zu,%.3g,%.3f,\"%s\"\n", r.p.str().c_str(), r.lib.c_str(),
                        r.r.ok, r.r.ms, r.rate, problem_flops(r.p) > 0 ? "TFLOP/s" : "GB/s", r.ceiling, r.r.algo,
                        r.r.workspace, r.max_diff, r.speed, r.r.error.c_str());
    } else if (format == "json") {
        std::printf("[\n");
        for (size_t i = 0; i < rows.size(); ++i) {
            const Row& r = rows[i];
            std::string err;
            for (char c : r.r.error) err += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
            std::printf("  {\"problem\": \"%s\", \"lib\": \"%s\", \"ok\": %s, \"ms\": %.5f, \"rate\": %.4f, "
                        "\"unit\": \"%s\", \"ceiling_fraction\": %.4f, \"algo\": %d, \"workspace_bytes\": %zu, "
                        "\"max_rel_diff\": %.4g, \"speed_vs_first\": %.4f, \"error\": \"%s\"}%s\n",
                        r.p.str().c_str(), r.lib.c_str(), r.r.ok ? "true" : "false", r.r.ms, r.rate,
                        problem_flops(r.p) > 0 ? "TFLOP/s" : "GB/s", r.ceiling, r.r.algo, r.r.workspace,
                        r.max_diff < 0 ? 0.0 : r.max_diff, r.speed, err.c_str(), i + 1 < rows.size() ? "," : "");
        }
        std::printf("]\n");
    } else {
        if (any_gpu) std::printf("GPU: %s; copy bandwidth %.0f GB/s%s\n", Cuda::get()->device_name().c_str(), gbs,
                                 user_gbs > 0 ? " (given)" : " (measured)");
        std::printf("%-78s %-12s %9s %10s %6s %5s %9s %9s %7s\n", "problem", "lib", "ms", "rate", "ceil", "algo",
                    "ws MiB", "max diff", "speed");
        for (const Row& r : rows) {
            if (!r.r.ok) {
                std::printf("%-78s %-12s  FAILED: %s\n", r.p.str().c_str(), r.lib.c_str(), r.r.error.c_str());
                continue;
            }
            char diff[16] = "-", speed[16] = "-", ceil[16] = "-";
            if (r.max_diff >= 0) std::snprintf(diff, sizeof diff, "%.2g", r.max_diff);
            if (r.speed > 0) std::snprintf(speed, sizeof speed, "%.2fx", r.speed);
            if (r.ceiling > 0) std::snprintf(ceil, sizeof ceil, "%.0f%%", 100 * r.ceiling);
            // Rates: TFLOP/s for compute problems (GFLOP/s when small, as on a CPU), GB/s for copies.
            const bool flop = problem_flops(r.p) > 0;
            const bool small = flop && r.rate < 1.0;
            std::printf("%-78s %-12s %9.4f %6.3g %-3s %6s %5d %9.1f %9s %7s\n", r.p.str().c_str(), r.lib.c_str(),
                        r.r.ms, small ? r.rate * 1e3 : r.rate, flop ? (small ? "GF" : "TF") : "GB", ceil, r.r.algo,
                        r.r.workspace / 1048576.0, diff, speed);
            if (r.r.overhead.host_ms >= 0)
                std::printf("%-78s %-12s host %.4f ms a call; queued back to back %.4f ms a call\n", "", "",
                            r.r.overhead.host_ms, r.r.overhead.queued_ms);
        }
        for (const auto& lib : vs_gemm)
            for (const auto& dir : lib.second) {
                const double* a = dir.second;
                std::printf("%s %s vs an equal-FLOP GEMM through the same BLAS: %.1f vs %.1f GFLOP/s = %.2f "
                            "(aggregate over the problems)\n",
                            lib.first.c_str(), dir.first.c_str(), a[0] / a[1] / 1e9, a[2] / a[3] / 1e9,
                            (a[0] / a[1]) / (a[2] / a[3]));
            }
        if (loaded.size() > 1) {
            for (size_t li = 1; li < loaded.size(); ++li) {
                double log_sum = 0, worst = INFINITY;
                int n = 0;
                for (size_t i = 0; i < rows.size(); ++i)
                    if (row_lib[i] == li && rows[i].speed > 0) {
                        log_sum += std::log(rows[i].speed);
                        worst = std::min(worst, rows[i].speed);
                        ++n;
                    }
                if (n)
                    std::printf("%s vs %s: geometric-mean speed %.3fx over %d problems, worst %.3fx\n",
                                loaded[li]->label().c_str(), loaded[0]->label().c_str(), std::exp(log_sum / n), n,
                                worst);
            }
        }
    }
    if (failures) std::fprintf(stderr, "odnn bench: %d run(s) failed\n", failures);
    return failures ? 1 : 0;
}

}  // namespace odnn_bench
