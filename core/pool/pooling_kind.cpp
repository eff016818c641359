#include "core/pool/pooling_kind.h"

#include "core/util/error.h"

namespace lmk {

namespace {
struct PoolingName {
  Pooling pooling;
  const char* name;
};
constexpr PoolingName kNames[] = {{Pooling::Cls, "cls"},
                                  {Pooling::Mean, "mean"},
                                  {Pooling::Landmark, "lmk"},
                                  {Pooling::MultiCls, "multicls"},
                                  {Pooling::Latent, "latent"},
                                  {Pooling::Last, "last"},
                                  {Pooling::MeanEveryK, "mean_every_k"}};

}  // namespace

Pooling parse_pooling(const std::string& name, const std::string& where) {
  for (const auto& n : kNames) {
    if (name == n.name) return n.pooling;
  }
  throw input_error(where, "unknown pooling '" + name +
                               "' (cls, mean, lmk, multicls, latent, last, mean_every_k)");
}

const char* pooling_name(Pooling pooling) {
  for (const auto& n : kNames) {
    if (pooling == n.pooling) return n.name;
  }
  return "cls";
}

bool reads_granularity(Pooling pooling) {
  return pooling == Pooling::Landmark || pooling == Pooling::MultiCls ||
         pooling == Pooling::MeanEveryK;
}

}  // namespace lmk
