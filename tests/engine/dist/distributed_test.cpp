#include "engine/dist/distributed.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <filesystem>
#include <limits>
#include <thread>

#include "core/util/error.h"
#include "engine/model/encoder.h"
#include "engine/train/loop.h"
#include "engine/train/losses.h"
#include "engine/util/cuda_loader.h"
#include "tests/support/free_port.h"
#include "tests/support/launcher_env_tests.h"
#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

using testing::read;

// The device is resolved in one place (process_device), by the rule NCCL binds by: under a
// launcher a process computes on cuda:LOCAL_RANK; an explicit other GPU is refused (exit 2)
// before anything asks CUDA, naming the option and the GPU it would have to be.
TEST(DistributedTest, TheDeviceIsResolvedByOneRule) {
  const DistributedEnv launched = read({{"RANK", "3"},
                                        {"WORLD_SIZE", "4"},
                                        {"LOCAL_RANK", "1"},
                                        {"LOCAL_WORLD_SIZE", "2"},
                                        {"MASTER_ADDR", "node7"},
                                        {"MASTER_PORT", "29500"}});
  EXPECT_EQ(process_device("cpu", "--device", launched), c10::Device(c10::kCPU));
  for (const char* other : {"cuda:0", "cuda:3"}) {
    try {
      process_device(other, "--device", launched);
      ADD_FAILURE() << other << " accepted for LOCAL_RANK 1";
    } catch (const InputError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("--device"), std::string::npos) << message;
      EXPECT_NE(message.find("cuda:1"), std::string::npos) << message;
      EXPECT_NE(message.find("LOCAL_RANK"), std::string::npos) << message;
    }
  }
  // cuda and cuda:1 are this process's GPU: where there is none, the error says which it
  // looked for.
  if (!cuda_module_built()) return;
  std::string why;
  if (load_cuda_module("test").device_count(&why) >= 2) {
    EXPECT_EQ(process_device("cuda", "--device", launched), c10::Device("cuda:1"));
    EXPECT_EQ(process_device("cuda:1", "--device", launched), c10::Device("cuda:1"));
    return;
  }
  try {
    process_device("cuda", "--device", launched);
    ADD_FAILURE() << "cuda:1 resolved on a machine without it";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("LOCAL_RANK 1"), std::string::npos) << e.what();
  }
}

TEST(DistributedTest, OneProcessNeedsNoProcessGroup) {
  const DistributedContext& single = DistributedContext::single_process();
  EXPECT_FALSE(single.is_distributed());
  EXPECT_TRUE(single.is_main());
  EXPECT_EQ(single.sum(2.5), 2.5);
  const at::Tensor x = at::arange(6, at::kFloat).view({3, 2}).requires_grad_();
  EXPECT_TRUE(all_gather_with_gradient(single, x).is_same(x));
}

// A run of two ranks over loopback, on a free port.
DistributedEnv two_rank_env() {
  DistributedEnv env;
  env.world_size = 2;
  env.master_addr = "127.0.0.1";
  env.master_port = testing::free_tcp_port();
  env.rendezvous_timeout_s = 30;
  env.collective_timeout_s = 30;
  return env;
}

// Two ranks as two threads of this process: over Gloo, or NCCL when `cuda`.
template <typename F>
void run_two_ranks(F&& body, bool cuda = false) {
  const DistributedEnv env = two_rank_env();
  std::vector<std::thread> threads;
  for (int rank = 0; rank < 2; ++rank) {
    threads.emplace_back([&, rank] {
      DistributedEnv mine = env;
      mine.rank = mine.local_rank = rank;
      const DistributedContext dist = DistributedContext::join(mine, cuda);
      body(dist);
    });
  }
  for (std::thread& t : threads) t.join();
}

// The NCCL path as far as this machine allows. Without a CUDA module: an InputError saying so.
// With it but too few GPUs: the rank whose LOCAL_RANK has no GPU stops before the rendezvous,
// naming its device and the driver's reason. With two GPUs: two ranks all-reduce over NCCL.
TEST(DistributedTest, RanksOnCudaGoAsFarAsTheMachineAllows) {
  const DistributedEnv env = two_rank_env();
  if (!cuda_module_built()) {
    try {
      DistributedContext::join(env, /*cuda=*/true);
      ADD_FAILURE() << "NCCL without a CUDA module";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("no CUDA code"), std::string::npos) << e.what();
    }
    return;
  }
  std::string why;
  const int devices = load_cuda_module("test").device_count(&why);
  if (devices < 2) {
    DistributedEnv missing = env;
    missing.rank = missing.local_rank = devices;  // the first rank without a GPU
    try {
      DistributedContext::join(missing, /*cuda=*/true);
      ADD_FAILURE() << "rank " << devices << " joined without a GPU";
    } catch (const InputError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("needs cuda:" + std::to_string(devices)), std::string::npos)
          << message;
      EXPECT_NE(message.find("has " + std::to_string(devices) + " CUDA device(s)"),
                std::string::npos)
          << message;
      if (devices == 0) EXPECT_NE(message.find("CUDA: "), std::string::npos) << message;
    }
    return;
  }
  std::vector<double> sums(2);
  run_two_ranks(
      [&](const DistributedContext& dist) { sums[dist.rank()] = dist.sum(dist.rank() + 1.5); },
      /*cuda=*/true);
  EXPECT_EQ(sums, (std::vector<double>{4.0, 4.0}));
}

TEST(DistributedTest, CrossDeviceNegativesGiveTheGradientOfTheCombinedBatch) {
  // One process: 8 queries against 8 x 2 passages.
  at::manual_seed(3);
  const at::Tensor queries = at::randn({8, 5}), passages = at::randn({16, 5});
  const at::Tensor q = queries.clone().requires_grad_(), p = passages.clone().requires_grad_();
  const at::Tensor loss = info_nce_loss(q, p, 2, 0.1);
  loss.backward();
  // Two processes, 4 queries and 8 passages each, passages gathered across them.
  at::Tensor q_grad[2], p_grad[2];
  double losses[2];
  run_two_ranks([&](const DistributedContext& dist) {
    const int r = dist.rank();
    const at::Tensor mine_q = queries.narrow(0, 4 * r, 4).clone().requires_grad_();
    const at::Tensor mine_p = passages.narrow(0, 8 * r, 8).clone().requires_grad_();
    const at::Tensor all_p = all_gather_with_gradient(dist, mine_p);
    ASSERT_EQ(all_p.size(0), 16);
    EXPECT_TRUE(all_p.narrow(0, 8 * (1 - r), 8).equal(passages.narrow(0, 8 * (1 - r), 8)));
    const at::Tensor mine = info_nce_loss(mine_q, all_p, 2, 0.1, 4 * r);
    mine.backward();
    losses[r] = mine.item<double>();
    q_grad[r] = mine_q.grad();
    p_grad[r] = mine_p.grad();
  });
  EXPECT_NEAR((losses[0] + losses[1]) / 2, loss.item<double>(), 1e-6);
  // The global loss is the mean of the two processes' losses: its gradient is half of theirs.
  for (int r = 0; r < 2; ++r) {
    EXPECT_TRUE(at::allclose(q_grad[r] / 2, q.grad().narrow(0, 4 * r, 4), 1e-5, 1e-7)) << r;
    EXPECT_TRUE(at::allclose(p_grad[r] / 2, p.grad().narrow(0, 8 * r, 8), 1e-5, 1e-7))
        << r << "\n"
        << p_grad[r] / 2 << "\n"
        << p.grad().narrow(0, 8 * r, 8);
  }
}

TEST(DistributedTest, AveragesGradientsAndBroadcastsParameters) {
  at::Tensor results[2][4];
  run_two_ranks([&](const DistributedContext& dist) {
    const int r = dist.rank();
    // a: both have a gradient; b: only rank 1; c: nobody; d: rank 0's value wins.
    at::Tensor a = at::zeros({3, 2}), b = at::zeros({40}), c = at::zeros({2}),
               d = at::full({5}, static_cast<float>(r + 1));
    for (at::Tensor* t : {&a, &b, &c, &d}) t->requires_grad_();
    a.mutable_grad() = at::full({3, 2}, static_cast<float>(r + 1));
    if (r == 1) b.mutable_grad() = at::full({40}, 4.0f);
    average_gradients(dist, {a, b, c}, /*bucket_bytes=*/64);  // several buckets
    broadcast_parameters(dist, {d});
    results[r][0] = a.grad();
    results[r][1] = b.grad();
    results[r][2] = c.grad();
    results[r][3] = d.detach();
  });
  for (int r = 0; r < 2; ++r) {
    EXPECT_TRUE(results[r][0].equal(at::full({3, 2}, 1.5f))) << results[r][0];
    EXPECT_TRUE(results[r][1].equal(at::full({40}, 2.0f))) << results[r][1];
    EXPECT_FALSE(results[r][2].defined()) << "no gradient anywhere stays undefined";
    EXPECT_TRUE(results[r][3].equal(at::full({5}, 1.0f))) << results[r][3];
  }
}

TEST(DistributedTest, TrainingLoopsStartAlikeStepAlikeAndStopTogetherOnANan) {
  testing::TempDir dir;
  const std::string tokenizer = dir.write("tokenizer.json", testing::word_level_json(20).dump());
  std::string errors[2];
  at::Tensor weights[2];
  int64_t steps[2];
  run_two_ranks([&](const DistributedContext& dist) {
    const int r = dist.rank();
    LoadedModel model;  // different random weights per process: rank 0's are broadcast
    model.encoder = std::make_unique<Encoder>(EncoderConfig::preset("tiny", 25, 0), 1 + r);
    LoopOptions options;
    options.out_dir = (dir.path() / "out").string();
    options.tokenizer_source = tokenizer;
    options.total_steps = 10;
    options.learning_rate = 1e-3;
    TrainingLoop loop(options, model, false, dist);
    const at::Tensor ids = at::randint(5, 25, {2, 8}, at::kLong),
                     mask = at::ones({2, 8}, at::kLong);  // different data per process
    try {
      loop.run([&](int64_t step) {
        if (step == 3 && r == 1) return std::numeric_limits<double>::quiet_NaN();
        const at::Tensor loss = model.encoder->forward(ids, mask).pow(2).mean();
        loss.backward();
        return loss.item<double>();
      });
    } catch (const std::exception& e) {
      errors[r] = e.what();
    }
    steps[r] = loop.step();
    std::vector<at::Tensor> flat;
    for (const at::Tensor& p : model.encoder->parameters()) flat.push_back(p.detach().reshape(-1));
    weights[r] = at::cat(flat);
  });
  for (int r = 0; r < 2; ++r) {
    EXPECT_NE(errors[r].find("at step 3"), std::string::npos) << r << ": " << errors[r];
    EXPECT_EQ(steps[r], 3) << r;
  }
  EXPECT_TRUE(weights[0].equal(weights[1])) << "the same start and the same averaged steps";
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "out/last"));
}

}  // namespace
}  // namespace lmk
