#include "tensor_files.hpp"

#include <filesystem>
#include <set>

#include "error.hpp"
#include "npy.hpp"

namespace aotrun::cli {

std::vector<std::string> tensor_file_names(const std::vector<std::string>& names) {
  std::set<std::string> used;
  std::vector<std::string> files;
  for (size_t i = 0; i < names.size(); ++i) {
    std::string stem;
    for (char c : names[i]) {
      const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                      c == '_' || c == '-';
      stem += ok ? c : '_';
    }
    if (stem.empty() || stem == "." || stem == "..") stem = "tensor" + std::to_string(i);
    if (!used.insert(stem).second) {
      stem += "_" + std::to_string(i);
      used.insert(stem);
    }
    files.push_back(stem + ".npy");
  }
  return files;
}

std::vector<std::string> write_tensors(const std::string& dir, const std::vector<HostTensor>& tensors) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Failure("IO_ERROR", "cannot create directory '" + dir + "': " + ec.message());
  std::vector<std::string> names;
  for (const HostTensor& t : tensors) names.push_back(t.name());
  const std::vector<std::string> files = tensor_file_names(names);
  std::vector<std::string> paths;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const std::string path = (std::filesystem::path(dir) / files[i]).string();
    write_npy(path, tensors[i]);
    paths.push_back(path);
  }
  return paths;
}

}  // namespace aotrun::cli
