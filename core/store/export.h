#pragma once

// Files made from a results store for other tools, one definition for the CLI (lmk export) and
// the workbench: MTEB results and the file names they are written under.

#include <string>
#include <vector>

#include "core/store/results_store.h"

namespace lmk {

// A file or folder name made of the text: characters other than ASCII letters, digits and
// ._-=+, become '_' (each byte of a multi-byte character too); a name of only dots gets a '_'.
std::string safe_file_name(const std::string& text);

// One MTEB v2 result per (run, dataset): OUT/<run name>/<dataset>.json (the run id appended to
// the folder when two runs' names give the same one) =
//   {"dataset_revision": params.dataset_revision or null, "task_name": dataset,
//    "mteb_version": "2.0.0", "scores": {"<split>": [{"hf_subset": "default",
//    "languages": ["eng-Latn"], "<metric>": value, ..., "main_score": ...}]},
//    "evaluation_time": seconds or null, "kg_co2_emissions": null}
// from the run's group_kind 'all' results (per-length and per-position groups have no MTEB
// counterpart; a NaN is null). main_score is a stored main_score result, else main_metric's
// value. Runs without whole-split results write nothing. Returns the files written.
std::vector<std::string> export_mteb(const ResultsStore& store, const std::vector<RunRecord>& runs,
                                     const std::string& out,
                                     const std::string& main_metric = "ndcg_at_10");

}  // namespace lmk
