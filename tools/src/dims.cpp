#include "dims.hpp"

#include <cerrno>
#include <cstdlib>

#include "error.hpp"
#include "package/pt2/specs/wrapper_specs.hpp"

namespace aotrun::cli {

DimPlan DimPlan::make(const std::vector<TensorSpec>& inputs, const std::string& pt2_sources) {
  DimPlan p;
  if (!pt2_sources.empty()) p.symbolic_ = aotrun::pt2::SymbolicShapes::parse(pt2_sources, inputs.size());
  auto dynamic = [&](size_t i, int d) {
    return inputs[i].known && d >= 0 && static_cast<size_t>(d) < inputs[i].shape.size() && inputs[i].shape[d] < 0;
  };
  auto join = [&](int group, size_t i, int d) {
    p.dims_[group].members.push_back({i, d});
    p.dims_[group].leading = p.dims_[group].leading || d == 0;
    p.dim_of_[{i, d}] = group;
  };
  // The model's symbols first: each is one size.
  p.symbol_dim_.assign(p.symbolic_.symbols().size(), -1);
  for (const auto& b : p.symbolic_.bindings()) {
    if (!dynamic(b.input, b.dim) || p.dim_of_.count({b.input, b.dim}) != 0) continue;
    int& group = p.symbol_dim_[b.symbol];
    if (group < 0) {
      group = static_cast<int>(p.dims_.size());
      p.dims_.push_back({p.symbolic_.symbols()[b.symbol], {}, false});
    }
    join(group, b.input, b.dim);
  }
  // The rest: computed by the model (an expression), or joined by index.
  const std::vector<int64_t> ones(p.symbol_dim_.size(), 1);  // any sizes tell an expression
  const std::vector<bool> all(p.symbol_dim_.size(), true);
  for (size_t i = 0; i < inputs.size(); ++i) {
    for (int d = 0; inputs[i].known && d < static_cast<int>(inputs[i].shape.size()); ++d) {
      if (!dynamic(i, d) || p.dim_of_.count({i, d}) != 0) continue;
      int64_t ignored = 0;
      if (p.symbolic_.computed_size(i, d, ones, all, &ignored)) continue;  // an expression of the symbols
      int group = -1;
      for (size_t j = 0; j < i && group < 0; ++j) {
        const auto it = p.dim_of_.find({j, d});
        if (it != p.dim_of_.end()) group = it->second;
      }
      if (group < 0) {
        group = static_cast<int>(p.dims_.size());
        p.dims_.push_back({inputs[i].name + ":" + std::to_string(d), {}, false});
      }
      join(group, i, d);
    }
  }
  return p;
}

int DimPlan::find(const std::string& name, const std::vector<TensorSpec>& inputs) const {
  for (size_t k = 0; k < dims_.size(); ++k) {
    if (dims_[k].name == name) return static_cast<int>(k);
  }
  const size_t colon = name.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == name.size()) return -1;
  const std::string input = name.substr(0, colon), dim = name.substr(colon + 1);
  if (dim.find_first_not_of("0123456789") != std::string::npos || dim.size() > 3) return -1;
  int i = find_spec(inputs, input);
  if (i < 0 && input.find_first_not_of("0123456789") == std::string::npos && input.size() < 6) {
    const int index = std::atoi(input.c_str());
    if (index < static_cast<int>(inputs.size())) i = index;
  }
  if (i < 0) return -1;
  return dim_of(static_cast<size_t>(i), std::atoi(dim.c_str()));
}

int DimPlan::dim_of(size_t input, int d) const {
  const auto it = dim_of_.find({input, d});
  return it == dim_of_.end() ? -1 : it->second;
}

bool DimPlan::size_of(size_t input, int d, const std::vector<int64_t>& sizes, int64_t* out) const {
  const int k = dim_of(input, d);
  if (k >= 0) {
    if (static_cast<size_t>(k) >= sizes.size()) return false;
    *out = sizes[k];
    return true;
  }
  std::vector<int64_t> values(symbol_dim_.size(), 0);
  std::vector<bool> set(symbol_dim_.size(), false);
  for (size_t s = 0; s < symbol_dim_.size(); ++s) {
    if (symbol_dim_[s] >= 0 && static_cast<size_t>(symbol_dim_[s]) < sizes.size()) {
      values[s] = sizes[symbol_dim_[s]];
      set[s] = true;
    }
  }
  return symbolic_.computed_size(input, d, values, set, out);
}

std::string DimPlan::where(const DynamicDim& dim, const std::vector<TensorSpec>& inputs) const {
  std::string text;
  for (const auto& [i, d] : dim.members) {
    const std::string& name = inputs[i].model_name.empty() ? inputs[i].name : inputs[i].model_name;
    text += (text.empty() ? "" : ", ") + name + " dim " + std::to_string(d);
  }
  return text;
}

std::vector<DimReport> report_dims(const DimPlan& plan, const std::vector<TensorSpec>& inputs,
                                   const std::string& pt2_sources) {
  std::vector<aotrun::pt2::InputCheck> checks;
  std::string why;
  const bool ranged =
      !pt2_sources.empty() && aotrun::pt2::parse_input_checks(pt2_sources, inputs.size(), &checks, &why);
  std::vector<DimReport> out;
  for (const DynamicDim& d : plan.dims()) {
    DimReport r{d.name, plan.where(d, inputs), d.leading, -1, -1};
    // The tightest range any member was compiled for.
    for (const auto& [i, k] : d.members) {
      if (!ranged || i >= checks.size() || static_cast<size_t>(k) >= checks[i].min_dims.size()) continue;
      const int64_t lo = checks[i].min_dims[k], hi = checks[i].max_dims[k];
      if (lo > 0 && lo > r.min) r.min = lo;
      if (hi >= 0 && (r.max < 0 || hi < r.max)) r.max = hi;
    }
    out.push_back(std::move(r));
  }
  return out;
}

namespace {

std::string range_text(const DimReport& d) {
  if (d.min < 0 && d.max < 0) return "";
  return "compiled for [" + (d.min < 0 ? std::string("0") : std::to_string(d.min)) + ", " +
         (d.max < 0 ? std::string("inf") : std::to_string(d.max)) + "]";
}

}  // namespace

void dim_rows(const std::vector<DimReport>& dims, Table& table) {
  if (dims.empty()) {
    table.add({"none", "every input shape is static (or not stated by the package)"});
    return;
  }
  for (const DimReport& d : dims) table.add({d.name, d.where, range_text(d), d.leading ? "(--batch)" : ""});
}

nlohmann::ordered_json dims_json(const std::vector<DimReport>& dims) {
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  for (const DimReport& d : dims) {
    a.push_back({{"name", d.name},
                 {"where", d.where},
                 {"at_dim_0", d.leading},
                 {"min", d.min < 0 ? nlohmann::ordered_json() : nlohmann::ordered_json(d.min)},
                 {"max", d.max < 0 ? nlohmann::ordered_json() : nlohmann::ordered_json(d.max)}});
  }
  return a;
}

std::map<std::string, int64_t> parse_dim_options(const std::string& command, const std::vector<std::string>& values) {
  std::map<std::string, int64_t> sizes;
  for (const std::string& value : values) {
    const size_t eq = value.rfind('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == value.size()) {
      throw UsageError(command, "--dim needs NAME=SIZE, got '" + value + "'");
    }
    const std::string text = value.substr(eq + 1);
    char* end = nullptr;
    errno = 0;
    const long long size = std::strtoll(text.c_str(), &end, 10);
    if (errno != 0 || end == text.c_str() || *end != '\0' || size < 0 || size > INT32_MAX) {
      throw UsageError(command, "--dim '" + value + "': SIZE must be an integer in [0, 2147483647]");
    }
    if (!sizes.emplace(value.substr(0, eq), size).second) {
      throw UsageError(command, "--dim given twice for '" + value.substr(0, eq) + "'");
    }
  }
  return sizes;
}

}  // namespace aotrun::cli
