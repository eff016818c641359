#pragma once

// Retrieval datasets (BEIR, MLDR, LongEmbed) and FlagEmbedding training files: readers that
// check what they read and writers that produce what the readers accept. Every file may be
// gzip-compressed (.jsonl.gz, .tsv.gz; recognized by content). Each reader has a form over
// streams (NamedInput, used by the fuzzer) and a form over files. A bad input is an InputError
// whose message names "file:LINE" and, for a field, its path ("corpus.jsonl:7._id: missing").

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/data/jsonl.h"
#include "core/data/qrels.h"  // Qrels: query id -> document id -> graded relevance

namespace lmk {

struct Document {
  std::string id, title, text;
  nlohmann::json extra = nlohmann::json::object();  // other fields, kept (context_length, ...)
};

// The text a model reads of a document (lmk eval's corpus, lmk encode's input, attention
// profiles): its title, a space and its text, or its text when it has no title. It may be empty
// (no title, no text): then the model reads the tokenizer's template alone, as
// sentence-transformers embeds "" -- one empty line never stops a long job; the commands count
// such texts and say how many they embedded.
std::string document_input(const std::string& title, std::string text);

struct Query {
  std::string id, text;
  nlohmann::json extra = nlohmann::json::object();
};

// One evaluation split. Readers keep only the queries with at least one judgement (as BEIR's
// loader does: queries.jsonl lists the queries of every split); corpus and queries keep file
// order.
struct RetrievalSplit {
  std::vector<Document> corpus;
  std::vector<Query> queries;
  Qrels qrels;
};

// One line of a BEIR qrels TSV.
struct Judgement {
  std::string query_id, doc_id;
  int relevance = 0;
};

// Called with each document (which it may move from); returns false to stop reading.
using DocumentVisitor = std::function<bool(Document&& document)>;

// ---- BEIR: DIR/corpus.jsonl (_id, title, text), DIR/queries.jsonl (_id, text),
// DIR/qrels/SPLIT.tsv ("query-id\tcorpus-id\tscore" header, integer scores). Each file may also
// be named with ".gz" appended.

// Reads one split. Duplicate corpus or query ids, judgements naming an unknown query or
// document, conflicting duplicate judgements, an empty corpus or no judgements are InputErrors.
RetrievalSplit read_beir(const std::string& dir, const std::string& split);
RetrievalSplit read_beir(NamedInput corpus, NamedInput queries, NamedInput qrels);

// Streams DIR/corpus.jsonl one document at a time (duplicate ids are still an InputError).
void for_each_beir_document(const std::string& dir, const DocumentVisitor& fn);
void for_each_beir_document(NamedInput corpus, const DocumentVisitor& fn);

// Calls fn for each line of a qrels TSV after its header; a missing header, a line without
// exactly three tab-separated columns, an empty id or a score that is not an int is an
// InputError.
void for_each_qrels_tsv(NamedInput qrels,
                        const std::function<void(Judgement&&, const std::string& where)>& fn);

// One query of a BEIR folder with its judgements in `split`, read without the corpus (for
// showing a query next to its results); nullopt when the folder has no such query or `split`
// judges none of its documents. The files'
// errors are InputErrors as in read_beir.
struct JudgedQuery {
  Query query;
  std::vector<Judgement> judgements;  // most relevant first
};
std::optional<JudgedQuery> find_beir_query(const std::string& dir, const std::string& split,
                                           const std::string& query_id);
// The judged queries of `split` (with query_id: that one only), in queries.jsonl's order, at most
// `limit`, each with its judgements, most relevant first.
std::vector<JudgedQuery> find_beir_queries(const std::string& dir, const std::string& split,
                                           size_t limit, const std::string& query_id = "");

// Writes DIR/corpus.jsonl, DIR/queries.jsonl and DIR/qrels/SPLIT.tsv, each atomically, with
// `extra` fields merged into the JSON objects. Throws InputError (naming DIR) for data the
// reader would reject: duplicate ids, judgements naming unknown ids, ids with tabs or newlines.
void write_beir(const std::string& dir, const std::string& split, const RetrievalSplit& data);

// ---- MLDR (Shitao/MLDR): queries jsonl (query_id, query, positive_passages [{docid, text}];
// negative_passages ignored), corpus jsonl (docid, text). Each positive passage becomes a
// judgement with relevance 1 and must name a corpus document.
RetrievalSplit read_mldr(const std::string& queries_file, const std::string& corpus_file);
RetrievalSplit read_mldr(NamedInput queries, NamedInput corpus);

// ---- LongEmbed (dwzhu/LongEmbed): DIR/corpus.jsonl (doc_id, text[, context_length]),
// DIR/queries.jsonl (qid, text[, context_length]), DIR/qrels.jsonl (qid, doc_id); relevance 1.
// context_length stays in `extra`. With `context_length` set, only the records whose
// context_length equals it are read (passkey and needle hold every length in one file).
RetrievalSplit read_longembed(const std::string& dir,
                              std::optional<int64_t> context_length = std::nullopt);
RetrievalSplit read_longembed(NamedInput corpus, NamedInput queries, NamedInput qrels,
                              std::optional<int64_t> context_length = std::nullopt);

// ---- FlagEmbedding training jsonl: {"query", "pos": [...], "neg": [...], "pos_scores",
// "neg_scores", ...}. pos must be non-empty; neg and the scores may be absent; scores, when
// present, have one value per passage.
struct TrainingExample {
  std::string query;
  std::vector<std::string> pos, neg;
  std::vector<double> pos_scores, neg_scores;       // empty when absent
  nlohmann::json extra = nlohmann::json::object();  // other fields, kept (prompt, type, ...)
};

// Called with each example (which it may move from) and "file:LINE"; returns false to stop.
using TrainingVisitor = std::function<bool(TrainingExample&& example, const std::string& where)>;

void for_each_training_example(const std::string& path, const TrainingVisitor& fn);
// One training example from its JSON object (which it may move from); InputError naming
// `where` as for_each_training_example.
TrainingExample parse_training_example(nlohmann::json& object, const std::string& where);
void for_each_training_example(NamedInput input, const TrainingVisitor& fn);

// The JSON object of one example (for JsonlWriter); an example the reader would reject is an
// InputError naming `where`.
nlohmann::json training_example_json(const TrainingExample& example, const std::string& where);

// Writes examples atomically (gzip when PATH ends in ".gz").
void write_training_examples(const std::string& path, const std::vector<TrainingExample>& examples);

}  // namespace lmk
