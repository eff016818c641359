// Attention profiles and length histograms (core/store/store_attention.h).
#include "core/store/store_attention.h"

#include <tuple>

#include "core/store/run_labels.h"
#include "core/store/sqlite_statement.h"

namespace lmk {

using namespace store_sql;

void AttentionProfiles::add_attention_profile(int64_t run_id,
                                              const std::vector<AttentionProfileRow>& rows) {
  write_run_transaction(connection(), file(), run_id, [&] {
    Statement insert(connection(), file(),
                     "INSERT OR REPLACE INTO attention_profiles (run_id, dataset, length_group, "
                     "layer, head, bin, bin_start, bin_end, weight) "
                     "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
    for (const auto& r : rows) {
      insert
          .bind(run_id, r.dataset, r.length_group, r.layer, r.head, r.bin, r.bin_start, r.bin_end,
                r.weight)
          .run();
    }
  });
}

void AttentionProfiles::add_length_histogram(const LengthHistogram& histogram) {
  require_nonempty(histogram.dataset, "histogram dataset");
  write_transaction(connection(), file(), [&] {
    for (const char* table : {"length_histograms", "length_percentiles"}) {
      Statement(connection(), file(),
                std::string("DELETE FROM ") + table + " WHERE dataset = ? AND tokenizer = ?")
          .bind(histogram.dataset, histogram.tokenizer)
          .run();
    }
    Statement bin(connection(), file(),
                  "INSERT INTO length_histograms (dataset, tokenizer, bin_index, lo, hi, count) "
                  "VALUES (?, ?, ?, ?, ?, ?)");
    for (size_t i = 0; i < histogram.bins.size(); ++i) {
      const auto& b = histogram.bins[i];
      bin.bind(histogram.dataset, histogram.tokenizer, i, b.lo, b.hi, b.count).run();
    }
    Statement percentile(connection(), file(),
                         "INSERT OR REPLACE INTO length_percentiles "
                         "(dataset, tokenizer, percentile, value) VALUES (?, ?, ?, ?)");
    for (const auto& [p, value] : histogram.percentiles)
      percentile.bind(histogram.dataset, histogram.tokenizer, p, value).run();
  });
}

std::vector<AttentionProfileRow> AttentionProfiles::attention_profiles(
    int64_t run_id, const std::string& dataset) const {
  return select_rows(
      connection(), file(),
      "SELECT dataset, length_group, layer, head, bin, bin_start, bin_end, weight "
      "FROM attention_profiles WHERE run_id = ?1 AND (?2 = '' OR dataset = ?2) "
      "ORDER BY dataset, length_group, layer, head, bin",
      [](const Statement& row) {
        return AttentionProfileRow{row.text(0),    row.text(1), row.integer(2), row.integer(3),
                                   row.integer(4), row.real(5), row.real(6),    row.real(7)};
      },
      run_id, dataset);
}

std::vector<LengthHistogram> AttentionProfiles::length_histograms(
    const std::string& dataset) const {
  auto histograms = select_rows(
      connection(), file(),
      "SELECT dataset, tokenizer FROM length_histograms WHERE ?1 = '' OR dataset = ?1 "
      "UNION SELECT dataset, tokenizer FROM length_percentiles WHERE ?1 = '' OR dataset = ?1 "
      "ORDER BY 1, 2",
      [](const Statement& row) {
        return LengthHistogram{row.text(0), row.text(1), {}, {}};
      },
      dataset);
  for (auto& histogram : histograms) {
    histogram.bins = select_rows(
        connection(), file(),
        "SELECT lo, hi, count FROM length_histograms WHERE dataset = ? AND tokenizer = ? "
        "ORDER BY bin_index",
        [](const Statement& row) {
          return LengthHistogram::Bin{row.integer(0), row.integer(1), row.integer(2)};
        },
        histogram.dataset, histogram.tokenizer);
    histogram.percentiles = select_rows(
        connection(), file(),
        "SELECT percentile, value FROM length_percentiles WHERE dataset = ? AND tokenizer = ? "
        "ORDER BY percentile",
        [](const Statement& row) { return std::make_pair(row.real(0), row.real(1)); },
        histogram.dataset, histogram.tokenizer);
  }
  return histograms;
}

std::vector<std::tuple<std::string, int64_t, int64_t, std::string>>
AttentionProfiles::attention_profile_keys() const {
  return select_rows(connection(), file(),
                     "SELECT dataset, layer, head, length_group FROM attention_profiles "
                     "GROUP BY dataset, layer, head, length_group ORDER BY dataset, layer, head, "
                     "length_group",
                     [](const Statement& row) {
                       return std::tuple{row.text(0), row.integer(1), row.integer(2), row.text(3)};
                     });
}

std::vector<RunAttentionBin> AttentionProfiles::attention_profile_bins(const std::string& dataset,
                                                                       int64_t layer,
                                                                       int64_t head) const {
  return select_rows(
      connection(), file(),
      std::string("SELECT ") + kRunLabelColumns +
          ", a.length_group, a.bin_start, a.bin_end, a.weight FROM attention_profiles a" +
          run_label_joins("a") +
          "WHERE a.dataset = ?1 AND a.layer = ?2 AND a.head = ?3 "
          "ORDER BY a.run_id, a.length_group, a.bin",
      [](const Statement& row) {
        return RunAttentionBin{read_run_label(row), row.text(5), row.real(6), row.real(7),
                               row.real(8)};
      },
      dataset, layer, head);
}

std::vector<std::string> AttentionProfiles::attention_profile_models(
    const std::string& dataset) const {
  return select_rows(
      connection(), file(),
      "SELECT DISTINCT p.value FROM params p WHERE p.key = 'model' AND p.run_id IN "
      "(SELECT DISTINCT run_id FROM attention_profiles WHERE dataset = ?1) ORDER BY p.value",
      [](const Statement& row) { return row.text(0); }, dataset);
}

}  // namespace lmk
