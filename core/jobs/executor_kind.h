#pragma once

// The executors a job can run on, by the name the jobs table stores: the one place that name is
// read, so no caller compares the strings itself.

#include <string>

namespace lmk {

enum class ExecutorKind {
  Local,  // a child process of a local queue (core/jobs/local_executor.h)
  Slurm,  // a Slurm batch job (core/jobs/slurm_executor.h)
};

// "local" | "slurm"; InputError naming `where` otherwise.
ExecutorKind parse_executor(const std::string& name, const std::string& where = "executor");
const char* executor_name(ExecutorKind kind);
// Whether a job's stored executor is `kind`.
bool runs_on(const std::string& stored_executor, ExecutorKind kind);

}  // namespace lmk
