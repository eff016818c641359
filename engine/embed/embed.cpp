#include "engine/embed/embed.h"

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <ATen/detail/CUDAHooksInterface.h>

#include <optional>
#include <stdexcept>

#include "core/tokenize/batching.h"
#include "core/util/device_name.h"
#include "core/util/error.h"
#include "engine/util/cuda_loader.h"

namespace lmk {

std::pair<at::Tensor, at::Tensor> batch_tensors(const Batch& batch) {
  const auto B = static_cast<int64_t>(batch.rows), L = static_cast<int64_t>(batch.length);
  return {at::from_blob(const_cast<int32_t*>(batch.ids.data()), {B, L}, at::kInt).to(at::kLong),
          at::from_blob(const_cast<uint8_t*>(batch.attention_mask.data()), {B, L}, at::kByte)
              .to(at::kLong)};
}

c10::Device parse_device(const std::string& name, const std::string& where) {
  // A FieldError: a command line names its --device for the field "device" (app/field_option.h)
  // and keeps any other `where` (an option or key the caller named) as it is.
  const auto bad_value = [&](const std::string& message) { return FieldError(where, message); };
  const std::optional<DeviceName> device = read_device_name(name);  // the studies' reading too
  if (!device) throw bad_value(bad_device_message(name));
  if (!device->cuda) return c10::Device(c10::kCPU);
  const int index = device->index;
  // The CUDA module brings libtorch_cuda.so, which registers CUDA with ATen: loaded before
  // anything asks ATen about CUDA (ATen caches its first answer).
  const CudaModule& cuda = load_cuda_module(where);
  // A call that asked ATen for its accelerator before the module was loaded (at::manual_seed
  // does) left ATen with the stub hooks for good: every later use of CUDA would fail with
  // "Cannot initialize CUDA without ATen_cuda library". Said here, where it can be fixed.
  if (!at::detail::getCUDAHooks().isBuilt())
    throw std::logic_error(
        "ATen looked for CUDA before the CUDA module was loaded, and keeps the answer for the "
        "life of the process: resolve the device (prepare_device) before any ATen call");
  std::string why;
  const int count = cuda.device_count(&why);
  if (count == 0) throw bad_value("'" + name + "': no CUDA device is visible here (" + why + ")");
  if (index >= count)
    throw bad_value("'" + name + "': this machine has " + std::to_string(count) +
                    " CUDA device(s) (cuda:0 .. cuda:" + std::to_string(count - 1) + ")");
  return c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(index));
}

void prepare_device(const std::string& name) {
  if (name.rfind("cuda", 0) != 0 || !cuda_module_built()) return;
  try {
    load_cuda_module("device");
  } catch (const InputError&) {
    // parse_device says why, where the device is resolved.
  }
}

BfloatAutocast::BfloatAutocast(bool enable, c10::DeviceType device)
    : enabled_(enable), device_(device) {
  if (!enabled_) return;
  previous_ = at::autocast::is_autocast_enabled(device_);
  previous_dtype_ = at::autocast::get_autocast_dtype(device_);
  at::autocast::set_autocast_dtype(device_, at::kBFloat16);
  at::autocast::set_autocast_enabled(device_, true);
  at::autocast::increment_nesting();
}

BfloatAutocast::~BfloatAutocast() {
  if (!enabled_) return;
  // The cache holds a bf16 copy of every fp32 weight cast in the region (autocast_mode.cpp,
  // cached_cast): kept past the region, the next step would compute with these weights.
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  at::autocast::set_autocast_enabled(device_, previous_);
  at::autocast::set_autocast_dtype(device_, previous_dtype_);
}

bool PoolingPlan::reads_positions() const {
  return pooling == Pooling::Landmark || pooling == Pooling::MultiCls;
}

std::vector<int64_t> PoolingPlan::query_positions(const TokenizedText& input) const {
  std::vector<int64_t> positions;
  if (reads_positions())
    for (const int32_t p : input.pool_positions) positions.push_back(p);
  if (positions.empty())
    positions.push_back(pooling == Pooling::Last ? static_cast<int64_t>(input.ids.size()) - 1 : 0);
  return positions;
}

nlohmann::json PoolingPlan::record() const {
  nlohmann::json j = {{"pooling", pooling_name(pooling)}, {"granularity", granularity}};
  if (reads_positions()) j["landmarks"] = landmarks.to_string();
  return j;
}

PoolingPlan plan_pooling(Pooling pooling, int granularity, const PoolingSettings& folder,
                         const LatentAttention* latent, bool normalize,
                         const std::string& folder_name) {
  if (granularity < 0) throw FieldError("granularity", "must be >= 0 (0: the default)");
  if (pooling == Pooling::Latent && !latent) {
    throw InputError(folder_name +
                     ": latent pooling needs a model folder with latent attention weights (lmk "
                     "model init --pooling latent)");
  }
  PoolingPlan plan;
  plan.pooling = pooling;
  const int g = granularity > 0 ? granularity : kDefaultGranularity;
  switch (pooling) {
    case Pooling::Landmark:
      plan.landmarks = granularity > 0 ? LandmarkSpec::of(LandmarkMode::Fixed, granularity)
                                       : folder.landmarks.eval;
      plan.train_landmarks = folder.landmarks.train;
      if (plan.landmarks.mode == LandmarkMode::Fixed)
        plan.granularity = plan.landmarks.granularities.at(0);
      break;
    case Pooling::MultiCls:
      plan.landmarks = LandmarkSpec::of(LandmarkMode::MultiCls, g);
      plan.train_landmarks = plan.landmarks;
      plan.granularity = g;
      break;
    case Pooling::MeanEveryK:
      plan.granularity = g;
      break;
    default:
      break;
  }
  plan.options.normalize = normalize;
  plan.options.every_k = g;
  plan.options.latent = latent;
  return plan;
}

PoolingPlan plan_pooling(const EncodeOptions& options, const LoadedModel& model) {
  return plan_pooling(options.pooling, options.granularity, model.pooling, model.latent.get(),
                      options.normalize);
}

at::Tensor embed_batch(const LoadedModel& model, const Batch& batch, const PoolingPlan& plan,
                       const c10::Device& device) {
  const auto [ids, mask] = batch_tensors(batch);
  // [B, L, H] in float32, pooled where it was computed (a GPU copies back [B, H] only).
  const at::Tensor on_device = mask.to(device);
  const at::Tensor hidden = model.encoder->forward(ids.to(device), on_device).to(at::kFloat);
  return pool(plan.pooling, hidden, on_device, batch.pool_positions, plan.options).to(at::kCPU);
}

size_t input_limit(const EncoderConfig& config, size_t max_length) {
  if (config.uses_rope()) return max_length;
  const auto table = static_cast<size_t>(config.max_position_embeddings);
  return max_length == 0 || max_length > table ? table : max_length;
}

LandmarkTokenizer input_tokenizer(const Tokenizer& tokenizer, const PoolingPlan& plan,
                                  const EncodeOptions& options, const EncoderConfig& config) {
  LandmarkOptions landmark_options;
  landmark_options.spec = plan.landmarks;
  landmark_options.max_length = input_limit(config, options.max_length);
  landmark_options.decoder = config.is_decoder();
  return LandmarkTokenizer(tokenizer, landmark_options);
}

at::Tensor encode_texts(const LoadedModel& model, const Tokenizer& tokenizer,
                        const std::vector<std::string>& texts, const EncodeOptions& options,
                        const std::function<void(size_t)>& progress) {
  return encode_texts(model, tokenizer, texts, options, plan_pooling(options, model), progress);
}

at::Tensor encode_texts(const LoadedModel& model, const Tokenizer& tokenizer,
                        const std::vector<std::string>& texts, const EncodeOptions& options,
                        const PoolingPlan& plan, const std::function<void(size_t)>& progress) {
  const LandmarkTokenizer landmarks =
      input_tokenizer(tokenizer, plan, options, model.encoder->config());
  std::vector<TokenizedText> inputs;
  inputs.reserve(texts.size());
  std::vector<size_t> lengths;
  for (size_t i = 0; i < texts.size(); ++i) {
    inputs.push_back(landmarks.tokenize(texts[i], i));
    lengths.push_back(inputs.back().ids.size());
  }
  const int64_t hidden_size = model.encoder->config().hidden_size;
  at::Tensor embeddings = at::empty({static_cast<int64_t>(texts.size()), hidden_size}, at::kFloat);
  const int32_t pad = tokenizer.special_tokens().pad.value_or(0);
  const c10::Device device = parse_device(options.device, "device");
  model.encoder->to(device);
  const BfloatAutocast autocast(device.is_cuda());
  at::NoGradGuard no_grad;
  size_t done = 0;
  for (const auto& rows : bucket_by_length(lengths, options.batch_size, options.max_batch_tokens,
                                           options.max_padding_waste)) {
    const Batch batch = make_batch(inputs, rows, pad);
    const at::Tensor pooled = embed_batch(model, batch, plan, device);
    for (size_t r = 0; r < batch.rows; ++r)
      embeddings[static_cast<int64_t>(batch.source_rows[r])].copy_(pooled[static_cast<int64_t>(r)]);
    done += batch.rows;
    if (progress) progress(done);
  }
  return embeddings;
}

}  // namespace lmk
