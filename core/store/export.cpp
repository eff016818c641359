#include "core/store/export.h"

#include <cctype>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

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

json mteb_result(const std::string& dataset, const std::vector<EvalResult>& rows,
                 const std::optional<std::string>& revision, const std::string& main_metric,
                 std::optional<double> evaluation_time) {
  // scores key -> metric -> value
  std::map<std::string, std::map<std::string, double>> scores;
  for (const EvalResult& row : rows) {
    if (row.dataset != dataset) continue;
    if (row.group_kind == "all")
      scores[row.split][row.metric] = row.value;
    else if (row.group_kind == "length" || row.group_kind == "part")
      scores[row.split + "_" + row.group_value][row.metric] = row.value;
  }
  json result_scores = json::object();
  json time = evaluation_time ? json(*evaluation_time) : json();
  for (const auto& [key, metrics] : scores) {
    json entry = {{"hf_subset", "default"}, {"languages", {"eng-Latn"}}};
    for (const auto& [metric, value] : metrics) {
      if (metric == "evaluation_time")
        time = value;
      else
        entry[metric] = value;
    }
    if (!entry.contains("main_score"))
      entry["main_score"] = metrics.count(main_metric) ? json(metrics.at(main_metric)) : json();
    result_scores[key] = json::array({entry});
  }
  return {{"dataset_revision", revision ? json(*revision) : json()},
          {"task_name", dataset},
          {"mteb_version", "2.0.0"},
          {"scores", result_scores},
          {"evaluation_time", time},
          {"kg_co2_emissions", nullptr}};
}

void write_mteb_result(const std::string& path, const json& result) {
  if (fs::path(path).has_parent_path()) fs::create_directories(fs::path(path).parent_path());
  AtomicFile file(path);
  file.write(result.dump(2) + "\n");
  file.commit();
}

std::vector<std::string> export_mteb(const ResultsStore& store, const std::vector<RunRecord>& runs,
                                     const std::string& out, const std::string& main_metric) {
  std::map<std::string, int> name_uses;
  for (const auto& run : runs) ++name_uses[safe_file_name(run.name)];
  std::vector<std::string> files;
  for (const auto& run : runs) {
    const std::vector<EvalResult> rows = store.eval_results(run.id);
    std::set<std::string> datasets;
    for (const EvalResult& row : rows)
      if (row.group_kind == "all") datasets.insert(row.dataset);
    if (datasets.empty()) continue;
    std::optional<double> evaluation_time;
    for (const auto& metric : store.latest_metrics(run.id)) {
      if (metric.key == "evaluation_time") evaluation_time = metric.value;
    }
    const std::map<std::string, std::string> params = store.run_params(run.id);
    const auto revision = params.find("dataset_revision");
    const auto main_score = params.find("main_score");
    std::string folder = safe_file_name(run.name);
    if (name_uses[folder] > 1) folder += "-" + std::to_string(run.id);
    for (const std::string& dataset : datasets) {
      const std::string path =
          (fs::path(out) / folder / (safe_file_name(dataset) + ".json")).string();
      write_mteb_result(
          path, mteb_result(dataset, rows,
                            revision == params.end() ? std::nullopt
                                                     : std::optional<std::string>(revision->second),
                            main_score == params.end() ? main_metric : main_score->second,
                            evaluation_time));
      files.push_back(path);
    }
  }
  return files;
}

}  // namespace lmk
