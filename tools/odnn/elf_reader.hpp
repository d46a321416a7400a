// A small ELF reader for shared objects: headers, segments, sections, the dynamic
// section (DT_NEEDED, SONAME, RPATH/RUNPATH, FLAGS_1), dynamic symbols with their
// symbol versions (versym + verdef/verneed). Every offset and count comes from the
// file, so every read is bounds-checked; damage is reported, never trusted.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "byte_view.hpp"

namespace odnn_tool {

struct ElfSegment {
    uint32_t type = 0;
    uint32_t flags = 0;
    uint64_t offset = 0, vaddr = 0, filesz = 0, memsz = 0;
};

struct ElfSection {
    std::string name;
    uint32_t type = 0;
    uint64_t flags = 0, addr = 0, offset = 0, size = 0, entsize = 0;
    uint32_t link = 0, info = 0;
};

struct ElfSymbol {
    std::string name;
    std::string version;          // "" when unversioned (or no version info)
    bool version_hidden = false;  // versym bit 15: name@VER rather than name@@VER
    bool defined = false;         // st_shndx != SHN_UNDEF
    uint8_t type = 0;             // STT_*
    uint8_t bind = 0;             // STB_*
    uint8_t visibility = 0;       // STV_*
    uint16_t shndx = 0;
    uint64_t value = 0, size = 0;
};

struct ElfVersionNeed {
    std::string file;                // e.g. "libc.so.6"
    std::vector<std::string> names;  // e.g. "GLIBC_2.34"
};

struct ElfFile {
    bool ok = false;                    // header readable: the rest is as good as the file
    std::string error;                  // why !ok
    std::vector<std::string> problems;  // damage found while reading (truncation, bad offsets)

    int elf_class = 0;  // 32 or 64
    bool big_endian = false;
    uint8_t osabi = 0;
    uint16_t type = 0;  // ET_DYN = 3, ET_EXEC = 2
    uint16_t machine = 0;
    uint64_t entry = 0;
    uint64_t file_size = 0;

    std::vector<ElfSegment> segments;
    std::vector<ElfSection> sections;
    std::string interp;  // PT_INTERP

    bool has_dynamic = false;
    std::string soname;
    std::vector<std::string> needed;
    std::string rpath;    // DT_RPATH
    std::string runpath;  // DT_RUNPATH
    uint64_t flags = 0, flags_1 = 0;

    std::vector<ElfSymbol> dynsyms;
    std::string symbols_from;          // "sections" or "dynamic" (DT_SYMTAB + hash table)
    std::vector<std::string> verdefs;  // version names this file defines; [0] is usually its own base
    std::vector<ElfVersionNeed> verneeds;

    // Maps [vaddr, vaddr + len) to a file offset through the PT_LOAD segments.
    bool vaddr_to_offset(uint64_t vaddr, uint64_t len, uint64_t* off) const;
    const ElfSymbol* find_dynsym(const std::string& name) const;  // defined ones only
    const ElfSection* section(const std::string& name) const;
    const char* machine_name() const;
};

struct ElfLimits {
    uint64_t max_symbols = 1u << 22;
    uint64_t max_string_bytes = 64u << 20;  // total bytes of names kept
    uint64_t max_dynamic_entries = 1u << 16;
    uint64_t max_sections = 1u << 16;
    uint64_t max_segments = 1u << 12;
    uint64_t max_versions = 1u << 14;
};

bool looks_like_elf(ByteView bytes);
ElfFile parse_elf(ByteView bytes, const ElfLimits& limits = ElfLimits());

// ELF constants the callers use.
constexpr uint16_t kEmX86_64 = 62, kEm386 = 3, kEmAarch64 = 183, kEmPpc64 = 21, kEmArm = 40;
constexpr uint64_t kDf1NoDefLib = 0x800;
constexpr uint8_t kSttFunc = 2, kSttObject = 1;

}  // namespace odnn_tool
