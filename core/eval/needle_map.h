#pragma once

// The length × depth map of a needle task (RULER's picture; LongEmbed's passkey and needle with
// chosen depths): per-query scores grouped by the document length they were asked at (the
// dataset part) and the depth of their evidence, each cell a mean with its bootstrap interval
// and N. The workbench draws it per pooling; lmk study prints it.

#include <string>
#include <vector>

#include "core/eval/comparison.h"

namespace lmk {

struct NeedleMap {
  std::vector<std::string> lengths;  // the parts, in number-aware order ("256" before "1024")
  std::vector<double> depths;        // the depths present, ascending (multiples of the step)
  std::vector<std::vector<CellSummary>> cells;  // [length][depth]; n 0 where no query fell
};

// Groups `scores` by part and by evidence position rounded to the nearest multiple of
// depth_step (queries without a position are left out); each cell's mean and interval as
// summarize_scores gives them.
NeedleMap needle_map(const std::vector<QueryScore>& scores, double depth_step = 0.1,
                     const stats::ResamplingOptions& resampling = {});

// Maps of several runs as one text table: a row per run and length, a column per depth, each
// cell the mean (and with `counts` its N in parentheses); depths of any map are columns.
std::string render_needle_maps(const std::vector<std::pair<std::string, NeedleMap>>& maps,
                               bool counts = false);

}  // namespace lmk
