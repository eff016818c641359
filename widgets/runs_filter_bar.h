#pragma once

// The bar over the results view's tabs: the filter (free text and key=value terms; applies to the
// runs table and the pivot), the experiment and status choices, the metric of the benchmark
// columns and the pivot, the count of runs the filter selects, the "Long" box, the Columns menu
// (run params shown as columns; remembered in the settings) and the Compare and Export buttons.
// It owns these controls and says what changed; the view decides what to read again.

#include <QString>
#include <QStringList>
#include <QWidget>

#include "widgets/results_model.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QMenu;
class QTimer;

namespace lmk::widgets {

class RunsFilterBar : public QWidget {
  Q_OBJECT
 public:
  // The metric shown until another is chosen (when the store has it).
  static constexpr const char* kDefaultMetric = "ndcg_at_10";

  explicit RunsFilterBar(QWidget* parent = nullptr);

  // The runs the bar selects (text, experiment, status).
  RunFilter filter() const;
  // Sets the filter's text; no filter_changed() (the caller applies it).
  void set_filter_text(const QString& text);
  // The metric chosen (empty: the store has none).
  QString metric() const;
  // Chooses `metric` when the store has it (metric_changed()).
  void set_metric(const QString& metric);
  bool long_format() const;
  void set_long_format(bool long_format);
  // The run params chosen as columns, in the order chosen.
  const QStringList& param_columns() const { return param_columns_; }
  // The store's experiments, metrics and params as the choices, keeping what was chosen.
  void set_summary(const StoreSummary& summary);
  // "N runs" or "N of M runs"; a negative count clears it.
  void show_count(qlonglong count, qlonglong total);
  // The Export button's menu, for the view's exports.
  QMenu* export_menu() const { return export_menu_; }

 signals:
  // The filter's text (300 ms after the last key, or Enter), experiment or status changed.
  void filter_changed();
  void metric_changed();
  void long_format_changed();
  void columns_changed();
  void compare_clicked();

 private:
  void emit_filter_changed();
  void update_column_menu(const QStringList& param_keys);

  QLineEdit* text_ = nullptr;
  QComboBox* experiment_ = nullptr;
  QComboBox* status_ = nullptr;
  QComboBox* metric_ = nullptr;
  QLabel* count_ = nullptr;
  QCheckBox* long_format_ = nullptr;
  QMenu* column_menu_ = nullptr;
  QMenu* export_menu_ = nullptr;
  QTimer* timer_ = nullptr;
  QStringList param_columns_;
};

}  // namespace lmk::widgets
