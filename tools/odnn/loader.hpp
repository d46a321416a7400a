// How glibc's dynamic loader finds a shared object, modelled without loading anything:
// the ld.so.cache, ld.so.conf, and the search order (DT_RPATH of the requester and its
// loaders unless it has DT_RUNPATH, LD_LIBRARY_PATH, DT_RUNPATH, the cache, the
// default directories; objects already loaded are reused by SONAME).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace odnn_tool {

struct LdCacheEntry {
    std::string name;  // e.g. "libcudnn.so.9"
    std::string path;
    int32_t flags = 0;
    uint64_t hwcap = 0;
};

struct LdCache {
    bool ok = false;
    std::string source;  // the file, or "ldconfig -p"
    std::string error;
    std::string format;  // "glibc-ld.so.cache1.1", "ld.so-1.7.0", "ldconfig -p"
    std::vector<LdCacheEntry> entries;
};

LdCache parse_ld_cache(const uint8_t* data, size_t size);
LdCache read_ld_cache(const std::string& path);  // falls back to `ldconfig -p` when path is the system cache
LdCache parse_ldconfig_p(const std::string& text);
std::vector<std::string> ld_so_conf_dirs(const std::string& conf = "/etc/ld.so.conf");

// Whether a cache entry is for this machine's kind of program (x86-64, aarch64...).
bool cache_entry_matches_host(const LdCacheEntry& e);

struct LoaderEnv {
    std::vector<std::string> ld_library_path;  // as split from the variable ("" means the current directory)
    std::vector<std::string> ld_preload;
    LdCache cache;
    bool use_cache = true;
    std::vector<std::string> system_dirs;
    int elf_class = 64;
    uint16_t machine = 0;
};

LoaderEnv current_loader_env(const std::string& cache_path);  // from this process's environment

// One object the model has "loaded".
struct LoadedObject {
    std::string requested;  // the name asked for (DT_NEEDED or dlopen)
    std::string path;       // "" when not found
    std::string via;        // "RPATH of X", "LD_LIBRARY_PATH", "RUNPATH of X", "ld.so.cache", "default directory", ...
    std::string soname;
    std::string rpath, runpath;
    std::vector<std::string> needed;
    bool nodeflib = false;
    int parent = -1;  // index of the object that asked for it
    bool reused = false;
    std::vector<std::string> skipped;  // candidates the loader would pass over, and why
    std::string error;                 // when the file is there but unusable
};

class LoaderModel {
public:
    explicit LoaderModel(const LoaderEnv& env) : env_(env) {}

    // Adds the object at path (as a program would dlopen it by path, or an executable).
    int add_root(const std::string& path, int parent = -1, const std::string& via = "given path");
    // Resolves name as requested by object 'requester' (-1: a plain program without RPATH).
    int request(const std::string& name, int requester);
    // Loads every DT_NEEDED of every object, breadth first (as ld.so does).
    void load_needed();

    const std::vector<LoadedObject>& objects() const { return objects_; }
    std::string search_order_text(int requester) const;

private:
    bool accept(const std::string& path, std::string* why) const;
    int add_object(LoadedObject o);
    std::vector<std::string> expand(const std::string& list, int owner) const;

    const LoaderEnv& env_;
    std::vector<LoadedObject> objects_;
    size_t needed_done_ = 0;
};

}  // namespace odnn_tool
