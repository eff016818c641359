// The [slurm] options, the batch script and the argv of the Slurm commands (core/jobs/slurm.h);
// job states and output parsing are in slurm_state.cpp, running the commands in slurm_client.cpp.
#include "core/jobs/slurm.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <functional>
#include <sstream>

#include "core/jobs/slurm_internal.h"
#include "core/util/file.h"
#include "core/util/toml_config.h"

namespace lmk {

using namespace slurm_internal;

namespace {

namespace fs = std::filesystem;

using Where = std::function<std::string(const char* key)>;

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

}  // namespace lmk
