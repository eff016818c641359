// The Slurm client layer's script and options (core/jobs/slurm.cpp): the batch script, sbatch's
// arguments, the [slurm] option checks and the command prefix. The parsers of Slurm's output
// are slurm_state_test's; running the commands against a real cluster is slurm_client_test's.
#include "core/jobs/slurm.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/util/error.h"
#include "core/util/file.h"
#include "core/util/toml_config.h"
#include "tests/support/input_error_tests.h"
#include "tests/support/shell.h"
#include "tests/support/slurm_tests.h"
#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

using testing::count;
using testing::error_of;
using testing::TempDir;

SlurmOptions full_options() {
  SlurmOptions o;
  o.partition = "gpu";
  o.account = "proj 7";
  o.qos = "normal";
  o.constraint = "a100&ib";
  o.mem = "64G";
  o.time = "1-00:00:00";
  o.nodes = 2;
  o.ntasks_per_node = 4;
  o.gpus_per_node = 4;
  o.cpus_per_task = 8;
  o.extra = {"--exclusive", "--mail-type=END"};
  o.setup = {"module load cuda/12.1", "source /opt/venv/bin/activate"};
  o.signal_seconds = 300;
  return o;
}

SlurmJobSpec full_spec() {
  SlurmJobSpec spec;
  spec.name = "lmk-17-finetune/lmk var";
  spec.work_dir = "/scratch/it's here";
  spec.log_path = "/scratch/it's here/logs/17.log";
  spec.command = {"/opt/lmk/bin/lmk", "train", "--config", "/scratch/a b/finetune.toml",
                  "--auto-resume"};
  spec.env = {{"LMK_RUN_ID", "17"}, {"LMK_PROGRESS_JSON", "1"}, {"LMK_NOTE", "it's $HOME"}};
  return spec;
}

TEST(SlurmScript, FullOptionSetHasEveryDirectiveOnce) {
  const std::string script = slurm_script(full_options(), full_spec());
  EXPECT_EQ(script.rfind("#!/bin/bash\n", 0), 0u);
  for (const char* directive :
       {"#SBATCH --job-name='lmk-17-finetune/lmk var'\n",
        "#SBATCH --chdir='/scratch/it\\'s here'\n",
        "#SBATCH --output='/scratch/it\\'s here/logs/17.log'\n", "#SBATCH --open-mode=append\n",
        "#SBATCH --nodes=2\n", "#SBATCH --ntasks-per-node=4\n", "#SBATCH --gpus-per-node=4\n",
        "#SBATCH --cpus-per-task=8\n", "#SBATCH --mem=64G\n", "#SBATCH --time=1-00:00:00\n",
        "#SBATCH --partition=gpu\n", "#SBATCH --account='proj 7'\n", "#SBATCH --qos=normal\n",
        "#SBATCH --constraint='a100&ib'\n", "#SBATCH --signal=B:USR1@300\n", "#SBATCH --requeue\n",
        "#SBATCH --exclusive\n", "#SBATCH --mail-type=END\n"})
    EXPECT_EQ(count(script, directive), 1u) << directive << "\n" << script;
  // All directives come before the first command (sbatch stops reading them there).
  EXPECT_LT(script.rfind("#SBATCH"), script.find("\necho "));
  EXPECT_EQ(count(script, "--dependency"), 0u);  // on sbatch's command line instead
  // Setup lines in order, before set -u; the exports quoted for the shell.
  EXPECT_LT(script.find("module load cuda/12.1\n"), script.find("source /opt/venv/bin/activate\n"));
  EXPECT_LT(script.find("source /opt/venv/bin/activate\n"), script.find("set -u\n"));
  EXPECT_NE(script.find("export LMK_RUN_ID='17'\n"), std::string::npos);
  EXPECT_NE(script.find("export LMK_NOTE='it'\\''s $HOME'\n"), std::string::npos);
  // 8 tasks: srun, which does not take --cpus-per-task from the job's environment (22.05).
  EXPECT_NE(script.find("srun --kill-on-bad-exit=1 --cpus-per-task=8 '/opt/lmk/bin/lmk' 'train' "
                        "'--config' '/scratch/a b/finetune.toml' '--auto-resume' &\n"),
            std::string::npos)
      << script;
  EXPECT_NE(script.find("'scancel' --signal=TERM \"$SLURM_JOB_ID\""), std::string::npos);
  EXPECT_NE(script.find("trap 'lmk_stop USR1' USR1\n"), std::string::npos);
  EXPECT_NE(script.find("trap 'lmk_stop TERM' TERM\n"), std::string::npos);
  EXPECT_NE(script.find("\"$lmk_rc\" -eq 75 ]"), std::string::npos);
  EXPECT_NE(script.find("'scontrol' requeue \"$SLURM_JOB_ID\" && exit 0\n"), std::string::npos);
  EXPECT_NE(script.find("attempt ${SLURM_RESTART_COUNT:-0}"), std::string::npos);
  EXPECT_EQ(script.substr(script.size() - 15), "exit \"$lmk_rc\"\n");
  // The script is valid bash.
  TempDir dir;
  const auto check = testing::run_shell("bash -n " + dir.write("job.sh", script));
  EXPECT_EQ(check.code, 0) << check.output;
}

TEST(SlurmScript, OneTaskRunsTheCommandItselfWithoutOptionalDirectives) {
  SlurmOptions o;
  o.signal_seconds = 0;
  o.requeue = false;
  o.bin_dir = "/opt/slurm/bin";
  SlurmJobSpec spec;
  spec.command = {"sh", "-c", "echo hi"};
  const std::string script = slurm_script(o, spec);
  EXPECT_EQ(count(script, "srun"), 0u) << script;
  EXPECT_NE(script.find("\n'sh' '-c' 'echo hi' &\n"), std::string::npos) << script;
  EXPECT_NE(script.find("kill -TERM \"$lmk_pid\""), std::string::npos);
  for (const char* absent : {"--job-name", "--chdir", "--output", "--gpus-per-node",
                             "--cpus-per-task", "--mem", "--time", "--partition", "--account",
                             "--qos", "--constraint", "--signal", "--requeue", "requeue \""})
    EXPECT_EQ(count(script, absent), 0u) << absent;
  EXPECT_EQ(count(script, "#SBATCH --nodes=1\n"), 1u);
  EXPECT_EQ(count(script, "#SBATCH --ntasks-per-node=1\n"), 1u);

  o.ntasks_per_node = 2;
  o.requeue = true;
  const std::string two = slurm_script(o, spec);
  EXPECT_NE(two.find("\nsrun --kill-on-bad-exit=1 'sh' '-c' 'echo hi' &\n"), std::string::npos);
  EXPECT_NE(two.find("'/opt/slurm/bin/scancel' --signal=TERM"), std::string::npos);
  EXPECT_NE(two.find("'/opt/slurm/bin/scontrol' requeue"), std::string::npos);
}

TEST(SlurmScript, DependenciesGoOnSbatchsCommandLine) {
  SlurmJobSpec spec;
  EXPECT_EQ(sbatch_arguments(spec, "/j/x y.sh"),
            (std::vector<std::string>{"--parsable", "/j/x y.sh"}));
  spec.after_ok = {"12", "13"};
  EXPECT_EQ(sbatch_arguments(spec, "/j/x.sh"),
            (std::vector<std::string>{"--parsable", "--dependency=afterok:12:13",
                                      "--kill-on-invalid-dep=yes", "/j/x.sh"}));
  spec.after_ok = {"12;rm"};
  EXPECT_NE(error_of([&] { sbatch_arguments(spec, "x.sh"); }).find("'12;rm' is not a job id"),
            std::string::npos);
}

TEST(SlurmScript, LineBreaksAreRejectedEverywhere) {
  const auto with = [](auto change) {
    SlurmOptions o;
    SlurmJobSpec spec;
    spec.command = {"true"};
    change(o, spec);
    return error_of([&] { slurm_script(o, spec); });
  };
  EXPECT_NE(with([](SlurmOptions& o, SlurmJobSpec&) {
              o.partition = "gpu\n#SBATCH --x";
            }).find("slurm.partition: must not contain a line break"),
            std::string::npos);
  EXPECT_NE(with([](SlurmOptions& o, SlurmJobSpec&) {
              o.setup = {"ok", "a\rb"};
            }).find("slurm.setup"),
            std::string::npos);
  EXPECT_NE(with([](SlurmOptions& o, SlurmJobSpec&) {
              o.extra = {"--comment=a\nrm -rf /"};
            }).find("slurm.extra"),
            std::string::npos);
  EXPECT_NE(with([](SlurmOptions& o, SlurmJobSpec&) {
              o.command_prefix = {"ssh", "h\n"};
            }).find("slurm.command_prefix"),
            std::string::npos);
  EXPECT_NE(with([](SlurmOptions& o, SlurmJobSpec&) {
              o.bin_dir = std::string("a\0b", 3);
            }).find("slurm.bin_dir"),
            std::string::npos);
  EXPECT_NE(with([](SlurmOptions&, SlurmJobSpec& s) {
              s.log_path = "x.log\necho pwned";
            }).find("log_path: must not contain a line break"),
            std::string::npos);
  EXPECT_NE(with([](SlurmOptions&, SlurmJobSpec& s) { s.name = "a\nb"; }).find(": name"),
            std::string::npos);
  EXPECT_NE(with([](SlurmOptions&, SlurmJobSpec& s) {
              s.env = {{"A;B", "1"}};
            }).find("'A;B' is not a variable name"),
            std::string::npos);
  EXPECT_NE(with([](SlurmOptions&, SlurmJobSpec& s) { s.command.clear(); }).find("no command"),
            std::string::npos);
  // Inside the command and the exports a newline is only a character of a quoted word.
  SlurmJobSpec spec;
  spec.command = {"printf", "%s", "two\nlines"};
  spec.env = {{"NOTE", "a\nb"}};
  EXPECT_NO_THROW(slurm_script(SlurmOptions{}, spec));
}

TEST(SlurmOptions, ReadFromTheSlurmTableWithChecks) {
  TempDir dir;
  const auto read = [&](const std::string& body) {
    const std::string path = dir.write("s.toml", "[slurm]\n" + body);
    TomlConfig toml(path, {{"slurm", slurm_option_keys()}});
    SlurmOptions o;
    read_slurm_options(toml, o);
    return o;
  };
  const SlurmOptions o = read(R"(partition = "gpu"
account = "a"
qos = "q"
constraint = "c"
mem = "16G"
time = "02:00:00"
nodes = 2
ntasks_per_node = 4
gpus_per_node = 4
cpus_per_task = 8
extra = ["--exclusive"]
setup = ["module load x"]
command_prefix = ["ssh", "login"]
signal_seconds = 60
requeue = false
bin_dir = "/opt/slurm/bin"
)");
  EXPECT_EQ(o.partition, "gpu");
  EXPECT_EQ(o.mem, "16G");
  EXPECT_EQ(o.time, "02:00:00");
  EXPECT_EQ(o.nodes, 2);
  EXPECT_EQ(o.ntasks_per_node, 4);
  EXPECT_EQ(o.gpus_per_node, 4);
  EXPECT_EQ(o.cpus_per_task, 8);
  EXPECT_EQ(o.extra, std::vector<std::string>{"--exclusive"});
  EXPECT_EQ(o.command_prefix, (std::vector<std::string>{"ssh", "login"}));
  EXPECT_EQ(o.signal_seconds, 60);
  EXPECT_FALSE(o.requeue);
  EXPECT_EQ(o.bin_dir, "/opt/slurm/bin");
  const SlurmOptions defaults = read("");
  EXPECT_EQ(defaults.signal_seconds, 120);
  EXPECT_TRUE(defaults.requeue);
  for (const char* time : {"30", "90:30", "1-0", "1-12:30", "7-00:00:00", "UNLIMITED"})
    EXPECT_NO_THROW(read(std::string("time = \"") + time + "\"\n")) << time;
  for (const char* mem : {"4000", "4000M", "16G", "1T", "0"})
    EXPECT_NO_THROW(read(std::string("mem = \"") + mem + "\"\n")) << mem;

  const std::string file = (dir.path() / "s.toml").string();
  const auto error = [&](const std::string& body) { return error_of([&] { read(body); }); };
  EXPECT_EQ(error("time = \"2h\"\n").rfind(file + ": slurm.time: '2h' is not a Slurm time", 0), 0u);
  EXPECT_EQ(error("time = \"1:2:3:4\"\n").rfind(file + ": slurm.time", 0), 0u);
  EXPECT_EQ(error("time = \"10:99\"\nsignal_seconds = 0\n").rfind(file + ": slurm.time", 0), 0u);
  EXPECT_EQ(error("time = \"1-24\"\n").rfind(file + ": slurm.time", 0), 0u);
  EXPECT_EQ(error("mem = \"16GB\"\n").rfind(file + ": slurm.mem: '16GB' is not a memory size", 0),
            0u);
  EXPECT_EQ(error("mem = \"G\"\n").rfind(file + ": slurm.mem", 0), 0u);
  EXPECT_EQ(error("nodes = 0\n").rfind(file + ": slurm.nodes", 0), 0u);
  EXPECT_EQ(error("gpus_per_node = -1\n").rfind(file + ": slurm.gpus_per_node", 0), 0u);
  EXPECT_EQ(error("extra = [\"exclusive\"]\n")
                .rfind(file + ": slurm.extra: 'exclusive' is not an sbatch option", 0),
            0u);
  EXPECT_EQ(error("setup = [\"a\\nb\"]\n").rfind(file + ": slurm.setup: must not contain", 0), 0u);
  EXPECT_EQ(error("time = \"00:01:00\"\n")
                .rfind(file + ": slurm.signal_seconds: 120 s is not below the time limit", 0),
            0u);
  EXPECT_EQ(error("signal_seconds = 70000\n").rfind(file + ": slurm.signal_seconds", 0), 0u);
  EXPECT_EQ(error("command_prefix = [\"ssh\", \"\"]\n").rfind(file + ": slurm.command_prefix", 0),
            0u);
  EXPECT_EQ(error("partiton = \"x\"\n").rfind(file + ": slurm.partiton: unknown key", 0), 0u);
}

TEST(SlurmCommand, PrefixTakesOneShellStringThatSurvivesSh) {
  SlurmOptions o;
  EXPECT_EQ(slurm_command(o, "squeue", {"-h"}), (std::vector<std::string>{"squeue", "-h"}));
  o.bin_dir = "/opt/slurm/bin";
  EXPECT_EQ(slurm_command(o, "squeue", {"-h"}),
            (std::vector<std::string>{"/opt/slurm/bin/squeue", "-h"}));
  o.bin_dir = "";
  o.command_prefix = {"ssh", "-q", "login-node"};
  const std::vector<std::string> words = {"a b", "it's", "$HOME", "`id`", "x\"y", "*", "--o=1;2"};
  const auto argv = slurm_command(o, "printf", [&] {
    std::vector<std::string> args = {"<%s>\\n"};
    args.insert(args.end(), words.begin(), words.end());
    return args;
  }());
  ASSERT_EQ(argv.size(), 4u);
  EXPECT_EQ(argv[0], "ssh");
  EXPECT_EQ(argv[2], "login-node");
  // What the remote shell does with the string: the words come back unchanged.
  const auto r = testing::run_shell("sh -c " + shell_quote(argv[3]));
  ASSERT_EQ(r.code, 0) << r.output;
  std::string expected;
  for (const std::string& w : words) expected += "<" + w + ">\n";
  EXPECT_EQ(r.output, expected);
}

}  // namespace
}  // namespace lmk
