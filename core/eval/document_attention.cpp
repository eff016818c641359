// The attention explorer's file (core/eval/document_attention.h).
#include "core/eval/document_attention.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <limits>

#include "core/util/error.h"
#include "core/util/file.h"
#include "core/util/float16.h"

namespace lmk {

namespace {

using nlohmann::json;

constexpr char kMagic[8] = {'L', 'M', 'K', 'A', 'T', 'T', 'N', '1'};
// Bounds a reader accepts (a model input, a model): far beyond what lmk writes, small enough
// that the products below cannot overflow.
constexpr int64_t kMaxLength = int64_t{1} << 24;
constexpr int64_t kMaxLayersOrHeads = 4096;

void append_halves(std::string& data, const std::vector<float>& values) {
  const size_t at = data.size();
  data.resize(at + 2 * values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    const uint16_t h = float_to_half(values[i]);
    data[at + 2 * i] = static_cast<char>(h & 0xFF);
    data[at + 2 * i + 1] = static_cast<char>(h >> 8);
  }
}

json array_ref(size_t offset_values, size_t count) {
  return {{"offset", offset_values}, {"count", count}};
}

}  // namespace

void write_document_attention(const std::string& path, const DocumentAttention& d) {
  std::string data;
  json header = {{"version", 1},
                 {"model", d.model},
                 {"pooling", d.pooling},
                 {"granularity", d.granularity},
                 {"layers", d.layers},
                 {"heads", d.heads},
                 {"global_layers", d.global_layers},
                 {"text", d.text},
                 {"tokens", d.tokens},
                 {"pooling_positions", d.pooling_positions},
                 {"content_tokens", d.content_tokens},
                 {"truncated", d.truncated},
                 {"query", d.query}};
  json spans = json::array();
  for (const auto& [begin, end] : d.spans) spans.push_back({begin, end});
  header["spans"] = std::move(spans);
  header["profiles"] = array_ref(data.size() / 2, d.profiles.size());
  append_halves(data, d.profiles);
  json rows = json::array();
  for (const auto& [layer, values] : d.rows) {
    json ref = array_ref(data.size() / 2, values.size());
    ref["layer"] = layer;
    rows.push_back(std::move(ref));
    append_halves(data, values);
  }
  header["rows"] = std::move(rows);
  header["query_similarity"] = d.query_similarity;
  header["pooled_similarity"] =
      d.query.empty() || !std::isfinite(d.pooled_similarity) ? json() : json(d.pooled_similarity);
  const std::string text = header.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string head(kMagic, sizeof kMagic);
  const uint64_t size = text.size();
  for (int i = 0; i < 8; ++i) head.push_back(static_cast<char>((size >> (8 * i)) & 0xFF));
  // Written piece by piece: the arrays (most of the file) are not copied once more.
  AtomicFile file(path);
  file.write(head);
  file.write(text);
  file.write(data);
  file.commit();
}

DocumentAttention parse_document_attention(std::string_view bytes, const std::string& name) {
  auto fail = [&](const std::string& why) -> InputError { return input_error(name, why); };
  if (bytes.size() < 16 || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    throw fail("not an attention file of lmk attention --explore (no LMKATTN1 header)");
  uint64_t header_size = 0;
  for (int i = 0; i < 8; ++i)
    header_size |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
  if (header_size > bytes.size() - 16) throw fail("truncated (the header runs past the end)");
  const std::string_view header_text = bytes.substr(16, header_size);
  const std::string_view data = bytes.substr(16 + header_size);
  const size_t values = data.size() / 2;
  json h;
  try {
    h = json::parse(header_text.begin(), header_text.end());
  } catch (const json::exception& e) {
    throw fail(std::string("damaged header: ") + e.what());
  }
  DocumentAttention d;
  // The floats of an array reference, checked against the data and the expected count.
  auto halves = [&](const json& ref, const std::string& what, uint64_t expected) {
    if (!ref.is_object() || !ref.contains("offset") || !ref.contains("count") ||
        !ref["offset"].is_number_unsigned() || !ref["count"].is_number_unsigned())
      throw fail(what + ": not an array reference");
    const uint64_t offset = ref["offset"].get<uint64_t>(), count = ref["count"].get<uint64_t>();
    if (count != expected)
      throw fail(what + ": " + std::to_string(count) + " values, expected " +
                 std::to_string(expected));
    if (offset > values || count > values - offset) throw fail(what + ": runs past the end");
    std::vector<float> out(count);
    const auto* p = reinterpret_cast<const unsigned char*>(data.data()) + 2 * offset;
    for (uint64_t i = 0; i < count; ++i)
      out[i] = half_to_float(static_cast<uint16_t>(p[2 * i] | (p[2 * i + 1] << 8)));
    return out;
  };
  try {
    if (!h.is_object()) throw fail("damaged header: not an object");
    if (h.value("version", 0) != 1) throw fail("unknown version (this lmk reads version 1)");
    d.model = h.at("model").get<std::string>();
    d.pooling = h.at("pooling").get<std::string>();
    d.granularity = h.at("granularity").get<int>();
    d.layers = h.at("layers").get<int64_t>();
    d.heads = h.at("heads").get<int64_t>();
    if (d.layers < 1 || d.layers > kMaxLayersOrHeads || d.heads < 1 || d.heads > kMaxLayersOrHeads)
      throw fail("layers / heads out of range");
    d.global_layers = h.at("global_layers").get<std::vector<bool>>();
    if (static_cast<int64_t>(d.global_layers.size()) != d.layers)
      throw fail("global_layers: one per layer expected");
    d.text = h.at("text").get<std::string>();
    d.tokens = h.at("tokens").get<std::vector<std::string>>();
    const int64_t L = d.length();
    if (L < 1 || L > kMaxLength)
      throw fail("tokens: 1.." + std::to_string(kMaxLength) + " expected");
    const json& spans = h.at("spans");
    if (!spans.is_array() || static_cast<int64_t>(spans.size()) != L)
      throw fail("spans: one per token expected");
    for (const json& span : spans) {
      const auto pair = span.get<std::vector<uint64_t>>();
      if (pair.size() != 2 || pair[0] > pair[1] || pair[1] > d.text.size())
        throw fail("spans: a span outside the text");
      d.spans.emplace_back(static_cast<uint32_t>(pair[0]), static_cast<uint32_t>(pair[1]));
    }
    d.pooling_positions = h.at("pooling_positions").get<std::vector<int64_t>>();
    if (d.pooling_positions.empty()) throw fail("pooling_positions: none");
    for (int64_t p : d.pooling_positions)
      if (p < 0 || p >= L) throw fail("pooling_positions: a position outside the input");
    d.content_tokens = h.at("content_tokens").get<int64_t>();
    d.truncated = h.at("truncated").get<bool>();
    d.profiles =
        halves(h.at("profiles"), "profiles", static_cast<uint64_t>(d.layers * (1 + d.heads) * L));
    const auto P = static_cast<uint64_t>(d.pooling_positions.size());
    for (const json& ref : h.at("rows")) {
      const int64_t layer = ref.at("layer").get<int64_t>();
      if (layer < 0 || layer >= d.layers || d.rows.count(layer))
        throw fail("rows: a layer outside the model, or twice");
      d.rows[layer] =
          halves(ref, "rows of layer " + std::to_string(layer), P * static_cast<uint64_t>(L));
    }
    d.query = h.at("query").get<std::string>();
    d.query_similarity = h.at("query_similarity").get<std::vector<float>>();
    if (!d.query_similarity.empty() && d.query_similarity.size() != P)
      throw fail("query_similarity: one per pooling token expected");
    const json& pooled = h.at("pooled_similarity");
    d.pooled_similarity =
        pooled.is_number() ? pooled.get<float>() : std::numeric_limits<float>::quiet_NaN();
  } catch (const json::exception& e) {
    throw fail(std::string("damaged header: ") + e.what());
  }
  return d;
}

DocumentAttention read_document_attention(const std::string& path) {
  return parse_document_attention(read_file(path), path);
}

}  // namespace lmk
