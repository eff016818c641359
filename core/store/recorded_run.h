#pragma once

// The run a command records its work in, from its start to its end (lmk eval, lmk train, lmk
// pretrain): adopted from a job system ($LMK_RUN_ID), continued (a training resumed from its
// checkpoint) or created; RUNNING with this host, this process, the device and the code
// revision; then FINISHED, KILLED (stopped, a checkpoint to continue from) or FAILED. It cannot
// be left RUNNING when the command ends: its destructor ends a run still RUNNING as FAILED. A
// process that ends without running destructors (SIGKILL, out of memory) is caught by readers:
// ResultsStore::end_lost_runs, from the pid and start time recorded here. One type for the
// life cycle that lmk eval and the training loop each wrote out.

#include <cstdint>
#include <optional>
#include <string>

#include "core/store/results_store.h"

namespace lmk {

struct RunStart {
  NewRun fresh;            // a new run's name, kind and config (the kind and config of any run)
  std::string experiment;  // where a new run goes
  std::string device;      // recorded with the run (cpu, cuda:0, ...)
  std::optional<int64_t> adopted;  // the job system's run ($LMK_RUN_ID): kind checked, config set
  std::optional<int64_t> resumed;  // the run a checkpoint belongs to, when the store holds it
};

class RecordedRun {
 public:
  RecordedRun(ResultsStore& store, const RunStart& start);
  ~RecordedRun();
  RecordedRun(const RecordedRun&) = delete;
  RecordedRun& operator=(const RecordedRun&) = delete;

  int64_t id() const { return id_; }
  // Whether it is a run that existed before (adopted or resumed).
  bool continued() const { return continued_; }
  void finish();
  void stop(const std::string& message);  // KILLED
  void fail(const std::string& message);  // FAILED

 private:
  void end(RunStatus status, const std::string& message);

  ResultsStore& store_;
  int64_t id_ = 0;
  bool continued_ = false, ended_ = false;
};

}  // namespace lmk
