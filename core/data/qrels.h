#pragma once

// Relevance judgments: what the dataset readers (core/data) read and the metrics (core/eval)
// score against. Here, in data, so that data includes nothing of eval (eval reads data).

#include <map>
#include <string>

namespace lmk {

// query id -> document id -> graded relevance, as in a BEIR qrels file: >= 1 is relevant (and
// the NDCG gain), 0 is judged not relevant, < 0 is treated like an unjudged document.
using Qrels = std::map<std::string, std::map<std::string, int>>;

}  // namespace lmk
