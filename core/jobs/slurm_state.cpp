// Slurm job states and the parsing of sbatch / sacct / squeue output (core/jobs/slurm.h).
#include <cctype>
#include <map>
#include <sstream>

#include "core/jobs/slurm.h"
#include "core/jobs/slurm_internal.h"

namespace lmk {

using namespace slurm_internal;

namespace {

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

}  // namespace

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

}  // namespace lmk
