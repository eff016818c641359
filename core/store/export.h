#pragma once

// Files made from a results store for other tools, one definition for the CLI (lmk export) and
// the workbench: MTEB results and the file names they are written under.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/store/results_store.h"

namespace lmk {

// A file or folder name made of the text: characters other than ASCII letters, digits and
// ._-=+, become '_' (each byte of a multi-byte character too); a name of only dots gets a '_'.
std::string safe_file_name(const std::string& text);

// A dataset's MTEB v2 result from its evaluation rows (those of other datasets are skipped) — the
// one writer behind lmk eval --mteb-out, lmk export --format mteb and the workbench:
//   {"dataset_revision": revision or null, "task_name": dataset, "mteb_version": "2.0.0",
//    "scores": {"<split>": [entry], "<split>_<part>": [entry], ...},
//    "evaluation_time": seconds or null, "kg_co2_emissions": null},
//   entry = {"hf_subset": "default", "languages": ["eng-Latn"], "<metric>": value, ...,
//            "main_score": ...}
// "<split>" holds the whole split's results (group_kind "all"), "<split>_<part>" a part's (a
// context length of a LongEmbed-style folder: group_kind "length" or "part"); per-position and
// per-label groups have no MTEB counterpart. A NaN is null. main_score is a stored main_score
// result, else main_metric's value, else null. A stored evaluation_time result is the time.
nlohmann::json mteb_result(const std::string& dataset, const std::vector<EvalResult>& rows,
                           const std::optional<std::string>& revision,
                           const std::string& main_metric, std::optional<double> evaluation_time);

// Writes a result as JSON to path, atomically (its folder is created).
void write_mteb_result(const std::string& path, const nlohmann::json& result);

// One MTEB v2 result per (run, dataset): OUT/<run name>/<dataset>.json (the run id appended to
// the folder when two runs' names give the same one), mteb_result of the run's stored results,
// with the revision and main metric the run recorded (params dataset_revision, main_score; else
// null and main_metric) and its evaluation_time metric. Runs without whole-split results write
// nothing. Returns the files written.
std::vector<std::string> export_mteb(const ResultsStore& store, const std::vector<RunRecord>& runs,
                                     const std::string& out,
                                     const std::string& main_metric = "ndcg_at_10");

}  // namespace lmk
