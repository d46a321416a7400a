#include "discovery.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "util.hpp"

namespace odnn_tool {

namespace {

std::string home() {
    std::string h = getenv_str("HOME");
    return h.empty() ? "/root" : h;
}

// Site-packages folders of the python3 on PATH (asked) and of common environments (globbed).
std::vector<std::string> site_packages_dirs() {
    std::vector<std::string> out;
    ChildResult r = run_child({"python3", "-c",
                               "import site,sys\n"
                               "p=[]\n"
                               "try: p+=site.getsitepackages()\n"
                               "except Exception: pass\n"
                               "try: p.append(site.getusersitepackages())\n"
                               "except Exception: pass\n"
                               "p+=[x for x in sys.path if x.endswith(('site-packages','dist-packages'))]\n"
                               "print('\\n'.join(p))\n"},
                              15, false);
    if (r.exit_code == 0)
        for (const std::string& l : split(r.output, "\n", false)) out.push_back(trim(l));
    const std::string h = home();
    std::vector<std::string> pats = {
        "/usr/lib/python3*/dist-packages",      "/usr/local/lib/python3*/dist-packages",
        "/usr/local/lib/python3*/site-packages", h + "/.local/lib/python3*/site-packages",
        "/opt/*/.venv/lib/python3*/site-packages", "/opt/*/venv/lib/python3*/site-packages",
        "/opt/*/lib/python3*/site-packages",    "/opt/conda/lib/python3*/site-packages",
        "/opt/conda/envs/*/lib/python3*/site-packages", h + "/.pyenv/versions/*/lib/python3*/site-packages",
        h + "/miniconda3/lib/python3*/site-packages", h + "/miniconda3/envs/*/lib/python3*/site-packages",
        h + "/anaconda3/lib/python3*/site-packages",  h + "/anaconda3/envs/*/lib/python3*/site-packages",
        h + "/.venv/lib/python3*/site-packages",      ".venv/lib/python3*/site-packages",
        "venv/lib/python3*/site-packages"};
    for (const char* var : {"VIRTUAL_ENV", "CONDA_PREFIX"}) {
        const std::string v = getenv_str(var);
        if (!v.empty()) pats.push_back(v + "/lib/python3*/site-packages");
    }
    for (const std::string& p : pats)
        for (const std::string& g : glob_paths(p)) out.push_back(g);
    return out;
}

struct Scanner {
    Discovery* d;
    std::map<std::string, size_t> by_dir;  // real dir -> index in installs
    std::set<std::string> scanned;         // spelled dirs

    void scan(const std::string& dir, const std::string& label, bool python = false, bool default_path = false) {
        if (dir.empty()) return;
        if (scanned.count(dir + "\n" + label)) return;
        scanned.insert(dir + "\n" + label);
        if (!is_dir(dir)) return;
        d->searched.push_back(dir);
        std::vector<std::string> names;
        for (const std::string& n : list_dir(dir))
            if (is_cudnn_library_name(n)) names.push_back(n);
        if (names.empty()) return;
        const std::string real = real_path(dir);
        auto it = by_dir.find(real);
        if (it == by_dir.end()) {
            Install ins = inspect_install_dir(real);
            if (ins.libs.empty()) return;
            d->installs.push_back(std::move(ins));
            it = by_dir.emplace(real, d->installs.size() - 1).first;
        }
        Install& ins = d->installs[it->second];
        if (dir != real && std::find(ins.aliases.begin(), ins.aliases.end(), dir) == ins.aliases.end())
            ins.aliases.push_back(dir);
        if (std::find(ins.sources.begin(), ins.sources.end(), label) == ins.sources.end()) ins.sources.push_back(label);
        ins.python_wheel = ins.python_wheel || python;
        ins.on_default_path = ins.on_default_path || default_path;
    }
};

}  // namespace

bool is_cudnn_library_name(const std::string& name) {
    if (starts_with(name, "libcudnn")) {
        const size_t so = name.find(".so");
        return so != std::string::npos && (so + 3 == name.size() || name[so + 3] == '.');
    }
    const std::string low = to_lower(name);
    return starts_with(low, "cudnn") && ends_with(low, ".dll");
}

const LibraryInfo* Install::main_lib() const {
    const LibraryInfo* best = nullptr;
    for (const LibraryInfo& l : libs) {
        if (l.role != "cudnn") continue;
        if (!best || (l.name_major == 9 && best->name_major != 9)) best = &l;
    }
    return best;
}

std::string Install::vendor() const {
    std::set<std::string> v;
    bool dll = false;
    for (const LibraryInfo& l : libs) {
        if (l.role == "cudnn" || l.is_odnn) v.insert(l.vendor);
        dll = dll || l.format == "pe";
    }
    if (v.empty())
        for (const LibraryInfo& l : libs) v.insert(l.vendor);
    if (v.size() > 1) return "mixed";
    if (v.empty()) return "unknown";
    std::string s = *v.begin();
    if (s == "nvidia" && dll) s = "nvidia (windows)";
    return s;
}

std::string Install::version() const {
    if (const LibraryInfo* m = main_lib())
        if (m->best_version()) return m->version_text();
    for (const LibraryInfo& l : libs)
        if (l.best_version()) return l.version_text();
    return "unknown";
}

Install inspect_install_dir(const std::string& dir) {
    Install ins;
    ins.dir = real_path(dir);
    // One entry per distinct file; the display name is the one the loader asks for
    // (lib<x>.so.<major>) where such a link exists.
    std::map<FileId, std::vector<std::string>> files;
    std::vector<FileId> order;
    for (const std::string& n : list_dir(ins.dir)) {
        if (!is_cudnn_library_name(n)) continue;
        const std::string p = join_path(ins.dir, n);
        FileId id;
        if (!file_id(p, &id)) {  // dangling link: report as unreadable
            LibraryInfo L = inspect_library_file(p);
            L.error = "broken symbolic link to " + read_link(p);
            ins.libs.push_back(L);
            continue;
        }
        if (!is_regular(p)) continue;
        if (!files.count(id)) order.push_back(id);
        files[id].push_back(n);
        if (files.size() > 64) break;
    }
    for (const FileId& id : order) {
        const std::vector<std::string>& names = files[id];
        std::string pick = names.front();
        auto score = [](const std::string& n) {
            std::string role, full;
            int major;
            if (!cudnn_name_parts(n, &role, &major, &full)) return 0;
            if (major >= 0 && full.empty() && split(n.substr(n.find(".so") + 3), ".", false).size() == 1) return 3;
            if (major >= 0) return 2;
            return 1;
        };
        for (const std::string& n : names)
            if (score(n) > score(pick)) pick = n;
        ins.libs.push_back(inspect_library_file(join_path(ins.dir, pick)));
    }
    return ins;
}

Discovery discover(const LoaderEnv& env, const std::vector<std::pair<std::string, std::string>>& extra_dirs) {
    Discovery d;
    Scanner s{&d, {}, {}};
    for (const auto& [dir, label] : extra_dirs) s.scan(dir, label);
    for (const std::string& p : env.ld_preload)
        if (is_cudnn_library_name(base_name(p))) s.scan(dir_name(p), "LD_PRELOAD");
    for (size_t i = 0; i < env.ld_library_path.size(); ++i)
        s.scan(env.ld_library_path[i].empty() ? "." : env.ld_library_path[i],
               "LD_LIBRARY_PATH entry " + std::to_string(i + 1));
    if (env.use_cache && env.cache.ok) {
        std::set<std::string> dirs;
        for (const LdCacheEntry& e : env.cache.entries) {
            if (!starts_with(e.name, "libcudnn") || !cache_entry_matches_host(e)) continue;
            if (!is_regular(e.path)) {
                d.stale.push_back({e.name, e.path});
                continue;
            }
            dirs.insert(dir_name(e.path));
        }
        for (const std::string& dir : dirs) s.scan(dir, "ld.so.cache", false, true);
    }
    for (const std::string& dir : ld_so_conf_dirs()) s.scan(dir, "ld.so.conf", false, true);
    for (const std::string& dir : env.system_dirs) s.scan(dir, "default directory", false, true);
    for (const char* var : {"CUDNN_PATH", "CUDNN_HOME", "CUDNN_ROOT", "CUDNN_LIB_DIR", "CUDA_PATH", "CUDA_HOME"}) {
        const std::string v = getenv_str(var);
        if (v.empty()) continue;
        for (const char* sub : {"", "/lib", "/lib64", "/lib/x64", "/bin", "/targets/x86_64-linux/lib"})
            s.scan(v + sub, var);
    }
    for (const char* pat : {"/usr/local/cuda*/lib*", "/usr/local/cuda*/targets/*/lib", "/opt/cuda*/lib*",
                            "/opt/nvidia/cudnn*/lib*", "/opt/cudnn*/lib*", "/usr/local/cudnn*/lib*",
                            "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/local/lib",
                            "/usr/local/lib64", "/usr/lib/wsl/lib"})
        for (const std::string& g : glob_paths(pat)) s.scan(g, "usual prefix");
    for (const std::string& sp : site_packages_dirs()) {
        s.scan(join_path(sp, "nvidia/cudnn/lib"), "Python wheel nvidia-cudnn (" + sp + ")", true);
        s.scan(join_path(sp, "torch/lib"), "PyTorch's own lib folder (" + sp + ")", true);
    }
    return d;
}

}  // namespace odnn_tool
