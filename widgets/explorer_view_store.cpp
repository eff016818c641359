// ExplorerView's store side: the evaluation runs of the open store, from which a run brings its
// model, pooling, granularity, dataset parts and test queries into the request (the view's
// controls and computing are in explorer_view.cpp, what it shows in explorer_view_show.cpp).
#include "widgets/explorer_view.h"

#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include <QTimer>

#include <stdexcept>

#include "core/data/dataset_dir.h"
#include "core/store/results_store.h"
#include "widgets/store_connection.h"

namespace lmk::widgets {
namespace {

constexpr size_t kMaxQueries = 2000;  // listed per dataset part

}  // namespace

// ---- the store: evaluation runs to pick a model, pooling and queries from

void ExplorerView::set_store(const QString& db_path) {
  db_path_ = db_path;
  const auto done = [this] {
    if (pending_files_ > 0)
      loaded_due_ = true;
    else
      emit loaded();
  };
  if (db_path.isEmpty()) {
    runs_.clear();
    run_->clear();
    run_->addItem(tr("— none: no store open —"));
    QTimer::singleShot(0, this, done);
    return;
  }
  load_in_background<std::vector<EvalRun>>(
      this, db_path,
      [](const ResultsStore& db) {
        std::vector<EvalRun> runs;
        lmk::RunFilter eval_runs;
        eval_runs.kind = "eval";
        for (const RunRecord& record : db.list_runs(eval_runs)) {
          // The run's config as lmk eval recorded it (app/eval_commands.cpp).
          const nlohmann::json& config = record.config;
          const auto text = [&](const char* key, const char* fallback) {
            const auto found = config.find(key);
            return QString::fromStdString(
                found != config.end() && found->is_string() ? found->get<std::string>() : fallback);
          };
          EvalRun run;
          run.id = record.id;
          run.name = QString::fromStdString(record.name);
          run.model = text("model", "");
          run.pooling = text("pooling", "");
          const auto granularity = config.find("granularity");
          run.granularity = granularity != config.end() && granularity->is_number_integer()
                                ? granularity->get<int>()
                                : 0;
          run.dataset = text("dataset", "");
          run.split = text("split", "test");
          if (!run.model.isEmpty()) runs.push_back(run);
        }
        return runs;
      },
      [this, done](std::vector<EvalRun> runs, const QString& error) {
        runs_ = std::move(runs);
        const QString current = run_->currentText();
        run_->clear();
        QStringList items{runs_.empty() ? tr("— no evaluation runs —") : tr("— pick a run —")};
        for (const EvalRun& run : runs_)
          items << QStringLiteral("%1 · %2").arg(run.id).arg(run.name);
        run_->addItems(items);  // one insertion: the list is measured once
        const int keep = run_->findText(current);
        if (keep > 0) run_->setCurrentIndex(keep);
        if (!error.isEmpty())
          emit status_message(tr("Explorer: cannot read the store: %1").arg(error));
        done();
      });
}

void ExplorerView::refresh() {
  set_store(db_path_);
}

void ExplorerView::choose_run(int index) {
  if (index <= 0 || index > static_cast<int>(runs_.size())) return;
  const EvalRun& run = runs_[static_cast<size_t>(index - 1)];
  model_->setText(run.model);
  const int pooling = pooling_->findText(run.pooling);
  if (pooling >= 0) pooling_->setCurrentIndex(pooling);
  granularity_->setValue(run.granularity);
  part_->clear();
  query_choice_->clear();
  queries_.clear();
  if (run.dataset.isEmpty()) return;
  try {
    for (const DatasetPart& part : dataset_parts(run.dataset.toStdString()))
      part_->addItem(part.name.empty() ? tr("(whole dataset)") : QString::fromStdString(part.name),
                     QString::fromStdString(part.path));
  } catch (const std::exception& e) {
    message_->setText(QString::fromUtf8(e.what()));
  }
  if (part_->count() > 0) {
    source_->setCurrentIndex(kTarget);
    // The longest part first: the explorer is for long documents.
    part_->setCurrentIndex(part_->count() - 1);
    choose_part(part_->count() - 1);
  }
}

void ExplorerView::choose_part(int index) {
  query_choice_->clear();
  queries_.clear();
  const int run = run_->currentIndex();
  if (index < 0 || run <= 0) return;
  const QString split = runs_[static_cast<size_t>(run - 1)].split;
  try {
    queries_ = read_explorer_queries(part_->itemData(index).toString().toStdString(),
                                     split.toStdString(), kMaxQueries);
  } catch (const std::exception& e) {
    message_->setText(QString::fromUtf8(e.what()));
    return;
  }
  for (const ExplorerQuery& q : queries_) {
    QString text = q.text.simplified();
    if (text.size() > 70) text = text.left(67) + QStringLiteral("…");
    query_choice_->addItem(QStringLiteral("%1 → %2: %3").arg(q.id, q.document, text));
  }
  if (!queries_.empty()) choose_query(0);
}

void ExplorerView::choose_query(int index) {
  if (index < 0 || index >= static_cast<int>(queries_.size())) return;
  query_->setText(queries_[static_cast<size_t>(index)].text);
}

}  // namespace lmk::widgets
