#pragma once

// The Slurm client layer of the job system: the batch script of a run (slurm_script), and
// sbatch / squeue / sacct / scancel / scontrol run as child processes, directly or through a
// command prefix such as ["ssh", "login-node"] (SlurmClient). Their text output is parsed by
// the parse_* functions, which never throw. What the formats look like and how requeueing
// behaves on a real cluster: docs/ARCHITECTURE.md, "Slurm client" and "Slurm in tests", and
// tests/core/jobs/slurm_client_test.cpp (the real daemons) and slurm_test.cpp (the scripts).

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/util/error.h"

namespace lmk {

class TomlConfig;

// A Slurm command that could not run or that Slurm refused (not found, controller down,
// invalid partition, a timeout); the message names the command and carries Slurm's own words.
class SlurmError : public InputError {
 public:
  using InputError::InputError;
};

// The [slurm] table of a study config.
struct SlurmOptions {
  std::string partition, account, qos, constraint;
  std::string mem;   // --mem: "16G", "4000M", "0" (all of the node's)
  std::string time;  // --time as Slurm takes it: "30", "02:00:00", "1-00:00:00"
  int64_t nodes = 1, ntasks_per_node = 1, gpus_per_node = 0, cpus_per_task = 0;
  // Extra #SBATCH directives, without the prefix: ["--exclusive", "--mail-type=END"].
  std::vector<std::string> extra;
  // Shell lines run before the command (module load ..., source venv/bin/activate, export ...).
  std::vector<std::string> setup;
  // Every sbatch/squeue/sacct/scancel/scontrol call goes through it, the Slurm command as one
  // string of shell-quoted words after it (ssh semantics): ["ssh", "login-node"].
  std::vector<std::string> command_prefix;
  // USR1 to the batch shell this long before the time limit (0: none); the script then asks the
  // command to stop (TERM).
  int64_t signal_seconds = 120;
  // A command stopped by that signal that exits with kExitStopped (75, core/util/error.h:
  // checkpoint written) is requeued; the command must take --auto-resume to continue from it.
  bool requeue = true;
  // Folder of the Slurm client programs where the commands run ("": PATH).
  std::string bin_dir;
};

// The keys of the [slurm] table, for TomlConfig's list of known keys.
const std::vector<std::string>& slurm_option_keys();

// Reads the [slurm] keys present into `options` and checks them all; errors are InputErrors
// naming "file: slurm.KEY".
void read_slurm_options(const TomlConfig& toml, SlurmOptions& options);

// Checks options set in code (as read_slurm_options does); errors name "slurm.KEY".
void check_slurm_options(const SlurmOptions& options);

// One job to submit.
struct SlurmJobSpec {
  std::string name;      // --job-name ("" : Slurm's default, the script's name)
  std::string work_dir;  // --chdir ("" : where sbatch runs)
  // --output, stdout and stderr, appended to (a requeued run keeps its first attempt's lines).
  // Slurm expands %j (job id) and the other filename patterns in it.
  std::string log_path;
  std::vector<std::string> command;                      // argv of the work
  std::vector<std::pair<std::string, std::string>> env;  // exported by the script
  std::vector<std::string> after_ok;  // job ids that must complete first (else it is cancelled)
};

// The bash batch script: #SBATCH directives for every option set, a header line per attempt in
// the log, the setup lines, the exports and the command (under srun when the job has more than
// one task), with the traps that stop it on USR1 / TERM and requeue it. An example:
// tests/core/jobs/slurm_test.cpp, SlurmScript. Throws InputError for a newline in any value.
std::string slurm_script(const SlurmOptions& options, const SlurmJobSpec& spec);

// sbatch's arguments for the spec, the script last: --parsable [--dependency=afterok:A:B
// --kill-on-invalid-dep=yes] SCRIPT.
std::vector<std::string> sbatch_arguments(const SlurmJobSpec& spec, const std::string& script_path);

// The argv that runs `program args` as the options say: bin_dir/program, and with a command
// prefix, prefix + one string of shell-quoted words.
std::vector<std::string> slurm_command(const SlurmOptions& options, const std::string& program,
                                       const std::vector<std::string>& args);

// What the job system makes of a Slurm job state.
enum class SlurmStatus { Pending, Running, Finished, Failed, Killed, Unknown };

// "pending", "running", "finished", "failed", "killed", "unknown".
const char* slurm_status_name(SlurmStatus status);

// The status of a Slurm state name ("COMPLETED", "CANCELLED by 0": the first word counts).
SlurmStatus slurm_status(const std::string& state);

struct SlurmJobState {
  std::string state;  // Slurm's state, first word: "RUNNING", "CANCELLED"; "" : no one knows the id
  SlurmStatus status = SlurmStatus::Unknown;
  int exit_code = -1;   // the batch script's exit status once the job ended, else -1
  int exit_signal = 0;  // the signal that ended it (0: none)
  std::string reason;   // squeue's / sacct's reason ("DependencyNeverSatisfied"; "None" -> "")
  std::string source;   // where it was read: "sacct", "squeue" or "sacct -c"
};

// The job id in `sbatch --parsable`'s output ("123" or "123;cluster"), "" if there is none.
std::string parse_sbatch_output(const std::string& output);

// `sacct -n -P -X -o JobIDRaw,State,ExitCode,Reason` lines (also with -c): one state per job,
// the last line of a job winning (a requeued job has one line per attempt, in order). Lines
// that do not parse and job steps ("12.batch") are skipped.
std::map<std::string, SlurmJobState> parse_sacct(const std::string& output);

// `squeue -h -O JobID:|,State:|,Reason:|,exit_code:|` lines (exit_code is the raw wait status:
// 768 = exit 3, 15 = signal 15). Lines that do not parse are skipped.
std::map<std::string, SlurmJobState> parse_squeue(const std::string& output);

// Runs the Slurm client commands for the job system.
class SlurmClient {
 public:
  // extra_env is set for every child command, over this process's environment (tests point
  // the commands at their cluster with SLURM_CONF).
  explicit SlurmClient(SlurmOptions options,
                       std::vector<std::pair<std::string, std::string>> extra_env = {});

  // Writes slurm_script() to script_path (creating its folder, and the log's folder when there
  // is no command prefix) and submits it; returns the job id. SlurmError when sbatch is not
  // found, fails (its message) or prints no job id.
  std::string submit(const SlurmJobSpec& spec, const std::string& script_path) {
    return submit(spec, script_path, options_);
  }
  // The same with the script's directives from other options (a step's own task layout); the
  // Slurm programs still run as this client's options say (command_prefix, bin_dir).
  std::string submit(const SlurmJobSpec& spec, const std::string& script_path,
                     const SlurmOptions& script_options);

  // The state of every id, in one batched query per source: sacct (an accounting database);
  // for ids it does not give, squeue -t all (jobs the controller knows: pending, running, and
  // ended less than MinJobAge ago); for ids still missing when sacct failed, sacct -c (the job
  // completion file). Ids no source knows come back with state "" (Unknown). SlurmError when
  // squeue fails for another reason than unknown ids (controller down).
  std::map<std::string, SlurmJobState> poll(const std::vector<std::string>& ids);

  // scancel ID (a job that already ended is no error).
  void cancel(const std::string& id);

  // Sends a signal to the job's batch shell: scancel --batch --signal=SIG ID ("USR1" is the
  // time-limit warning the script handles).
  void signal(const std::string& id, const std::string& signal_name);

  // Seconds a Slurm command may take before it is killed (default 60).
  void set_timeout(double seconds) { timeout_seconds_ = seconds; }

 private:
  struct Output {
    int code = 0;
    std::string out, err;
  };
  // Runs the Slurm program; SlurmError when it cannot start, is not found or times out.
  Output run(const std::string& program, const std::vector<std::string>& args) const;

  SlurmOptions options_;
  std::vector<std::pair<std::string, std::string>> extra_env_;
  double timeout_seconds_ = 60;
};

}  // namespace lmk
