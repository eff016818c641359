#include "core/store/recorded_run.h"

#include "core/util/error.h"
#include "core/util/runtime.h"

namespace lmk {

RecordedRun::RecordedRun(ResultsStore& store, const RunStart& start) : store_(store) {
  if (start.adopted) {
    adopt_run(store_, *start.adopted, start.fresh.kind, start.fresh.config);
    id_ = *start.adopted;
    continued_ = true;
  } else if (start.resumed) {
    // The run the checkpoint belongs to, unless the store no longer holds it (a new file).
    try {
      id_ = store_.get_run(*start.resumed).id;
      continued_ = true;
    } catch (const InputError&) {
    }
  }
  if (!continued_)
    id_ = store_.create_run(store_.get_or_create_experiment(start.experiment), start.fresh);
  store_.start_run(id_, start.device, code_revision());
}

RecordedRun::~RecordedRun() {
  if (ended_) return;
  try {
    store_.set_run_status(id_, RunStatus::Failed,
                          "the command ended without recording how (an error before it could)");
  } catch (...) {
    // The store cannot be written: end_lost_runs will tell once this process is gone.
  }
}

void RecordedRun::end(RunStatus status, const std::string& message) {
  store_.set_run_status(id_, status, message);
  ended_ = true;
}

void RecordedRun::finish() {
  end(RunStatus::Finished, "");
}

void RecordedRun::stop(const std::string& message) {
  end(RunStatus::Killed, message);
}

void RecordedRun::fail(const std::string& message) {
  end(RunStatus::Failed, message);
}

}  // namespace lmk
