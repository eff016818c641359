#pragma once

// A dataset folder as lmk data writes it and lmk eval reads it: either one BEIR folder, or a
// folder of BEIR folders (one per context length, as LongEmbed's passkey / needle splits),
// with an optional dataset.json saying what it is and how it is scored.

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace lmk {

struct DatasetPart {
  std::string name;  // "" for a single BEIR folder, else the subfolder's name ("256", ...)
  std::string path;
};

struct DatasetInfo {
  std::string task;        // dataset.json "task", else the folder's name
  std::string main_score;  // "ndcg_at_10" unless dataset.json says otherwise
  std::string split;       // qrels split to evaluate ("test" by default)
  std::string part_kind;   // what the parts are ("length" for passkey / needle)
  // "retrieval", or "classification" (train.jsonl / test.jsonl with text and label, no parts)
  std::string type;
  nlohmann::json info;  // dataset.json as written (empty object when absent)
  std::vector<DatasetPart> parts;
};

// The parts of dir: itself when it holds corpus.jsonl(.gz), else its subfolders that do (sorted by
// number when their names are numbers, else by name). Empty when neither.
std::vector<DatasetPart> dataset_parts(const std::string& dir);

// Reads dir's parts and dataset.json; an InputError names dir when it holds no BEIR folder
// (a classification dataset has none).
DatasetInfo read_dataset_info(const std::string& dir);

}  // namespace lmk
