#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "app/option_ranges.h"

namespace lmk::cli {

// Parses a comma-separated list of integers >= min_value for option `flag`; an item that is
// not one is an InputError naming the flag and saying what was expected (`what`).
std::vector<int64_t> parse_int_list(const std::string& text, const std::string& flag,
                                    int64_t min_value, const std::string& what);

// Prints a long command's progress lines on stderr: on a terminal a transient line (the running
// step's latest) is rewritten in place by the next one, elsewhere every line is printed.
// `pending` says whether a transient line is on screen (clear it with "\r\033[K" at the end).
std::function<void(const std::string& line, bool transient)> terminal_report(bool& pending);

// Each command registers its subcommand and returns what runs it (its exit code).
using Runner = std::function<int()>;
using CommandAdder = Runner (*)(CLI::App&);

// The name of the subcommand argv asks for ("" when none comes before another option), past the
// global --threads N.
std::string subcommand_of(int argc, char** argv);

// A subcommand's name and its registration.
struct Command {
  const char* name;
  CommandAdder add;
};

// The commands that need no LibTorch (tokenizers, data, the store, studies, jobs): `lmk` runs
// these itself and hands every other command to lmk-engine beside it (app/lmk_main.cpp).
const std::vector<Command>& commands_without_libtorch();
bool runs_without_libtorch(const std::string& subcommand);

// lmk's main: registers `adders`' subcommands (and --version, --threads) on one CLI, parses argv
// and runs the chosen command; `prepare(chosen, threads)` runs first (the engine's thread and
// memory settings). Exit code: the command's, 2 for bad options or input (one message naming
// the file, line or option), 1 for an internal error.
// Throws std::logic_error naming every numeric option (CLI11 type INT, UINT, FLOAT) of app or
// its subcommands that declares no range (a validator: CLI::Range, NonNegativeNumber, ...).
// run_commands calls it before parsing: an option added without a range fails every command.
void require_ranges(const CLI::App& app);
// One JSON object per option of app and its subcommands (command path, option name, type, the
// declared type with its ranges, numeric, flag): what LMK_LIST_OPTIONS=1 prints.
void list_options(const CLI::App& app, std::ostream& out);

int run_commands(int argc, char** argv, const std::vector<CommandAdder>& adders,
                 const std::function<void(CLI::App& chosen, int threads)>& prepare);

// lmk tokenize
Runner add_tokenize_command(CLI::App& app);
// lmk tokenizer-train
Runner add_tokenizer_train_command(CLI::App& app);
// lmk model init
Runner add_model_command(CLI::App& app);
// lmk inspect
Runner add_inspect_command(CLI::App& app);
// lmk encode
Runner add_encode_command(CLI::App& app);
// lmk attention
Runner add_attention_command(CLI::App& app);
// lmk data passkey | needle | corpus | pairs | stats
Runner add_data_command(CLI::App& app);
// lmk eval
Runner add_eval_command(CLI::App& app);
// lmk train
Runner add_train_command(CLI::App& app);
// lmk pretrain
Runner add_pretrain_command(CLI::App& app);
// lmk results
Runner add_results_command(CLI::App& app);
// lmk compare
Runner add_compare_command(CLI::App& app);
// lmk export
Runner add_export_command(CLI::App& app);

// lmk study
Runner add_study_command(CLI::App& app);
// lmk submit / jobs / cancel / logs (job_commands.cpp).
Runner add_submit_command(CLI::App& app);
Runner add_jobs_command(CLI::App& app);
Runner add_cancel_command(CLI::App& app);
Runner add_logs_command(CLI::App& app);

}  // namespace lmk::cli
