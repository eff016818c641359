#pragma once

// Document-length distributions (the paper's Figure 2): per dataset, how many documents have
// how many tokens, in the stored log-spaced bins on a log axis, with the length the models were
// trained at marked and the stored percentiles listed.

#include <QString>
#include <QVector>

#include "widgets/plot_data.h"
#include "widgets/plot_view.h"

class QComboBox;
class QCPTextElement;

class QMouseEvent;

namespace lmk::widgets {

class LengthView : public PlotView {
  Q_OBJECT
 public:
  explicit LengthView(QWidget* parent = nullptr);

  QString title() const override { return tr("Lengths"); }
  void set_store(const QString& db_path) override;

  // Shows one dataset's histogram(s); empty: every dataset overlaid.
  void set_dataset(const QString& dataset);

  // The bars drawn for `dataset` (lo, hi, count read back from the plot's bars).
  QVector<LengthBin> bars(const QString& dataset) const;
  // The datasets drawn, in legend order.
  QStringList datasets_shown() const;
  // The training lengths marked by a vertical line.
  QVector<qint64> training_lengths_marked() const;
  // The percentile lines shown in the plot.
  QString percentile_text() const;
  // The hover text at a length (tokens) and count: each bar there, named as the axis names its
  // bin ("document length 256–511 tokens: 12 documents (dataset)"); empty off every bar.
  QString describe(double length, double count) const;

 protected:
  QString export_name() const override;
  void clear_data() override;

 private:
  void fill_dataset_control();
  void redraw();
  void show_tooltip(QMouseEvent* event);

  QComboBox* dataset_ = nullptr;
  LengthData data_;
  QCPTextElement* percentiles_ = nullptr;
  QVector<qint64> marked_;
};

}  // namespace lmk::widgets
