// Model of glibc's shared-object search (elf/dl-load.c, elf/dl-cache.c behaviour).
#include "loader.hpp"

#include <cstring>
#include <map>
#include <memory>

#include "elf_reader.hpp"
#include "util.hpp"

namespace odnn_tool {

namespace {

constexpr char kNewMagic[] = "glibc-ld.so.cache";
constexpr char kNewVersion[] = "1.1";
constexpr char kOldMagic[] = "ld.so-1.7.0";
constexpr int32_t kFlagTypeMask = 0x00ff, kFlagElfLibc6 = 0x0003, kFlagRequiredMask = 0xff00;
constexpr int32_t kFlagX8664Lib64 = 0x0300, kFlagAarch64Lib64 = 0x0a00;

uint32_t rd32(const uint8_t* p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
}
uint64_t rd64(const uint8_t* p) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
}

bool cstr_at(const uint8_t* base, size_t size, uint64_t off, std::string* out) {
    return ByteView(base, size).cstr(off, out, 4096);
}

// What the model needs of a candidate file, parsed once.
struct Candidate {
    bool exists = false;
    bool fatal = false;  // the loader would stop with an error here
    bool skip = false;   // the loader passes over it (other class or machine)
    std::string why;
    ElfFile elf;
};

std::map<std::string, std::shared_ptr<Candidate>>& candidate_cache() {
    static std::map<std::string, std::shared_ptr<Candidate>> c;
    return c;
}

std::shared_ptr<Candidate> inspect(const std::string& path, const LoaderEnv& env) {
    auto& cache = candidate_cache();
    auto it = cache.find(path);
    if (it != cache.end()) return it->second;
    auto c = std::make_shared<Candidate>();
    MappedFile f;
    if (!is_regular(path)) {
        c->exists = false;
    } else if (!f.open(path)) {
        c->exists = true;
        c->fatal = true;
        c->why = "cannot open: " + f.error();
    } else {
        c->exists = true;
        const ByteView b = f.bytes();
        c->elf = parse_elf(b);
        const uint64_t ehsize = c->elf.elf_class == 32 ? 52 : 64;
        if (b.size() < ehsize && looks_like_elf(b)) {
            c->fatal = true;
            c->why = "file too short";
        } else if (!looks_like_elf(b)) {
            c->fatal = true;
            c->why = "invalid ELF header";
        } else if (!c->elf.ok) {
            c->fatal = true;
            c->why = "invalid ELF header (" + c->elf.error + ")";
        } else if (c->elf.elf_class != env.elf_class) {
            c->skip = true;
            c->why = "wrong ELF class: ELFCLASS" + std::to_string(c->elf.elf_class);
        } else if (env.machine != 0 && c->elf.machine != env.machine) {
            c->skip = true;
            c->why = std::string("built for another machine (") + c->elf.machine_name() + ")";
        } else if (c->elf.type != 3) {
            c->fatal = true;
            c->why = "not a shared object (ELF type " + std::to_string(c->elf.type) + ")";
        } else {
            bool any_load = false;
            for (const ElfSegment& s : c->elf.segments) {
                if (s.type != 1) continue;
                any_load = true;
                if (!b.has(s.offset, s.filesz)) {
                    c->fatal = true;
                    c->why = "file too short (a loadable segment ends past its end: truncated copy?)";
                }
            }
            if (!any_load && !c->fatal) {
                c->fatal = true;
                c->why = "no loadable segments (corrupt program headers)";
            }
        }
    }
    // Keep only what the model needs of big files.
    c->elf.dynsyms.clear();
    c->elf.dynsyms.shrink_to_fit();
    cache[path] = c;
    return c;
}

std::string lib_dir_name() { return is_dir("/lib/x86_64-linux-gnu") ? "lib/x86_64-linux-gnu" : "lib64"; }

}  // namespace

LdCache parse_ld_cache(const uint8_t* data, size_t size) {
    LdCache c;
    const size_t new_hdr = 48, new_ent = 24;
    size_t start = 0;
    if (size >= sizeof(kOldMagic) - 1 && std::memcmp(data, kOldMagic, sizeof(kOldMagic) - 1) == 0) {
        if (size < 16) {
            c.error = "truncated cache";
            return c;
        }
        const uint64_t nlibs = rd32(data + 12);
        const uint64_t after = 16 + nlibs * 12;
        const uint64_t aligned = (after + 7) & ~uint64_t(7);
        if (aligned + new_hdr <= size && std::memcmp(data + aligned, kNewMagic, sizeof(kNewMagic) - 1) == 0) {
            start = static_cast<size_t>(aligned);
        } else {
            // Old format only: strings follow the entries.
            if (after > size) {
                c.error = "truncated cache";
                return c;
            }
            c.format = "ld.so-1.7.0";
            for (uint64_t i = 0; i < nlibs; ++i) {
                const uint8_t* e = data + 16 + i * 12;
                LdCacheEntry en;
                en.flags = static_cast<int32_t>(rd32(e));
                if (!cstr_at(data + after, size - after, rd32(e + 4), &en.name) ||
                    !cstr_at(data + after, size - after, rd32(e + 8), &en.path))
                    continue;
                c.entries.push_back(en);
            }
            c.ok = true;
            return c;
        }
    }
    if (size - start < new_hdr || std::memcmp(data + start, kNewMagic, sizeof(kNewMagic) - 1) != 0) {
        c.error = "not a glibc ld.so.cache file";
        return c;
    }
    if (std::memcmp(data + start + 17, kNewVersion, 3) != 0) {
        c.error = "unknown ld.so.cache version";
        return c;
    }
    const uint8_t* base = data + start;
    const size_t avail = size - start;
    const uint64_t nlibs = rd32(base + 20);
    if (nlibs > (avail - new_hdr) / new_ent) {
        c.error = "corrupt ld.so.cache (entry count " + std::to_string(nlibs) + " does not fit)";
        return c;
    }
    c.format = "glibc-ld.so.cache1.1";
    for (uint64_t i = 0; i < nlibs; ++i) {
        const uint8_t* e = base + new_hdr + i * new_ent;
        LdCacheEntry en;
        en.flags = static_cast<int32_t>(rd32(e));
        en.hwcap = rd64(e + 16);
        if (!cstr_at(base, avail, rd32(e + 4), &en.name) || !cstr_at(base, avail, rd32(e + 8), &en.path)) continue;
        c.entries.push_back(en);
    }
    c.ok = true;
    return c;
}

LdCache parse_ldconfig_p(const std::string& text) {
    LdCache c;
    c.format = "ldconfig -p";
    c.source = "ldconfig -p";
    for (const std::string& line : split(text, "\n", false)) {
        // "\tlibz.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libz.so.1"
        const size_t arrow = line.find(" => ");
        const size_t paren = line.find(" (");
        if (arrow == std::string::npos || paren == std::string::npos || paren > arrow) continue;
        LdCacheEntry e;
        e.name = trim(line.substr(0, paren));
        e.path = trim(line.substr(arrow + 4));
        const std::string tags = line.substr(paren + 2, arrow - paren - 3);
        e.flags = kFlagElfLibc6;
        if (tags.find("x86-64") != std::string::npos) e.flags |= kFlagX8664Lib64;
        else if (tags.find("AArch64") != std::string::npos) e.flags |= kFlagAarch64Lib64;
        if (tags.find("hwcap") != std::string::npos) e.hwcap = 1;
        c.entries.push_back(e);
    }
    c.ok = !c.entries.empty();
    if (!c.ok) c.error = "ldconfig -p printed no entries";
    return c;
}

LdCache read_ld_cache(const std::string& path) {
    MappedFile f;
    LdCache c;
    if (f.open(path)) {
        c = parse_ld_cache(f.bytes().data(), f.bytes().size());
        c.source = path;
        if (c.ok) return c;
    } else {
        c.error = f.error();
        c.source = path;
    }
    if (path == "/etc/ld.so.cache") {
        for (const char* exe : {"/sbin/ldconfig", "/usr/sbin/ldconfig", "ldconfig"}) {
            ChildResult r = run_child({exe, "-p"}, 20, false);
            if (r.exit_code == 0) {
                LdCache p = parse_ldconfig_p(r.output);
                if (p.ok) return p;
            }
        }
    }
    return c;
}

std::vector<std::string> ld_so_conf_dirs(const std::string& conf) {
    std::vector<std::string> dirs;
    std::vector<std::pair<std::string, int>> todo = {{conf, 0}};
    size_t files = 0;
    while (!todo.empty() && files < 256) {
        auto [file, depth] = todo.back();
        todo.pop_back();
        ++files;
        std::string text;
        if (!read_text_file(file, &text)) continue;
        for (std::string line : split(text, "\n", false)) {
            const size_t hash = line.find('#');
            if (hash != std::string::npos) line = line.substr(0, hash);
            line = trim(line);
            if (line.empty()) continue;
            if (starts_with(line, "include") && line.size() > 7 && (line[7] == ' ' || line[7] == '\t')) {
                if (depth > 8) continue;
                for (const std::string& pat : split(trim(line.substr(8)), " \t", false)) {
                    const std::string full = pat[0] == '/' ? pat : join_path(dir_name(file), pat);
                    for (const std::string& g : glob_paths(full)) todo.emplace_back(g, depth + 1);
                }
                continue;
            }
            if (starts_with(line, "hwcap")) continue;
            for (const std::string& d : split(line, " \t,:=", false)) dirs.push_back(d);
        }
    }
    return dirs;
}

bool cache_entry_matches_host(const LdCacheEntry& e) {
    if ((e.flags & kFlagTypeMask) != kFlagElfLibc6) return false;
#if defined(__x86_64__)
    return (e.flags & kFlagRequiredMask) == kFlagX8664Lib64;
#elif defined(__aarch64__)
    return (e.flags & kFlagRequiredMask) == kFlagAarch64Lib64;
#else
    return true;
#endif
}

LoaderEnv current_loader_env(const std::string& cache_path) {
    LoaderEnv env;
    const char* llp = std::getenv("LD_LIBRARY_PATH");
    if (llp && *llp) env.ld_library_path = split(llp, ":;", true);
    const char* pre = std::getenv("LD_PRELOAD");
    if (pre && *pre) env.ld_preload = split(pre, ": ", false);
    if (cache_path == "none") {
        env.use_cache = false;
        env.cache.ok = false;
        env.cache.source = "none";
        env.cache.error = "ignored (--ld-cache none)";
    } else {
        env.cache = read_ld_cache(cache_path);
    }
#if defined(__x86_64__)
    env.machine = kEmX86_64;
#elif defined(__aarch64__)
    env.machine = kEmAarch64;
#endif
    env.elf_class = sizeof(void*) == 8 ? 64 : 32;
#if defined(__x86_64__)
    if (is_dir("/usr/lib/x86_64-linux-gnu"))
        env.system_dirs = {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib", "/usr/lib"};
    else
        env.system_dirs = {"/lib64", "/usr/lib64"};
#elif defined(__aarch64__)
    if (is_dir("/usr/lib/aarch64-linux-gnu"))
        env.system_dirs = {"/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/lib", "/usr/lib"};
    else
        env.system_dirs = {"/lib64", "/usr/lib64"};
#else
    env.system_dirs = {"/lib", "/usr/lib"};
#endif
    return env;
}

std::vector<std::string> LoaderModel::expand(const std::string& list, int owner) const {
    std::vector<std::string> out;
    const std::string origin = owner >= 0 && !objects_[owner].path.empty() ? dir_name(objects_[owner].path) : ".";
    for (std::string d : split(list, ":", true)) {
        for (const char* tok : {"${ORIGIN}", "$ORIGIN"}) {
            size_t p;
            while ((p = d.find(tok)) != std::string::npos) d.replace(p, std::strlen(tok), origin);
        }
        for (const char* tok : {"${LIB}", "$LIB"}) {
            size_t p;
            while ((p = d.find(tok)) != std::string::npos) d.replace(p, std::strlen(tok), lib_dir_name());
        }
        for (const char* tok : {"${PLATFORM}", "$PLATFORM"}) {
            size_t p;
            while ((p = d.find(tok)) != std::string::npos) d.replace(p, std::strlen(tok), "x86_64");
        }
        if (d.empty()) d = ".";
        out.push_back(d);
    }
    return out;
}

int LoaderModel::add_object(LoadedObject o) {
    if (!o.path.empty() && o.error.empty()) {
        auto c = inspect(o.path, env_);
        o.soname = c->elf.soname;
        o.rpath = c->elf.rpath;
        o.runpath = c->elf.runpath;
        o.needed = c->elf.needed;
        o.nodeflib = (c->elf.flags_1 & kDf1NoDefLib) != 0;
    }
    objects_.push_back(std::move(o));
    return static_cast<int>(objects_.size()) - 1;
}

int LoaderModel::add_root(const std::string& path, int parent, const std::string& via) {
    LoadedObject o;
    o.requested = path;
    o.parent = parent;
    o.via = via;
    auto c = inspect(path, env_);
    o.path = path;
    if (!c->exists) o.error = "not found";
    else if (c->fatal || c->skip) o.error = c->why;
    return add_object(std::move(o));
}

int LoaderModel::request(const std::string& name, int requester) {
    LoadedObject o;
    o.requested = name;
    o.parent = requester;
    if (objects_.size() > 4096) {
        o.error = "too many objects";
        return add_object(std::move(o));
    }
    // Already loaded under this name (its SONAME or the name it was requested by)?
    for (size_t i = 0; i < objects_.size(); ++i) {
        const LoadedObject& l = objects_[i];
        if (l.path.empty() || !l.error.empty() || l.reused) continue;
        if (l.soname == name || l.requested == name) {
            o.path = l.path;
            o.via = "already loaded (" + base_name(l.path) + ")";
            o.reused = true;
            o.soname = l.soname;
            objects_.push_back(std::move(o));
            return static_cast<int>(objects_.size()) - 1;
        }
    }
    if (name.find('/') != std::string::npos) {
        auto c = inspect(name, env_);
        o.path = name;
        o.via = "path given";
        if (!c->exists) {
            o.path.clear();
            o.error = "not found";
        } else if (c->fatal || c->skip) {
            o.error = c->why;
        }
        return add_object(std::move(o));
    }
    struct Dir {
        std::string dir, label;
    };
    std::vector<Dir> dirs;
    const bool has_runpath = requester >= 0 && !objects_[requester].runpath.empty();
    if (requester >= 0 && !has_runpath) {
        for (int r = requester; r >= 0; r = objects_[r].parent) {
            if (objects_[r].rpath.empty()) continue;
            for (const std::string& d : expand(objects_[r].rpath, r))
                dirs.push_back({d, "RPATH of " + base_name(objects_[r].path)});
        }
    }
    for (size_t i = 0; i < env_.ld_library_path.size(); ++i)
        dirs.push_back({env_.ld_library_path[i].empty() ? "." : env_.ld_library_path[i],
                        "LD_LIBRARY_PATH entry " + std::to_string(i + 1)});
    if (has_runpath)
        for (const std::string& d : expand(objects_[requester].runpath, requester))
            dirs.push_back({d, "RUNPATH of " + base_name(objects_[requester].path)});
    const bool nodeflib = requester >= 0 && objects_[requester].nodeflib;

    FileId id;
    auto try_path = [&](const std::string& p, const std::string& label) -> int {
        auto c = inspect(p, env_);
        if (!c->exists) return -2;
        if (c->skip) {
            o.skipped.push_back(p + " (" + c->why + ")");
            return -2;
        }
        o.path = p;
        o.via = label;
        if (c->fatal) {
            o.error = c->why;
            return add_object(std::move(o));
        }
        // The same file loaded under another name is reused.
        if (file_id(p, &id)) {
            for (size_t i = 0; i < objects_.size(); ++i) {
                FileId other;
                if (!objects_[i].path.empty() && objects_[i].error.empty() && !objects_[i].reused &&
                    file_id(objects_[i].path, &other) && other == id) {
                    o.reused = true;
                    o.via = label + ", already loaded";
                    o.soname = objects_[i].soname;
                    objects_.push_back(std::move(o));
                    return static_cast<int>(objects_.size()) - 1;
                }
            }
        }
        return add_object(std::move(o));
    };
    for (const Dir& d : dirs) {
        const int r = try_path(join_path(d.dir, name), d.label);
        if (r != -2) return r;
    }
    if (!nodeflib) {
        if (env_.use_cache && env_.cache.ok) {
            const LdCacheEntry* pick = nullptr;
            for (const LdCacheEntry& e : env_.cache.entries) {
                if (e.name != name || !cache_entry_matches_host(e)) continue;
                if (!pick || (pick->hwcap != 0 && e.hwcap == 0)) pick = &e;
                if (e.hwcap == 0) break;
            }
            if (pick) {
                const int r = try_path(pick->path, "ld.so.cache");
                if (r != -2) return r;
                o.skipped.push_back(pick->path + " (listed in ld.so.cache but missing: stale cache, run ldconfig)");
            }
        }
        for (const std::string& d : env_.system_dirs) {
            const int r = try_path(join_path(d, name), "default directory " + d);
            if (r != -2) return r;
        }
    }
    o.path.clear();
    o.error = "not found";
    return add_object(std::move(o));
}

void LoaderModel::load_needed() {
    while (needed_done_ < objects_.size()) {
        const size_t i = needed_done_++;
        if (objects_[i].path.empty() || !objects_[i].error.empty() || objects_[i].reused) continue;
        const std::vector<std::string> needed = objects_[i].needed;
        for (const std::string& n : needed) request(n, static_cast<int>(i));
    }
}

std::string LoaderModel::search_order_text(int requester) const {
    std::string s;
    const bool has_runpath = requester >= 0 && !objects_[requester].runpath.empty();
    if (requester < 0) s += "LD_PRELOAD, the program's DT_RPATH (if it has no DT_RUNPATH), ";
    else if (!has_runpath) s += "DT_RPATH of " + base_name(objects_[requester].path) + " and its loaders, ";
    s += "LD_LIBRARY_PATH";
    if (requester < 0) s += ", the program's DT_RUNPATH";
    else if (has_runpath) s += ", DT_RUNPATH of " + base_name(objects_[requester].path);
    s += ", /etc/ld.so.cache, default directories";
    return s;
}

}  // namespace odnn_tool
