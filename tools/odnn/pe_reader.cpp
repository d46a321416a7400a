// PE/COFF reader: see pe_reader.hpp. Layouts from the Microsoft PE format
// specification (IMAGE_DOS_HEADER, IMAGE_NT_HEADERS, export/import/delay-import
// directories, resource directory and VS_FIXEDFILEINFO).
#include "pe_reader.hpp"

#include <algorithm>

namespace odnn_tool {

namespace {

constexpr uint32_t kDirExport = 0, kDirImport = 1, kDirResource = 2, kDirDelayImport = 13;
constexpr uint32_t kFixedFileInfoSignature = 0xFEEF04BD;

class Parser {
public:
    Parser(ByteView b, const PeLimits& lim, PeFile* f) : b_(b), lim_(lim), f_(f) {}

    void run() {
        if (!headers()) return;
        f_->ok = true;
        exports();
        imports();
        delay_imports();
        version();
    }

private:
    void problem(const std::string& s) {
        if (f_->problems.size() < 64) f_->problems.push_back(s);
    }

    bool rva_str(uint32_t rva, std::string* out, size_t max_len = 1024) {
        uint32_t off;
        if (!f_->rva_to_offset(rva, 1, &off)) return false;
        return b_.cstr(off, out, max_len);
    }

    bool headers() {
        f_->file_size = b_.size();
        if (b_.size() < 2) {
            f_->error = b_.size() == 0 ? "empty file" : "file too short for a PE file";
            return false;
        }
        if (!(b_.data()[0] == 'M' && b_.data()[1] == 'Z')) {
            f_->error = "not a PE file (no MZ signature)";
            return false;
        }
        uint32_t lfanew;
        if (!b_.u32le(0x3c, &lfanew)) {
            f_->error = "truncated: file ends inside the DOS header";
            return false;
        }
        uint8_t sig[4] = {0, 0, 0, 0};
        if (!b_.has(lfanew, 24)) {
            f_->error = "truncated or corrupt: the PE header offset (e_lfanew=" + std::to_string(lfanew) +
                        ") lies outside the file (" + std::to_string(b_.size()) + " bytes)";
            return false;
        }
        for (int i = 0; i < 4; ++i) b_.u8(lfanew + i, &sig[i]);
        if (!(sig[0] == 'P' && sig[1] == 'E' && sig[2] == 0 && sig[3] == 0)) {
            f_->error = "corrupt: no PE\\0\\0 signature at e_lfanew (an MS-DOS program, or a damaged header)";
            return false;
        }
        const uint64_t coff = lfanew + 4ull;
        uint16_t nsec = 0, optsize = 0;
        b_.u16le(coff, &f_->machine);
        b_.u16le(coff + 2, &nsec);
        b_.u16le(coff + 16, &optsize);
        b_.u16le(coff + 18, &f_->characteristics);
        f_->is_dll = (f_->characteristics & 0x2000) != 0;
        const uint64_t opt = coff + 20;
        uint16_t magic = 0;
        if (optsize < 2 || !b_.u16le(opt, &magic)) {
            f_->error = "truncated or corrupt: no optional header (an object file, not a DLL)";
            return false;
        }
        if (magic == 0x20b) f_->pe32_plus = true;
        else if (magic != 0x10b) {
            f_->error = "corrupt: optional-header magic 0x" + hex(magic) + " (expected 0x10b or 0x20b)";
            return false;
        }
        uint32_t ndirs = 0;
        const uint64_t ndirs_off = opt + (f_->pe32_plus ? 108 : 92);
        const uint64_t dirs_off = opt + (f_->pe32_plus ? 112 : 96);
        if (f_->pe32_plus) b_.u64le(opt + 24, &f_->image_base);
        else {
            uint32_t ib = 0;
            b_.u32le(opt + 28, &ib);
            f_->image_base = ib;
        }
        if (ndirs_off + 4 <= opt + optsize) b_.u32le(ndirs_off, &ndirs);
        if (ndirs > 16) {
            problem("corrupt: " + std::to_string(ndirs) + " data directories claimed (at most 16)");
            ndirs = 16;
        }
        for (uint32_t i = 0; i < ndirs; ++i) {
            const uint64_t o = dirs_off + i * 8ull;
            if (o + 8 > opt + optsize) break;
            uint32_t rva = 0, size = 0;
            if (!b_.u32le(o, &rva) || !b_.u32le(o + 4, &size)) {
                problem("truncated: data directories cut off");
                break;
            }
            dirs_[i][0] = rva;
            dirs_[i][1] = size;
        }
        const uint64_t sec = opt + optsize;
        if (nsec > lim_.max_sections) {
            problem("corrupt: " + std::to_string(nsec) + " sections claimed; reading " +
                    std::to_string(lim_.max_sections));
            nsec = static_cast<uint16_t>(lim_.max_sections);
        }
        for (uint32_t i = 0; i < nsec; ++i) {
            const uint64_t o = sec + i * 40ull;
            if (!b_.has(o, 40)) {
                problem("truncated: section table cut off after " + std::to_string(i) + " of " +
                        std::to_string(nsec) + " sections");
                break;
            }
            PeSection s;
            char name[9] = {0};
            for (int k = 0; k < 8; ++k) {
                uint8_t c = 0;
                b_.u8(o + k, &c);
                name[k] = static_cast<char>(c);
            }
            s.name = name;
            b_.u32le(o + 8, &s.virtual_size);
            b_.u32le(o + 12, &s.virtual_address);
            b_.u32le(o + 16, &s.raw_size);
            b_.u32le(o + 20, &s.raw_offset);
            b_.u32le(o + 36, &s.characteristics);
            if (s.raw_size != 0 && !b_.has(s.raw_offset, s.raw_size))
                problem("truncated: section " + s.name + " ends past the end of the file");
            f_->sections.push_back(s);
        }
        return true;
    }

    static std::string hex(uint32_t v) {
        static const char* d = "0123456789abcdef";
        std::string s;
        do {
            s.insert(s.begin(), d[v & 15]);
            v >>= 4;
        } while (v);
        return s;
    }

    void exports() {
        const uint32_t rva = dirs_[kDirExport][0];
        if (rva == 0) return;
        uint32_t o;
        if (!f_->rva_to_offset(rva, 40, &o)) {
            problem("the export directory lies outside the file");
            return;
        }
        uint32_t name_rva = 0, nfunc = 0, nnames = 0, names_rva = 0;
        b_.u32le(o + 12, &name_rva);
        b_.u32le(o + 20, &nfunc);
        b_.u32le(o + 24, &nnames);
        b_.u32le(o + 32, &names_rva);
        f_->export_functions = nfunc;
        if (!rva_str(name_rva, &f_->export_dll_name)) problem("export directory: DLL name unreadable");
        if (nnames > lim_.max_names) {
            problem("corrupt: " + std::to_string(nnames) + " exported names claimed");
            nnames = lim_.max_names;
        }
        uint32_t names_off;
        if (nnames == 0) return;
        if (!f_->rva_to_offset(names_rva, 4, &names_off)) {
            problem("export name table lies outside the file");
            return;
        }
        bool bad = false;
        for (uint32_t i = 0; i < nnames; ++i) {
            uint32_t nrva;
            if (!b_.u32le(names_off + 4ull * i, &nrva)) {
                problem("truncated: export name table cut off after " + std::to_string(i) + " names");
                break;
            }
            std::string s;
            if (rva_str(nrva, &s)) f_->exports.push_back(s);
            else bad = true;
        }
        if (bad) problem("some exported names are unreadable");
    }

    // Reads the names from an import lookup table (thunks) at rva.
    void thunk_names(uint32_t rva, PeImport* imp) {
        uint32_t o;
        if (rva == 0 || !f_->rva_to_offset(rva, 4, &o)) return;
        const unsigned w = f_->pe32_plus ? 8 : 4;
        for (uint32_t i = 0; i < lim_.max_functions_per_import; ++i) {
            uint64_t v = 0;
            if (!b_.uint(o + static_cast<uint64_t>(i) * w, w, false, &v)) break;
            if (v == 0) break;
            const uint64_t ord_flag = f_->pe32_plus ? (1ull << 63) : (1ull << 31);
            if (v & ord_flag) {
                imp->functions.push_back("#" + std::to_string(v & 0xffff));
                continue;
            }
            std::string s;
            if (rva_str(static_cast<uint32_t>(v & 0x7fffffff) + 2, &s, 512)) imp->functions.push_back(s);
        }
    }

    void imports() {
        const uint32_t rva = dirs_[kDirImport][0];
        if (rva == 0) return;
        uint32_t o;
        if (!f_->rva_to_offset(rva, 20, &o)) {
            problem("the import directory lies outside the file");
            return;
        }
        for (uint32_t i = 0; i < lim_.max_imports; ++i) {
            const uint64_t d = o + 20ull * i;
            uint32_t oft = 0, name = 0, ft = 0;
            if (!b_.u32le(d, &oft) || !b_.u32le(d + 12, &name) || !b_.u32le(d + 16, &ft)) {
                problem("truncated: import directory cut off");
                break;
            }
            if (name == 0 && oft == 0 && ft == 0) break;
            PeImport imp;
            if (!rva_str(name, &imp.dll)) {
                problem("an imported DLL name is unreadable");
                continue;
            }
            thunk_names(oft != 0 ? oft : ft, &imp);
            f_->imports.push_back(std::move(imp));
        }
    }

    void delay_imports() {
        const uint32_t rva = dirs_[kDirDelayImport][0];
        if (rva == 0) return;
        uint32_t o;
        if (!f_->rva_to_offset(rva, 32, &o)) {
            problem("the delay-import directory lies outside the file");
            return;
        }
        for (uint32_t i = 0; i < lim_.max_imports; ++i) {
            const uint64_t d = o + 32ull * i;
            uint32_t attrs = 0, name = 0, nt = 0;
            if (!b_.u32le(d, &attrs) || !b_.u32le(d + 4, &name) || !b_.u32le(d + 16, &nt)) {
                problem("truncated: delay-import directory cut off");
                break;
            }
            if (name == 0) break;
            // Old-style descriptors (attribute bit 0 clear) hold virtual addresses.
            if ((attrs & 1) == 0) {
                name = static_cast<uint32_t>(name - f_->image_base);
                nt = nt != 0 ? static_cast<uint32_t>(nt - f_->image_base) : 0;
            }
            PeImport imp;
            imp.delay_load = true;
            if (!rva_str(name, &imp.dll)) {
                problem("a delay-loaded DLL name is unreadable");
                continue;
            }
            thunk_names(nt, &imp);
            f_->imports.push_back(std::move(imp));
        }
    }

    bool read_fixed_info(uint64_t off, uint64_t end) {
        // VS_FIXEDFILEINFO: signature, struct version, file version MS/LS, product version MS/LS.
        for (uint64_t p = off; p + 24 <= end; p += 4) {
            uint32_t sig;
            if (!b_.u32le(p, &sig)) return false;
            if (sig != kFixedFileInfoSignature) continue;
            uint32_t fms = 0, fls = 0, pms = 0, pls = 0;
            b_.u32le(p + 8, &fms);
            b_.u32le(p + 12, &fls);
            b_.u32le(p + 16, &pms);
            b_.u32le(p + 20, &pls);
            f_->has_file_version = true;
            f_->file_version[0] = fms >> 16;
            f_->file_version[1] = fms & 0xffff;
            f_->file_version[2] = fls >> 16;
            f_->file_version[3] = fls & 0xffff;
            f_->has_product_version = true;
            f_->product_version[0] = pms >> 16;
            f_->product_version[1] = pms & 0xffff;
            f_->product_version[2] = pls >> 16;
            f_->product_version[3] = pls & 0xffff;
            return true;
        }
        return false;
    }

    // Follows the resource tree: type RT_VERSION (16) -> first name -> first language -> data.
    void version() {
        const uint32_t rva = dirs_[kDirResource][0];
        const uint32_t size = dirs_[kDirResource][1];
        if (rva == 0) return;
        uint32_t base;
        if (!f_->rva_to_offset(rva, 16, &base)) {
            problem("the resource directory lies outside the file");
            return;
        }
        uint64_t dir = base;
        bool want_id = true;
        for (int level = 0; level < 3; ++level) {
            uint16_t named = 0, ids = 0;
            if (!b_.u16le(dir + 12, &named) || !b_.u16le(dir + 14, &ids)) break;
            const uint32_t n = std::min<uint32_t>(named + ids, 4096);
            bool next = false;
            for (uint32_t i = 0; i < n; ++i) {
                uint32_t id = 0, to = 0;
                if (!b_.u32le(dir + 16 + 8ull * i, &id) || !b_.u32le(dir + 20 + 8ull * i, &to)) break;
                if (want_id && level == 0 && ((id & 0x80000000u) != 0 || id != 16)) continue;
                if (to & 0x80000000u) {
                    dir = base + (to & 0x7fffffffu);
                    next = true;
                    break;
                }
                // A data entry: RVA and size of the VS_VERSIONINFO block.
                uint32_t drva = 0, dsize = 0, doff = 0;
                if (b_.u32le(base + to, &drva) && b_.u32le(base + to + 4ull, &dsize) &&
                    f_->rva_to_offset(drva, std::min<uint32_t>(dsize, 64), &doff)) {
                    const uint64_t end = std::min<uint64_t>(doff + static_cast<uint64_t>(dsize), b_.size());
                    if (read_fixed_info(doff, end)) return;
                }
                break;
            }
            if (!next) break;
        }
        // Fallback: the signature anywhere in the resource data.
        if (!f_->has_file_version && size != 0) {
            const uint64_t end = std::min<uint64_t>(base + static_cast<uint64_t>(size), b_.size());
            read_fixed_info(base, end);
        }
    }

    ByteView b_;
    const PeLimits& lim_;
    PeFile* f_;
    uint32_t dirs_[16][2] = {};
};

}  // namespace

bool PeFile::rva_to_offset(uint32_t rva, uint32_t len, uint32_t* off) const {
    for (const PeSection& s : sections) {
        const uint32_t span = s.virtual_size != 0 ? std::max(s.virtual_size, s.raw_size) : s.raw_size;
        if (rva < s.virtual_address || rva - s.virtual_address >= span) continue;
        const uint64_t delta = rva - s.virtual_address;
        if (delta + len > s.raw_size) return false;
        const uint64_t o = static_cast<uint64_t>(s.raw_offset) + delta;
        if (o + len > file_size) return false;
        *off = static_cast<uint32_t>(o);
        return true;
    }
    return false;
}

const char* PeFile::machine_name() const {
    switch (machine) {
        case 0x8664: return "x64";
        case 0x14c: return "x86";
        case 0xaa64: return "arm64";
        default: return "other";
    }
}

bool looks_like_pe(ByteView b) { return b.size() >= 2 && b.data()[0] == 'M' && b.data()[1] == 'Z'; }

PeFile parse_pe(ByteView bytes, const PeLimits& limits) {
    PeFile f;
    Parser p(bytes, limits, &f);
    p.run();
    return f;
}

}  // namespace odnn_tool
