// The attention explorer's picture: what a result shows, the plots, the target's rank and the
// exports (widgets/explorer_view.h; the controls and the computation are in explorer_view.cpp, the
// store's runs in explorer_view_store.cpp).
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMessageBox>
#include <QSettings>
#include <QSpinBox>

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>

#include "core/store/results_store.h"
#include "widgets/explorer_choices.h"
#include "widgets/explorer_panels.h"
#include "widgets/explorer_plots.h"
#include "widgets/explorer_request.h"
#include "widgets/explorer_status.h"
#include "widgets/explorer_text.h"
#include "widgets/explorer_view.h"
#include "widgets/plot_export.h"
#include "widgets/plot_view.h"
#include "widgets/store_connection.h"

namespace lmk::widgets {
namespace {

constexpr int kOverviewBins = 480;
constexpr int kMaxResults = 4;  // poolings of one document side by side

}  // namespace

// ---- showing

void ExplorerView::install(std::shared_ptr<DocumentAttention> d, bool computed) {
  // A new computation replaces what was shown; a file joins the results of the same text
  // (CLS beside LMK), replacing one of the same pooling and granularity.
  if (computed && !results_replaced_) {
    results_.clear();
    results_replaced_ = true;
  } else {
    for (auto it = results_.begin(); it != results_.end();) {
      const bool other_text = (*it)->text != d->text || (*it)->model != d->model;
      const bool same_kind = (*it)->pooling == d->pooling && (*it)->granularity == d->granularity;
      it = (other_text || same_kind) ? results_.erase(it) : it + 1;
    }
    while (static_cast<int>(results_.size()) >= kMaxResults) results_.erase(results_.begin());
  }
  results_.push_back(std::move(d));
  // The text shows the first pooling that is not CLS (the one asked for), else CLS.
  int shown = 0;
  for (size_t i = 0; i < results_.size(); ++i)
    if (results_[i]->pooling != "cls") {
      shown = static_cast<int>(i);
      break;
    }
  const DocumentAttention& r = *results_[static_cast<size_t>(shown)];
  evidence_ = evidence_span(r.text, r.query, evidence_position_);
  shown_ = -1;
  show_result(shown);
  // A query's evidence on screen first: that is where the question is.
  if (evidence_.first >= 0)
    text_->scroll_to_position(
        position_at_fraction(r, static_cast<double>(evidence_.first) /
                                    static_cast<double>(std::max<size_t>(1, r.text.size()))));
  if (!db_path_.isEmpty()) look_up_rank();
  emit document_shown();
}

void ExplorerView::show_result(int index) {
  if (index < 0 || index >= result_count()) return;
  const int shown_before = shown_;
  const bool same_document = shown_ >= 0 && result(shown_).text == result(index).text;
  shown_ = index;
  const DocumentAttention& d = result(index);
  if (!same_document) evidence_ = evidence_span(d.text, d.query, evidence_position_);
  // The same text through another pooling: stay at the same place of the text.
  const double keep =
      same_document && shown_before >= 0
          ? position_fraction(result(shown_before), text_->visible_positions().first)
          : -1;
  selection_.layer = std::clamp<int64_t>(selection_.layer, 0, d.layers - 1);
  if (!same_document) selection_.layer = d.layers - 1;
  selection_.head = std::clamp<int64_t>(selection_.head, -1, d.heads - 1);
  selection_.first_row = selection_.last_row = -1;
  selected_position_ = -1;
  text_->set_document(&d);
  grid_->set_document(&d, choices_->skip_sink());
  grid_->resize(grid_->sizeHint());
  update_controls_for_result();
  if (keep > 0) text_->scroll_to_position(position_at_fraction(d, keep));
  QString notice;
  if (d.truncated)
    notice = tr("The document has %1 tokens; the model read %2 inputs of it (cut at the "
                "model's position table or at Max length): the text after the cut is uncoloured.")
                 .arg(d.content_tokens)
                 .arg(d.length());
  status_->show_notice(notice);
  redraw();
}

void ExplorerView::update_controls_for_result() {
  choices_->show_choices(results_, shown_, selection_);
}

void ExplorerView::set_layer_head(int64_t layer, int64_t head) {
  if (shown_ < 0) return;
  const DocumentAttention& d = result(shown_);
  selection_.layer = std::clamp<int64_t>(layer, 0, d.layers - 1);
  selection_.head = std::clamp<int64_t>(head, -1, d.heads - 1);
  update_controls_for_result();
  redraw();
}

void ExplorerView::set_rows(int64_t first, int64_t last) {
  if (shown_ < 0) return;
  const auto pooling = static_cast<int64_t>(result(shown_).pooling_positions.size());
  if (first < 0 || first >= pooling) {
    selection_.first_row = selection_.last_row = -1;
  } else {
    selection_.first_row = first;
    selection_.last_row = std::clamp<int64_t>(last, first, pooling - 1);
  }
  update_controls_for_result();
  redraw();
}

void ExplorerView::set_log_scale(bool log) {
  if (choices_->log_scale() != log) {
    choices_->set_log_scale(log);  // comes back here
    return;
  }
  redraw();
}

void ExplorerView::set_skip_sink(bool skip) {
  if (choices_->skip_sink() != skip) {
    choices_->set_skip_sink(skip);  // comes back here
    return;
  }
  if (shown_ >= 0) grid_->set_document(&result(shown_), skip);
  redraw();
}

void ExplorerView::select_position(int64_t position) {
  selected_position_ = position;
  text_->set_selected_position(position);
  redraw_plots();
}

void ExplorerView::jump_to_fraction(double fraction) {
  if (shown_ < 0) return;
  text_->scroll_to_position(position_at_fraction(result(shown_), fraction));
}

QString ExplorerView::message() const {
  return status_->message();
}
QString ExplorerView::notice() const {
  return status_->notice();
}
QString ExplorerView::rank_text() const {
  return rank_text_;
}

void ExplorerView::redraw() {
  if (shown_ < 0) {
    text_->set_document(nullptr);
    grid_->set_document(nullptr, true);
    overview_->set_rows({}, false);
    choices_->set_sink_text(QString());
    redraw_plots();
    return;
  }
  const DocumentAttention& d = result(shown_);
  QString why;
  std::vector<float> weights = selection_weights(d, selection_, &why);
  ColourScale scale;
  scale.max = max_weight(weights, choices_->skip_sink());
  scale.log = choices_->log_scale();
  text_->set_weights(std::move(weights), scale);
  legend_->set_scale(scale);
  text_->set_selected_rows(why.isEmpty() ? selection_.first_row : -1,
                           why.isEmpty() ? selection_.last_row : -1);
  text_->set_evidence(evidence_);
  grid_->set_current(selection_.layer, selection_.head);
  const float sink = d.sink_share(selection_.layer, selection_.head);
  choices_->set_sink_text(
      tr("Attention sink: %1 % of layer %2's attention (%3) goes to position 0 (%4).")
          .arg(100.0 * sink, 0, 'f', 1)
          .arg(selection_.layer)
          .arg(selection_.head < 0 ? tr("mean over heads") : tr("head %1").arg(selection_.head))
          .arg(QString::fromStdString(d.tokens.empty() ? "" : d.tokens[0])));
  QString notice = d.truncated ? status_->notice().section(QLatin1Char('\n'), 0, 0) : QString();
  if (!why.isEmpty()) notice = notice.isEmpty() ? why : notice + QLatin1Char('\n') + why;
  status_->show_notice(notice);
  redraw_overview();
  redraw_plots();
}

void ExplorerView::redraw_overview() {
  std::vector<OverviewStrip::Row> rows;
  for (int i = 0; i < result_count(); ++i) {
    const DocumentAttention& r = result(i);
    ExplorerSelection selection = selection_;
    if (i != shown_) selection.first_row = selection.last_row = -1;
    rows.push_back(
        {result_label(r) + (i == shown_ ? QStringLiteral(" ◂") : QString()),
         fraction_bins(r, selection_weights(r, selection), kOverviewBins, choices_->skip_sink())});
  }
  overview_->set_rows(std::move(rows), choices_->log_scale());
  const DocumentAttention& d = result(shown_);
  overview_->set_evidence(evidence_.first >= 0 && !d.text.empty()
                              ? static_cast<double>(evidence_.first) /
                                    static_cast<double>(d.text.size())
                              : -1);
  update_window();
}

void ExplorerView::update_window() {
  if (shown_ < 0) return;
  const auto [first, last] = text_->visible_positions();
  const DocumentAttention& d = result(shown_);
  if (first < 0) return;
  const double to = last + 1 < d.length() ? position_fraction(d, last + 1) : 1.0;
  overview_->set_window(position_fraction(d, first), to);
}

std::vector<std::pair<double, double>> ExplorerView::similarity_points() const {
  if (shown_ < 0) return {};
  return ExplorerPlots::similarity_points(result(shown_));
}

std::vector<double> ExplorerView::token_attention_points() const {
  return plots_->token_attention_points();
}

void ExplorerView::redraw_plots() {
  plots_->show_document(shown_ < 0 ? nullptr : &result(shown_), evidence_, selected_position_,
                        selection_.layer);
}

// ---- the target's rank in the store's evaluation of the chosen run

void ExplorerView::look_up_rank() {
  rank_text_.clear();
  choices_->set_rank_text(QString());
  const std::optional<ExplorerTarget> target = request_->target();
  if (!target) return;
  const ExplorerRun eval = target->run;
  const QString query_id = target->query_id;
  const QString part = target->part;
  load_in_background<std::pair<bool, double>>(
      this, db_path_,
      [eval, query_id, part](const ResultsStore& db) {
        const std::optional<double> mrr =
            db.query_metric(eval.id, query_id.toStdString(), "mrr_at_100", part.toStdString());
        return std::pair<bool, double>{mrr.has_value(), mrr.value_or(0.0)};
      },
      [this, eval, query_id](std::pair<bool, double> found, const QString& error) {
        if (!error.isEmpty() || !found.first) {
          rank_text_ = tr("Run %1 stores no per-query result for %2.").arg(eval.name, query_id);
        } else if (found.second > 0) {
          rank_text_ = tr("Target ranked %1 in run %2 (its stored MRR@100 %3).")
                           .arg(std::lround(1.0 / found.second))
                           .arg(eval.name)
                           .arg(found.second, 0, 'f', 3);
        } else {
          rank_text_ = tr("Target not in the top 100 in run %1.").arg(eval.name);
        }
        choices_->set_rank_text(rank_text_);
      });
}

// ---- export

void ExplorerView::export_to(const QString& path) {
  if (QFileInfo(path).suffix().toLower() == QLatin1String("csv")) {
    if (shown_ < 0) throw std::runtime_error(path.toStdString() + ": no document is shown");
    write_text_file(path, explorer_csv(result(shown_), text_->weights()));
    return;
  }
  export_widget(picture_, path);
}

void ExplorerView::export_with_dialog() {
  QSettings settings;
  const QString folder =
      settings.value(QStringLiteral("export/folder"), QDir::homePath()).toString();
  const QString path = QFileDialog::getSaveFileName(
      this, tr("Export the explorer"), QDir(folder).filePath(QStringLiteral("explorer.png")),
      plot_file_filters() + tr(";;CSV (the numbers) (*.csv)"));
  if (path.isEmpty()) return;
  settings.setValue(QStringLiteral("export/folder"), QFileInfo(path).absolutePath());
  try {
    export_to(path);
  } catch (const std::exception& e) {
    QMessageBox::warning(this, tr("Export failed"), QString::fromUtf8(e.what()));
  }
}

}  // namespace lmk::widgets
