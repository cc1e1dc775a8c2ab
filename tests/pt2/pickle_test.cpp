// The reader of pickled .pt2 weights (tensor_pickle.hpp, pickle_weights.hpp),
// white-box and without libtorch: the records torch.save wrote for the
// fixtures and the fuzz seeds decode to their layouts, and everything outside
// that subset is refused with the code and words a user would see.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "package/pt2/constants/pickle_weights.hpp"
#include "package/pt2/constants/tensor_pickle.hpp"
#include "package/pt2/archive/zip_archive.hpp"
#include "base/error.hpp"

namespace aotrun::pt2 {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

const std::string kSeeds = AOTRUN_PICKLE_SEEDS;

PickledTensor decode(const std::string& bytes) {
  return read_tensor_pickle(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "w");
}

// The code and message of a refusal ("" / OK when accepted).
std::pair<Code, std::string> refusal(const std::string& bytes) {
  try {
    decode(bytes);
  } catch (const Error& e) {
    return {e.code(), e.what()};
  }
  return {Code::Ok, ""};
}

std::string replaced(std::string s, const std::string& from, const std::string& to) {
  const size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

TEST(Pt2TensorPickle, ReadsTheParameterRecordsOfTheFixture) {
  const std::string path = std::string(AOTRUN_PT2_EXTERNAL) + "/torch-2.15.0/mlp_pickle.pt2";
  const auto zip = ZipArchive::open(path);
  int seen = 0;
  for (const auto& e : zip->entries()) {
    if (e.name.find("/data/weights/weight_") == std::string::npos) continue;
    const std::string bytes = zip->read(e, 1u << 20);
    const SavedTensor s = read_torch_save(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), e.name);
    EXPECT_EQ(s.tensor.storage_type, "FloatStorage");
    EXPECT_EQ(s.tensor.torch_dtype, 6);
    EXPECT_EQ(s.tensor.location, "cpu");
    EXPECT_EQ(s.data_at % 64, 0u) << e.name;
    EXPECT_LE(s.data_at + s.tensor.numel * 4, bytes.size());
    ++seen;
  }
  EXPECT_EQ(seen, 4);
}

TEST(Pt2TensorPickle, ReadsAStridedBufferWithAnOffset) {
  // torch.arange(64.).reshape(8, 8)[2:, ::2].t(), saved by torch 2.8
  const PickledTensor t = decode(slurp(kSeeds + "/torch-2.8.0_buffer_strided_offset_data.pkl"));
  EXPECT_EQ(t.sizes, (std::vector<int64_t>{4, 6}));
  EXPECT_EQ(t.strides, (std::vector<int64_t>{2, 8}));
  EXPECT_EQ(t.storage_offset, 16);
  EXPECT_EQ(t.numel, 64u);
  const PickledTensor b = decode(slurp(kSeeds + "/torch-2.8.0_bf16_scalar_data.pkl"));
  EXPECT_EQ(b.storage_type, "BFloat16Storage");
  EXPECT_EQ(b.torch_dtype, 15);
  EXPECT_TRUE(b.sizes.empty());
}

TEST(Pt2TensorPickle, RefusesWhatTorchSaveDoesNotWrite) {
  const std::string good = slurp(kSeeds + "/torch-2.15.0_weight_3_data.pkl");
  ASSERT_EQ(decode(good).sizes, (std::vector<int64_t>{16}));
  struct Case {
    const char* what;
    std::string bytes;
    Code code;
    const char* says;
  };
  const Case cases[] = {
      {"another GLOBAL", replaced(good, "collections\nOrderedDict\n", "posix\nsystem\n"), Code::Unsupported,
       "GLOBAL 'posix.system'"},
      {"another storage", replaced(good, "torch\nFloatStorage\n", "torch\nQInt8Storage\n"), Code::Unsupported,
       "GLOBAL 'torch.QInt8Storage'"},
      {"protocol 4", replaced(good, "\x80\x02", "\x80\x04"), Code::Unsupported, "protocol 4"},
      {"truncated", good.substr(0, good.size() / 2), Code::BadPackage, ""},
      {"trailing bytes", good + "x", Code::BadPackage, "1 bytes after STOP"},
      {"no STOP", good.substr(0, good.size() - 1), Code::BadPackage, "ends without STOP"},
      {"an unknown opcode", replaced(good, "\x88", "\x95"), Code::Unsupported, "opcode 0x95"},
      {"a storage too small", replaced(good, "K\x10t", "K\x0ft"), Code::BadPackage, "past its storage"},
      {"a memo never stored", replaced(good, "h\x09", "h\x63"), Code::BadPackage, "memo entry 99"},
      {"empty", "", Code::Unsupported, "PROTO"},
  };
  for (const auto& c : cases) {
    const auto [code, message] = refusal(c.bytes);
    EXPECT_EQ(code, c.code) << c.what << ": " << message;
    EXPECT_NE(message.find(c.says), std::string::npos) << c.what << ": " << message;
    if (code != Code::Ok) {
      EXPECT_EQ(message.rfind("w: pickled tensor", 0), 0u) << message;
    }
  }
}

TEST(Pt2TensorPickle, RefusesAStorageRecordOfAnotherSize) {
  std::string file = slurp(kSeeds + "/torch-2.15.0_weight_3.pt");
  // 16 floats recorded; say 17 (the pickle's numel, BININT1 before TUPLE).
  file = replaced(file, "K\x10t", "K\x11t");
  try {
    read_torch_save(reinterpret_cast<const uint8_t*>(file.data()), file.size(), "weight_3");
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::BadPackage);
    EXPECT_NE(std::string(e.what()).find("holds 64 bytes, but its record says 17"), std::string::npos) << e.what();
  }
  const std::string junk = "PK\x05\x06 not a zip";
  EXPECT_THROW(read_torch_save(reinterpret_cast<const uint8_t*>(junk.data()), junk.size(), "junk"), Error);
}

// fuzz_pickle's first finding: a torch.save archive whose central directory
// is empty made the in-memory zip reader copy 0 bytes into a null buffer
// (undefined behaviour). Now an ordinary refusal.
TEST(Pt2TensorPickle, EmptyCentralDirectoryIsRefused) {
  const std::string file = slurp(kSeeds + "/regress-empty-central-directory.pt");
  ASSERT_FALSE(file.empty());
  try {
    read_torch_save(reinterpret_cast<const uint8_t*>(file.data()), file.size(), "weight");
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::BadPackage) << e.what();
  }
}

}  // namespace
}  // namespace aotrun::pt2
