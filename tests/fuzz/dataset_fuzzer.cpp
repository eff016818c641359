// libFuzzer target for the dataset readers (core/data/formats.h, jsonl.h). The input is read
// whole as a JSONL file, a qrels TSV and a training file, and, cut at NUL bytes into up to
// three files, as a BEIR, an MLDR and a LongEmbed split (gzip input goes through the same
// readers). Every input must be read or rejected with an InputError; what is read must be
// consistent (ids unique, judgements name known ids, every query judged) and writable. A crash,
// a sanitizer report or any other exception is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/data/formats.h"
#include "core/data/jsonl.h"
#include "core/util/error.h"

namespace {

// Up to `parts` pieces of bytes cut at NUL bytes (missing pieces are empty).
std::vector<std::string> cut_at_nul(const std::string& bytes, size_t parts) {
  std::vector<std::string> out;
  size_t begin = 0;
  while (out.size() + 1 < parts) {
    const size_t nul = bytes.find('\0', begin);
    if (nul == std::string::npos) break;
    out.push_back(bytes.substr(begin, nul - begin));
    begin = nul + 1;
  }
  out.push_back(bytes.substr(begin));
  out.resize(parts);
  return out;
}

template <typename Fn>
void rejecting_only_with_input_error(Fn&& fn) {
  try {
    fn();
  } catch (const lmk::InputError&) {
  }
}

void check_consistent(const lmk::RetrievalSplit& split) {
  std::set<std::string> docs, queries;
  for (const auto& doc : split.corpus) docs.insert(doc.id);
  for (const auto& query : split.queries) queries.insert(query.id);
  if (docs.empty() || docs.size() != split.corpus.size()) std::abort();
  if (queries.size() != split.queries.size()) std::abort();
  for (const auto& query : split.queries) {
    if (!split.qrels.count(query.id)) std::abort();
  }
  for (const auto& [query_id, judged] : split.qrels) {
    if (!queries.count(query_id) || judged.empty()) std::abort();
    for (const auto& judgement : judged) {
      if (!docs.count(judgement.first)) std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  rejecting_only_with_input_error([&] {
    std::istringstream in(bytes);
    lmk::for_each_jsonl(lmk::NamedInput{in, "fuzz.jsonl"},
                        [](nlohmann::json& value, const std::string&) {
                          value.dump();  // every value read can be written back
                          return true;
                        });
  });
  rejecting_only_with_input_error([&] {
    std::istringstream in(bytes);
    lmk::for_each_qrels_tsv(lmk::NamedInput{in, "fuzz.tsv"},
                            [](lmk::Judgement&& judgement, const std::string&) {
                              if (judgement.query_id.empty() || judgement.doc_id.empty())
                                std::abort();
                            });
  });
  rejecting_only_with_input_error([&] {
    std::istringstream in(bytes);
    lmk::for_each_training_example(lmk::NamedInput{in, "fuzz.jsonl"},
                                   [](lmk::TrainingExample&& example, const std::string& where) {
                                     // An example the reader accepts, the writer accepts (an
                                     // InputError here is a bug).
                                     try {
                                       lmk::training_example_json(example, where).dump();
                                     } catch (const lmk::InputError&) {
                                       std::abort();
                                     }
                                     return true;
                                   });
  });

  const std::vector<std::string> files = cut_at_nul(bytes, 3);
  std::istringstream a1(files[0]), b1(files[1]), c1(files[2]);
  rejecting_only_with_input_error([&] {
    check_consistent(
        lmk::read_beir({a1, "corpus.jsonl"}, {b1, "queries.jsonl"}, {c1, "qrels/test.tsv"}));
  });
  std::istringstream a2(files[0]), b2(files[1]);
  rejecting_only_with_input_error([&] {
    check_consistent(lmk::read_mldr({a2, "queries.jsonl"}, {b2, "corpus.jsonl"}));
  });
  for (const std::optional<int64_t> context_length : {std::optional<int64_t>(), {256}}) {
    std::istringstream a3(files[0]), b3(files[1]), c3(files[2]);
    rejecting_only_with_input_error([&] {
      check_consistent(lmk::read_longembed({a3, "corpus.jsonl"}, {b3, "queries.jsonl"},
                                           {c3, "qrels.jsonl"}, context_length));
    });
  }
  return 0;
}
