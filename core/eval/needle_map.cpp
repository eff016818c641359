#include "core/eval/needle_map.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "core/eval/pivot.h"
#include "core/util/error.h"
#include "core/util/text_table.h"

namespace lmk {

NeedleMap needle_map(const std::vector<QueryScore>& scores, double depth_step,
                     const stats::ResamplingOptions& resampling) {
  if (!(depth_step > 0 && depth_step <= 1))
    throw input_error("depth step", "must lie in (0, 1], got " + std::to_string(depth_step));
  // (part, depth index) -> scores; depth index = round(position / step).
  std::map<std::pair<std::string, int64_t>, std::vector<QueryScore>> grouped;
  std::set<std::string> parts;
  std::set<int64_t> steps;
  for (const QueryScore& score : scores) {
    if (!score.evidence_position) continue;
    const auto index = static_cast<int64_t>(std::llround(*score.evidence_position / depth_step));
    grouped[{score.part, index}].push_back(score);
    parts.insert(score.part);
    steps.insert(index);
  }
  NeedleMap map;
  map.lengths.assign(parts.begin(), parts.end());
  std::sort(map.lengths.begin(), map.lengths.end(), number_aware_less);
  for (int64_t index : steps) map.depths.push_back(static_cast<double>(index) * depth_step);
  for (const std::string& length : map.lengths) {
    map.cells.emplace_back();
    for (int64_t index : steps) {
      const auto found = grouped.find({length, index});
      map.cells.back().push_back(found == grouped.end()
                                     ? CellSummary{}
                                     : summarize_scores(found->second, resampling));
    }
  }
  return map;
}

std::string render_needle_maps(const std::vector<std::pair<std::string, NeedleMap>>& maps,
                               bool counts) {
  std::vector<double> depths;
  for (const auto& [name, map] : maps)
    for (double d : map.depths)
      if (std::none_of(depths.begin(), depths.end(),
                       [&](double known) { return std::fabs(known - d) < 1e-9; }))
        depths.push_back(d);
  std::sort(depths.begin(), depths.end());
  std::vector<std::string> header = {"run", "length"};
  std::vector<bool> right = {false, true};
  char text[32];
  for (double d : depths) {
    std::snprintf(text, sizeof text, "%g", d);
    header.push_back(text);
    right.push_back(true);
  }
  TextTable table(header, right);
  for (const auto& [name, map] : maps) {
    for (size_t l = 0; l < map.lengths.size(); ++l) {
      std::vector<TextTable::Cell> row = {{name}, {map.lengths[l]}};
      for (double d : depths) {
        const auto at = std::find_if(map.depths.begin(), map.depths.end(),
                                     [&](double known) { return std::fabs(known - d) < 1e-9; });
        const CellSummary* cell =
            at == map.depths.end() ? nullptr
                                   : &map.cells[l][static_cast<size_t>(at - map.depths.begin())];
        if (!cell || cell->n == 0) {
          row.push_back({""});
          continue;
        }
        std::snprintf(text, sizeof text, "%.2f", cell->mean);
        row.push_back({std::string(text) + (counts ? " (" + std::to_string(cell->n) + ")" : "")});
      }
      table.add_row(std::move(row));
    }
  }
  return table.render(false);
}

}  // namespace lmk
