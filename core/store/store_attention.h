#pragma once

// A unit of the results store (core/store/results_store.h). What the analyses of documents store:
// the attention of the pooling tokens by position (attention_profiles) and the token-length
// histograms of datasets (length_histograms).

#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/store/store_runs.h"
#include "core/store/store_unit.h"

namespace lmk {

// One bin of the attention of the pooling tokens over positions, for documents of one length
// (group); bin_start / bin_end are positions or fractions of the length.
struct AttentionProfileRow {
  std::string dataset, length_group;
  int64_t layer = 0;
  int64_t head = -1;  // -1: the mean over heads
  int64_t bin = 0;
  double bin_start = 0, bin_end = 0, weight = 0;
};

// One bin of one run's attention profile, for the attention-by-position plot.
struct RunAttentionBin {
  RunLabel run;
  std::string length_group;
  double bin_start = 0, bin_end = 0, weight = 0;
};

// Token counts of a dataset's texts under one tokenizer: bins [lo, hi) and percentiles.
struct LengthHistogram {
  struct Bin {
    int64_t lo = 0, hi = 0, count = 0;
  };
  std::string dataset, tokenizer;
  std::vector<Bin> bins;
  std::vector<std::pair<double, double>> percentiles;  // (percentile 0-100, length)
};

class AttentionProfiles : public virtual StoreUnit {
 public:
  // Adds attention-profile bins (same key: replaced).
  void add_attention_profile(int64_t run_id, const std::vector<AttentionProfileRow>& rows);
  // Stores the histogram of (dataset, tokenizer), replacing an earlier one.
  void add_length_histogram(const LengthHistogram& histogram);
  std::vector<AttentionProfileRow> attention_profiles(int64_t run_id,
                                                      const std::string& dataset = "") const;
  // The (dataset, layer, head, length group) of stored attention profiles, sorted.
  std::vector<std::tuple<std::string, int64_t, int64_t, std::string>> attention_profile_keys()
      const;
  // Every run's attention profile bins of a dataset, layer and head, by run, group and bin.
  std::vector<RunAttentionBin> attention_profile_bins(const std::string& dataset, int64_t layer,
                                                      int64_t head) const;
  // The model folders (the runs' model parameter) of the runs with attention profiles of dataset.
  std::vector<std::string> attention_profile_models(const std::string& dataset) const;
  // Histograms of one dataset when given, else all; by dataset and tokenizer.
  std::vector<LengthHistogram> length_histograms(const std::string& dataset = "") const;
};

}  // namespace lmk
