#include "core/data/formats.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <unordered_set>

#include "core/tokenize/tokenizer.h"
#include "core/util/error.h"
#include "core/util/file.h"
#include "core/util/json_util.h"

namespace lmk {

std::string document_input(const std::string& title, std::string text) {
  return title.empty() ? std::move(text) : title + " " + text;
}
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kQrelsHeader = "query-id\tcorpus-id\tscore";

std::string quoted(const std::string& id) {
  return "\"" + id + "\"";
}

std::string element_path(const std::string& list, size_t i) {
  return list + "[" + std::to_string(i) + "]";
}

void require_object(const json& value, const std::string& where) {
  if (!value.is_object()) {
    throw input_error(where, std::string("expected a JSON object, got ") + value.type_name());
  }
}

// Ids are non-empty, valid UTF-8 and free of tabs and line breaks (qrels TSV lines hold them).
void check_id(const std::string& id, const std::string& where) {
  if (id.empty()) throw input_error(where, "empty id");
  if (id.find_first_of("\t\r\n") != std::string::npos) {
    throw input_error(where, "id " + quoted(id) + " holds a tab or a line break");
  }
  require_valid_utf8(id, where);
}

// An id: a string, or an integer (kept in decimal).
std::string read_id(const json& object, const std::string& key, const std::string& where) {
  const json& value = json_util::required(object, key, where);
  const std::string path = json_util::member_path(where, key);
  std::string id;
  if (value.is_string()) {
    id = value.get<std::string>();
  } else if (value.is_number_integer()) {
    id = value.dump();
  } else {
    throw input_error(path,
                      std::string("expected a string or integer id, got ") + value.type_name());
  }
  check_id(id, path);
  return id;
}

std::string take_id(json& object, const std::string& key, const std::string& where) {
  std::string id = read_id(object, key, where);
  object.erase(key);
  return id;
}

// Moves the string object[key] out of object (texts can be long: no copy).
std::string take_string(json& object, const std::string& key, const std::string& where) {
  json_util::required(object, key, where);
  json& value = object[key];
  if (!value.is_string()) {
    throw input_error(json_util::member_path(where, key),
                      std::string("expected a string, got ") + value.type_name());
  }
  std::string text = std::move(value.get_ref<std::string&>());
  object.erase(key);
  return text;
}

// As take_string; "" when absent or null.
std::string take_optional_string(json& object, const std::string& key, const std::string& where) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) {
    if (it != object.end()) object.erase(it);
    return "";
  }
  return take_string(object, key, where);
}

// The record's remaining fields become `extra`.
Document parse_document(json& object, const std::string& id_key, const std::string& where) {
  require_object(object, where);
  Document doc;
  doc.id = take_id(object, id_key, where);
  doc.title = take_optional_string(object, "title", where);
  doc.text = take_string(object, "text", where);
  doc.extra = std::move(object);
  return doc;
}

Query parse_query(json& object, const std::string& id_key, const std::string& text_key,
                  const std::string& where) {
  require_object(object, where);
  Query query;
  query.id = take_id(object, id_key, where);
  query.text = take_string(object, text_key, where);
  query.extra = std::move(object);
  return query;
}

// The ids of one split, for the checks the readers and the writer make.
class SplitIds {
 public:
  void add_document(const std::string& id, const std::string& where) {
    if (!documents_.insert(id).second)
      throw input_error(where, "duplicate document id " + quoted(id));
  }
  void add_query(const std::string& id, const std::string& where) {
    if (!queries_.insert(id).second) throw input_error(where, "duplicate query id " + quoted(id));
  }
  void check_judgement(const std::string& query_id, const std::string& doc_id,
                       const std::string& where) const {
    if (!queries_.count(query_id)) throw input_error(where, "unknown query id " + quoted(query_id));
    if (!documents_.count(doc_id))
      throw input_error(where, "unknown document id " + quoted(doc_id));
  }

 private:
  std::unordered_set<std::string> documents_, queries_;
};

// Says whether a record (a JSON object, "file:LINE") belongs to what is read.
using RecordFilter = std::function<bool(const json& object, const std::string& where)>;

// Collects a split while checking it: ids unique, judgements name known ids and do not
// contradict each other.
class SplitBuilder {
 public:
  void add_document(Document&& doc, const std::string& where) {
    ids_.add_document(doc.id, where);
    split_.corpus.push_back(std::move(doc));
  }
  void add_query(Query&& query, const std::string& where) {
    ids_.add_query(query.id, where);
    split_.queries.push_back(std::move(query));
  }
  void add_judgement(const Judgement& j, const std::string& where) {
    ids_.check_judgement(j.query_id, j.doc_id, where);
    auto [it, inserted] = split_.qrels[j.query_id].emplace(j.doc_id, j.relevance);
    if (!inserted && it->second != j.relevance) {
      throw input_error(where, "query " + quoted(j.query_id) + " and document " + quoted(j.doc_id) +
                                   " already judged " + std::to_string(it->second) + ", now " +
                                   std::to_string(j.relevance));
    }
  }
  // Reads a corpus jsonl (ids under id_key), skipping the records `keep` refuses; an empty
  // corpus is an InputError.
  void read_corpus(NamedInput corpus, const std::string& id_key, const RecordFilter& keep = {}) {
    for_each_jsonl(corpus, [&](json& object, const std::string& where) {
      if (!keep || keep(object, where)) add_document(parse_document(object, id_key, where), where);
      return true;
    });
    if (split_.corpus.empty()) throw input_error(corpus.name, "no documents");
  }
  void read_queries(NamedInput queries, const std::string& id_key, const std::string& text_key,
                    const RecordFilter& keep = {}) {
    for_each_jsonl(std::move(queries), [&](json& object, const std::string& where) {
      if (!keep || keep(object, where))
        add_query(parse_query(object, id_key, text_key, where), where);
      return true;
    });
  }
  // Drops the queries without judgements; no judgements at all is an InputError.
  RetrievalSplit finish(const std::string& qrels_name) {
    if (split_.qrels.empty()) throw input_error(qrels_name, "no relevance judgements");
    auto& queries = split_.queries;
    queries.erase(std::remove_if(queries.begin(), queries.end(),
                                 [&](const Query& q) { return !split_.qrels.count(q.id); }),
                  queries.end());
    return std::move(split_);
  }

 private:
  SplitIds ids_;
  RetrievalSplit split_;
};

// DIR/NAME, or DIR/NAME.gz when only that exists.
std::string data_file(const std::string& dir, const std::string& name) {
  const std::string plain = (fs::path(dir) / name).string();
  std::error_code ec;
  if (!fs::exists(plain, ec) && fs::exists(plain + ".gz", ec)) return plain + ".gz";
  return plain;
}

// A copy of `extra` to which a record's own fields are added.
json object_with_extra(const json& extra, const std::string& where) {
  if (extra.is_null()) return json::object();
  if (!extra.is_object()) throw input_error(where, "extra fields must be a JSON object");
  return extra;
}

// Moves the array of strings object[key] out of object.
std::vector<std::string> take_strings(json& object, const std::string& key,
                                      const std::string& where) {
  json_util::required(object, key, where);
  json& list = object[key];
  const std::string path = json_util::member_path(where, key);
  if (!list.is_array()) throw input_error(path, "expected an array");
  std::vector<std::string> out;
  out.reserve(list.size());
  for (size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_string()) {
      throw input_error(element_path(path, i),
                        std::string("expected a string, got ") + list[i].type_name());
    }
    out.push_back(std::move(list[i].get_ref<std::string&>()));
  }
  object.erase(key);
  return out;
}

// Scores present must number one per passage.
void check_scores(size_t passages, size_t scores, const std::string& path) {
  if (scores != passages) {
    throw input_error(path, "has " + std::to_string(scores) + " scores for " +
                                std::to_string(passages) + " passages");
  }
}

// Reads object[key] (an array of numbers) into scores and checks its length; absent is fine.
void take_scores(json& object, const std::string& key, size_t passages, std::vector<double>& scores,
                 const std::string& where) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return;
  const std::string path = json_util::member_path(where, key);
  if (!it->is_array()) throw input_error(path, "expected an array");
  for (size_t i = 0; i < it->size(); ++i) {
    const json& value = (*it)[i];
    if (!value.is_number()) {
      throw input_error(element_path(path, i),
                        std::string("expected a number, got ") + value.type_name());
    }
    scores.push_back(value.get<double>());
  }
  check_scores(passages, scores.size(), path);
  object.erase(it);
}

void check_training_example(const TrainingExample& example, const std::string& where) {
  if (example.pos.empty()) {
    throw input_error(json_util::member_path(where, "pos"), "needs at least one passage");
  }
  if (!example.pos_scores.empty()) {
    check_scores(example.pos.size(), example.pos_scores.size(),
                 json_util::member_path(where, "pos_scores"));
  }
  if (!example.neg_scores.empty()) {
    check_scores(example.neg.size(), example.neg_scores.size(),
                 json_util::member_path(where, "neg_scores"));
  }
}

}  // namespace

TrainingExample parse_training_example(json& object, const std::string& where) {
  require_object(object, where);
  TrainingExample example;
  example.query = take_string(object, "query", where);
  example.pos = take_strings(object, "pos", where);
  if (object.contains("neg") && !object["neg"].is_null()) {
    example.neg = take_strings(object, "neg", where);
  } else {
    object.erase("neg");
  }
  take_scores(object, "pos_scores", example.pos.size(), example.pos_scores, where);
  take_scores(object, "neg_scores", example.neg.size(), example.neg_scores, where);
  check_training_example(example, where);
  example.extra = std::move(object);
  return example;
}

// ---- BEIR

void for_each_qrels_tsv(NamedInput qrels,
                        const std::function<void(Judgement&&, const std::string& where)>& fn) {
  const std::string name = qrels.name;
  LineReader reader(std::move(qrels));
  std::string line;
  bool header = false;
  while (reader.next(line)) {
    if (is_blank_line(line)) continue;
    const std::string where = reader.where();
    require_valid_utf8(line, where);
    if (!header) {
      if (line != kQrelsHeader) {
        throw input_error(where, "expected the header \"query-id<TAB>corpus-id<TAB>score\"");
      }
      header = true;
      continue;
    }
    const size_t first = line.find('\t');
    const size_t second = first == std::string::npos ? first : line.find('\t', first + 1);
    if (second == std::string::npos || line.find('\t', second + 1) != std::string::npos) {
      const size_t columns = 1 + std::count(line.begin(), line.end(), '\t');
      throw input_error(where,
                        "expected 3 tab-separated columns (query-id, corpus-id, score), got " +
                            std::to_string(columns));
    }
    Judgement judgement{line.substr(0, first), line.substr(first + 1, second - first - 1), 0};
    if (judgement.query_id.empty() || judgement.doc_id.empty()) {
      throw input_error(where, "empty query-id or corpus-id");
    }
    std::string_view score(line);
    score.remove_prefix(second + 1);
    while (!score.empty() && score.front() == ' ') score.remove_prefix(1);
    while (!score.empty() && score.back() == ' ') score.remove_suffix(1);
    const auto [end, ec] =
        std::from_chars(score.data(), score.data() + score.size(), judgement.relevance);
    if (score.empty() || ec != std::errc() || end != score.data() + score.size()) {
      throw input_error(where, "score \"" + std::string(score) + "\" is not an integer");
    }
    fn(std::move(judgement), where);
  }
  if (!header) throw input_error(name, "empty: expected the header line");
}

void for_each_beir_document(NamedInput corpus, const DocumentVisitor& fn) {
  SplitIds ids;
  for_each_jsonl(std::move(corpus), [&](json& object, const std::string& where) {
    Document doc = parse_document(object, "_id", where);
    ids.add_document(doc.id, where);
    return fn(std::move(doc));
  });
}

void for_each_beir_document(const std::string& dir, const DocumentVisitor& fn) {
  const std::string path = data_file(dir, "corpus.jsonl");
  std::ifstream in = open_input(path);
  for_each_beir_document(NamedInput{in, path}, fn);
}

RetrievalSplit read_beir(NamedInput corpus, NamedInput queries, NamedInput qrels) {
  SplitBuilder builder;
  builder.read_corpus(corpus, "_id");
  builder.read_queries(queries, "_id", "text");
  for_each_qrels_tsv(qrels, [&](Judgement&& judgement, const std::string& where) {
    builder.add_judgement(judgement, where);
  });
  return builder.finish(qrels.name);
}

RetrievalSplit read_beir(const std::string& dir, const std::string& split) {
  const std::string corpus_path = data_file(dir, "corpus.jsonl");
  const std::string queries_path = data_file(dir, "queries.jsonl");
  const std::string qrels_path = data_file(dir, "qrels/" + split + ".tsv");
  std::ifstream corpus = open_input(corpus_path), queries = open_input(queries_path),
                qrels = open_input(qrels_path);
  return read_beir({corpus, corpus_path}, {queries, queries_path}, {qrels, qrels_path});
}

std::vector<JudgedQuery> find_beir_queries(const std::string& dir, const std::string& split,
                                           size_t limit, const std::string& query_id) {
  // The judgements first (qrels are small): which queries the split holds.
  std::map<std::string, std::vector<Judgement>> judged;
  const std::string qrels_path = data_file(dir, "qrels/" + split + ".tsv");
  std::ifstream qrels = open_input(qrels_path);
  for_each_qrels_tsv({qrels, qrels_path}, [&](Judgement&& judgement, const std::string&) {
    if (query_id.empty() || judgement.query_id == query_id)
      judged[judgement.query_id].push_back(std::move(judgement));
  });
  std::vector<JudgedQuery> found;
  if (judged.empty() || limit == 0) return found;
  const std::string queries_path = data_file(dir, "queries.jsonl");
  std::ifstream queries = open_input(queries_path);
  for_each_jsonl({queries, queries_path}, [&](json& object, const std::string& where) {
    Query query = parse_query(object, "_id", "text", where);
    const auto it = judged.find(query.id);
    if (it == judged.end()) return true;
    std::vector<Judgement> judgements = std::move(it->second);
    judged.erase(it);
    std::stable_sort(
        judgements.begin(), judgements.end(),
        [](const Judgement& a, const Judgement& b) { return a.relevance > b.relevance; });
    found.push_back(JudgedQuery{std::move(query), std::move(judgements)});
    return found.size() < limit && !judged.empty();
  });
  return found;
}

std::optional<JudgedQuery> find_beir_query(const std::string& dir, const std::string& split,
                                           const std::string& query_id) {
  if (query_id.empty()) return std::nullopt;
  std::vector<JudgedQuery> found = find_beir_queries(dir, split, 1, query_id);
  if (found.empty()) return std::nullopt;
  return std::move(found.front());
}

void write_beir(const std::string& dir, const std::string& split, const RetrievalSplit& data) {
  if (split.empty() || split.find_first_of("/\\") != std::string::npos || split == "." ||
      split == "..") {
    throw input_error(dir, "bad split name " + quoted(split));
  }
  SplitIds ids;
  for (size_t i = 0; i < data.corpus.size(); ++i) {
    const std::string where = dir + ": corpus[" + std::to_string(i) + "]";
    check_id(data.corpus[i].id, where);
    ids.add_document(data.corpus[i].id, where);
  }
  for (size_t i = 0; i < data.queries.size(); ++i) {
    const std::string where = dir + ": queries[" + std::to_string(i) + "]";
    check_id(data.queries[i].id, where);
    ids.add_query(data.queries[i].id, where);
  }
  std::string qrels = std::string(kQrelsHeader) + "\n";
  for (const auto& [query_id, judgements] : data.qrels) {
    for (const auto& [doc_id, relevance] : judgements) {
      ids.check_judgement(query_id, doc_id, dir + ": qrels");
      qrels += query_id + "\t" + doc_id + "\t" + std::to_string(relevance) + "\n";
    }
  }
  std::error_code ec;
  fs::create_directories(fs::path(dir) / "qrels", ec);
  if (ec) throw input_error(dir, "cannot create folder: " + ec.message());

  JsonlWriter corpus((fs::path(dir) / "corpus.jsonl").string());
  for (const Document& doc : data.corpus) {
    json object = object_with_extra(doc.extra, dir + ": document " + quoted(doc.id));
    object["_id"] = doc.id;
    object["title"] = doc.title;
    object["text"] = doc.text;
    corpus.write(object);
  }
  JsonlWriter queries((fs::path(dir) / "queries.jsonl").string());
  for (const Query& query : data.queries) {
    json object = object_with_extra(query.extra, dir + ": query " + quoted(query.id));
    object["_id"] = query.id;
    object["text"] = query.text;
    queries.write(object);
  }
  AtomicFile qrels_file((fs::path(dir) / "qrels" / (split + ".tsv")).string());
  qrels_file.write(qrels);
  corpus.commit();
  queries.commit();
  qrels_file.commit();
}

// ---- MLDR

RetrievalSplit read_mldr(NamedInput queries, NamedInput corpus) {
  SplitBuilder builder;
  builder.read_corpus(corpus, "docid");
  for_each_jsonl(queries, [&](json& object, const std::string& where) {
    require_object(object, where);
    const std::string list_path = json_util::member_path(where, "positive_passages");
    json_util::required(object, "positive_passages", where);
    const json positives = std::move(object["positive_passages"]);
    if (!positives.is_array()) throw input_error(list_path, "expected an array");
    object.erase("positive_passages");
    object.erase("negative_passages");
    Query query = parse_query(object, "query_id", "query", where);
    const std::string query_id = query.id;
    builder.add_query(std::move(query), where);
    for (size_t i = 0; i < positives.size(); ++i) {
      const std::string path = element_path(list_path, i);
      builder.add_judgement({query_id, read_id(positives[i], "docid", path), 1}, path);
    }
    return true;
  });
  return builder.finish(queries.name);
}

RetrievalSplit read_mldr(const std::string& queries_file, const std::string& corpus_file) {
  std::ifstream queries = open_input(queries_file), corpus = open_input(corpus_file);
  return read_mldr({queries, queries_file}, {corpus, corpus_file});
}

// ---- LongEmbed

RetrievalSplit read_longembed(NamedInput corpus, NamedInput queries, NamedInput qrels,
                              std::optional<int64_t> context_length) {
  // With a context length asked for, records of other lengths are skipped.
  auto selected = [&](const json& object, const std::string& where) {
    require_object(object, where);
    return !context_length ||
           json_util::get<int64_t>(object, "context_length", where) == *context_length;
  };
  SplitBuilder builder;
  builder.read_corpus(corpus, "doc_id", selected);
  builder.read_queries(queries, "qid", "text", selected);
  for_each_jsonl(qrels, [&](json& object, const std::string& where) {
    if (selected(object, where)) {
      builder.add_judgement({read_id(object, "qid", where), read_id(object, "doc_id", where), 1},
                            where);
    }
    return true;
  });
  return builder.finish(qrels.name);
}

RetrievalSplit read_longembed(const std::string& dir, std::optional<int64_t> context_length) {
  const std::string corpus_path = data_file(dir, "corpus.jsonl");
  const std::string queries_path = data_file(dir, "queries.jsonl");
  const std::string qrels_path = data_file(dir, "qrels.jsonl");
  std::ifstream corpus = open_input(corpus_path), queries = open_input(queries_path),
                qrels = open_input(qrels_path);
  return read_longembed({corpus, corpus_path}, {queries, queries_path}, {qrels, qrels_path},
                        context_length);
}

// ---- FlagEmbedding training files

void for_each_training_example(NamedInput input, const TrainingVisitor& fn) {
  for_each_jsonl(std::move(input), [&](json& object, const std::string& where) {
    return fn(parse_training_example(object, where), where);
  });
}

void for_each_training_example(const std::string& path, const TrainingVisitor& fn) {
  std::ifstream in = open_input(path);
  for_each_training_example(NamedInput{in, path}, fn);
}

json training_example_json(const TrainingExample& example, const std::string& where) {
  check_training_example(example, where);
  json object = object_with_extra(example.extra, where);
  object["query"] = example.query;
  object["pos"] = example.pos;
  object["neg"] = example.neg;
  if (!example.pos_scores.empty()) object["pos_scores"] = example.pos_scores;
  if (!example.neg_scores.empty()) object["neg_scores"] = example.neg_scores;
  return object;
}

void write_training_examples(const std::string& path,
                             const std::vector<TrainingExample>& examples) {
  JsonlWriter writer(path);
  for (const TrainingExample& example : examples) {
    writer.write(
        training_example_json(example, path + ": example " + std::to_string(writer.lines())));
  }
  writer.commit();
}

}  // namespace lmk
