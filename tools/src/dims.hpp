// The dynamic dims of a package's inputs as the user sets them (issue #28
// item 2): one size per dim of the model, named for what it is.
//
// A .pt2's wrapper binds every dynamic dim to a size symbol ("s23"), and
// inputs that share a symbol share the size (BERT's input_ids and
// attention_mask: batch and sequence); CLIP's text and image counts are two
// symbols. Those symbols are the dims the user sets (`--dim s23=4`, or by
// any of its input dims: `--dim input_ids:1=16`). Where the model does not
// say (aotrun packages, a .pt2 without sources; a dim a pre-2.13 wrapper
// leaves unbound), dims with the same index across inputs are taken as one.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "package/pt2/specs/symbolic_shapes.hpp"
#include "runtime.hpp"
#include "table.hpp"

namespace aotrun::cli {

struct DynamicDim {
  std::string name;                             // "s23", else "INPUT:DIM" of its first member
  std::vector<std::pair<size_t, int>> members;  // (input, dim) sharing the size
  bool leading = false;                         // some member is a dim 0 (what --batch sets)
};

class DimPlan {
 public:
  // Groups the dynamic dims of `inputs`; `pt2_sources` is a .pt2 model's
  // C++ ("" for other packages).
  static DimPlan make(const std::vector<TensorSpec>& inputs, const std::string& pt2_sources);

  const std::vector<DynamicDim>& dims() const { return dims_; }
  // The dim `name` selects: a dim's name, or INPUT:DIM with INPUT an
  // input's name, its model name or its index; -1 if none.
  int find(const std::string& name, const std::vector<TensorSpec>& inputs) const;
  // The dim (input, d) belongs to, or -1 (static, or computed from others).
  int dim_of(size_t input, int d) const;
  // Size of a dynamic (input, d) from the dims' sizes: its dim's, or what
  // the model computes from them (an expression such as s0*2). False when
  // neither is known.
  bool size_of(size_t input, int d, const std::vector<int64_t>& sizes, int64_t* out) const;
  // "input_ids dim 0, attention_mask dim 0"
  std::string where(const DynamicDim& dim, const std::vector<TensorSpec>& inputs) const;

 private:
  std::vector<DynamicDim> dims_;
  std::map<std::pair<size_t, int>, int> dim_of_;
  aotrun::pt2::SymbolicShapes symbolic_;
  std::vector<int> symbol_dim_;  // symbol index -> index in dims_, or -1
};

// For `inspect`: each dynamic dim, where it is, and (a .pt2 with input
// checks) the range it was compiled for.
struct DimReport {
  std::string name;
  std::string where;
  bool leading = false;
  int64_t min = -1, max = -1;  // -1: not stated
};
// `plan` is DimPlan::make(inputs, pt2_sources).
std::vector<DimReport> report_dims(const DimPlan& plan, const std::vector<TensorSpec>& inputs,
                                   const std::string& pt2_sources);
void dim_rows(const std::vector<DimReport>& dims, Table& table);
nlohmann::ordered_json dims_json(const std::vector<DimReport>& dims);

// Parses "NAME=SIZE" values of --dim (`command` names the subcommand in
// messages). UsageError for a malformed value or a name given twice.
std::map<std::string, int64_t> parse_dim_options(const std::string& command, const std::vector<std::string>& values);

}  // namespace aotrun::cli
