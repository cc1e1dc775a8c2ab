#include "package/constant_table.hpp"

#include <set>

#include "base/error.hpp"

namespace aotrun {

ConstantTable ConstantTable::from_weights(const std::vector<std::string>& paths, const std::string& package_name) {
  ConstantTable t;
  for (const auto& path : paths) t.files_.push_back(SafetensorsFile::open(path));
  std::set<std::string> seen;
  for (const auto& file : t.files_) {
    for (const MappedTensor& m : file->tensors()) {
      if (!seen.insert(m.name).second) {
        fail(Code::BadPackage,
             "constant '" + m.name + "' appears in more than one weights file of package '" + package_name + "'");
      }
      aotrun_pkg_constant c{};
      // The tensors' names and shapes live in the mapped files' indexes,
      // which move with the unique_ptrs, so these pointers stay valid.
      c.name = m.name.c_str();
      c.tensor.data = const_cast<void*>(m.data);  // read-only mapping; packages must not write
      c.tensor.device = DLDevice{kDLCPU, 0};
      c.tensor.ndim = static_cast<int>(m.shape.size());
      c.tensor.dtype = m.dtype;
      c.tensor.shape = const_cast<int64_t*>(m.shape.data());
      t.entries_.push_back(c);
      t.bytes_ += m.bytes;
    }
  }
  return t;
}

}  // namespace aotrun
