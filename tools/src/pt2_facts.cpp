#include "pt2_facts.hpp"

#include <exception>
#include <memory>
#include <utility>

#include "package/pt2/archive/archive_records.hpp"
#include "package/pt2/archive/extern_nodes.hpp"
#include "package/pt2/specs/output_dims.hpp"
#include "package/pt2/archive/model_metadata.hpp"
#include "package/pt2/archive/model_sources.hpp"
#include "package/pt2/archive/pt2_archive.hpp"

namespace aotrun::cli {

Pt2Facts read_pt2_facts(const std::string& path) {
  namespace pt2 = aotrun::pt2;
  Pt2Facts facts;
  try {
    const std::unique_ptr<pt2::ZipArchive> zip = pt2::ZipArchive::open(path);
    const pt2::Pt2Model model = pt2::find_model(*zip, pt2::kDefaultModel);
    const pt2::ModelMetadata metadata = pt2::parse_model_metadata(model.metadata_json);
    pt2::ModelSources sources = pt2::read_model_sources(*zip, model);
    pt2::ArchiveRecords records = pt2::read_archive_records(*zip, metadata);
    facts.records = std::move(records.records);
    facts.torch_version = std::move(records.torch_version);
    facts.model_metadata = metadata.values;
    facts.sources = std::move(sources.text);
    facts.unread_sources = std::move(sources.unread);
    facts.sources_limit = pt2::kMaxModelSourceBytes;
    facts.proxy_ops = pt2::read_extern_nodes(*zip, model).targets;
    facts.readable = true;
  } catch (const std::exception& e) {  // the library's Error: the message open gives
    facts.error = e.what();
  }
  return facts;
}

std::vector<std::vector<size_t>> data_dependent_dims(const std::string& sources, size_t num_outputs) {
  std::vector<std::vector<size_t>> out(num_outputs);
  if (sources.empty()) return out;
  const aotrun::pt2::OutputDims stated = aotrun::pt2::parse_output_dims(sources, num_outputs);
  for (size_t o = 0; o < num_outputs && o < stated.dims.size(); ++o) {
    for (size_t d = 0; d < stated.dims[o].size(); ++d) {
      if (stated.dims[o][d].kind == aotrun::pt2::OutputDim::DataDependent) out[o].push_back(d);
    }
  }
  return out;
}

}  // namespace aotrun::cli
