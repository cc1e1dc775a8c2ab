// The .pt2 archive reader, white-box (aotrun_core), on archives written here
// with libzip: layout and model lookup, every refusal of a hostile or broken
// archive, the private extraction directory, and the parser of Inductor's
// generated input checks. Needs no libtorch.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "device/cuda/cuda_context.hpp"
#include "package/pt2/bridge/aoti_bridge.hpp"
#include "package/pt2/archive/pt2_archive.hpp"
#include "package/pt2/archive/private_dir.hpp"
#include "package/pt2/provider/tensor_convert.hpp"
#include "package/pt2/specs/input_layout.hpp"
#include "package/pt2/specs/wrapper_specs.hpp"
#include "package/pt2/archive/zip_archive.hpp"
#include "base/error.hpp"

using aotrun::Code;
using aotrun::Error;
using aotrun::Pt2Options;
using namespace aotrun::pt2;

namespace {

struct File {
  std::string name;
  std::string data;
  bool symlink = false;
  bool stored = false;  // method 0, as torch writes a .pt2
};

// Writes a zip with `files` to a fresh temporary path and returns it.
std::string write_zip(const std::vector<File>& files, const char* tag) {
  char tmpl[] = "/tmp/aotrun-pt2-test-XXXXXX";
  const int fd = ::mkstemp(tmpl);
  EXPECT_GE(fd, 0);
  ::close(fd);
  const std::string path = std::string(tmpl) + "-" + tag + ".pt2";
  ::rename(tmpl, path.c_str());
  int err = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  EXPECT_NE(z, nullptr);
  for (const auto& f : files) {
    zip_source_t* s = zip_source_buffer(z, f.data.data(), f.data.size(), 0);
    const zip_int64_t i = zip_file_add(z, f.name.c_str(), s, ZIP_FL_ENC_UTF_8);
    EXPECT_GE(i, 0) << zip_strerror(z);
    if (f.symlink) zip_file_set_external_attributes(z, zip_uint64_t(i), 0, ZIP_OPSYS_UNIX, (0120777u) << 16);
    if (f.stored) {
      EXPECT_EQ(zip_set_file_compression(z, zip_uint64_t(i), ZIP_CM_STORE, 0), 0) << zip_strerror(z);
    }
  }
  EXPECT_EQ(zip_close(z), 0);
  return path;
}

struct TempZip {
  std::string path;
  TempZip(const std::vector<File>& files, const char* tag) : path(write_zip(files, tag)) {}
  ~TempZip() { ::unlink(path.c_str()); }
};

std::string elf_stub() {
  return std::string(
             "\x7f"
             "ELF",
             4) +
         std::string(60, '\0');
}

Code code_of(const std::function<void()>& f, std::string* message = nullptr) {
  try {
    f();
  } catch (const Error& e) {
    if (message != nullptr) *message = e.what();
    return e.code();
  }
  return Code::Ok;
}

// `n` bytes from a linear congruential generator seeded with `seed`.
std::string pseudo_random(size_t n, uint32_t seed) {
  std::string s(n, '\0');
  for (char& c : s) {
    seed = seed * 1664525u + 1013904223u;
    c = static_cast<char>(seed >> 24);
  }
  return s;
}

// The whole file at `path` ("" when it cannot be read).
std::string file_bytes(const std::string& path) {
  std::string out;
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return out;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  std::fclose(f);
  return out;
}

// Overwrites `n` bytes at `offset` of the file at `path` with 0x55.
void scribble(const std::string& path, off_t offset, size_t n) {
  const int fd = ::open(path.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  const std::string junk(n, '\x55');
  ASSERT_EQ(::pwrite(fd, junk.data(), n, offset), ssize_t(n));
  ::close(fd);
}

// Opens the archive at `path` and extracts its model "model" into a fresh
// private directory; the code that ended it (Ok when it did not throw).
Code extract_code(const std::string& path, std::string* message) {
  return code_of(
      [&] {
        auto zip = ZipArchive::open(path);
        PrivateDir dir;
        extract_model(*zip, find_model(*zip, "model"), dir);
      },
      message);
}

}  // namespace

TEST(Pt2Archive, FindsTheModelUnderTheArchivePrefixAndReadsItsMetadata) {
  TempZip z({{"mlp/archive_format", "pt2"},
             {"mlp/data/aotinductor/model/abc.so", elf_stub()},
             {"mlp/data/aotinductor/model/abc.cpp", "// wrapper"},
             {"mlp/data/aotinductor/model/abc_metadata.json", "{\"AOTI_DEVICE_KEY\": \"cpu\"}"},
             {"mlp/data/aotinductor/other/def.so", elf_stub()}},
            "prefix");
  auto zip = ZipArchive::open(z.path);
  EXPECT_EQ(list_models(*zip), (std::vector<std::string>{"model", "other"}));
  const Pt2Model m = find_model(*zip, "model");
  EXPECT_EQ(m.library.name, "mlp/data/aotinductor/model/abc.so");
  EXPECT_EQ(m.files.size(), 3u);
  EXPECT_EQ(m.metadata_json, "{\"AOTI_DEVICE_KEY\": \"cpu\"}");
  // Without a prefix too.
  TempZip flat({{"data/aotinductor/model/x.so", elf_stub()}}, "flat");
  EXPECT_EQ(find_model(*ZipArchive::open(flat.path), "model").library.name, "data/aotinductor/model/x.so");
}

TEST(Pt2Archive, ExtractsIntoAPrivateDirectoryRemovedAfterwards) {
  TempZip z({{"p/data/aotinductor/model/abc.so", elf_stub()}, {"p/data/aotinductor/model/abc.cpp", "int x;"}},
            "extract");
  auto zip = ZipArchive::open(z.path);
  const Pt2Model m = find_model(*zip, "model");
  std::string dir_path, so;
  {
    PrivateDir dir;
    dir_path = dir.path();
    struct stat st {};
    ASSERT_EQ(::stat(dir_path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    EXPECT_NE(dir_path.find("aotrun-pt2-"), std::string::npos);
    so = extract_model(*zip, m, dir);
    EXPECT_EQ(so, dir_path + "/abc.so");
    ASSERT_EQ(::stat(so.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0500u);
    EXPECT_EQ(st.st_size, 64);
    ASSERT_EQ(::stat((dir_path + "/abc.cpp").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0400u);
  }
  struct stat st {};
  EXPECT_NE(::stat(dir_path.c_str(), &st), 0) << "private directory left behind";
}

TEST(Pt2Archive, NotAZipIsBadPackage) {
  char tmpl[] = "/tmp/aotrun-pt2-notzip-XXXXXX";
  const int fd = ::mkstemp(tmpl);
  ASSERT_EQ(::write(fd, "hello, not a zip at all", 23), 23);
  ::close(fd);
  std::string msg;
  EXPECT_EQ(code_of([&] { ZipArchive::open(tmpl); }, &msg), Code::BadPackage);
  EXPECT_NE(msg.find("not a zip archive"), std::string::npos) << msg;
  ::unlink(tmpl);
  EXPECT_EQ(code_of([&] { ZipArchive::open("/nonexistent/x.pt2"); }), Code::NotFound);
}

TEST(Pt2Archive, ZipWithoutAnAotInductorModelIsBadPackage) {
  TempZip z({{"readme.txt", "hi"}, {"data/weights/w.bin", "xx"}}, "nomodel");
  std::string msg;
  EXPECT_EQ(code_of([&] { find_model(*ZipArchive::open(z.path), "model"); }, &msg), Code::BadPackage);
  EXPECT_NE(msg.find("not an AOTInductor package"), std::string::npos) << msg;
}

TEST(Pt2Archive, UnknownModelNameIsNotFoundAndListsTheModels) {
  TempZip z({{"a/data/aotinductor/model/x.so", elf_stub()}, {"a/data/aotinductor/encoder/y.so", elf_stub()}}, "names");
  std::string msg;
  EXPECT_EQ(code_of([&] { find_model(*ZipArchive::open(z.path), "decoder"); }, &msg), Code::NotFound);
  EXPECT_NE(msg.find("no model named 'decoder'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("encoder, model"), std::string::npos) << msg;
}

TEST(Pt2Archive, ModelWithoutOrWithTwoLibrariesIsBadPackage) {
  TempZip none({{"a/data/aotinductor/model/x.cpp", "int x;"}}, "noso");
  std::string msg;
  EXPECT_EQ(code_of([&] { find_model(*ZipArchive::open(none.path), "model"); }, &msg), Code::BadPackage);
  EXPECT_NE(msg.find("no compiled library"), std::string::npos) << msg;
  TempZip two({{"a/data/aotinductor/model/x.so", elf_stub()}, {"a/data/aotinductor/model/y.so", elf_stub()}}, "twoso");
  EXPECT_EQ(code_of([&] { find_model(*ZipArchive::open(two.path), "model"); }, &msg), Code::BadPackage);
  EXPECT_NE(msg.find("2 libraries"), std::string::npos) << msg;
}

TEST(Pt2Archive, TraversalAndSymlinkEntriesAreRefused) {
  EXPECT_FALSE(safe_entry_name("/abs/x.so"));
  EXPECT_FALSE(safe_entry_name("a/../b"));
  EXPECT_FALSE(safe_entry_name("a//b"));
  EXPECT_FALSE(safe_entry_name("a/./b"));
  EXPECT_FALSE(safe_entry_name("a\\b"));
  EXPECT_FALSE(safe_entry_name(std::string("a\x01") + "b"));
  EXPECT_TRUE(safe_entry_name("a/data/aotinductor/model/x.so"));
  EXPECT_TRUE(safe_entry_name("a/dir/"));

  TempZip dots({{"a/data/aotinductor/model/x.so", elf_stub()}, {"a/data/aotinductor/model/..", "x"}}, "dots");
  std::string msg;
  EXPECT_EQ(code_of([&] { find_model(*ZipArchive::open(dots.path), "model"); }, &msg), Code::BadPackage);
  EXPECT_NE(msg.find("unsafe name"), std::string::npos) << msg;

  TempZip link(
      {{"a/data/aotinductor/model/x.so", elf_stub()}, {"a/data/aotinductor/model/evil.cpp", "/etc/passwd", true}},
      "symlink");
  EXPECT_EQ(code_of([&] { find_model(*ZipArchive::open(link.path), "model"); }, &msg), Code::BadPackage);
  EXPECT_NE(msg.find("symbolic link"), std::string::npos) << msg;
}

TEST(Pt2Archive, DecompressionBombIsRefusedBeforeExtraction) {
  const std::string zeros(20u << 20, '\0');  // 20 MiB that deflate to ~20 KiB
  TempZip z({{"a/data/aotinductor/model/x.so", zeros}}, "bomb");
  std::string msg;
  EXPECT_EQ(code_of([&] { ZipArchive::open(z.path); }, &msg), Code::BadPackage);
  EXPECT_NE(msg.find("decompression bomb"), std::string::npos) << msg;
  // The same archive with a generous ratio limit opens: the limit is what refused it.
  ZipLimits loose;
  loose.max_ratio = 1u << 20;
  EXPECT_NO_THROW(ZipArchive::open(z.path, loose));
}

TEST(Pt2Archive, TruncatedArchiveIsBadPackage) {
  std::string data(200000, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>((i * 7919) >> 3);
  TempZip z({{"a/data/aotinductor/model/x.so", data}}, "trunc");
  struct stat st {};
  ASSERT_EQ(::stat(z.path.c_str(), &st), 0);
  // Cut the archive in the middle: its central directory is gone.
  ASSERT_EQ(::truncate(z.path.c_str(), st.st_size / 2), 0);
  std::string msg;
  EXPECT_EQ(code_of([&] { ZipArchive::open(z.path); }, &msg), Code::BadPackage);
  EXPECT_NE(msg.find(z.path), std::string::npos) << msg;
}

TEST(Pt2Archive, CorruptEntryDataIsBadPackageOnExtraction) {
  std::string data(100000, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 31);
  TempZip z({{"a/data/aotinductor/model/x.so", data}}, "corrupt");
  // Flip bytes in the middle of the compressed data (the index stays intact).
  scribble(z.path, 2000, 64);
  std::string msg;
  EXPECT_EQ(extract_code(z.path, &msg), Code::BadPackage) << msg;
}

// A stored entry (torch stores every entry of a .pt2) is copied from the
// archive file in 1 MiB pieces, each checked into the CRC-32: the copy is
// the entry's bytes exactly, across piece edges, and a deflated entry
// beside it still comes through libzip.
TEST(Pt2Archive, StoredEntriesAreCopiedFromTheArchiveFileByteForByte) {
  const std::string lib = pseudo_random((3u << 20) + 12345, 7), src = pseudo_random(70000, 9);
  TempZip z({{"a/data/aotinductor/model/x.so", lib, false, true}, {"a/data/aotinductor/model/x.cpp", src}}, "stored");
  auto zip = ZipArchive::open(z.path);
  const Pt2Model m = find_model(*zip, "model");
  for (const auto& e : m.files) EXPECT_EQ(e.stored, e.name == m.library.name) << e.name;
  PrivateDir dir;
  const std::string so = extract_model(*zip, m, dir);
  EXPECT_EQ(file_bytes(so), lib);
  EXPECT_EQ(file_bytes(dir.path() + "/x.cpp"), src);
}

TEST(Pt2Archive, CorruptStoredEntryIsBadPackageNamingItsCrc) {
  TempZip z({{"a/data/aotinductor/model/x.so", pseudo_random(100000, 3), false, true}}, "corrupt-stored");
  scribble(z.path, 2000, 64);  // inside the entry's data; the index stays intact
  std::string msg;
  EXPECT_EQ(extract_code(z.path, &msg), Code::BadPackage) << msg;
  EXPECT_NE(msg.find("'a/data/aotinductor/model/x.so' is corrupt or truncated: the CRC-32 of its data is"),
            std::string::npos)
      << msg;
}

// The archive cut short after its index was read: the stored entry's data
// no longer lies inside the file, and extraction says the archive is bad
// (through libzip, which reads the missing bytes) instead of copying less.
TEST(Pt2Archive, ArchiveCutAfterOpenIsBadPackageOnExtraction) {
  TempZip z({{"a/data/aotinductor/model/x.so", pseudo_random(300000, 5), false, true}}, "cut-after-open");
  auto zip = ZipArchive::open(z.path);
  const Pt2Model m = find_model(*zip, "model");
  ASSERT_EQ(::truncate(z.path.c_str(), 150000), 0);
  std::string msg;
  const Code c = code_of(
      [&] {
        PrivateDir dir;
        extract_model(*zip, m, dir);
      },
      &msg);
  EXPECT_EQ(c, Code::BadPackage) << msg;
  EXPECT_NE(msg.find("x.so"), std::string::npos) << msg;
}

TEST(Pt2Archive, FuzzedBytesNeverCrashTheIndexReader) {
  TempZip z({{"a/data/aotinductor/model/x.so", elf_stub()}, {"a/data/aotinductor/model/x.cpp", "int a;"}}, "fuzz");
  const std::string bytes = file_bytes(z.path);
  ASSERT_FALSE(bytes.empty());
  uint32_t seed = 12345;
  for (int round = 0; round < 2000; ++round) {
    std::string b = bytes;
    for (int k = 0; k < 4; ++k) {
      seed = seed * 1664525u + 1013904223u;
      b[seed % b.size()] = static_cast<char>(seed >> 24);
    }
    const Code c = code_of([&] {
      auto zip = ZipArchive::open_memory(b.data(), b.size(), "mutated");
      const Pt2Model m = find_model(*zip, "model");
      for (const auto& e : m.files) zip->read(e, 1 << 20);
    });
    EXPECT_TRUE(c == Code::Ok || c == Code::BadPackage || c == Code::NotFound) << int(c);
  }
}

// The shape of what Inductor generates (torch 2.15, cpp_wrapper_cpu.py).
TEST(Pt2WrapperSpecs, ParsesDtypesStaticDimsRangesAndRank) {
  const std::string src = R"(
    int32_t arg2_1_expected_dtype = aoti_torch_dtype_float32();
    if (arg2_1_expected_dtype != arg2_1_dtype) {
        std::stringstream ss;
        ss << "input_handles[0]: unmatched dtype, "
           << "expected: " << arg2_1_expected_dtype << "(at::kFloat), "
    auto arg2_1_size = arg2_1.sizes();
    if (arg2_1_size[0] < 1) {
        ss << "input_handles[0]: dim value is too small at 0, "
           << "expected it to be >= 1, " << "but got: "
    if (arg2_1_size[0] > 64) {
        ss << "input_handles[0]: dim value is too large at 0, "
           << "expected to be <= 64, " << "but got: "
    if (64 != arg2_1_size[1]) {
        ss << "input_handles[0]: unmatched dim value at 1, "
           << "expected: 64, " << "but got: " << arg2_1_size[1]
    if (1 != arg2_1_stride[1]) {
        ss << "input_handles[0]: unmatched stride value at 1, "
    int32_t arg3_1_expected_dtype = aoti_torch_dtype_int64();
    if (arg3_1_expected_dtype != arg3_1_dtype) {
        std::stringstream ss;
        ss << "input_handles[1]: unmatched dtype, "
    if (8 != arg3_1_size[0]) {
        ss << "input_handles[1]: unmatched dim value at 0, "
           << "expected: 8, " << "but got: " << arg3_1_size[0]
  )";
  std::vector<InputCheck> c;
  std::string why;
  ASSERT_TRUE(parse_input_checks(src, 2, &c, &why)) << why;
  EXPECT_EQ(c[0].dtype, "float32");
  EXPECT_EQ(c[0].rank, 2);
  EXPECT_EQ(c[0].dims, (std::vector<int64_t>{-1, 64}));
  EXPECT_EQ(c[0].min_dims, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(c[0].max_dims, (std::vector<int64_t>{64, -1}));
  EXPECT_EQ(c[1].dtype, "int64");
  EXPECT_EQ(c[1].dims, (std::vector<int64_t>{8}));
  EXPECT_FALSE(parse_input_checks(src, 3, &c, &why));
  EXPECT_NE(why.find("input 2"), std::string::npos) << why;
  EXPECT_FALSE(parse_input_checks("void run_impl() {}", 1, &c, &why));
  EXPECT_NE(why.find("no input checks"), std::string::npos) << why;
}

namespace {

// A directory standing for a libtorch lib/ (files only: nothing is loaded,
// the CUDA checks look for libtorch_cuda.so by name), and a scratch TMPDIR
// that must stay empty (nothing extracted from a refused archive).
struct FakeDirs {
  std::string libtorch, tmp;
  explicit FakeDirs(bool with_cuda) {
    char a[] = "/tmp/aotrun-fake-libtorch-XXXXXX", b[] = "/tmp/aotrun-fake-tmp-XXXXXX";
    libtorch = ::mkdtemp(a);
    tmp = ::mkdtemp(b);
    touch(libtorch + "/libtorch_cpu.so");
    if (with_cuda) touch(libtorch + "/libtorch_cuda.so");
    ::setenv("AOTRUN_TMPDIR", tmp.c_str(), 1);
  }
  ~FakeDirs() {
    ::unsetenv("AOTRUN_TMPDIR");
    std::system(("rm -rf '" + libtorch + "' '" + tmp + "'").c_str());
  }
  static void touch(const std::string& p) { std::fclose(std::fopen(p.c_str(), "w")); }
  bool tmp_empty() const {
    DIR* d = ::opendir(tmp.c_str());
    int n = 0;
    while (dirent* e = d ? ::readdir(d) : nullptr) n += e->d_name[0] != '.';
    if (d) ::closedir(d);
    return n == 0;
  }
};

std::vector<File> cuda_archive(const char* device) {
  return {{"a/data/aotinductor/model/x.so", elf_stub()},
          {"a/data/aotinductor/model/x_metadata.json", std::string("{\"AOTI_DEVICE_KEY\": \"") + device + "\"}"}};
}

}  // namespace

// A CUDA archive runs on aotrun's shim only: libtorch asked for is refused
// before anything is extracted, and without a GPU it is DEVICE with CUDA's
// reason.
// Strides the checks state: row-major ones (also beside dynamic dims, whose
// strides are not stated) leave the layout row-major; channels_last ones are
// the layout; a non-row-major layout that depends on a dynamic dim, or one
// with gaps, is refused (aotrun could not provide it).
TEST(Pt2WrapperSpecs, ReadsTheStridesAnInputWasCompiledFor) {
  const std::string src = R"(
    int32_t arg6_1_expected_dtype = aoti_torch_dtype_float32();
        ss << "input_handles[0]: unmatched dtype, "
    if (2 != arg6_1_size[0]) {
        ss << "input_handles[0]: unmatched dim value at 0, "
           << "expected: 2, " << "but got: " << arg6_1_size[0]
        ss << "input_handles[0]: unmatched dim value at 1, "
           << "expected: 3, " << "but got: " << arg6_1_size[1]
        ss << "input_handles[0]: unmatched dim value at 2, "
           << "expected: 8, " << "but got: " << arg6_1_size[2]
        ss << "input_handles[0]: unmatched dim value at 3, "
           << "expected: 8, " << "but got: " << arg6_1_size[3]
        ss << "input_handles[0]: unmatched stride value at 0, "
           << "expected: 192, " << "but got: " << arg6_1_stride[0]
        ss << "input_handles[0]: unmatched stride value at 1, "
           << "expected: 1, " << "but got: " << arg6_1_stride[1]
        ss << "input_handles[0]: unmatched stride value at 2, "
           << "expected: 24, " << "but got: " << arg6_1_stride[2]
        ss << "input_handles[0]: unmatched stride value at 3, "
           << "expected: 3, " << "but got: " << arg6_1_stride[3]
  )";
  std::vector<InputCheck> c;
  std::string why;
  ASSERT_TRUE(parse_input_checks(src, 1, &c, &why)) << why;
  EXPECT_EQ(c[0].strides, (std::vector<int64_t>{192, 1, 24, 3}));
  std::vector<int64_t> layout;
  ASSERT_TRUE(layout_from_checks(c[0], &layout, &why)) << why;
  EXPECT_EQ(layout, (std::vector<int64_t>{192, 1, 24, 3}));

  InputCheck k;  // [B, T, 16] row-major, B and T dynamic: strides of dims 1 and 2 stated
  k.dims = {-1, -1, 16};
  k.strides = {-1, 16, 1};
  ASSERT_TRUE(layout_from_checks(k, &layout, &why)) << why;
  EXPECT_TRUE(layout.empty());
  k.dims = {-1, 3, 8, 8};  // channels_last with a dynamic batch: every stride is static
  k.strides = {192, 1, 24, 3};
  ASSERT_TRUE(layout_from_checks(k, &layout, &why)) << why;
  EXPECT_EQ(layout, k.strides);
  k.dims = {2, 3, -1, 8};  // channels_last with a dynamic height: strides 0 and 2 unknown
  k.strides = {-1, 1, -1, 3};
  EXPECT_FALSE(layout_from_checks(k, &layout, &why));
  EXPECT_NE(why.find("depends on a dynamic dim"), std::string::npos) << why;
  k.dims = {2, 3, 8, 8};  // a gap between rows
  k.strides = {400, 1, 40, 3};
  EXPECT_FALSE(layout_from_checks(k, &layout, &why));
  EXPECT_NE(why.find("not a dense layout"), std::string::npos) << why;

  // Row-major in, the model's layout out: element (n, c, h, w) lands at
  // n*192 + c + h*24 + w*3.
  std::vector<float> src_v(2 * 3 * 8 * 8), dst(src_v.size(), -1.f);
  for (size_t i = 0; i < src_v.size(); ++i) src_v[i] = static_cast<float>(i);
  const int64_t sizes[] = {2, 3, 8, 8}, strides[] = {192, 1, 24, 3};
  to_strided(reinterpret_cast<char*>(dst.data()), reinterpret_cast<const char*>(src_v.data()), sizes, strides, 4, 4);
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t ch = 0; ch < 3; ++ch)
      for (int64_t h = 0; h < 8; ++h)
        for (int64_t w = 0; w < 8; ++w)
          ASSERT_EQ(dst[static_cast<size_t>(n * 192 + ch + h * 24 + w * 3)],
                    static_cast<float>(((n * 3 + ch) * 8 + h) * 8 + w));
}

TEST(Pt2Archive, CudaModelNamesWhatItNeeds) {
  TempZip z(cuda_archive("cuda"), "cuda");
  const char* saved = std::getenv("AOTRUN_LIBTORCH");
  const std::string keep = saved ? saved : "";
  ::unsetenv("AOTRUN_LIBTORCH");
  std::string msg;
  {
    // libtorch asked for: refused before anything is extracted (CUDA models
    // run on aotrun's shim only).
    FakeDirs with_cuda(true);
    Pt2Options o;
    o.libtorch = with_cuda.libtorch;
    EXPECT_EQ(code_of([&] { open_pt2(z.path, "gpu_model", o); }, &msg), Code::Unsupported);
    EXPECT_NE(msg.find("package 'gpu_model' is a CUDA AOTInductor model, and aotrun runs CUDA .pt2 packages on its "
                       "own shim only, but the package option 'libtorch'"),
              std::string::npos)
        << msg;
    EXPECT_TRUE(with_cuda.tmp_empty());
    o.libtorch.clear();
    o.pad_batch = true;
    EXPECT_EQ(code_of([&] { open_pt2(z.path, "gpu_model", o); }, &msg), Code::Unsupported);
    EXPECT_NE(msg.find("pad_batch is not supported for CUDA models yet"), std::string::npos) << msg;
  }
  {
    // Nothing set: the shim serves it, and a machine without a GPU says so.
    FakeDirs none(false);
    std::string why;
    if (bundled_shim_dir().empty()) {
      // This program links the core statically: no stand-ins beside it.
      EXPECT_EQ(code_of([&] { open_pt2(z.path, "gpu_model", Pt2Options{}); }, &msg), Code::LoadFailed);
      EXPECT_NE(msg.find("aotrun runs CUDA models on its own shim only"), std::string::npos) << msg;
    } else if (!aotrun::cuda::usable(0, &why)) {
      EXPECT_EQ(code_of([&] { open_pt2(z.path, "gpu_model", Pt2Options{}); }, &msg),
                aotrun::cuda::compiled_in() ? Code::Device : Code::Unsupported);
      if (aotrun::cuda::compiled_in()) {
        EXPECT_NE(msg.find("package 'gpu_model' is a CUDA AOTInductor model and needs CUDA device 0, which is not "
                           "usable here: " +
                           why),
                  std::string::npos)
            << msg;
      }
      EXPECT_TRUE(none.tmp_empty());  // what was extracted is gone with the refused package
    }
  }
  if (saved) ::setenv("AOTRUN_LIBTORCH", keep.c_str(), 1);
}

TEST(Pt2Archive, ModelForAnotherDeviceIsUnsupportedNamingIt) {
  TempZip z(cuda_archive("mps"), "mps");
  std::string msg;
  EXPECT_EQ(code_of([&] { open_pt2(z.path, "mps_model", Pt2Options{}); }, &msg), Code::Unsupported);
  EXPECT_NE(msg.find("for device 'mps'; aotrun runs .pt2 packages on CPU (1) and CUDA (2)"), std::string::npos) << msg;
}
