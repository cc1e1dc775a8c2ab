#include "pt2_facts.hpp"

#include <exception>
#include <memory>
#include <utility>

#include "package/pt2/archive/archive_records.hpp"
#include "package/pt2/archive/extern_nodes.hpp"
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

}  // namespace aotrun::cli
