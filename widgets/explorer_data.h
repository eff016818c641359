#pragma once

// What the attention explorer (widgets/explorer_view.h) shows, computed from one document's
// attention (core/eval/document_attention.h) without any widget: the weight each position gets
// for a choice of layer, head and pooling tokens, its colour, the whole document binned for the
// overview strip, the evidence span of a query, and the numbers as CSV. Kept apart from the
// widgets so that tests compare what is drawn with these numbers.

#include <QColor>
#include <QString>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/eval/document_attention.h"

namespace lmk::widgets {

// Which attention is shown: a layer, a head (-1: the mean over heads), and the pooling tokens
// (indices into pooling_positions, first..last inclusive; -1: all of them, averaged — the
// profile the pooled embedding sees).
struct ExplorerSelection {
  int64_t layer = 0;
  int64_t head = -1;
  int64_t first_row = -1, last_row = -1;
  bool all_rows() const { return first_row < 0; }
};

// The attention of the selected pooling tokens to every input position. A range of pooling
// tokens needs the layer's rows, which the file keeps for some layers and averaged over heads
// only: without them the weights are the layer's profile and `why` (when given) says so.
std::vector<float> selection_weights(const DocumentAttention& d, const ExplorerSelection& s,
                                     QString* why = nullptr);

// The attention each pooling token pays to input position `position` in a layer whose rows the
// file keeps (mean over heads); empty when it keeps none for that layer.
std::vector<float> attention_to_position(const DocumentAttention& d, int64_t layer,
                                         int64_t position);

// The layers whose per-pooling-token rows the file keeps, as "3" or "0, 1, 3".
QString row_layers_text(const DocumentAttention& d);

// Where input position `position` stands in the text: the byte its span begins at (inserted
// tokens: the byte they stand before) over the text's bytes, in [0, 1].
double position_fraction(const DocumentAttention& d, int64_t position);
// The first input position at or after `fraction` of the text's bytes (the last one past it).
int64_t position_at_fraction(const DocumentAttention& d, double fraction);

// The colour scale of the text and the overview: linear from 0 to `max`, or logarithmic over
// the three decades below `max`. normalized() maps a weight to [0, 1].
struct ColourScale {
  double max = 1;
  bool log = false;
  double normalized(double weight) const;
};
// The largest weight, position 0 (the attention sink) left out when skip_sink (and when it is
// the only one, kept).
double max_weight(const std::vector<float>& weights, bool skip_sink);
// The colour of a normalized weight: white at 0 through orange to dark red at 1 (text on it
// stays readable; the darkest third takes white text).
QColor attention_color(double normalized);
// The marks of the text and its legend: pooling tokens (tab10 blue), the selected ones (red), the
// query's evidence (green).
inline QColor pooling_border_color() {
  return QColor(31, 119, 180);
}
inline QColor selected_border_color() {
  return QColor(214, 39, 40);
}
inline QColor evidence_border_color() {
  return QColor(44, 160, 44);
}

// The weights summed over `bins` equal ranges of the text's bytes (a position counts in the bin
// of its position_fraction); position 0 left out when skip_sink. Attention is a distribution
// over positions, so the bins of two poolings of one text compare on one scale.
std::vector<double> fraction_bins(const DocumentAttention& d, const std::vector<float>& weights,
                                  int bins, bool skip_sink);

// The byte range of a query's evidence in the text: where the query's text occurs in it (the
// queries of lmk's long-document tasks are sentences of their target), else an empty range at
// evidence_position (a fraction of the bytes, as the datasets store it; NaN: none); {-1, -1}
// when neither.
std::pair<int64_t, int64_t> evidence_span(const std::string& text, const std::string& query,
                                          double evidence_position);

// The numbers behind the view as CSV (RFC 4180): one row per input position with its token,
// byte range, pooling-token index (empty for others), the shown weight and, for pooling
// tokens, the query similarity.
QString explorer_csv(const DocumentAttention& d, const std::vector<float>& weights);

// A test query of a dataset part (a BEIR folder) and its judged document.
struct ExplorerQuery {
  QString id, text, document;
  double evidence_position = -1;  // -1: the dataset gives none
};
// The queries of `split` in the BEIR folder `dir` that have a judged document (the first
// judged one), in file order, at most `limit`. InputError naming the file when it is damaged.
std::vector<ExplorerQuery> read_explorer_queries(const std::string& dir, const std::string& split,
                                                 size_t limit);

}  // namespace lmk::widgets
