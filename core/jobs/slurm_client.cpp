// SlurmClient (core/jobs/slurm.h): the Slurm commands run as child processes with a timeout,
// and what their exit statuses and output mean.
#include <signal.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "core/jobs/slurm.h"
#include "core/jobs/slurm_internal.h"
#include "core/util/file.h"
#include "core/util/process.h"

namespace lmk {

using namespace slurm_internal;

namespace {

namespace fs = std::filesystem;

// The message of a failed command: its stderr, else its stdout, on one line.
std::string message_of(const std::string& err, const std::string& out) {
  std::string text = trim(err.empty() ? out : err);
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text.empty() ? "(no message)" : text;
}

}  // namespace

SlurmClient::SlurmClient(SlurmOptions options,
                         std::vector<std::pair<std::string, std::string>> extra_env)
    : options_(std::move(options)), extra_env_(std::move(extra_env)) {
  check_slurm_options(options_);
}

SlurmClient::Output SlurmClient::run(const std::string& program,
                                     const std::vector<std::string>& args) const {
  const std::vector<std::string> argv = slurm_command(options_, program, args);
  const std::string shown = join(argv, " ");
  // stdin from /dev/null, `extra_env_` over this process's environment, in a process group of
  // its own (killed with it at the timeout), with the signals a caller may ignore or block
  // (a queue's stop signals, SIGPIPE) back at their defaults.
  ChildSpec child;
  child.argv = argv;
  child.env = extra_env_;
  child.group = ChildSpec::Group::Own;
  child.default_signals = {SIGPIPE, SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGCHLD};
  ChildResult r;
  try {
    r = run_child(child, timeout_seconds_);
  } catch (const InputError& e) {
    throw SlurmError(e.what());  // no pipe, or the process lost: a client error as any other
  }
  if (r.spawn_error == ENOENT) {
    if (!options_.command_prefix.empty())
      throw SlurmError(argv[0] + " not found on PATH (the first word of [slurm] command_prefix)");
    if (options_.bin_dir.empty())
      throw SlurmError(program +
                       " not found on PATH: install slurm-client or set [slurm] bin_dir to the "
                       "folder of the Slurm commands");
    throw SlurmError(argv[0] + " not found (check [slurm] bin_dir)");
  }
  if (r.spawn_error != 0)
    throw SlurmError("cannot run " + argv[0] + ": " + std::strerror(r.spawn_error));
  if (r.timed_out) {
    std::ostringstream seconds;
    seconds << timeout_seconds_;
    throw SlurmError(shown + ": no answer within " + seconds.str() + " s (killed)");
  }
  // 127 from the shell at the other end of the prefix: no such command there.
  if (!options_.command_prefix.empty() && r.code == 127)
    throw SlurmError(
        program + " not found through '" + join(options_.command_prefix, " ") +
        "' (install slurm-client there or set [slurm] bin_dir): " + message_of(r.err, r.out));
  return {r.code, r.out, r.err};
}

std::string SlurmClient::submit(const SlurmJobSpec& spec, const std::string& script_path,
                                const SlurmOptions& script_options) {
  const std::string script = slurm_script(script_options, spec);
  const std::vector<std::string> args = sbatch_arguments(spec, script_path);
  std::error_code ec;
  const fs::path folder = fs::path(script_path).parent_path();
  if (!folder.empty()) fs::create_directories(folder, ec);
  if (options_.command_prefix.empty() && !spec.log_path.empty()) {
    fs::path log_folder = fs::path(spec.log_path).parent_path();
    if (log_folder.is_relative() && !spec.work_dir.empty()) log_folder = spec.work_dir / log_folder;
    if (!log_folder.empty()) fs::create_directories(log_folder, ec);
  }
  AtomicFile file(script_path);
  file.write(script);
  file.commit();
  const Output r = run("sbatch", args);
  if (r.code != 0)
    throw SlurmError("sbatch " + script_path + " failed (exit " + std::to_string(r.code) +
                     "): " + message_of(r.err, r.out));
  const std::string id = parse_sbatch_output(r.out);
  if (id.empty())
    throw SlurmError("sbatch " + script_path + " printed no job id: " + message_of(r.out, r.err));
  return id;
}

std::map<std::string, SlurmJobState> SlurmClient::poll(const std::vector<std::string>& ids) {
  std::vector<std::string> wanted;
  for (const std::string& id : ids) {
    if (!all_digits(id)) throw SlurmError("'" + id + "' is not a Slurm job id");
    if (std::find(wanted.begin(), wanted.end(), id) == wanted.end()) wanted.push_back(id);
  }
  std::map<std::string, SlurmJobState> states;
  if (wanted.empty()) return states;
  const auto take = [&](const std::map<std::string, SlurmJobState>& found,
                        const std::string& source) {
    for (auto [id, state] : found) {
      if (std::find(wanted.begin(), wanted.end(), id) == wanted.end() || states.count(id)) continue;
      state.source = source;
      states[id] = state;
    }
  };
  const auto missing = [&] {
    std::vector<std::string> left;
    for (const std::string& id : wanted)
      if (!states.count(id)) left.push_back(id);
    return left;
  };
  const std::string fields = "JobIDRaw,State,ExitCode,Reason";

  // An accounting database (slurmdbd) knows every job; without one sacct fails ("Slurm
  // accounting storage is disabled"). Jobs it does not list yet are asked of the controller.
  bool sacct_works = false;
  try {
    const Output r = run("sacct", {"-n", "-P", "-X", "-j", join(wanted, ","), "-o", fields});
    sacct_works = r.code == 0;
    if (sacct_works) take(parse_sacct(r.out), "sacct");
  } catch (const SlurmError&) {
    // No sacct, or no answer: squeue below.
  }
  std::vector<std::string> left = missing();
  if (!left.empty()) {
    const Output r = run("squeue", {"-h", "-t", "all", "-j", join(left, ","), "-O",
                                    "JobID:|,State:|,Reason:|,exit_code:|"});
    // squeue fails for a single id it does not know (and lists nothing for several).
    if (r.code != 0 && r.err.find("Invalid job id specified") == std::string::npos)
      throw SlurmError("squeue failed (exit " + std::to_string(r.code) +
                       "): " + message_of(r.err, r.out));
    if (r.code == 0) take(parse_squeue(r.out), "squeue");
    left = missing();
  }
  // Ended more than MinJobAge ago (or before a restart of the controller): the job completion
  // file, when the cluster writes one (jobcomp/filetxt).
  if (!left.empty() && !sacct_works) {
    const Output r = run("sacct", {"-c", "-n", "-P", "-X", "-j", join(left, ","), "-o", fields});
    if (r.code == 0) take(parse_sacct(r.out), "sacct -c");
  }
  for (const std::string& id : wanted)
    if (!states.count(id)) states[id] = SlurmJobState{};
  return states;
}

void SlurmClient::cancel(const std::string& id) {
  if (!all_digits(id)) throw SlurmError("'" + id + "' is not a Slurm job id");
  const Output r = run("scancel", {id});
  if (r.code != 0)
    throw SlurmError("scancel " + id + " failed (exit " + std::to_string(r.code) +
                     "): " + message_of(r.err, r.out));
}

void SlurmClient::signal(const std::string& id, const std::string& signal_name) {
  if (!all_digits(id)) throw SlurmError("'" + id + "' is not a Slurm job id");
  if (signal_name.empty() || !std::all_of(signal_name.begin(), signal_name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0;
      }))
    throw SlurmError("'" + signal_name + "' is not a signal name");
  const Output r = run("scancel", {"--batch", "--signal=" + signal_name, id});
  if (r.code != 0)
    throw SlurmError("scancel --batch --signal=" + signal_name + " " + id + " failed (exit " +
                     std::to_string(r.code) + "): " + message_of(r.err, r.out));
}

}  // namespace lmk
