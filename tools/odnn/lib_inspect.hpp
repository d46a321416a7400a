// What one cuDNN library file is, read from the file without loading it: format,
// which cuDNN component (NVIDIA's shim or a sub-library, or odnn), version and how
// that was determined, SONAME / dependencies / exports, and the CUDA major version
// it was built for where the file records one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "byte_view.hpp"

namespace odnn_tool {

struct VersionFinding {
    int major = -1, minor = -1, patch = -1, build = -1;
    std::string source;  // how it was determined
    std::string text() const;
};

struct ExportedSymbol {
    std::string name;
    std::string version;  // ELF symbol version; "" for none (and always for PE)
};

struct LibraryInfo {
    std::string path;       // as found or given
    std::string real_path;  // symlinks resolved
    std::string file_name;  // base name of path
    uint64_t size = 0;

    std::string format;  // "elf", "pe", "unknown"
    bool readable = false;
    std::string error;                  // cannot read / not a library / corrupt header
    std::vector<std::string> problems;  // damage found (truncation, bad offsets)

    // Identity.
    std::string role;    // "cudnn" (the main library), "cudnn_graph", "cudnn_ops", ...; "" when not cuDNN
    int name_major = -1;  // the major version in the file name (.so.9, 64_9.dll)
    bool is_odnn = false;  // exports odnnIsOdnn
    std::string vendor;    // "odnn", "nvidia", "unknown"

    // ELF
    int elf_class = 0;
    uint16_t machine = 0;
    std::string machine_name;
    std::string soname, rpath, runpath;
    std::vector<std::string> needed;
    // PE
    std::string pe_dll_name;
    std::vector<std::string> pe_imports;        // DLL names, normal imports
    std::vector<std::string> pe_delay_imports;  // DLL names, delay-loaded

    std::vector<ExportedSymbol> exports;  // cudnn* / odnn* exports only
    size_t export_count = 0;              // all defined dynamic symbols / PE exports

    std::vector<VersionFinding> versions;  // every way the version could be read, best first
    int cuda_major = -1;                   // CUDA major the library was built for, -1 unknown
    std::string cuda_source;
    std::vector<std::string> runtime_deps;  // libraries named in the data (loaded with dlopen), e.g. libcublasLt.so.13

    const VersionFinding* best_version() const { return versions.empty() ? nullptr : &versions.front(); }
    std::string version_text() const;  // "9.19.0" or "unknown"
    bool has_export(const std::string& name) const;
};

// Splits a library file name: "libcudnn_ops.so.9.1.0" -> role "cudnn_ops", major 9.
bool cudnn_name_parts(const std::string& file_name, std::string* role, int* major, std::string* full_version);
// Known sub-libraries of NVIDIA's cuDNN 9 (roles), in the order the shim loads them.
const std::vector<std::string>& nvidia_sublibraries();

// Inspects bytes (file content) named file_name (for messages and name-derived facts).
LibraryInfo inspect_library_bytes(ByteView bytes, const std::string& file_name);
// Inspects a file; adds facts from its surroundings (file name behind symlinks,
// wheel dist-info, the graph sub-library beside NVIDIA's shim).
LibraryInfo inspect_library_file(const std::string& path);

// cudnnGetVersion() value -> "9.19.0" (9.x: M*10000+m*100+p; 8.x: M*1000+m*100+p).
VersionFinding version_from_number(uint64_t v, const std::string& source);
// The version a library reports at run time, compared to what the file says.
int compare_versions(const VersionFinding& a, const VersionFinding& b);  // by major.minor.patch

}  // namespace odnn_tool
