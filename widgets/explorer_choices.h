#pragma once

// The attention explorer's choices of what its picture shows (the right column's form): the
// pooling whose attention colours the text, the layer and head (with "Mean over heads" and
// "Final layer"), the pooling tokens (one, a range, or all), the colour scale and whether the
// sink counts in it; under them the sink's share and the target's rank. The panel owns these
// controls and says what the user chose; ExplorerView holds the selection and redraws.

#include <QString>
#include <QWidget>

#include <cstdint>
#include <memory>
#include <vector>

#include "core/eval/document_attention.h"
#include "widgets/explorer_data.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QSpinBox;

namespace lmk::widgets {

class ExplorerChoicesPanel : public QWidget {
  Q_OBJECT
 public:
  explicit ExplorerChoicesPanel(QWidget* parent = nullptr);

  // Shows result `shown` of `results` (labelled by their pooling) with `selection`; emits
  // nothing.
  void show_choices(const std::vector<std::shared_ptr<DocumentAttention>>& results, int shown,
                    const ExplorerSelection& selection);
  bool log_scale() const;
  // Chooses the scale as the user does (log_scale_changed() when it is another).
  void set_log_scale(bool log);
  bool skip_sink() const;
  // Chooses whether the sink counts in the scale as the user does (skip_sink_changed()).
  void set_skip_sink(bool skip);
  void set_sink_text(const QString& text);
  void set_rank_text(const QString& text);

 signals:
  void result_chosen(int index);
  // A layer and head (-1: the mean over heads); a layer past the last means the last.
  void layer_head_chosen(int64_t layer, int64_t head);
  // Pooling tokens first..last (indices into pooling_positions; -1: all).
  void rows_chosen(int64_t first, int64_t last);
  void log_scale_changed(bool log);
  void skip_sink_changed(bool skip);

 private:
  int64_t head() const;

  QComboBox* shown_ = nullptr;
  QSpinBox* layer_ = nullptr;
  QComboBox* head_ = nullptr;
  QSpinBox* first_row_ = nullptr;
  QSpinBox* last_row_ = nullptr;
  QComboBox* scale_ = nullptr;
  QCheckBox* skip_sink_ = nullptr;
  QLabel* sink_ = nullptr;
  QLabel* rank_ = nullptr;
  bool updating_ = false;  // show_choices is setting the controls
};

// How a result is named in the choices: its pooling, and its granularity where it has one.
QString result_label(const DocumentAttention& d);

}  // namespace lmk::widgets
