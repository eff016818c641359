#include "core/tokenize/hf_models.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <deque>
#include <functional>
#include <mutex>
#include <unordered_map>

#include "core/util/error.h"
#include "core/util/json_util.h"
#include "core/util/unicode.h"

namespace lmk::hf {

using nlohmann::json;
namespace ju = json_util;

namespace {

// Ids are dense in practice; the bound keeps a hostile file from asking for a huge table.
constexpr int64_t kMaxTokenId = (1 << 24) - 1;

// Open addressing with linear probing at a load of at most 1/2, for the tokenizer's hot lookups
// (vocabulary, merges): a lookup usually touches one slot, where std::unordered_map's nodes
// cost two or three cache misses (they were half of a cold gemma3 encode: perf,
// docs/BENCHMARKS.md). Slot: default-constructed = empty, `bool empty() const`,
// `uint64_t hash() const`. `matches(slot)` says whether a full slot holds the key looked for.
template <class Slot>
class ProbeTable {
 public:
  void reserve(size_t count) {
    size_t capacity = 16;
    while (capacity < 2 * count) capacity *= 2;
    if (capacity > slots_.size()) rehash(capacity);
  }
  // Starts loading hash's home slot, so that a run of lookups overlaps its cache misses.
  void prefetch(uint64_t hash) const {
    if (!slots_.empty()) __builtin_prefetch(&slots_[home(hash)]);
  }
  template <class Matches>
  const Slot* find(uint64_t hash, const Matches& matches) const {
    if (slots_.empty()) return nullptr;
    const Slot& slot = slots_[probe(hash, matches)];
    return slot.empty() ? nullptr : &slot;
  }
  // The slot holding the key, or the empty slot the caller then fills for it.
  template <class Matches>
  Slot& insert(uint64_t hash, const Matches& matches) {
    if (2 * (size_ + 1) > slots_.size()) rehash(std::max<size_t>(16, 2 * slots_.size()));
    Slot& slot = slots_[probe(hash, matches)];
    if (slot.empty()) ++size_;
    return slot;
  }

 private:
  size_t home(uint64_t hash) const {
    return static_cast<size_t>((hash * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  template <class Matches>
  size_t probe(uint64_t hash, const Matches& matches) const {
    const size_t mask = slots_.size() - 1;
    size_t i = home(hash);
    while (!slots_[i].empty() && !matches(slots_[i])) i = (i + 1) & mask;
    return i;
  }
  void rehash(size_t capacity) {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.assign(capacity, Slot{});
    shift_ = 64;
    for (size_t c = capacity; c > 1; c /= 2) --shift_;
    const size_t mask = capacity - 1;
    for (const Slot& slot : old) {
      if (slot.empty()) continue;
      size_t i = home(slot.hash());
      while (!slots_[i].empty()) i = (i + 1) & mask;
      slots_[i] = slot;
    }
  }
  std::vector<Slot> slots_;
  unsigned shift_ = 64;
  size_t size_ = 0;
};

// token <-> id for a model; keys point into stable storage.
class Vocabulary {
  struct Entry {
    const std::string* key = nullptr;
    uint32_t tag = 0;  // the low bits of the key's hash: most mismatches never read the key
    int32_t id = -1;
    bool empty() const { return key == nullptr; }
    uint64_t hash() const { return hash_of(*key); }
  };
  static uint64_t hash_of(std::string_view token) { return std::hash<std::string_view>{}(token); }
  static auto matcher(std::string_view token, uint64_t hash) {
    return [token, tag = static_cast<uint32_t>(hash)](const Entry& e) {
      return e.tag == tag && *e.key == token;
    };
  }

 public:
  // Reads {"token": id, ...}.
  void load(const json& j, const std::string& where) {
    if (!j.is_object()) throw input_error(where, "expected an object of token -> id");
    index_.reserve(j.size());
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (!it.value().is_number_integer() || it.value().get<int64_t>() < 0 ||
          it.value().get<int64_t>() > kMaxTokenId) {
        throw input_error(where + "[\"" + it.key() + "\"]",
                          "expected an integer id in [0, " + std::to_string(kMaxTokenId) + "]");
      }
      add(it.key(), it.value().get<int32_t>());
    }
  }
  // Adds one entry; a token added again takes the new id.
  void add(const std::string& token, int32_t id) {
    storage_.push_back(token);
    const std::string* key = &storage_.back();
    const uint64_t hash = hash_of(*key);
    Entry& entry = index_.insert(hash, matcher(*key, hash));
    if (entry.empty()) entry = {key, static_cast<uint32_t>(hash), id};
    entry.id = id;  // a token added again keeps its first key string
    if (static_cast<size_t>(id) >= tokens_.size()) tokens_.resize(static_cast<size_t>(id) + 1);
    tokens_[static_cast<size_t>(id)] = key;
  }
  std::optional<int32_t> find(std::string_view token) const {
    const uint64_t hash = hash_of(token);
    const Entry* entry = index_.find(hash, matcher(token, hash));
    if (!entry) return std::nullopt;
    return entry->id;
  }
  std::string token(int32_t id) const {
    if (id < 0 || static_cast<size_t>(id) >= tokens_.size() || !tokens_[static_cast<size_t>(id)])
      return {};
    return *tokens_[static_cast<size_t>(id)];
  }
  size_t size() const { return tokens_.size(); }

 private:
  std::deque<std::string> storage_;
  ProbeTable<Entry> index_;
  std::vector<const std::string*> tokens_;
};

// The unk token's id; throws when the model names an unk token its vocabulary lacks.
std::optional<int32_t> unk_id(const Vocabulary& vocab, const json& j, const std::string& where) {
  const auto unk = ju::optional<std::string>(j, "unk_token", where, "");
  if (unk.empty()) return std::nullopt;
  auto id = vocab.find(unk);
  if (!id)
    throw input_error(ju::member_path(where, "unk_token"),
                      "'" + unk + "' is not in the vocabulary");
  return id;
}

// A model over a token -> id vocabulary with an optional unk token.
class VocabularyModel : public Model {
 public:
  VocabularyModel(const json& j, const std::string& where) {
    vocab_.load(ju::required(j, "vocab", where), ju::member_path(where, "vocab"));
    unk_ = unk_id(vocab_, j, where);
  }
  std::optional<int32_t> token_to_id(std::string_view token) const override {
    return vocab_.find(token);
  }
  std::string id_to_token(int32_t id) const override { return vocab_.token(id); }
  size_t vocab_size() const override { return vocab_.size(); }

 protected:
  Vocabulary vocab_;
  std::optional<int32_t> unk_;
};

class BpeModel : public VocabularyModel {
 public:
  BpeModel(const json& j, const std::string& where) : VocabularyModel(j, where) {
    continuing_subword_prefix_ =
        ju::optional<std::string>(j, "continuing_subword_prefix", where, "");
    end_of_word_suffix_ = ju::optional<std::string>(j, "end_of_word_suffix", where, "");
    fuse_unk_ = ju::optional<bool>(j, "fuse_unk", where, false);
    byte_fallback_ = ju::optional<bool>(j, "byte_fallback", where, false);
    ignore_merges_ = ju::optional<bool>(j, "ignore_merges", where, false);
    if (j.contains("dropout") && !j["dropout"].is_null()) {
      if (!j["dropout"].is_number())
        throw input_error(ju::member_path(where, "dropout"), "must be a number or null");
      if (j["dropout"].get<double>() > 0.0)
        throw input_error(ju::member_path(where, "dropout"),
                          "BPE dropout is not supported (it makes encoding random)");
    }
    load_merges(ju::required(j, "merges", where), ju::member_path(where, "merges"));
    for (int c = 0; c < 0x80; ++c)
      ascii_ids_[c] = vocab_.find(std::string(1, static_cast<char>(c))).value_or(-1);
    if (byte_fallback_) {
      for (int b = 0; b < 256; ++b) {
        char name[8];
        std::snprintf(name, sizeof name, "<0x%02X>", b);
        byte_ids_[b] = vocab_.find(name).value_or(-1);
      }
    }
  }

  void tokenize(std::string_view piece, std::vector<ModelToken>& out) const override {
    if (piece.empty()) return;
    if (ignore_merges_) {
      if (auto id = vocab_.find(piece)) {
        out.push_back({*id, 0, static_cast<uint32_t>(piece.size())});
        return;
      }
    }
    const bool cacheable = piece.size() <= kMaxCachedLength;
    std::string key;  // built once: looked up, then inserted on a miss
    if (cacheable) {
      key.assign(piece);
      std::lock_guard<std::mutex> lock(cache_mutex_);
      auto it = cache_.find(key);
      if (it != cache_.end()) {
        out.insert(out.end(), it->second.begin(), it->second.end());
        return;
      }
    }
    const size_t first = out.size();
    merge_word(piece, out);
    if (cacheable) {
      std::lock_guard<std::mutex> lock(cache_mutex_);
      if (cache_.size() >= kCacheCapacity) cache_.clear();
      cache_.emplace(std::move(key), std::vector<ModelToken>(out.begin() + first, out.end()));
    }
  }

 private:
  static constexpr size_t kMaxCachedLength = 256;
  static constexpr size_t kCacheCapacity = 50000;

  struct Merge {
    int32_t rank;
    int32_t new_id;
  };
  static uint64_t pair_key(int32_t a, int32_t b) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
  }
  // (left id, right id) -> merge. A pair listed twice takes its last rank, as in Hugging Face
  // (its merge map is collected from the list in order).
  struct MergeSlot {
    static constexpr uint64_t kEmpty = ~uint64_t{0};  // ids are >= 0: no pair is all ones
    uint64_t key = kEmpty;
    Merge merge{};
    bool empty() const { return key == kEmpty; }
    uint64_t hash() const { return key; }
  };
  static auto same_pair(uint64_t key) {
    return [key](const MergeSlot& slot) { return slot.key == key; };
  }
  const Merge* find_merge(uint64_t key) const {
    const MergeSlot* slot = merges_.find(key, same_pair(key));
    return slot ? &slot->merge : nullptr;
  }

  void load_merges(const json& merges, const std::string& where) {
    if (!merges.is_array()) throw input_error(where, "expected an array");
    merges_.reserve(merges.size());
    for (size_t rank = 0; rank < merges.size(); ++rank) {
      const std::string at = where + "[" + std::to_string(rank) + "]";
      const json& m = merges[rank];
      std::string a, b;
      if (m.is_string()) {
        const auto& s = m.get_ref<const std::string&>();
        const size_t space = s.find(' ');
        if (space == std::string::npos || space == 0 || space + 1 >= s.size() ||
            s.find(' ', space + 1) != std::string::npos) {
          throw input_error(at, "expected \"left right\", got \"" + s + "\"");
        }
        a = s.substr(0, space);
        b = s.substr(space + 1);
      } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
        a = m[0].get<std::string>();
        b = m[1].get<std::string>();
      } else {
        throw input_error(at, "expected \"left right\" or [\"left\", \"right\"]");
      }
      const auto a_id = vocab_.find(a);
      const auto b_id = vocab_.find(b);
      if (!a_id) throw input_error(at, "token '" + a + "' is not in the vocabulary");
      if (!b_id) throw input_error(at, "token '" + b + "' is not in the vocabulary");
      std::string merged = a;
      if (!continuing_subword_prefix_.empty() &&
          b.compare(0, continuing_subword_prefix_.size(), continuing_subword_prefix_) == 0) {
        merged += b.substr(continuing_subword_prefix_.size());
      } else {
        merged += b;
      }
      const auto merged_id = vocab_.find(merged);
      if (!merged_id)
        throw input_error(at, "merged token '" + merged + "' is not in the vocabulary");
      const uint64_t key = pair_key(*a_id, *b_id);
      merges_.insert(key, same_pair(key)) = {key, Merge{static_cast<int32_t>(rank), *merged_id}};
    }
  }

  struct Symbol {
    int32_t id;
    int32_t prev, next;
    uint32_t begin, length;
  };

  // A merge found for the pair at `position`, in the queue of apply_merges.
  struct Candidate {
    int32_t rank, position, new_id;
    int32_t left_id, right_id;  // the pair it was found for
    bool operator>(const Candidate& o) const {
      return rank != o.rank ? rank > o.rank : position > o.position;
    }
  };
  // merge_word's buffers, reused across words (a cold pass calls it once per distinct word); one
  // per thread, as encoders share the model.
  struct MergeScratch {
    std::vector<Symbol> symbols;
    std::vector<Candidate> queue;
    std::vector<char> removed;
    std::string decorated;
  };

  // Splits the word into its characters (or byte tokens / unk), then applies merges lowest
  // rank first, leftmost first -- Hugging Face's Word::merge_all.
  void merge_word(std::string_view word, std::vector<ModelToken>& out) const {
    thread_local MergeScratch scratch;
    std::vector<Symbol>& symbols = scratch.symbols;
    split_word(word, symbols, scratch.decorated);
    if (symbols.empty()) return;
    apply_merges(symbols, scratch.queue, scratch.removed);
    for (int32_t i = 0; i >= 0; i = symbols[static_cast<size_t>(i)].next) {
      const Symbol& s = symbols[static_cast<size_t>(i)];
      out.push_back({s.id, s.begin, s.begin + s.length});
    }
    // A very long word (a whole-line piece of a huge line) does not keep its buffers alive.
    if (symbols.capacity() > (size_t{1} << 16)) scratch = MergeScratch{};
  }

  // The word's first symbols, linked in order: each character as a whole symbol (with the
  // continuing-subword prefix after the first, the end-of-word suffix on the last), else its byte
  // tokens (byte_fallback), else unk (consecutive ones fused when fuse_unk); `decorated` holds a
  // character with its prefix or suffix.
  void split_word(std::string_view word, std::vector<Symbol>& symbols,
                  std::string& decorated) const {
    symbols.clear();
    std::optional<Symbol> pending_unk;
    auto add = [&](int32_t id, uint32_t begin, uint32_t length) {
      symbols.push_back({id, static_cast<int32_t>(symbols.size()) - 1, -1, begin, length});
    };
    auto flush_unk = [&] {
      if (pending_unk) add(pending_unk->id, pending_unk->begin, pending_unk->length);
      pending_unk.reset();
    };
    size_t pos = 0;
    while (pos < word.size()) {
      const size_t begin = pos;
      const auto lead = static_cast<unsigned char>(word[pos]);
      pos += unicode::sequence_length(lead);
      if (pos > word.size()) pos = word.size();
      std::string_view symbol = word.substr(begin, pos - begin);
      const auto length = static_cast<uint32_t>(pos - begin);
      const bool prefixed = !continuing_subword_prefix_.empty() && begin > 0;
      const bool suffixed = !end_of_word_suffix_.empty() && pos == word.size();
      if (!prefixed && !suffixed && lead < 0x80 && ascii_ids_[lead] >= 0) {
        flush_unk();
        add(ascii_ids_[lead], static_cast<uint32_t>(begin), length);
        continue;
      }
      if (prefixed) {
        decorated = continuing_subword_prefix_;
        decorated += symbol;
        symbol = decorated;
      }
      if (suffixed) {
        if (symbol.data() != decorated.data()) decorated.assign(symbol);
        decorated += end_of_word_suffix_;
        symbol = decorated;
      }
      if (auto id = vocab_.find(symbol)) {
        flush_unk();
        add(*id, static_cast<uint32_t>(begin), length);
        continue;
      }
      if (byte_fallback_) {
        bool all_bytes = true;
        for (char c : symbol)
          all_bytes = all_bytes && byte_ids_[static_cast<unsigned char>(c)] >= 0;
        if (all_bytes) {
          flush_unk();
          for (size_t k = 0; k < symbol.size(); ++k) {
            // Byte tokens of one character share its span.
            add(byte_ids_[static_cast<unsigned char>(symbol[k])], static_cast<uint32_t>(begin),
                k == 0 ? length : 0);
          }
          continue;
        }
      }
      if (unk_) {
        if (pending_unk && fuse_unk_) {
          pending_unk->length += length;
        } else {
          flush_unk();
          pending_unk = Symbol{*unk_, -1, -1, static_cast<uint32_t>(begin), length};
        }
      }
    }
    flush_unk();
    if (symbols.empty()) return;
    symbols.back().next = -1;
    for (size_t i = 0; i + 1 < symbols.size(); ++i) symbols[i].next = static_cast<int32_t>(i + 1);
  }

  // Merges neighbouring symbols, lowest rank first, leftmost first, until no pair has a merge; a
  // merged pair's right symbol is unlinked (symbols[0] stays the first).
  void apply_merges(std::vector<Symbol>& symbols, std::vector<Candidate>& queue,
                    std::vector<char>& removed) const {
    queue.clear();  // a min-heap on (rank, position)
    const auto later = std::greater<Candidate>();
    auto consider = [&](int32_t position) {
      const Symbol& left = symbols[static_cast<size_t>(position)];
      if (left.next < 0) return;
      const int32_t right_id = symbols[static_cast<size_t>(left.next)].id;
      if (const Merge* merge = find_merge(pair_key(left.id, right_id))) {
        queue.push_back({merge->rank, position, merge->new_id, left.id, right_id});
        std::push_heap(queue.begin(), queue.end(), later);
      }
    };
    for (size_t i = 0; i + 1 < symbols.size(); ++i)
      merges_.prefetch(pair_key(symbols[i].id, symbols[i + 1].id));
    for (size_t i = 0; i + 1 < symbols.size(); ++i) consider(static_cast<int32_t>(i));

    removed.assign(symbols.size(), 0);
    while (!queue.empty()) {
      std::pop_heap(queue.begin(), queue.end(), later);
      const Candidate top = queue.back();
      queue.pop_back();
      Symbol& left = symbols[static_cast<size_t>(top.position)];
      if (removed[static_cast<size_t>(top.position)] || left.next < 0) continue;
      const int32_t right_position = left.next;
      Symbol& right = symbols[static_cast<size_t>(right_position)];
      // Hugging Face's test: the pair now at this position merges into the candidate's token.
      // Unchanged ids pass it without a lookup.
      if (left.id != top.left_id || right.id != top.right_id) {
        const Merge* merge = find_merge(pair_key(left.id, right.id));
        if (!merge || merge->new_id != top.new_id) continue;
      }
      left.id = top.new_id;
      left.length = right.begin + right.length - left.begin;
      left.next = right.next;
      removed[static_cast<size_t>(right_position)] = 1;
      if (right.next >= 0) symbols[static_cast<size_t>(right.next)].prev = top.position;
      if (left.prev >= 0) consider(left.prev);
      consider(top.position);
    }
  }

  ProbeTable<MergeSlot> merges_;
  int32_t ascii_ids_[0x80];  // the id of each one-byte character as a whole symbol, or -1
  std::string continuing_subword_prefix_, end_of_word_suffix_;
  bool fuse_unk_ = false, byte_fallback_ = false, ignore_merges_ = false;
  int32_t byte_ids_[256] = {};
  mutable std::mutex cache_mutex_;
  mutable std::unordered_map<std::string, std::vector<ModelToken>> cache_;
};

class WordPieceModel : public VocabularyModel {
 public:
  WordPieceModel(const json& j, const std::string& where) : VocabularyModel(j, where) {
    if (!unk_)
      throw input_error(ju::member_path(where, "unk_token"), "WordPiece needs an unk token");
    prefix_ = ju::optional<std::string>(j, "continuing_subword_prefix", where, "##");
    max_chars_ = ju::optional<size_t>(j, "max_input_chars_per_word", where, 100);
  }

  void tokenize(std::string_view word, std::vector<ModelToken>& out) const override {
    size_t chars = 0;
    for (char c : word) chars += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    const auto whole = ModelToken{*unk_, 0, static_cast<uint32_t>(word.size())};
    if (chars > max_chars_) {
      out.push_back(whole);
      return;
    }
    const size_t first = out.size();
    std::string candidate;
    size_t start = 0;
    while (start < word.size()) {
      size_t end = word.size();
      std::optional<int32_t> found;
      while (start < end) {
        candidate.clear();
        if (start > 0) candidate = prefix_;
        candidate.append(word.substr(start, end - start));
        if ((found = vocab_.find(candidate))) break;
        end = unicode::previous_code_point_start(word, end, start);
      }
      if (!found) {
        out.resize(first);
        out.push_back(whole);
        return;
      }
      out.push_back({*found, static_cast<uint32_t>(start), static_cast<uint32_t>(end)});
      start = end;
    }
  }

 private:
  std::string prefix_;
  size_t max_chars_ = 100;
};

class WordLevelModel : public VocabularyModel {
 public:
  WordLevelModel(const json& j, const std::string& where) : VocabularyModel(j, where) {}
  void tokenize(std::string_view word, std::vector<ModelToken>& out) const override {
    auto id = vocab_.find(word);
    if (!id) id = unk_;
    if (!id)
      throw InputError("WordLevel: '" + std::string(word) +
                       "' is not in the vocabulary and there is no unk token");
    out.push_back({*id, 0, static_cast<uint32_t>(word.size())});
  }
};

}  // namespace

std::unique_ptr<Model> make_model(const json& j, const std::string& where) {
  std::string type = ju::optional<std::string>(j, "type", where, "");
  if (type.empty()) {
    // Old files leave the type out; the fields tell.
    if (j.is_object() && j.contains("merges"))
      type = "BPE";
    else if (j.is_object() && j.contains("max_input_chars_per_word"))
      type = "WordPiece";
  }
  if (type == "BPE") return std::make_unique<BpeModel>(j, where);
  if (type == "WordPiece") return std::make_unique<WordPieceModel>(j, where);
  if (type == "WordLevel") return std::make_unique<WordLevelModel>(j, where);
  if (type == "Unigram") {
    throw input_error(
        ju::member_path(where, "type"),
        "Unigram tokenizer.json models are not supported; load the sentencepiece .model instead");
  }
  throw input_error(ju::member_path(where, "type"), "unsupported model type '" + type + "'");
}

}  // namespace lmk::hf
