// libFuzzer target for what the job system reads back from files and programs it does not
// control: a job's log (latest_progress_event, core/util/progress.h) and the output of sbatch,
// squeue and sacct (parse_* in core/jobs/slurm.h). None of them may throw or crash on any
// input; what they return must be consistent (an event of a kind it looks for, a status that
// matches its state name, non-empty job ids of digits).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>

#include "core/jobs/slurm.h"
#include "core/util/progress.h"

namespace {

void check(bool condition) {
  if (!condition) std::abort();
}

void check_states(const std::map<std::string, lmk::SlurmJobState>& states) {
  for (const auto& [id, state] : states) {
    check(!id.empty() && id.find_first_not_of("0123456789") == std::string::npos);
    check(state.status == lmk::slurm_status(state.state));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (const auto event = lmk::latest_progress_event(text)) {
    check(event->event == "progress" || event->event == "step");
  }
  const std::string id = lmk::parse_sbatch_output(text);
  check(id.empty() || id.find_first_not_of("0123456789") == std::string::npos);
  check_states(lmk::parse_sacct(text));
  check_states(lmk::parse_squeue(text));
  return 0;
}
