#include "widgets/explorer_data.h"

#include <QStringList>

#include <algorithm>
#include <cmath>

#include "core/data/formats.h"
#include "widgets/plot_export.h"

namespace lmk::widgets {

std::vector<float> selection_weights(const DocumentAttention& d, const ExplorerSelection& s,
                                     QString* why) {
  const int64_t L = d.length();
  const int64_t layer = std::clamp<int64_t>(s.layer, 0, std::max<int64_t>(d.layers - 1, 0));
  const int64_t head = std::clamp<int64_t>(s.head, -1, d.heads - 1);
  if (why != nullptr) why->clear();
  if (d.layers == 0 || L == 0) return {};
  const auto rows = d.rows.find(layer);
  const auto pooling = static_cast<int64_t>(d.pooling_positions.size());
  if (!s.all_rows()) {
    if (rows == d.rows.end() || head >= 0) {
      if (why != nullptr)
        *why = rows == d.rows.end()
                   ? QObject::tr(
                         "one pooling token's attention is kept for layer(s) %1 only; "
                         "this shows all of them")
                         .arg(row_layers_text(d))
                   : QObject::tr(
                         "one pooling token's attention is kept averaged over heads; "
                         "this shows all of them");
    } else {
      const int64_t first = std::clamp<int64_t>(s.first_row, 0, pooling - 1);
      const int64_t last = std::clamp<int64_t>(std::max(s.last_row, first), first, pooling - 1);
      std::vector<float> weights(static_cast<size_t>(L), 0.0f);
      // Summed in double: a thousand landmarks of float rows.
      std::vector<double> sum(static_cast<size_t>(L), 0.0);
      for (int64_t r = first; r <= last; ++r) {
        const float* row = rows->second.data() + r * L;
        for (int64_t i = 0; i < L; ++i) sum[static_cast<size_t>(i)] += row[i];
      }
      const auto count = static_cast<double>(last - first + 1);
      for (int64_t i = 0; i < L; ++i)
        weights[static_cast<size_t>(i)] = static_cast<float>(sum[static_cast<size_t>(i)] / count);
      return weights;
    }
  }
  const float* profile = d.profile(layer, head);
  return std::vector<float>(profile, profile + L);
}

std::vector<float> attention_to_position(const DocumentAttention& d, int64_t layer,
                                         int64_t position) {
  const auto rows = d.rows.find(layer);
  const int64_t L = d.length();
  if (rows == d.rows.end() || position < 0 || position >= L) return {};
  std::vector<float> column;
  for (size_t r = 0; r < d.pooling_positions.size(); ++r)
    column.push_back(rows->second[r * static_cast<size_t>(L) + static_cast<size_t>(position)]);
  return column;
}

QString row_layers_text(const DocumentAttention& d) {
  QStringList layers;
  for (const auto& entry : d.rows) layers << QString::number(entry.first);
  return layers.join(QStringLiteral(", "));
}

double position_fraction(const DocumentAttention& d, int64_t position) {
  if (d.text.empty() || position < 0 || position >= d.length()) return 0;
  return static_cast<double>(d.spans[static_cast<size_t>(position)].first) /
         static_cast<double>(d.text.size());
}

int64_t position_at_fraction(const DocumentAttention& d, double fraction) {
  const int64_t L = d.length();
  if (L == 0) return 0;
  const double byte = std::clamp(fraction, 0.0, 1.0) * static_cast<double>(d.text.size());
  // Spans begin in order (inserted tokens at the byte they stand before).
  const auto it = std::lower_bound(
      d.spans.begin(), d.spans.end(), byte,
      [](const std::pair<uint32_t, uint32_t>& span, double b) { return span.first < b; });
  return std::min<int64_t>(it - d.spans.begin(), L - 1);
}

double ColourScale::normalized(double weight) const {
  if (!(max > 0) || !(weight > 0)) return 0;
  if (!log) return std::clamp(weight / max, 0.0, 1.0);
  // Three decades: max / 1000 → 0, max → 1.
  return std::clamp((std::log10(weight / max) + 3.0) / 3.0, 0.0, 1.0);
}

double max_weight(const std::vector<float>& weights, bool skip_sink) {
  double max = 0;
  for (size_t i = (skip_sink && weights.size() > 1) ? 1 : 0; i < weights.size(); ++i)
    max = std::max(max, static_cast<double>(weights[i]));
  return max;
}

QColor attention_color(double normalized) {
  // White → orange (253, 141, 60) → dark red (189, 0, 38): ColorBrewer's YlOrRd ends.
  const double t = std::clamp(normalized, 0.0, 1.0);
  struct Stop {
    double at;
    int r, g, b;
  };
  static constexpr Stop kStops[] = {{0.0, 255, 255, 255}, {0.5, 253, 141, 60}, {1.0, 189, 0, 38}};
  const Stop& a = t <= 0.5 ? kStops[0] : kStops[1];
  const Stop& b = t <= 0.5 ? kStops[1] : kStops[2];
  const double f = (t - a.at) / (b.at - a.at);
  const auto mix = [f](int x, int y) { return static_cast<int>(std::lround(x + (y - x) * f)); };
  return QColor(mix(a.r, b.r), mix(a.g, b.g), mix(a.b, b.b));
}

std::vector<double> fraction_bins(const DocumentAttention& d, const std::vector<float>& weights,
                                  int bins, bool skip_sink) {
  std::vector<double> out(static_cast<size_t>(std::max(bins, 0)), 0.0);
  if (bins <= 0) return out;
  const auto n = std::min<int64_t>(d.length(), static_cast<int64_t>(weights.size()));
  for (int64_t i = skip_sink ? 1 : 0; i < n; ++i) {
    const auto bin = std::min<int64_t>(
        static_cast<int64_t>(position_fraction(d, i) * static_cast<double>(bins)), bins - 1);
    out[static_cast<size_t>(bin)] += weights[static_cast<size_t>(i)];
  }
  return out;
}

std::pair<int64_t, int64_t> evidence_span(const std::string& text, const std::string& query,
                                          double evidence_position) {
  if (!query.empty()) {
    const size_t at = text.find(query);
    if (at != std::string::npos)
      return {static_cast<int64_t>(at), static_cast<int64_t>(at + query.size())};
  }
  if (evidence_position >= 0 && evidence_position <= 1 && !text.empty()) {
    const auto byte = static_cast<int64_t>(evidence_position * static_cast<double>(text.size()));
    return {byte, byte};
  }
  return {-1, -1};
}

QString explorer_csv(const DocumentAttention& d, const std::vector<float>& weights) {
  QString csv = QStringLiteral(
      "position,token,byte_begin,byte_end,pooling_token,weight,query_similarity\r\n");
  std::vector<int64_t> pooling_index(static_cast<size_t>(d.length()), -1);
  for (size_t r = 0; r < d.pooling_positions.size(); ++r)
    pooling_index[static_cast<size_t>(d.pooling_positions[r])] = static_cast<int64_t>(r);
  for (int64_t i = 0; i < d.length(); ++i) {
    const auto u = static_cast<size_t>(i);
    const int64_t r = pooling_index[u];
    const bool similarity = r >= 0 && static_cast<size_t>(r) < d.query_similarity.size();
    csv += QStringLiteral("%1,%2,%3,%4,%5,%6,%7\r\n")
               .arg(i)
               .arg(csv_field(QString::fromStdString(d.tokens[u])))
               .arg(d.spans[u].first)
               .arg(d.spans[u].second)
               .arg(r >= 0 ? QString::number(r) : QString())
               .arg(u < weights.size() ? QString::number(weights[u], 'g', 9) : QString())
               .arg(similarity ? QString::number(d.query_similarity[static_cast<size_t>(r)], 'g', 9)
                               : QString());
  }
  return csv;
}

std::vector<ExplorerQuery> read_explorer_queries(const std::string& dir, const std::string& split,
                                                 size_t limit) {
  std::vector<ExplorerQuery> out;
  for (const JudgedQuery& q : find_beir_queries(dir, split, limit)) {
    ExplorerQuery query;
    query.id = QString::fromStdString(q.query.id);
    query.text = QString::fromStdString(q.query.text);
    for (const Judgement& j : q.judgements)
      if (j.relevance > 0) {
        query.document = QString::fromStdString(j.doc_id);
        break;
      }
    if (query.document.isEmpty()) continue;
    const auto position = q.query.extra.find("evidence_position");
    if (position != q.query.extra.end() && position->is_number())
      query.evidence_position = position->get<double>();
    out.push_back(std::move(query));
  }
  return out;
}

}  // namespace lmk::widgets
