#include "core/eval/encode.h"

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>

#include "core/tokenize/batching.h"
#include "core/util/error.h"

namespace lmk {

std::pair<at::Tensor, at::Tensor> batch_tensors(const Batch& batch) {
  const auto B = static_cast<int64_t>(batch.rows), L = static_cast<int64_t>(batch.length);
  return {at::from_blob(const_cast<int32_t*>(batch.ids.data()), {B, L}, at::kInt).to(at::kLong),
          at::from_blob(const_cast<uint8_t*>(batch.attention_mask.data()), {B, L}, at::kByte)
              .to(at::kLong)};
}

c10::Device parse_device(const std::string& name) {
  if (name == "cpu") return c10::Device(c10::kCPU);
  const std::string prefix = "cuda";
  if (name.rfind(prefix, 0) != 0) {
    throw input_error("--device", "'" + name + "' is not a device (cpu, cuda or cuda:N)");
  }
  int index = -1;
  if (name.size() > prefix.size()) {
    const std::string rest = name.substr(prefix.size());
    size_t used = 0;
    try {
      if (rest.size() > 1 && rest[0] == ':') index = std::stoi(rest.substr(1), &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != rest.size() - 1 || index < 0) {
      throw input_error("--device", "'" + name + "' is not a device (cpu, cuda or cuda:N)");
    }
  }
  if (!at::hasCUDA()) {
    throw input_error("--device",
                      "this LibTorch build has no CUDA (Debian's libtorch is "
                      "CPU-only): use --device cpu, or build against a CUDA LibTorch");
  }
  return c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(index));
}

namespace {

// bf16 autocast for the encoder's forward on CUDA (this CPU has no fast bf16 path: fp32 there).
class BfloatAutocast {
 public:
  explicit BfloatAutocast(bool enable) : enabled_(enable) {
    if (!enabled_) return;
    previous_ = at::autocast::is_enabled();
    at::autocast::set_autocast_gpu_dtype(at::kBFloat16);
    at::autocast::set_enabled(true);
  }
  ~BfloatAutocast() {
    if (enabled_) at::autocast::set_enabled(previous_);
  }
  BfloatAutocast(const BfloatAutocast&) = delete;
  BfloatAutocast& operator=(const BfloatAutocast&) = delete;

 private:
  bool enabled_ = false, previous_ = false;
};

}  // namespace

LandmarkSpec landmark_spec_for(Pooling pooling, int granularity, const PoolingSettings& folder) {
  switch (pooling) {
    case Pooling::Landmark:
      if (granularity > 0) return LandmarkSpec::parse("fixed:" + std::to_string(granularity));
      return folder.landmarks.eval;
    case Pooling::MultiCls:
      return LandmarkSpec::parse("multicls:" + std::to_string(granularity > 0 ? granularity : 32));
    default:
      return LandmarkSpec::parse("none");
  }
}

at::Tensor encode_texts(const LoadedModel& model, const Tokenizer& tokenizer,
                        const std::vector<std::string>& texts, const EncodeOptions& options,
                        const std::function<void(size_t)>& progress) {
  LandmarkOptions landmark_options;
  landmark_options.spec = landmark_spec_for(options.pooling, options.granularity, model.pooling);
  landmark_options.max_length = options.max_length;
  const LandmarkTokenizer landmarks(tokenizer, landmark_options);
  std::vector<TokenizedText> inputs;
  inputs.reserve(texts.size());
  std::vector<size_t> lengths;
  for (size_t i = 0; i < texts.size(); ++i) {
    inputs.push_back(landmarks.tokenize(texts[i], i));
    lengths.push_back(inputs.back().ids.size());
  }
  const int64_t hidden_size = model.encoder->config().hidden_size;
  at::Tensor embeddings = at::empty({static_cast<int64_t>(texts.size()), hidden_size}, at::kFloat);
  PoolingOptions pooling_options;
  pooling_options.normalize = options.normalize;
  pooling_options.every_k = options.granularity > 0 ? options.granularity : 32;
  pooling_options.latent = model.latent.get();
  if (options.pooling == Pooling::Latent && !model.latent) {
    throw InputError("latent pooling: the model folder has no latent attention weights");
  }
  const int32_t pad = tokenizer.special_tokens().pad.value_or(0);
  const c10::Device device = parse_device(options.device);
  model.encoder->to(device);
  const BfloatAutocast autocast(device.is_cuda());
  at::NoGradGuard no_grad;
  size_t done = 0;
  for (const auto& rows : bucket_by_length(lengths, options.batch_size, options.max_batch_tokens)) {
    const Batch batch = make_batch(inputs, rows, pad);
    const auto B = static_cast<int64_t>(batch.rows);
    const auto [ids, mask] = batch_tensors(batch);
    // [B, L, H], back on the CPU in float32 for pooling.
    const at::Tensor hidden =
        model.encoder->forward(ids.to(device), mask.to(device)).to(at::kCPU, at::kFloat);
    const at::Tensor pooled =
        pool(options.pooling, hidden, mask, batch.pool_positions, pooling_options);
    for (int64_t r = 0; r < B; ++r)
      embeddings[static_cast<int64_t>(batch.source_rows[static_cast<size_t>(r)])].copy_(pooled[r]);
    done += batch.rows;
    if (progress) progress(done);
  }
  return embeddings;
}

}  // namespace lmk
