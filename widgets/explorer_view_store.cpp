// ExplorerView's store side: the evaluation runs of the open store, from which a run brings its
// model, pooling, granularity, dataset parts and test queries into the request
// (ExplorerRequestPanel; the view's computing is in explorer_view.cpp, what it shows in
// explorer_view_show.cpp).
#include "widgets/explorer_view.h"

#include <QTimer>

#include "core/store/results_store.h"
#include "widgets/explorer_request.h"
#include "widgets/store_connection.h"

namespace lmk::widgets {

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
    request_->set_runs({}, /*no_store=*/true);
    QTimer::singleShot(0, this, done);
    return;
  }
  load_in_background<std::vector<ExplorerRun>>(
      this, db_path,
      [](const ResultsStore& db) {
        std::vector<ExplorerRun> runs;
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
          ExplorerRun run;
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
      [this, done](std::vector<ExplorerRun> runs, const QString& error) {
        request_->set_runs(std::move(runs), /*no_store=*/false);
        if (!error.isEmpty())
          emit status_message(tr("Explorer: cannot read the store: %1").arg(error));
        done();
      });
}

void ExplorerView::refresh() {
  set_store(db_path_);
}

}  // namespace lmk::widgets
