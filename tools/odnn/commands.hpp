#pragma once

#include <string>
#include <vector>

namespace odnn_tool {

using Args = std::vector<std::string>;

int cmd_info(const Args& args);
int cmd_doctor(const Args& args);
int cmd_selftest(const Args& args);

}  // namespace odnn_tool
