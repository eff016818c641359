#pragma once

// A dataset folder as lmk data writes it and lmk eval reads it: either one BEIR folder, or a
// folder of BEIR folders (one per context length, as LongEmbed's passkey / needle splits),
// with an optional dataset.json saying what it is and how it is scored.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lmk {

struct DatasetPart {
  std::string name;  // "" for a single BEIR folder, else the subfolder's name ("256", ...)
  std::string path;
};

struct DatasetInfo {
  std::string dir;         // the folder
  std::string task;        // dataset.json "task", else the folder's name
  std::string main_score;  // "ndcg_at_10" unless dataset.json says otherwise
  std::string split;       // qrels split to evaluate ("test" by default)
  std::string part_kind;   // what the parts are ("length" for passkey / needle)
  // "retrieval", or "classification" (train.jsonl / test.jsonl with text and label, no parts)
  std::string type;
  std::optional<uint64_t> seed;  // the seed lmk data generated it with (dataset.json "seed")
  // dataset.json as written (empty object when absent): the fields above and what else its
  // writer recorded (protocol, source, tokenizer, counts, ...)
  nlohmann::json info;
  std::vector<DatasetPart> parts;
};

// The parts of dir: itself when it holds corpus.jsonl(.gz), else its subfolders that do (sorted by
// number when their names are numbers, else by name). Empty when neither.
std::vector<DatasetPart> dataset_parts(const std::string& dir);

// Reads dir's parts and dataset.json; an InputError names dir when it holds no BEIR folder
// (a classification dataset has none).
DatasetInfo read_dataset_info(const std::string& dir);

// Writes dir/dataset.json (atomically): the typed fields (task, type, main_score, split,
// part_kind and the parts' names when set, seed when known) over `info`'s other fields, which
// record how the folder was made. What read_dataset_info reads back.
void write_dataset_info(const std::string& dir, const DatasetInfo& dataset);

// The dataset's revision as MTEB results record it: "lmk-seed-<seed>" for a folder lmk data
// generated with a known seed, else nullopt (a folder from elsewhere names no revision).
std::optional<std::string> dataset_revision(const DatasetInfo& dataset);

}  // namespace lmk
