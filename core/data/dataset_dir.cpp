#include "core/data/dataset_dir.h"

#include <algorithm>
#include <filesystem>

#include "core/util/error.h"
#include "core/util/file.h"
#include "core/util/json_util.h"

namespace lmk {

namespace fs = std::filesystem;

namespace {

bool holds_corpus(const fs::path& dir) {
  std::error_code ec;
  return fs::exists(dir / "corpus.jsonl", ec) || fs::exists(dir / "corpus.jsonl.gz", ec);
}

}  // namespace

std::vector<DatasetPart> dataset_parts(const std::string& dir) {
  std::error_code ec;
  if (holds_corpus(dir)) return {{"", dir}};
  std::vector<DatasetPart> parts;
  if (!fs::is_directory(dir, ec)) return parts;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_directory() && holds_corpus(entry.path()))
      parts.push_back({entry.path().filename().string(), entry.path().string()});
  }
  auto numeric = [](const std::string& s) {
    return !s.empty() && s.size() < 18 && std::all_of(s.begin(), s.end(), ::isdigit);
  };
  std::sort(parts.begin(), parts.end(), [&](const DatasetPart& a, const DatasetPart& b) {
    if (numeric(a.name) && numeric(b.name)) return std::stoll(a.name) < std::stoll(b.name);
    return a.name < b.name;
  });
  return parts;
}

DatasetInfo read_dataset_info(const std::string& dir) {
  DatasetInfo info;
  info.dir = dir;
  info.parts = dataset_parts(dir);
  const fs::path file = fs::path(dir) / "dataset.json";
  info.info = nlohmann::json::object();
  std::error_code ec;
  if (fs::exists(file, ec)) {
    info.info = json_util::parse(read_file(file.string()), file.string());
    if (!info.info.is_object()) throw input_error(file.string(), "not a JSON object");
  }
  const std::string where = file.string();
  info.task = json_util::optional<std::string>(
      info.info, "task", where, fs::path(dir).lexically_normal().filename().string());
  info.main_score = json_util::optional<std::string>(info.info, "main_score", where, "ndcg_at_10");
  info.split = json_util::optional<std::string>(info.info, "split", where, "test");
  info.part_kind = json_util::optional<std::string>(info.info, "part_kind", where, "");
  info.type = json_util::optional<std::string>(info.info, "type", where, "retrieval");
  if (info.info.contains("seed") && !info.info["seed"].is_null())
    info.seed = json_util::get<uint64_t>(info.info, "seed", where);
  if (info.type == "classification") {
    if (info.main_score == "ndcg_at_10") info.main_score = "accuracy";
    return info;
  }
  if (info.type != "retrieval")
    throw input_error(where + ": type", "'" + info.type + "' (retrieval or classification)");
  if (info.parts.empty())
    throw input_error(dir, "not a dataset folder (no corpus.jsonl in it or in its subfolders)");
  return info;
}

void write_dataset_info(const std::string& dir, const DatasetInfo& dataset) {
  nlohmann::json out = dataset.info.is_object() ? dataset.info : nlohmann::json::object();
  out["task"] = dataset.task;
  if (!dataset.type.empty() && dataset.type != "retrieval") out["type"] = dataset.type;
  if (!dataset.main_score.empty()) out["main_score"] = dataset.main_score;
  if (!dataset.split.empty()) out["split"] = dataset.split;
  if (!dataset.part_kind.empty()) out["part_kind"] = dataset.part_kind;
  if (!dataset.parts.empty() && !dataset.parts.front().name.empty()) {
    out["parts"] = nlohmann::json::array();
    for (const DatasetPart& part : dataset.parts) out["parts"].push_back(part.name);
  }
  if (dataset.seed) out["seed"] = *dataset.seed;
  AtomicFile file((fs::path(dir) / "dataset.json").string());
  file.write(out.dump(2) + "\n");
  file.commit();
}

std::optional<std::string> dataset_revision(const DatasetInfo& dataset) {
  if (!dataset.seed) return std::nullopt;
  return "lmk-seed-" + std::to_string(*dataset.seed);
}

}  // namespace lmk
