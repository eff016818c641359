#pragma once

// The explorer's two plots along the document: the query's similarity to each pooling token's
// state (the best marked, the pooled embedding's similarity dashed), and which pooling tokens
// attend to a selected token; the evidence's place marked in both.

#include <QWidget>

#include <cstdint>
#include <utility>
#include <vector>

#include "core/eval/document_attention.h"

class QCustomPlot;

namespace lmk::widgets {

class ExplorerPlots : public QWidget {
  Q_OBJECT
 public:
  explicit ExplorerPlots(QWidget* parent = nullptr);

  // Draws `d` (null: no document). evidence is the evidence's byte range ({-1, -1}: none),
  // selected_position the selected input position (-1: none), layer the layer whose pooling-token
  // rows the token plot reads.
  void show_document(const DocumentAttention* d, std::pair<int64_t, int64_t> evidence,
                     int64_t selected_position, int64_t layer);

  // The similarity curve of `d`: x (fraction of the text) and y per pooling token.
  static std::vector<std::pair<double, double>> similarity_points(const DocumentAttention& d);
  // The "attention to the selected token" curve as plotted (y per pooling token).
  std::vector<double> token_attention_points() const;

 signals:
  // A point of the similarity curve was clicked: the pooling token's index.
  void pooling_token_clicked(int index);

 private:
  QCustomPlot* similarity_ = nullptr;
  QCustomPlot* token_ = nullptr;
};

}  // namespace lmk::widgets
