#include "core/store/export.h"

#include <cctype>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "core/util/file.h"

namespace lmk {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::string safe_file_name(const std::string& text) {
  std::string name;
  for (const unsigned char c : text)
    name += std::isalnum(c) || std::string("._-=+,").find(static_cast<char>(c)) != std::string::npos
                ? static_cast<char>(c)
                : '_';
  if (name.empty() || name.find_first_not_of('.') == std::string::npos) name = "_" + name;
  return name;
}

std::vector<std::string> export_mteb(const ResultsStore& store, const std::vector<RunRecord>& runs,
                                     const std::string& out, const std::string& main_metric) {
  std::map<std::string, int> name_uses;
  for (const auto& run : runs) ++name_uses[safe_file_name(run.name)];
  std::vector<std::string> files;
  for (const auto& run : runs) {
    // dataset -> split -> metric -> value
    std::map<std::string, std::map<std::string, std::map<std::string, double>>> scores;
    for (const auto& e : store.eval_results(run.id)) {
      if (e.group_kind == "all") scores[e.dataset][e.split][e.metric] = e.value;
    }
    if (scores.empty()) continue;
    json evaluation_time = nullptr;
    for (const auto& metric : store.latest_metrics(run.id)) {
      if (metric.key == "evaluation_time") evaluation_time = metric.value;
    }
    const std::map<std::string, std::string> params = store.run_params(run.id);
    const auto revision = params.find("dataset_revision");
    std::string folder = safe_file_name(run.name);
    if (name_uses[folder] > 1) folder += "-" + std::to_string(run.id);
    fs::create_directories(fs::path(out) / folder);
    for (const auto& [dataset, splits] : scores) {
      json result_scores = json::object();
      json dataset_time = evaluation_time;
      for (const auto& [split, metrics] : splits) {
        json entry = {{"hf_subset", "default"}, {"languages", {"eng-Latn"}}};
        for (const auto& [metric, value] : metrics) {
          if (metric == "evaluation_time")
            dataset_time = value;
          else
            entry[metric] = value;
        }
        if (!entry.contains("main_score"))
          entry["main_score"] = metrics.count(main_metric) ? json(metrics.at(main_metric)) : json();
        result_scores[split] = json::array({entry});
      }
      const json result = {
          {"dataset_revision", revision == params.end() ? json() : json(revision->second)},
          {"task_name", dataset},
          {"mteb_version", "2.0.0"},
          {"scores", result_scores},
          {"evaluation_time", dataset_time},
          {"kg_co2_emissions", nullptr}};
      const std::string path = (fs::path(out) / folder / (safe_file_name(dataset) + ".json")).string();
      AtomicFile file(path);
      file.write(result.dump(2) + "\n");
      file.commit();
      files.push_back(path);
    }
  }
  return files;
}

}  // namespace lmk
