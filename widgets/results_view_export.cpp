// ResultsView's exports (widgets/results_view.h): the tables as CSV, the selected runs as MTEB.
#include "widgets/results_view.h"

#include <QFileDialog>
#include <QMessageBox>

#include <exception>

#include "core/eval/comparison_report.h"
#include "widgets/plot_export.h"
#include "widgets/store_connection.h"

namespace lmk::widgets {

void ResultsView::export_runs_csv(const QString& path) {
  runs_model_->fetch_all();
  export_table_csv(*runs_model_, path);
}

void ResultsView::export_pivot_csv(const QString& path) {
  export_table_csv(*pivot_->model(), path);
}

void ResultsView::export_pivot_tests_csv(const QString& path) {
  lmk::ReportOptions options;
  options.format = lmk::ReportFormat::Csv;
  write_text_file(path, QString::fromStdString(
                            lmk::render_comparison(pivot_->model()->table().comparison, options)));
}

void ResultsView::export_pivot_latex(const QString& path) {
  lmk::ReportOptions options;
  options.format = lmk::ReportFormat::Latex;
  write_text_file(path, QString::fromStdString(
                            lmk::render_comparison(pivot_->model()->table().comparison, options)));
}

void ResultsView::export_pivot_markdown(const QString& path) {
  lmk::ReportOptions options;
  options.format = lmk::ReportFormat::Markdown;
  write_text_file(path, QString::fromStdString(
                            lmk::render_comparison(pivot_->model()->table().comparison, options)));
}

void ResultsView::export_mteb(const QString& dir) {
  const QList<qlonglong> ids = selected_run_ids();
  // The MTEB files' main score: the metric shown, else the default one.
  const QString metric = bar_->metric().isEmpty()
                             ? QString::fromLatin1(RunsFilterBar::kDefaultMetric)
                             : bar_->metric();
  load_in_background<QStringList>(
      this, db_path_,
      [ids, dir, metric](const ResultsStore& db) {
        return export_mteb_results(db, ids, dir, metric);
      },
      [this](QStringList files, const QString& error) { emit mteb_exported(files, error); });
}

void ResultsView::ask_export_file(const QString& caption, const QString& suggested_name,
                                  const std::function<void(const QString&)>& write,
                                  const QString& filter) {
  const QString path = QFileDialog::getSaveFileName(this, caption, suggested_name,
                                                    filter.isEmpty() ? tr("CSV (*.csv)") : filter);
  if (path.isEmpty()) return;
  try {
    write(path);
    emit status_message(tr("Wrote %1").arg(path));
  } catch (const std::exception& e) {
    QMessageBox::warning(this, tr("Export failed"), QString::fromUtf8(e.what()));
  }
}

void ResultsView::ask_export_mteb() {
  if (selected_run_ids().isEmpty()) {
    QMessageBox::information(this, tr("MTEB export"),
                             tr("Select the runs to export in the Runs tab first."));
    return;
  }
  const QString dir = QFileDialog::getExistingDirectory(this, tr("Export MTEB results into"));
  if (dir.isEmpty()) return;
  // Reports the outcome of this export once.
  auto* context = new QObject(this);
  connect(this, &ResultsView::mteb_exported, context,
          [this, context](const QStringList& files, const QString& error) {
            context->deleteLater();
            if (!error.isEmpty())
              QMessageBox::warning(this, tr("MTEB export failed"), error);
            else
              emit status_message(tr("Wrote %n MTEB results file(s)", nullptr, files.size()));
          });
  export_mteb(dir);
}

}  // namespace lmk::widgets
