// Pieces of `odnn doctor` shared by the installed-library checks and --archive.
#pragma once

#include <string>
#include <vector>

#include "lib_inspect.hpp"
#include "report.hpp"

namespace odnn_tool {

// The cuDNN 9 API: every function our include/ headers declare (generated at build time).
const std::vector<std::string>& cudnn_api_names();

// The library as JSON (stable keys).
std::string library_json(const LibraryInfo& L);

// Exports of a main library against the API: missing names, and (ELF) the symbol
// version each carries; expected_version is e.g. "libcudnn.so.9".
Check audit_symbols(const LibraryInfo& L, const std::string& expected_version);

// Verdict of the sub-library set of one directory's worth of libraries.
struct SublibFinding {
    std::string role;
    std::string path;  // "" when missing
    std::string version;
    std::string note;
};

// cudnn_version.h text -> "9.19.0" (or "" when the macros are absent); odnn's header
// additionally defines ODNN_VERSION_*.
std::string header_version(const std::string& text, bool* is_odnn);

// Command-line entry points of the archive inspection (archive_check.cpp).
void archive_checks(const std::string& file, std::vector<Check>* checks, std::string* json);

}  // namespace odnn_tool
