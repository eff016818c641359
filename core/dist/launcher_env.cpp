// The launcher's variables of a distributed run and Slurm's hostlists
// (core/dist/launcher_env.h).
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>

#include "core/dist/launcher_env.h"
#include "core/util/error.h"
#include "core/util/runtime.h"

namespace lmk {

namespace {

// The integer in variable `name` (the whole text, base 10) within [low, high].
int64_t integer_variable(const char* name, const std::string& text, int64_t low, int64_t high) {
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size())
    throw input_error(name, "'" + text + "' is not an integer");
  if (value < low || value > high) {
    throw input_error(name, text + " is out of range (" + std::to_string(low) + " to " +
                                std::to_string(high) + ")");
  }
  return value;
}

// A positive number of seconds in variable `name`.
double seconds_variable(const char* name, const std::string& text) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !(value > 0) || !std::isfinite(value))
    throw input_error(name, "'" + text + "' is not a positive number of seconds");
  return value;
}

bool is_loopback(const std::string& host) {
  return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1";
}

}  // namespace

// --- Slurm hostlists -------------------------------------------------------------------------

namespace {

// One bracket range "lo-hi" (or one number), printed with `width` digits (Slurm keeps the
// zero padding of the lower bound: "01-10" -> 01 02 ... 10).
struct NumberRange {
  uint64_t low = 0, high = 0;
  size_t width = 0;
};

// A host name pattern: literal text and bracket groups, in order ("rack[1-2]-n[01-04]").
struct HostPattern {
  std::vector<std::string> literals;             // literals[i] comes before groups[i]
  std::vector<std::vector<NumberRange>> groups;  // one more literal than groups
};

std::string padded(uint64_t number, size_t width) {
  std::string text = std::to_string(number);
  if (text.size() < width) text.insert(0, width - text.size(), '0');
  return text;
}

uint64_t parse_bound(const std::string& text, const std::string& where, const std::string& list) {
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size())
    throw input_error(where, "'" + list + "': '" + text + "' is not a number in a host range");
  return value;
}

// Splits a hostlist at the commas outside brackets and parses each name pattern.
std::vector<HostPattern> parse_hostlist(const std::string& list, const std::string& where) {
  std::vector<HostPattern> patterns;
  HostPattern current;
  current.literals.emplace_back();
  size_t i = 0;
  auto finish = [&] {
    if (current.groups.empty() && current.literals.back().empty())
      throw input_error(where, "'" + list + "': an empty host name");
    patterns.push_back(std::move(current));
    current = HostPattern();
    current.literals.emplace_back();
  };
  while (i < list.size()) {
    const char c = list[i];
    if (c == ',') {
      finish();
      ++i;
    } else if (c == '[') {
      const size_t close = list.find(']', i);
      if (close == std::string::npos) throw input_error(where, "'" + list + "': '[' without ']'");
      std::vector<NumberRange> ranges;
      const std::string inside = list.substr(i + 1, close - i - 1);
      size_t start = 0;
      while (start <= inside.size()) {
        const size_t comma = std::min(inside.find(',', start), inside.size());
        const std::string item = inside.substr(start, comma - start);
        const size_t dash = item.find('-');
        NumberRange range;
        const std::string low = item.substr(0, dash);
        range.low = parse_bound(low, where, list);
        range.high =
            dash == std::string::npos ? range.low : parse_bound(item.substr(dash + 1), where, list);
        range.width = low.size();
        if (range.high < range.low)
          throw input_error(where, "'" + list + "': the range " + item + " runs backwards");
        ranges.push_back(range);
        start = comma + 1;
      }
      current.groups.push_back(std::move(ranges));
      current.literals.emplace_back();
      i = close + 1;
    } else if (c == ']' || std::isspace(static_cast<unsigned char>(c))) {
      throw input_error(where, "'" + list + "': unexpected '" + std::string(1, c) + "'");
    } else {
      current.literals.back() += c;
      ++i;
    }
  }
  finish();
  return patterns;
}

}  // namespace

std::vector<std::string> expand_slurm_hostlist(const std::string& hostlist,
                                               const std::string& where, size_t max_hosts) {
  std::vector<std::string> hosts;
  for (const HostPattern& pattern : parse_hostlist(hostlist, where)) {
    // The names of one pattern: every combination of its groups, the last group fastest.
    std::vector<std::string> names = {pattern.literals[0]};
    for (size_t g = 0; g < pattern.groups.size(); ++g) {
      std::vector<std::string> longer;
      for (const std::string& prefix : names) {
        for (const NumberRange& range : pattern.groups[g]) {
          for (uint64_t n = range.low; n <= range.high; ++n) {
            if (hosts.size() + longer.size() >= max_hosts)
              throw input_error(where, "'" + hostlist + "' names more than " +
                                           std::to_string(max_hosts) + " hosts");
            longer.push_back(prefix + padded(n, range.width) + pattern.literals[g + 1]);
          }
        }
      }
      names = std::move(longer);
    }
    hosts.insert(hosts.end(), names.begin(), names.end());
  }
  return hosts;
}

std::string first_slurm_host(const std::string& hostlist, const std::string& where) {
  const HostPattern first = parse_hostlist(hostlist, where).front();
  std::string host = first.literals[0];
  for (size_t g = 0; g < first.groups.size(); ++g)
    host += padded(first.groups[g][0].low, first.groups[g][0].width) + first.literals[g + 1];
  return host;
}

// --- The launcher's variables ----------------------------------------------------------------

DistributedEnv read_distributed_env(const std::function<const char*(const char*)>& lookup) {
  auto get = [&](const char* name) -> std::optional<std::string> {
    const char* value = lookup(name);
    if (!value || !*value) return std::nullopt;
    return std::string(value);
  };
  constexpr int64_t kMaxWorld = 1 << 20;
  DistributedEnv env;
  if (const auto t = get("LMK_DIST_TIMEOUT_S"))
    env.rendezvous_timeout_s = seconds_variable("LMK_DIST_TIMEOUT_S", *t);
  if (const auto t = get("LMK_DIST_COLLECTIVE_TIMEOUT_S"))
    env.collective_timeout_s = seconds_variable("LMK_DIST_COLLECTIVE_TIMEOUT_S", *t);
  if (const auto names = get("GLOO_SOCKET_IFNAME")) env.gloo_interfaces = *names;

  const auto rank = get("RANK"), world = get("WORLD_SIZE");
  const auto slurm_rank = get("SLURM_PROCID"), slurm_world = get("SLURM_NTASKS");
  std::optional<bool> single_host;
  if (rank || world) {
    env.launcher = "torchrun";
    if (!world)
      throw input_error("WORLD_SIZE",
                        "not set, but RANK is (set both, or neither for one process)");
    env.world_size = static_cast<int>(integer_variable("WORLD_SIZE", *world, 1, kMaxWorld));
    if (!rank && env.world_size > 1)
      throw input_error("RANK", "not set, but WORLD_SIZE is " + *world);
    env.rank = rank ? static_cast<int>(integer_variable("RANK", *rank, 0, kMaxWorld)) : 0;
    if (env.rank >= env.world_size) {
      throw input_error("RANK", *rank + " is not below WORLD_SIZE (" + *world +
                                    "): ranks run from 0 to WORLD_SIZE - 1");
    }
    const auto local = get("LOCAL_RANK");
    env.local_rank =
        local ? static_cast<int>(integer_variable("LOCAL_RANK", *local, 0, kMaxWorld)) : env.rank;
    if (const auto local_world = get("LOCAL_WORLD_SIZE")) {
      const int64_t n = integer_variable("LOCAL_WORLD_SIZE", *local_world, 1, env.world_size);
      if (env.local_rank >= n)
        throw input_error("LOCAL_RANK", std::to_string(env.local_rank) +
                                            " is not below LOCAL_WORLD_SIZE (" + *local_world +
                                            ")");
      single_host = n == env.world_size;
    }
    if (env.world_size > 1) {
      const auto addr = get("MASTER_ADDR"), port = get("MASTER_PORT");
      if (!addr)
        throw input_error("MASTER_ADDR",
                          "not set: the host of rank 0 (WORLD_SIZE is " + *world + ")");
      if (!port) throw input_error("MASTER_PORT", "not set: the TCP port rank 0 listens on");
      env.master_addr = *addr;
      env.master_port = static_cast<int>(integer_variable("MASTER_PORT", *port, 1, 65535));
    }
  } else if (slurm_rank && slurm_world) {
    env.launcher = "srun";
    env.world_size = static_cast<int>(integer_variable("SLURM_NTASKS", *slurm_world, 1, kMaxWorld));
    env.rank = static_cast<int>(integer_variable("SLURM_PROCID", *slurm_rank, 0, kMaxWorld));
    if (env.rank >= env.world_size) {
      throw input_error("SLURM_PROCID",
                        *slurm_rank + " is not below SLURM_NTASKS (" + *slurm_world + ")");
    }
    if (const auto local = get("SLURM_LOCALID"))
      env.local_rank = static_cast<int>(integer_variable("SLURM_LOCALID", *local, 0, kMaxWorld));
    if (env.world_size > 1) {
      if (const auto addr = get("MASTER_ADDR")) {
        env.master_addr = *addr;
      } else if (const auto nodes = get("SLURM_JOB_NODELIST")) {
        env.master_addr = first_slurm_host(*nodes, "SLURM_JOB_NODELIST");
      } else if (const auto step_nodes = get("SLURM_NODELIST")) {
        env.master_addr = first_slurm_host(*step_nodes, "SLURM_NODELIST");
      } else {
        throw input_error("SLURM_JOB_NODELIST",
                          "not set: rank 0's host is unknown (set MASTER_ADDR)");
      }
      if (const auto port = get("MASTER_PORT")) {
        env.master_port = static_cast<int>(integer_variable("MASTER_PORT", *port, 1, 65535));
      } else if (const auto job = get("SLURM_JOB_ID")) {
        // A port per job, so two jobs sharing a node do not meet at one store.
        env.master_port =
            static_cast<int>(20000 + integer_variable("SLURM_JOB_ID", *job, 0, INT64_MAX) % 20000);
      } else {
        throw input_error("MASTER_PORT", "not set, and no SLURM_JOB_ID to derive it from");
      }
      for (const char* name : {"SLURM_STEP_NUM_NODES", "SLURM_JOB_NUM_NODES", "SLURM_NNODES"}) {
        if (const auto nodes = get(name)) {
          single_host = integer_variable(name, *nodes, 1, kMaxWorld) == 1;
          break;
        }
      }
    }
  }
  if (env.world_size > 1) {
    env.single_host =
        single_host.value_or(is_loopback(env.master_addr) || env.master_addr == host_name());
  }
  return env;
}

DistributedEnv read_distributed_env() {
  return read_distributed_env([](const char* name) -> const char* { return std::getenv(name); });
}

}  // namespace lmk
