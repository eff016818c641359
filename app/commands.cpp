#include "app/commands.h"

#include "app/field_option.h"

#include <unistd.h>

#include <csignal>

#include <cstdlib>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "core/util/error.h"

namespace lmk::cli {

std::vector<int64_t> parse_int_list(const std::string& text, const std::string& flag,
                                    int64_t min_value, const std::string& what) {
  std::vector<int64_t> values;
  std::stringstream list(text);
  std::string item;
  while (std::getline(list, item, ',')) {
    size_t used = 0;
    long long value = 0;
    try {
      value = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || value < min_value)
      throw input_error(flag, "'" + item + "' is not " + what);
    values.push_back(value);
  }
  if (values.empty()) throw input_error(flag, "empty list");
  return values;
}

std::function<void(const std::string& line, bool transient)> terminal_report(bool& pending) {
  const bool tty = ::isatty(2);
  return [tty, &pending](const std::string& line, bool transient) {
    if (!tty) {
      std::cerr << line << "\n";
      return;
    }
    std::cerr << "\r\033[K";
    if (transient)
      std::cerr << line.substr(0, 120) << std::flush;
    else
      std::cerr << line << "\n";
    pending = transient;
  };
}

std::string subcommand_of(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--threads") {
      ++i;
      continue;
    }
    if (arg.rfind("--threads=", 0) == 0) continue;
    return arg.empty() || arg[0] == '-' ? "" : arg;
  }
  return "";
}

const std::vector<Command>& commands_without_libtorch() {
  static const std::vector<Command> commands = {
      {"tokenize", add_tokenize_command}, {"tokenizer-train", add_tokenizer_train_command},
      {"data", add_data_command},         {"results", add_results_command},
      {"compare", add_compare_command},   {"export", add_export_command},
      {"study", add_study_command},       {"submit", add_submit_command},
      {"jobs", add_jobs_command},         {"cancel", add_cancel_command},
      {"logs", add_logs_command}};
  return commands;
}

bool runs_without_libtorch(const std::string& subcommand) {
  for (const Command& command : commands_without_libtorch())
    if (subcommand == command.name) return true;
  return false;
}

namespace {

// The option's base type as CLI11 names it from the bound variable: INT, UINT, FLOAT, TEXT, ...
// (get_type_name() appends each validator's description after a ':').
std::string base_type(const CLI::Option& option) {
  const std::string full = option.get_type_name();
  return full.substr(0, full.find(':'));
}

bool is_numeric(const CLI::Option& option) {
  const std::string type = base_type(option);
  return type == "INT" || type == "UINT" || type == "FLOAT" || type == "NUMBER";
}

// Calls visit(command path, option) for every option of app and its subcommands, depth first.
void for_each_option(const CLI::App& app, const std::string& path,
                     const std::function<void(const std::string&, const CLI::Option&)>& visit) {
  for (const CLI::Option* option : app.get_options()) visit(path, *option);
  for (const CLI::App* sub : app.get_subcommands({}))
    for_each_option(*sub, path.empty() ? sub->get_name() : path + " " + sub->get_name(), visit);
}

}  // namespace

void require_ranges(const CLI::App& app) {
  std::string missing;
  for_each_option(app, "", [&](const std::string& path, const CLI::Option& option) {
    if (is_numeric(option) && option.get_type_name().find(':') == std::string::npos)
      missing += (missing.empty() ? "lmk " : ", lmk ") + path + " " + option.get_name();
  });
  if (!missing.empty())
    throw std::logic_error(
        "numeric options without a declared range (->check, app/option_ranges.h): " + missing);
}

void list_options(const CLI::App& app, std::ostream& out) {
  for_each_option(app, "", [&](const std::string& path, const CLI::Option& option) {
    if (option.get_name().empty()) return;
    nlohmann::json line = {{"command", path},
                           {"option", option.get_name()},
                           {"type", base_type(option)},
                           {"declared", option.get_type_name()},
                           {"numeric", is_numeric(option)},
                           {"flag", option.get_items_expected_max() == 0}};
    out << line.dump() << "\n";
  });
}

int run_commands(int argc, char** argv, const std::vector<CommandAdder>& adders,
                 const std::function<void(CLI::App& chosen, int threads)>& prepare) {
  // A write past a file-size limit (prlimit --fsize, a full quota) fails with EFBIG, reported
  // naming the file, instead of the signal ending the process with the file half written.
  std::signal(SIGXFSZ, SIG_IGN);
  CLI::App app{"lmk - Landmark Workbench: landmark pooling studies for text embeddings"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "lmk 0.1.0");
  int threads = 0;
  app.add_option("--threads", threads, "LibTorch threads (default: $LMK_THREADS or all cores)")
      ->check(whole(1, 4096));
  std::map<CLI::App*, Runner> runners;
  for (CommandAdder adder : adders) {
    const size_t before = app.get_subcommands({}).size();
    Runner runner = adder(app);
    runners[app.get_subcommands({})[before]] = std::move(runner);
  }
  if (const char* list = std::getenv("LMK_LIST_OPTIONS"); list != nullptr && *list != '\0') {
    list_options(app, std::cout);  // the option sweep test's source (tests/cli)
    return 0;
  }
  try {
    require_ranges(app);  // a numeric option added without a range fails every command
  } catch (const std::logic_error& e) {
    std::cerr << "lmk: internal error: " << e.what() << "\n";
    return 1;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  try {
    for (auto& [sub, run] : runners) {
      if (!sub->parsed()) continue;
      if (prepare) prepare(*sub, threads);
      return run();
    }
    return 2;
  } catch (const Stopped& e) {
    std::cerr << "lmk: " << e.what() << "\n";
    return kExitStopped;
  } catch (const FieldError& e) {
    std::cerr << "lmk: error: " << command_line_message(app, e) << "\n";
    return 2;
  } catch (const InputError& e) {
    std::cerr << "lmk: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "lmk: internal error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace lmk::cli
