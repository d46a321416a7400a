// Finding every cuDNN library a program on this machine could load: the loader's
// search path (LD_PRELOAD, LD_LIBRARY_PATH, ld.so.cache, ld.so.conf, default
// directories), CUDA_PATH / CUDNN_PATH and friends, the usual install prefixes, and
// the nvidia/cudnn/lib folders of Python wheels.
#pragma once

#include <string>
#include <vector>

#include "lib_inspect.hpp"
#include "loader.hpp"

namespace odnn_tool {

struct Install {
    std::string dir;                   // real path of the directory
    std::vector<std::string> aliases;  // other spellings it was found under
    std::vector<std::string> sources;  // how it was found, e.g. "ld.so.cache", "LD_LIBRARY_PATH entry 1"
    std::vector<LibraryInfo> libs;     // one per distinct cuDNN library file in it
    bool python_wheel = false;         // .../site-packages/nvidia/cudnn/lib or torch/lib
    bool on_default_path = false;      // in ld.so.cache, ld.so.conf or a default directory

    const LibraryInfo* main_lib() const;  // libcudnn.so.N (or cudnn64_N.dll)
    std::string vendor() const;           // "odnn", "nvidia", "nvidia (windows)", "mixed", "unknown"
    std::string version() const;          // of the main library, else of any
};

struct StaleCacheEntry {
    std::string name, path;
};

struct Discovery {
    std::vector<Install> installs;
    std::vector<StaleCacheEntry> stale;  // cache entries whose file is gone
    std::vector<std::string> searched;   // directories looked at (for --json)
};

// True for library file names of cuDNN (libcudnn*.so*, cudnn*64_*.dll).
bool is_cudnn_library_name(const std::string& name);
// Scans the directories; extra_dirs (e.g. the --lib folder) are included with their label.
Discovery discover(const LoaderEnv& env, const std::vector<std::pair<std::string, std::string>>& extra_dirs);
// Inspects the cuDNN libraries of one directory as an Install.
Install inspect_install_dir(const std::string& dir);

}  // namespace odnn_tool
