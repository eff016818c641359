#include "core/jobs/slurm.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <sstream>
#include <thread>

#include "core/util/file.h"
#include "core/util/toml_config.h"

extern char** environ;

namespace lmk {

namespace {

namespace fs = std::filesystem;

using Where = std::function<std::string(const char* key)>;

bool all_digits(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(),
                                      [](unsigned char c) { return std::isdigit(c) != 0; });
}

std::string trim(const std::string& text) {
  const size_t begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return "";
  return text.substr(begin, text.find_last_not_of(" \t\r\n") - begin + 1);
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, separator)) parts.push_back(part);
  if (!text.empty() && text.back() == separator) parts.push_back("");
  return parts;
}

std::string join(const std::vector<std::string>& words, const std::string& separator) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : separator) + w;
  return out;
}

// A value on one line of the script: a newline (or CR, NUL) would end the #SBATCH or shell line
// and start a line of the value's choosing.
void check_one_line(const std::string& value, const std::string& where) {
  if (value.find_first_of(std::string("\n\r\0", 3)) != std::string::npos)
    throw input_error(where, "must not contain a line break (it would start a new script line)");
}

// Seconds of a Slurm time limit ("M", "M:S", "H:M:S", "D-H", "D-H:M", "D-H:M:S"); 0 for
// UNLIMITED / INFINITE; -1 if it is none of these.
int64_t time_limit_seconds(const std::string& text) {
  std::string upper = text;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (upper == "UNLIMITED" || upper == "INFINITE") return 0;
  int64_t days = 0;
  std::string rest = text;
  const size_t dash = text.find('-');
  if (dash != std::string::npos) {
    if (!all_digits(text.substr(0, dash)) || dash > 6) return -1;
    days = std::stoll(text.substr(0, dash));
    rest = text.substr(dash + 1);
  }
  const std::vector<std::string> parts = split(rest, ':');
  if (parts.empty() || parts.size() > 3) return -1;
  std::vector<int64_t> values;
  for (size_t i = 0; i < parts.size(); ++i) {
    // The first number may be large (minutes, hours); minutes and seconds after it are < 60.
    if (!all_digits(parts[i]) || parts[i].size() > (i == 0 ? 9 : 2)) return -1;
    values.push_back(std::stoll(parts[i]));
    if (i > 0 && values.back() > 59) return -1;
  }
  if (dash != std::string::npos) {  // D-H, D-H:M, D-H:M:S
    if (values[0] > 23) return -1;
    const int64_t h = values[0], m = values.size() > 1 ? values[1] : 0,
                  s = values.size() > 2 ? values[2] : 0;
    return ((days * 24 + h) * 60 + m) * 60 + s;
  }
  if (values.size() == 1) return values[0] * 60;              // M
  if (values.size() == 2) return values[0] * 60 + values[1];  // M:S
  return (values[0] * 60 + values[1]) * 60 + values[2];       // H:M:S
}

void check_options(const SlurmOptions& o, const Where& where) {
  const std::pair<const char*, const std::string*> texts[] = {
      {"partition", &o.partition},   {"account", &o.account}, {"qos", &o.qos},
      {"constraint", &o.constraint}, {"mem", &o.mem},         {"time", &o.time},
      {"bin_dir", &o.bin_dir}};
  for (const auto& [key, value] : texts) check_one_line(*value, where(key));
  const std::pair<const char*, const std::vector<std::string>*> lists[] = {
      {"extra", &o.extra}, {"setup", &o.setup}, {"command_prefix", &o.command_prefix}};
  for (const auto& [key, values] : lists)
    for (const std::string& value : *values) check_one_line(value, where(key));

  int64_t limit = 0;
  if (!o.time.empty()) {
    limit = time_limit_seconds(o.time);
    if (limit < 0)
      throw input_error(where("time"), "'" + o.time +
                                           "' is not a Slurm time (MINUTES, HH:MM:SS, "
                                           "DAYS-HH:MM:SS, ..., e.g. \"02:00:00\")");
  }
  if (!o.mem.empty()) {
    const size_t digits = o.mem.find_first_not_of("0123456789");
    const bool ok =
        digits != 0 && (digits == std::string::npos ||
                        (digits + 1 == o.mem.size() &&
                         std::string("KMGTkmgt").find(o.mem[digits]) != std::string::npos));
    if (!ok)
      throw input_error(where("mem"), "'" + o.mem + "' is not a memory size (16G, 4000M, ...)");
  }
  const std::pair<const char*, std::pair<int64_t, int64_t>> counts[] = {
      {"nodes", {o.nodes, 1}},
      {"ntasks_per_node", {o.ntasks_per_node, 1}},
      {"gpus_per_node", {o.gpus_per_node, 0}},
      {"cpus_per_task", {o.cpus_per_task, 0}},
      {"signal_seconds", {o.signal_seconds, 0}}};
  for (const auto& [key, value_min] : counts)
    if (value_min.first < value_min.second)
      throw input_error(where(key), std::to_string(value_min.first) + " is below " +
                                        std::to_string(value_min.second));
  if (o.signal_seconds > 65535)  // Slurm's limit for --signal=...@TIME
    throw input_error(where("signal_seconds"),
                      std::to_string(o.signal_seconds) + " is above Slurm's limit (65535)");
  if (limit > 0 && o.signal_seconds >= limit)
    throw input_error(where("signal_seconds"), std::to_string(o.signal_seconds) +
                                                   " s is not below the time limit (" + o.time +
                                                   " = " + std::to_string(limit) + " s)");
  for (const std::string& e : o.extra)
    if (e.size() < 3 || e.compare(0, 2, "--") != 0)
      throw input_error(where("extra"),
                        "'" + e + "' is not an sbatch option (write it as --name or --name=value)");
  for (const std::string& word : o.command_prefix)
    if (word.empty()) throw input_error(where("command_prefix"), "holds an empty word");
}

// A value in an #SBATCH line as sbatch reads it: quotes group, a backslash escapes the next
// character everywhere (also inside quotes, unlike sh), an unquoted # starts a comment.
std::string directive_value(const std::string& value) {
  const bool plain = !value.empty() && std::all_of(value.begin(), value.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
           std::string("_.,:/@%+=-").find(c) != std::string::npos;
  });
  if (plain) return value;
  std::string out = "'";
  for (char c : value) {
    if (c == '\\' || c == '\'') out += '\\';
    out += c;
  }
  return out + "'";
}

bool is_env_name(const std::string& name) {
  return !name.empty() && std::isdigit(static_cast<unsigned char>(name[0])) == 0 &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
         });
}

std::string program_path(const SlurmOptions& options, const std::string& program) {
  return options.bin_dir.empty() ? program : (fs::path(options.bin_dir) / program).string();
}

// The first word of a state, upper case: "CANCELLED by 0" -> "CANCELLED".
std::string state_word(const std::string& state) {
  std::string word = trim(state);
  word = word.substr(0, word.find_first_of(" \t"));
  for (char& c : word) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return word;
}

bool ended(SlurmStatus s) {
  return s == SlurmStatus::Finished || s == SlurmStatus::Failed || s == SlurmStatus::Killed;
}

bool parse_int(const std::string& text, int& out) {
  if (!all_digits(text) || text.size() > 9) return false;
  out = std::stoi(text);
  return true;
}

SlurmJobState make_state(const std::string& state, const std::string& reason,
                         const std::string& source) {
  SlurmJobState s;
  s.state = state_word(state);
  s.status = slurm_status(s.state);
  s.reason = trim(reason) == "None" ? "" : trim(reason);
  s.source = source;
  return s;
}

// The output of a child process.
struct ProcessResult {
  int code = -1;        // exit status, or 128 + signal
  int spawn_error = 0;  // errno of a failed start (ENOENT: not found)
  bool timed_out = false;
  std::string out, err;
};

// Runs argv (a name without / is looked up on PATH) with `env` set over this process's
// environment and stdin from /dev/null, in a process group of its own that is killed after
// timeout_s seconds.
ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::vector<std::pair<std::string, std::string>>& env,
                          double timeout_s) {
  ProcessResult result;
  std::vector<std::string> environment;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    if (std::none_of(env.begin(), env.end(), [&](const auto& kv) { return kv.first == name; }))
      environment.push_back(entry);
  }
  for (const auto& [name, value] : env) environment.push_back(name + "=" + value);
  std::vector<char*> envp, args;
  for (std::string& e : environment) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (std::string& a : argv_copy) args.push_back(a.data());
  args.push_back(nullptr);

  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) throw SlurmError("cannot create a pipe");
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    throw SlurmError("cannot create a pipe");
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults, empty;
  sigemptyset(&defaults);
  for (int s : {SIGPIPE, SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGCHLD})
    sigaddset(&defaults, s);
  sigemptyset(&empty);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setsigmask(&attr, &empty);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);
  pid_t pid = -1;
  const bool search = argv[0].find('/') == std::string::npos;
  const int spawned = search
                          ? ::posix_spawnp(&pid, args[0], &actions, &attr, args.data(), envp.data())
                          : ::posix_spawn(&pid, args[0], &actions, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (spawned != 0) {
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    result.spawn_error = spawned;
    return result;
  }

  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_fds = 2;
  char buffer[4096];
  while (open_fds > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) {
      result.timed_out = true;
      break;
    }
    const int ready = ::poll(fds, 2, static_cast<int>(std::min<int64_t>(left, 1000)));
    if (ready < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        sinks[i]->append(buffer, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  int status = 0;
  // Its output is closed; the process itself gets until the deadline to exit.
  while (!result.timed_out) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid || (done < 0 && errno != EINTR)) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      result.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (result.timed_out) {
    ::kill(-pid, SIGKILL);
    ::kill(pid, SIGKILL);
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  for (const pollfd& f : fds)
    if (f.fd >= 0) ::close(f.fd);
  result.code =
      WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return result;
}

// The message of a failed command: its stderr, else its stdout, on one line.
std::string message_of(const std::string& err, const std::string& out) {
  std::string text = trim(err.empty() ? out : err);
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text.empty() ? "(no message)" : text;
}

}  // namespace

const std::vector<std::string>& slurm_option_keys() {
  static const std::vector<std::string> keys = {
      "partition",      "account",         "qos",           "constraint",    "mem",   "time",
      "nodes",          "ntasks_per_node", "gpus_per_node", "cpus_per_task", "extra", "setup",
      "command_prefix", "signal_seconds",  "requeue",       "bin_dir"};
  return keys;
}

void read_slurm_options(const TomlConfig& toml, SlurmOptions& o) {
  toml.text("slurm", "partition", o.partition);
  toml.text("slurm", "account", o.account);
  toml.text("slurm", "qos", o.qos);
  toml.text("slurm", "constraint", o.constraint);
  toml.text("slurm", "mem", o.mem);
  toml.text("slurm", "time", o.time);
  toml.integer("slurm", "nodes", o.nodes, 1);
  toml.integer("slurm", "ntasks_per_node", o.ntasks_per_node, 1);
  toml.integer("slurm", "gpus_per_node", o.gpus_per_node, 0);
  toml.integer("slurm", "cpus_per_task", o.cpus_per_task, 0);
  toml.texts("slurm", "extra", o.extra);
  toml.texts("slurm", "setup", o.setup);
  toml.texts("slurm", "command_prefix", o.command_prefix);
  toml.integer("slurm", "signal_seconds", o.signal_seconds, 0);
  toml.boolean("slurm", "requeue", o.requeue);
  toml.text("slurm", "bin_dir", o.bin_dir);
  check_options(o, [&](const char* key) { return toml.where("slurm", key); });
}

void check_slurm_options(const SlurmOptions& options) {
  check_options(options, [](const char* key) { return std::string("slurm.") + key; });
}

std::string slurm_script(const SlurmOptions& o, const SlurmJobSpec& spec) {
  check_slurm_options(o);
  const std::string where = "slurm job '" + spec.name + "'";
  check_one_line(spec.name, where + ": name");
  check_one_line(spec.work_dir, where + ": work_dir");
  check_one_line(spec.log_path, where + ": log_path");
  if (spec.command.empty()) throw input_error(where, "has no command");
  for (const auto& [name, value] : spec.env)
    if (!is_env_name(name))
      throw input_error(where + ": env", "'" + name + "' is not a variable name");

  std::ostringstream s;
  s << "#!/bin/bash\n";
  s << "# Written by lmk (core/jobs/slurm.cpp). The command runs in the background so that the\n"
       "# traps run at once: USR1 (the time limit is near) or TERM (scancel, preemption) ask it\n"
       "# to stop; one stopped by USR1 that exits with "
    << kExitStopped << " (checkpoint written) is requeued.\n";
  const auto directive = [&](const std::string& option, const std::string& value) {
    s << "#SBATCH --" << option << "=" << directive_value(value) << "\n";
  };
  if (!spec.name.empty()) directive("job-name", spec.name);
  if (!spec.work_dir.empty()) directive("chdir", spec.work_dir);
  if (!spec.log_path.empty()) directive("output", spec.log_path);
  s << "#SBATCH --open-mode=append\n";
  s << "#SBATCH --nodes=" << o.nodes << "\n";
  s << "#SBATCH --ntasks-per-node=" << o.ntasks_per_node << "\n";
  if (o.gpus_per_node > 0) s << "#SBATCH --gpus-per-node=" << o.gpus_per_node << "\n";
  if (o.cpus_per_task > 0) s << "#SBATCH --cpus-per-task=" << o.cpus_per_task << "\n";
  if (!o.mem.empty()) directive("mem", o.mem);
  if (!o.time.empty()) directive("time", o.time);
  if (!o.partition.empty()) directive("partition", o.partition);
  if (!o.account.empty()) directive("account", o.account);
  if (!o.qos.empty()) directive("qos", o.qos);
  if (!o.constraint.empty()) directive("constraint", o.constraint);
  if (o.signal_seconds > 0) s << "#SBATCH --signal=B:USR1@" << o.signal_seconds << "\n";
  if (o.requeue) s << "#SBATCH --requeue\n";
  for (const std::string& e : o.extra) s << "#SBATCH " << e << "\n";

  s << "echo \"[lmk] job ${SLURM_JOB_ID:-?} attempt ${SLURM_RESTART_COUNT:-0} on $(hostname) "
       "at $(date -u +%Y-%m-%dT%H:%M:%SZ)\"\n";
  // Setup lines come before set -u: environment scripts (conda activate, module) are not all
  // written for it.
  for (const std::string& line : o.setup) s << line << "\n";
  s << "set -u\n";
  for (const auto& [name, value] : spec.env)
    s << "export " << name << "=" << shell_quote(value) << "\n";

  const bool several_tasks = o.nodes * o.ntasks_per_node > 1;
  s << "lmk_pid=\"\"\nlmk_signal=\"\"\n";
  s << "lmk_stop() {\n  lmk_signal=$1\n  echo \"[lmk] $1 received: stopping the command\"\n";
  if (several_tasks)
    s << "  # TERM to the tasks of the job's steps, not to srun (which kills them at once on "
         "TERM)\n"
      << "  " << shell_quote(program_path(o, "scancel"))
      << " --signal=TERM \"$SLURM_JOB_ID\" 2>/dev/null\n";
  else
    s << "  kill -TERM \"$lmk_pid\" 2>/dev/null\n";
  s << "}\n";
  s << "trap 'lmk_stop USR1' USR1\ntrap 'lmk_stop TERM' TERM\n";
  if (several_tasks) {
    // Since Slurm 22.05 srun does not take --cpus-per-task from the batch job's environment.
    s << "srun --kill-on-bad-exit=1";
    if (o.cpus_per_task > 0) s << " --cpus-per-task=" << o.cpus_per_task;
    s << " ";
  }
  std::vector<std::string> words;
  for (const std::string& w : spec.command) words.push_back(shell_quote(w));
  s << join(words, " ") << " &\n";
  s << "lmk_pid=$!\n";
  s << "# A trapped signal ends wait early: wait again while the command runs, and once more "
       "after\n"
       "# a signal, for a command that ended as wait was cut short (127: its status is known).\n";
  s << "wait \"$lmk_pid\"\nlmk_rc=$?\n";
  s << "while kill -0 \"$lmk_pid\" 2>/dev/null; do\n  wait \"$lmk_pid\"\n  lmk_rc=$?\ndone\n";
  s << "if [ -n \"$lmk_signal\" ]; then\n  wait \"$lmk_pid\" 2>/dev/null\n  lmk_last=$?\n"
       "  [ \"$lmk_last\" -eq 127 ] || lmk_rc=$lmk_last\nfi\n";
  s << "echo \"[lmk] the command exited with $lmk_rc\"\n";
  if (o.requeue) {
    s << "if [ \"$lmk_signal\" = USR1 ] && [ \"$lmk_rc\" -eq " << kExitStopped << " ]; then\n";
    s << "  echo \"[lmk] stopped before the time limit with a checkpoint: requeueing\"\n";
    s << "  " << shell_quote(program_path(o, "scontrol"))
      << " requeue \"$SLURM_JOB_ID\" && exit 0\n";
    s << "  echo \"[lmk] the requeue failed\"\n";
    s << "fi\n";
  }
  s << "exit \"$lmk_rc\"\n";
  return s.str();
}

std::vector<std::string> sbatch_arguments(const SlurmJobSpec& spec,
                                          const std::string& script_path) {
  std::vector<std::string> args = {"--parsable"};
  if (!spec.after_ok.empty()) {
    for (const std::string& id : spec.after_ok)
      if (!all_digits(id))
        throw input_error("slurm job '" + spec.name + "': after_ok",
                          "'" + id + "' is not a job id");
    args.push_back("--dependency=afterok:" + join(spec.after_ok, ":"));
    args.push_back("--kill-on-invalid-dep=yes");
  }
  args.push_back(script_path);
  return args;
}

std::vector<std::string> slurm_command(const SlurmOptions& options, const std::string& program,
                                       const std::vector<std::string>& args) {
  std::vector<std::string> argv = {program_path(options, program)};
  argv.insert(argv.end(), args.begin(), args.end());
  if (options.command_prefix.empty()) return argv;
  std::vector<std::string> quoted;
  for (const std::string& word : argv) quoted.push_back(shell_quote(word));
  std::vector<std::string> prefixed = options.command_prefix;
  prefixed.push_back(join(quoted, " "));
  return prefixed;
}

const char* slurm_status_name(SlurmStatus status) {
  switch (status) {
    case SlurmStatus::Pending:
      return "pending";
    case SlurmStatus::Running:
      return "running";
    case SlurmStatus::Finished:
      return "finished";
    case SlurmStatus::Failed:
      return "failed";
    case SlurmStatus::Killed:
      return "killed";
    case SlurmStatus::Unknown:
      break;
  }
  return "unknown";
}

SlurmStatus slurm_status(const std::string& state) {
  static const std::map<std::string, SlurmStatus> statuses = {
      {"PENDING", SlurmStatus::Pending},
      {"CONFIGURING", SlurmStatus::Pending},
      {"REQUEUED", SlurmStatus::Pending},
      {"REQUEUE_FED", SlurmStatus::Pending},
      {"REQUEUE_HOLD", SlurmStatus::Pending},
      {"RESIZING", SlurmStatus::Pending},
      // Suspended (by an admin or gang scheduling) holds its allocation and resumes where it
      // stopped: not running now, not ended either.
      {"SUSPENDED", SlurmStatus::Pending},
      {"RUNNING", SlurmStatus::Running},
      {"COMPLETING", SlurmStatus::Running},
      {"STAGE_OUT", SlurmStatus::Running},
      {"SIGNALING", SlurmStatus::Running},
      {"COMPLETED", SlurmStatus::Finished},
      {"FAILED", SlurmStatus::Failed},
      {"NODE_FAIL", SlurmStatus::Failed},
      {"OUT_OF_MEMORY", SlurmStatus::Failed},
      {"BOOT_FAIL", SlurmStatus::Failed},
      {"DEADLINE", SlurmStatus::Failed},
      {"TIMEOUT", SlurmStatus::Failed},
      {"CANCELLED", SlurmStatus::Killed},
      {"PREEMPTED", SlurmStatus::Killed},
      {"REVOKED", SlurmStatus::Killed},
  };
  const auto it = statuses.find(state_word(state));
  return it == statuses.end() ? SlurmStatus::Unknown : it->second;
}

std::string parse_sbatch_output(const std::string& output) {
  // The last line that is a job id: site plugins may print other lines first.
  std::string id;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    line = trim(line);
    const std::string first = line.substr(0, line.find(';'));
    if (all_digits(first)) id = first;
  }
  return id;
}

std::map<std::string, SlurmJobState> parse_sacct(const std::string& output) {
  std::map<std::string, SlurmJobState> jobs;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    const std::vector<std::string> f = split(trim(line), '|');
    if (f.size() < 3 || !all_digits(trim(f[0]))) continue;
    SlurmJobState s = make_state(f[1], f.size() > 3 ? f[3] : "", "");
    if (s.state.empty()) continue;
    const std::string code = trim(f[2]);
    const size_t colon = code.find(':');
    int exit_code = 0, signal = 0;
    if (ended(s.status) && colon != std::string::npos &&
        parse_int(code.substr(0, colon), exit_code) && parse_int(code.substr(colon + 1), signal)) {
      s.exit_code = exit_code;
      s.exit_signal = signal;
    }
    jobs[trim(f[0])] = s;
  }
  return jobs;
}

std::map<std::string, SlurmJobState> parse_squeue(const std::string& output) {
  std::map<std::string, SlurmJobState> jobs;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    const std::vector<std::string> f = split(trim(line), '|');
    if (f.size() < 4 || !all_digits(trim(f[0]))) continue;
    SlurmJobState s = make_state(f[1], f[2], "");
    if (s.state.empty()) continue;
    int status = 0;
    if (ended(s.status) && parse_int(trim(f[3]), status)) {
      s.exit_code = (status >> 8) & 0xff;
      s.exit_signal = status & 0x7f;
    }
    jobs[trim(f[0])] = s;
  }
  return jobs;
}

SlurmClient::SlurmClient(SlurmOptions options,
                         std::vector<std::pair<std::string, std::string>> extra_env)
    : options_(std::move(options)), extra_env_(std::move(extra_env)) {
  check_slurm_options(options_);
}

SlurmClient::Output SlurmClient::run(const std::string& program,
                                     const std::vector<std::string>& args) const {
  const std::vector<std::string> argv = slurm_command(options_, program, args);
  const std::string shown = join(argv, " ");
  const ProcessResult r = run_process(argv, extra_env_, timeout_seconds_);
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
