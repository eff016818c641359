// NV-Embed-style latent attention pooling (engine/pool/latent_attention.cpp): its tensors and
// their checks, the forward against the formula (tokens query the latents, never each other),
// and its use by pool() with masking and gradients.
#include "engine/pool/latent_attention.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/util/error.h"
#include "engine/pool/pooling.h"

namespace lmk {
namespace {

TEST(LatentAttentionTest, ShapesMaskingAndGradients) {
  LatentAttention latent(8, 4, 2, 16, 1);
  const at::Tensor hidden = at::randn({2, 5, 8}).requires_grad_(true);
  at::Tensor mask = at::ones({2, 5});
  mask[1][4] = 0;
  PoolingOptions options;
  options.latent = &latent;
  const at::Tensor out = pool(Pooling::Latent, hidden, mask, {{}, {}}, options);
  EXPECT_EQ(out.sizes(), (std::vector<int64_t>{2, 8}));
  out.sum().backward();
  EXPECT_GT(latent.named_weights().at("latent.latents").grad().abs().sum().item<float>(), 0.0f)
      << "latents are trained";
  EXPECT_EQ(hidden.grad()[1][4].abs().sum().item<float>(), 0.0f) << "padding does not contribute";
  EXPECT_EQ(latent.named_weights().size(), 13u);
}

// hidden size, latents and heads are checked: the hidden size must split into the heads.
TEST(LatentAttentionTest, RejectsShapesThatDoNotSplitIntoHeads) {
  for (const auto& [hidden, latents, heads] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
           {10, 4, 3}, {8, 0, 2}, {8, 4, 0}, {0, 4, 2}}) {
    try {
      LatentAttention latent(hidden, latents, heads);
      ADD_FAILURE() << "accepted " << hidden << " " << latents << " " << heads;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("hidden size must be a positive multiple of the heads"),
                std::string::npos)
          << e.what();
    }
  }
}

// The tensors, their shapes (the feed-forward 4 H wide by default, its input projection
// doubled for the gate), zero biases, registered as the module's parameters; the same seed
// gives the same values, another seed others.
TEST(LatentAttentionTest, DeclaresItsTensorsFromTheSeed) {
  const LatentAttention latent(8, 3, 2, 0, 7);
  EXPECT_EQ(latent.latents(), 3);
  EXPECT_EQ(latent.heads(), 2);
  const std::vector<std::pair<std::string, std::vector<int64_t>>> expected = {
      {"latent.ffn_in.bias", {64}}, {"latent.ffn_in.weight", {64, 8}},
      {"latent.ffn_out.bias", {8}}, {"latent.ffn_out.weight", {8, 32}},
      {"latent.k.bias", {8}},       {"latent.k.weight", {8, 8}},
      {"latent.latents", {3, 8}},   {"latent.o.bias", {8}},
      {"latent.o.weight", {8, 8}},  {"latent.q.bias", {8}},
      {"latent.q.weight", {8, 8}},  {"latent.v.bias", {8}},
      {"latent.v.weight", {8, 8}}};
  ASSERT_EQ(latent.named_weights().size(), expected.size());
  auto it = latent.named_weights().begin();
  for (const auto& [name, shape] : expected) {
    EXPECT_EQ(it->first, name);
    EXPECT_EQ(it->second.sizes(), shape) << name;
    if (name.size() > 5 && name.compare(name.size() - 5, 5, ".bias") == 0)
      EXPECT_EQ(it->second.abs().sum().item<float>(), 0.0f) << name;
    else
      EXPECT_GT(it->second.abs().sum().item<float>(), 0.0f) << name;
    ++it;
  }
  EXPECT_EQ(latent.parameters().size(), expected.size());
  EXPECT_TRUE(latent.named_parameters().contains("latent_q_weight"));
  EXPECT_TRUE(at::equal(LatentAttention(8, 3, 2, 0, 7).named_weights().at("latent.latents"),
                        latent.named_weights().at("latent.latents")));
  EXPECT_FALSE(at::equal(LatentAttention(8, 3, 2, 0, 8).named_weights().at("latent.latents"),
                         latent.named_weights().at("latent.latents")));
}

// forward against the formula written out: the tokens' queries against the latents' keys and
// values per head, softmax(q kᵀ / sqrt(d)) v, the output projection with a residual, then
// x + ffn_out(gelu(a) * b) with [a, b] = ffn_in(x) (GEGLU). Every tensor is redrawn at σ 0.5
// (the initial σ 0.02 leaves every latent's key near its bias, attention near uniform; the
// biases start at zero) so that each term counts.
TEST(LatentAttentionTest, ForwardFollowsTheFormula) {
  const int64_t H = 8, n = 3, heads = 2, d = H / heads, F = 6, B = 2, L = 5;
  LatentAttention latent(H, n, heads, F, 3);
  const at::NoGradGuard no_grad;
  at::manual_seed(4);
  for (const auto& [name, weight] : latent.named_weights()) weight.normal_(0.0, 0.5);
  auto w = [&](const std::string& name) { return latent.named_weights().at("latent." + name); };
  auto linear = [&](const at::Tensor& x, const std::string& name) {
    return at::matmul(x, w(name + ".weight").t()) + w(name + ".bias");
  };
  const at::Tensor hidden = at::randn({B, L, H});
  const at::Tensor q = linear(hidden, "q").view({B, L, heads, d}).permute({0, 2, 1, 3});
  const at::Tensor k = linear(w("latents"), "k").view({n, heads, d}).permute({1, 0, 2});
  const at::Tensor v = linear(w("latents"), "v").view({n, heads, d}).permute({1, 0, 2});
  const at::Tensor probs =
      at::softmax(at::matmul(q, k.transpose(1, 2)) / std::sqrt(static_cast<double>(d)), -1);
  const at::Tensor attended = at::matmul(probs, v).permute({0, 2, 1, 3}).reshape({B, L, H});
  const at::Tensor x = hidden + linear(attended, "o");
  const at::Tensor ab = linear(x, "ffn_in");
  const at::Tensor a = ab.narrow(-1, 0, F), b = ab.narrow(-1, F, F);
  const at::Tensor gelu = 0.5 * a * (1 + at::erf(a / std::sqrt(2.0)));
  const at::Tensor expected = x + linear(gelu * b, "ffn_out");
  const at::Tensor out = latent.forward(hidden);
  ASSERT_EQ(out.sizes(), (std::vector<int64_t>{B, L, H}));
  EXPECT_TRUE(at::allclose(out, expected, 1e-5, 1e-5))
      << (out - expected).abs().max().item<float>();
}

// Tokens attend to the latents, not to each other: changing one token changes no other token's
// output.
TEST(LatentAttentionTest, TokensDoNotSeeEachOther) {
  const LatentAttention latent(8, 4, 2, 16, 5);
  const at::NoGradGuard no_grad;
  at::manual_seed(6);
  const at::Tensor hidden = at::randn({1, 6, 8});
  at::Tensor changed = hidden.clone();
  changed[0][2].normal_();
  const at::Tensor before = latent.forward(hidden), after = latent.forward(changed);
  EXPECT_FALSE(at::allclose(after[0][2], before[0][2]));
  for (int64_t i : {0, 1, 3, 4, 5}) EXPECT_TRUE(at::equal(after[0][i], before[0][i])) << i;
}

}  // namespace
}  // namespace lmk
