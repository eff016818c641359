// Where a process stands in a distributed run (core/dist/launcher_env.h): Slurm's hostlists,
// torchrun's and srun's variables, and bad values named by their variable.
#include "core/dist/launcher_env.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/util/error.h"
#include "tests/support/launcher_env_tests.h"

namespace lmk {
namespace {

using testing::read;
using testing::Variables;

TEST(DistributedTest, ExpandsSlurmHostlists) {
  using Hosts = std::vector<std::string>;
  EXPECT_EQ(expand_slurm_hostlist("node[01-04,07],gpu5"),
            (Hosts{"node01", "node02", "node03", "node04", "node07", "gpu5"}));
  EXPECT_EQ(expand_slurm_hostlist("n[098-101]"), (Hosts{"n098", "n099", "n100", "n101"}));
  EXPECT_EQ(expand_slurm_hostlist("n[8-10]"), (Hosts{"n8", "n9", "n10"}));
  EXPECT_EQ(expand_slurm_hostlist("rack[1-2]-n[3,5]"),
            (Hosts{"rack1-n3", "rack1-n5", "rack2-n3", "rack2-n5"}));
  EXPECT_EQ(expand_slurm_hostlist("single"), (Hosts{"single"}));
  EXPECT_EQ(expand_slurm_hostlist("a.b-c,[1-2]x"), (Hosts{"a.b-c", "1x", "2x"}));
  EXPECT_EQ(first_slurm_host("node[01-04,07],gpu5"), "node01");
  EXPECT_EQ(first_slurm_host("gpu5,node[1-2]"), "gpu5");
  EXPECT_EQ(first_slurm_host("rack[2-3]-n[007-100]"), "rack2-n007");
  EXPECT_EQ(first_slurm_host("n[0000001-9999999]"), "n0000001") << "no expansion needed";
  for (const std::string bad :
       {"", "node[01-", "node[a-b]", "node[5-3]", "a,,b", "node]1", "node[1,]", "node[]", "a b"}) {
    try {
      first_slurm_host(bad);
      expand_slurm_hostlist(bad);
      ADD_FAILURE() << "'" << bad << "' was accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("SLURM_JOB_NODELIST"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(expand_slurm_hostlist("n[1-100]", "list", 50), InputError);
}

TEST(DistributedTest, ReadsTorchrunVariables) {
  DistributedEnv env = read({});
  EXPECT_EQ(env.world_size, 1);
  EXPECT_EQ(env.launcher, "");
  env = read({{"WORLD_SIZE", "1"}});
  EXPECT_EQ(env.world_size, 1);
  EXPECT_EQ(env.rank, 0);
  env = read({{"RANK", "3"},
              {"WORLD_SIZE", "8"},
              {"LOCAL_RANK", "1"},
              {"LOCAL_WORLD_SIZE", "2"},
              {"MASTER_ADDR", "node7"},
              {"MASTER_PORT", "29500"},
              {"LMK_DIST_TIMEOUT_S", "2.5"},
              {"GLOO_SOCKET_IFNAME", "eth0,eth1"}});
  EXPECT_EQ(env.launcher, "torchrun");
  EXPECT_EQ(env.rank, 3);
  EXPECT_EQ(env.world_size, 8);
  EXPECT_EQ(env.local_rank, 1);
  EXPECT_EQ(env.master_addr, "node7");
  EXPECT_EQ(env.master_port, 29500);
  EXPECT_FALSE(env.single_host) << "4 machines of 2 processes";
  EXPECT_DOUBLE_EQ(env.rendezvous_timeout_s, 2.5);
  EXPECT_EQ(env.gloo_interfaces, "eth0,eth1");
  env = read(
      {{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "localhost"}, {"MASTER_PORT", "1234"}});
  EXPECT_TRUE(env.single_host);
  EXPECT_EQ(env.local_rank, 1) << "LOCAL_RANK defaults to RANK";
}

TEST(DistributedTest, ReadsSrunVariables) {
  Variables slurm = {{"SLURM_PROCID", "5"},      {"SLURM_NTASKS", "8"},
                     {"SLURM_LOCALID", "1"},     {"SLURM_JOB_NODELIST", "gpu[03-06]"},
                     {"SLURM_JOB_ID", "123456"}, {"SLURM_JOB_NUM_NODES", "4"}};
  DistributedEnv env = read(slurm);
  EXPECT_EQ(env.launcher, "srun");
  EXPECT_EQ(env.rank, 5);
  EXPECT_EQ(env.world_size, 8);
  EXPECT_EQ(env.local_rank, 1);
  EXPECT_EQ(env.master_addr, "gpu03");
  EXPECT_EQ(env.master_port, 20000 + 123456 % 20000);
  EXPECT_FALSE(env.single_host);
  slurm["MASTER_PORT"] = "29400";
  slurm["MASTER_ADDR"] = "10.0.0.1";
  env = read(slurm);
  EXPECT_EQ(env.master_addr, "10.0.0.1");
  EXPECT_EQ(env.master_port, 29400);
  // torchrun's variables win over srun's (torchrun started inside an allocation).
  slurm["RANK"] = "0";
  slurm["WORLD_SIZE"] = "1";
  EXPECT_EQ(read(slurm).world_size, 1);
  // SLURM_NTASKS without SLURM_PROCID (a batch script, not an srun task): one process.
  EXPECT_EQ(read({{"SLURM_NTASKS", "4"}}).world_size, 1);
}

TEST(DistributedTest, BadVariablesAreInputErrorsNamingTheVariable) {
  const Variables torchrun = {
      {"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "29500"}};
  struct Case {
    Variables changes;
    std::string variable;
  } cases[] = {
      {{{"RANK", "2"}}, "RANK"},
      {{{"RANK", "1x"}}, "RANK"},
      {{{"RANK", " 1"}}, "RANK"},
      {{{"WORLD_SIZE", "0"}}, "WORLD_SIZE"},
      {{{"WORLD_SIZE", "two"}}, "WORLD_SIZE"},
      {{{"MASTER_PORT", "0"}}, "MASTER_PORT"},
      {{{"MASTER_PORT", "65536"}}, "MASTER_PORT"},
      {{{"MASTER_PORT", ""}}, "MASTER_PORT"},
      {{{"MASTER_ADDR", ""}}, "MASTER_ADDR"},
      {{{"LOCAL_RANK", "-1"}}, "LOCAL_RANK"},
      {{{"LOCAL_WORLD_SIZE", "3"}}, "LOCAL_WORLD_SIZE"},
      {{{"LMK_DIST_TIMEOUT_S", "0"}}, "LMK_DIST_TIMEOUT_S"},
      {{{"LMK_DIST_COLLECTIVE_TIMEOUT_S", "x"}}, "LMK_DIST_COLLECTIVE_TIMEOUT_S"},
      {{{"WORLD_SIZE", ""}}, "WORLD_SIZE"},
  };
  for (const Case& c : cases) {
    Variables variables = torchrun;
    for (const auto& [name, value] : c.changes) variables[name] = value;
    try {
      read(variables);
      ADD_FAILURE() << c.variable << " accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(c.variable + ":", 0), 0u) << e.what();
    }
  }
  const Variables slurm_cases[] = {
      {{"SLURM_PROCID", "2"}, {"SLURM_NTASKS", "2"}},
      {{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}, {"SLURM_JOB_ID", "1"}},
      {{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}, {"SLURM_JOB_NODELIST", "n1"}},
  };
  const char* slurm_names[] = {"SLURM_PROCID", "SLURM_JOB_NODELIST", "MASTER_PORT"};
  for (size_t i = 0; i < 3; ++i) {
    try {
      read(slurm_cases[i]);
      ADD_FAILURE() << slurm_names[i] << " accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(std::string(slurm_names[i]) + ":", 0), 0u) << e.what();
    }
  }
}

}  // namespace
}  // namespace lmk
