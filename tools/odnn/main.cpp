// odnn: one command-line tool for the people who install, debug and measure cuDNN.
#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "bench.hpp"
#include "commands.hpp"
#include "odnn/odnn.h"

namespace {

void usage(FILE* to) {
    std::fprintf(to,
                 "usage: odnn <command> [options]\n"
                 "\n"
                 "commands:\n"
                 "  info [--api] [--markdown]   build options, backends, devices, library path;\n"
                 "                              --api lists every cuDNN function and where it works\n"
                 "  doctor [--lib PATH] [--archive FILE] [--json]\n"
                 "                              find every cuDNN (odnn's or NVIDIA's) a program could load,\n"
                 "                              say which one it gets, and check it; `odnn doctor --help`\n"
                 "  bench [options] [problem ...] the same problems through one or several cuDNN\n"
                 "                              libraries side by side; `odnn bench --help`\n"
                 "  selftest [--backend cpu|cuda] [--json]\n"
                 "                              every implemented operation against odnn's reference\n"
                 "                              implementations; exit code 0 when all pass; `odnn selftest --help`\n"
                 "  help                        this text\n");
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const std::string cmd = argv[1];
    odnn_tool::Args args(argv + 2, argv + argc);
    if (cmd == "info") return odnn_tool::cmd_info(args);
    if (cmd == "doctor") return odnn_tool::cmd_doctor(args);
    if (cmd == "help" || cmd == "--help" || cmd == "-h") {
        usage(stdout);
        return 0;
    }
    if (cmd == "bench") {
        // By default the bench measures the odnn this tool is linked with.
        Dl_info self;
        std::string lib = "libcudnn.so.9";
        if (dladdr(reinterpret_cast<void*>(&cudnnGetVersion), &self) && self.dli_fname) lib = self.dli_fname;
        return odnn_bench::cmd_bench(args, lib);
    }
    if (cmd == "selftest") return odnn_tool::cmd_selftest(args);
    std::fprintf(stderr, "odnn: unknown command '%s'\n", cmd.c_str());
    usage(stderr);
    return 2;
}
