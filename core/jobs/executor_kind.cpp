#include "core/jobs/executor_kind.h"

#include "core/util/error.h"

namespace lmk {

ExecutorKind parse_executor(const std::string& name, const std::string& where) {
  if (name == "local") return ExecutorKind::Local;
  if (name == "slurm") return ExecutorKind::Slurm;
  throw input_error(where, "'" + name + "' is not local or slurm");
}

const char* executor_name(ExecutorKind kind) {
  return kind == ExecutorKind::Slurm ? "slurm" : "local";
}

bool runs_on(const std::string& stored_executor, ExecutorKind kind) {
  return stored_executor == executor_name(kind);
}

}  // namespace lmk
