#include "safetensors.hpp"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "base/safetensors_dtype.hpp"
#include "error.hpp"

namespace aotrun::cli {

std::vector<HostTensor> read_safetensors(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Failure(AOTRUN_ERR_NOT_FOUND, "cannot open '" + path + "'");
  const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto bad = [&](const std::string& what) {
    return Failure(AOTRUN_ERR_INVALID_ARGUMENT, "'" + path + "' is not a valid .safetensors file: " + what);
  };
  if (data.size() < 8) throw bad("shorter than its 8-byte header length");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(data[static_cast<size_t>(i)]);
  if (n > data.size() - 8) throw bad("header length " + std::to_string(n) + " past the end of the file");
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(data.substr(8, n));
  } catch (const nlohmann::json::exception& e) {
    throw bad(std::string("header is not JSON: ") + e.what());
  }
  if (!header.is_object()) throw bad("header is not a JSON object");
  const size_t base = 8 + n;
  struct Item {
    uint64_t begin;
    HostTensor tensor;
  };
  std::vector<Item> items;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") continue;
    const nlohmann::json& v = *it;
    try {
      DLDataType dtype{};
      if (!aotrun::safetensors_dtype(v.at("dtype").get<std::string>(), &dtype)) {
        throw bad("tensor '" + it.key() + "' has dtype " + v.at("dtype").dump() + ", which aotrun does not read");
      }
      const std::vector<int64_t> shape = v.at("shape").get<std::vector<int64_t>>();
      const std::vector<uint64_t> off = v.at("data_offsets").get<std::vector<uint64_t>>();
      if (off.size() != 2 || off[0] > off[1] || off[1] > data.size() - base) {
        throw bad("tensor '" + it.key() + "': data_offsets outside the file");
      }
      for (int64_t d : shape) {
        if (d < 0) throw bad("tensor '" + it.key() + "': negative dimension");
      }
      HostTensor t(it.key(), dtype, shape);
      if (t.nbytes() != off[1] - off[0]) {
        throw bad("tensor '" + it.key() + "': " + std::to_string(off[1] - off[0]) + " bytes for its shape, expected " +
                  std::to_string(t.nbytes()));
      }
      if (t.nbytes() != 0) std::memcpy(t.data(), data.data() + base + off[0], t.nbytes());
      items.push_back({off[0], std::move(t)});
    } catch (const nlohmann::json::exception& e) {
      throw bad("tensor '" + it.key() + "': " + e.what());
    }
  }
  std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.begin < b.begin; });
  std::vector<HostTensor> out;
  for (Item& item : items) out.push_back(std::move(item.tensor));
  return out;
}

}  // namespace aotrun::cli
