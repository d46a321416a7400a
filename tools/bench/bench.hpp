#pragma once

#include <string>
#include <vector>

namespace odnn_bench {

// `odnn bench ...`: returns the process exit code.
int cmd_bench(const std::vector<std::string>& args, const std::string& default_lib);

}  // namespace odnn_bench
