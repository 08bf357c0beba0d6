// Built-in workloads: parameter shapes of three published architectures, in
// model.parameters() order and with PyTorch's parameter names, and compute
// times from a FLOP estimate (docs/tuner.md, "Workloads"):
//  - each layer's forward FLOPs for the stated batch; matmuls and convolutions
//    count 2 FLOPs per multiply-add, norms 8 FLOPs per element, embedding
//    lookups 1; activations, softmax, dropout and residual adds are left out;
//  - compute without parameters (attention scores, the tied GPT-2 LM head) is
//    folded into the layer with parameters just before it, since its backward
//    runs before that layer's gradients can be ready;
//  - backward = 2x forward, all of a layer's on its last parameter (the first
//    of the layer to be ready in reverse order: a layer's gradients arrive
//    together);
//  - at a sustained 100 TFLOP/s, an A100-class bf16/tf32 figure;
//  - the optimizer step streams its bytes at 1.5 TB/s (A100 HBM2): Adam reads
//    param, grad, m, v and writes param, m, v (7x the parameter bytes); SGD
//    with momentum reads param, grad, buffer and writes param, buffer (5x).
#include <cstdint>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "tuner/workload.h"

namespace ddpscope::tuner {
namespace {

constexpr double kFlopsPerSecond = 100e12;
constexpr double kBytesPerSecond = 1.5e12;
constexpr double kNormFlopsPerElement = 8;
constexpr double kAdamBytesPerParamByte = 7;
constexpr double kSgdMomentumBytesPerParamByte = 5;

double flops_to_us(double flops) { return flops / kFlopsPerSecond * 1e6; }

using Shapes = std::vector<std::pair<std::string, uint64_t>>;  // name, numel

// Appends layers in forward order and keeps the forward and backward estimate.
class Builder {
 public:
  explicit Builder(std::string name) { w_.name = std::move(name); }

  void layer(const Shapes& params, double forward_flops) {
    for (const auto& [name, numel] : params) w_.params.push_back({name, numel, Dtype::float32, 0});
    fold(forward_flops);
  }
  // Parameterless compute after the last layer: its time joins that layer's.
  void fold(double forward_flops) {
    w_.forward_us += flops_to_us(forward_flops);
    w_.params.back().backward_us += 2 * flops_to_us(forward_flops);
  }
  void linear(const std::string& name, uint64_t in, uint64_t out, double tokens) {
    layer({{name + ".weight", in * out}, {name + ".bias", out}}, 2.0 * tokens * in * out);
  }
  void norm(const std::string& name, uint64_t width, double elements) {
    layer({{name + ".weight", width}, {name + ".bias", width}}, kNormFlopsPerElement * elements);
  }
  Workload finish(double optimizer_bytes_per_param_byte) {
    w_.optimizer_us =
        optimizer_bytes_per_param_byte * double(w_.total_bytes()) / kBytesPerSecond * 1e6;
    // DDP's assumption before its first iteration: reverse parameter order.
    w_.ready_order.resize(w_.params.size());
    std::iota(w_.ready_order.rbegin(), w_.ready_order.rend(), size_t{0});
    validate(w_, "preset '" + w_.name + "'");
    return std::move(w_);
  }

 private:
  Workload w_;
};

// ---- ResNet-50 v1.5 (torchvision resnet50), batch 32 at 224x224 ----

constexpr double kResnetBatch = 32;

// A bias-free convolution and its BatchNorm; `hw` is the output's side.
void conv_bn(Builder& b, const std::string& conv, const std::string& bn, uint64_t in, uint64_t out,
             uint64_t kernel, double hw) {
  const uint64_t weights = out * in * kernel * kernel;
  b.layer({{conv + ".weight", weights}}, 2.0 * weights * hw * hw * kResnetBatch);
  b.norm(bn, out, out * hw * hw * kResnetBatch);
}

// torchvision's Bottleneck: the stride sits on the 3x3 convolution (v1.5), and
// the first block of each stage projects its input with downsample.{0,1}.
void bottleneck(Builder& b, const std::string& p, uint64_t in, uint64_t planes, int stride,
                double in_hw, bool downsample) {
  const double out_hw = in_hw / stride;
  conv_bn(b, p + "conv1", p + "bn1", in, planes, 1, in_hw);
  conv_bn(b, p + "conv2", p + "bn2", planes, planes, 3, out_hw);
  conv_bn(b, p + "conv3", p + "bn3", planes, planes * 4, 1, out_hw);
  if (downsample) conv_bn(b, p + "downsample.0", p + "downsample.1", in, planes * 4, 1, out_hw);
}

Workload resnet50() {
  Builder b("resnet50");
  conv_bn(b, "conv1", "bn1", 3, 64, 7, 112);  // then a stride-2 max-pool: 56x56
  struct Stage {
    uint64_t planes;
    int blocks, stride;
  };
  const Stage stages[] = {{64, 3, 1}, {128, 4, 2}, {256, 6, 2}, {512, 3, 2}};
  uint64_t in = 64;
  double hw = 56;
  for (int s = 0; s < 4; ++s) {
    for (int k = 0; k < stages[s].blocks; ++k) {
      const std::string p = "layer" + std::to_string(s + 1) + "." + std::to_string(k) + ".";
      const int stride = k == 0 ? stages[s].stride : 1;
      bottleneck(b, p, in, stages[s].planes, stride, hw, k == 0);
      hw /= stride;
      in = stages[s].planes * 4;
    }
  }
  b.linear("fc", 2048, 1000, kResnetBatch);  // after global average pooling
  return b.finish(kSgdMomentumBytesPerParamByte);
}

// ---- Transformers: hidden 1024, 24 layers, 16 heads, FFN 4096 ----

constexpr uint64_t kHidden = 1024;
constexpr uint64_t kFfn = 4096;
constexpr int kLayers = 24;

// Scores QK^T and the weighted sum over V, 16 heads of 64: 2 x 2*B*S*S*d.
double attention_flops(double batch, double seq) { return 4 * batch * seq * seq * kHidden; }

// bert-large-uncased as transformers' BertModel (with pooler, no MLM head),
// batch 8 x sequence 512.
Workload bert_large() {
  constexpr double kBatch = 8, kSeq = 512, kTokens = kBatch * kSeq;
  const double act = kTokens * kHidden;  // elements of one hidden-state tensor
  Builder b("bert-large");
  b.layer({{"embeddings.word_embeddings.weight", 30522 * kHidden}}, act);
  b.layer({{"embeddings.position_embeddings.weight", 512 * kHidden}}, act);
  b.layer({{"embeddings.token_type_embeddings.weight", 2 * kHidden}}, act);
  b.norm("embeddings.LayerNorm", kHidden, act);
  for (int i = 0; i < kLayers; ++i) {
    const std::string p = "encoder.layer." + std::to_string(i) + ".";
    b.linear(p + "attention.self.query", kHidden, kHidden, kTokens);
    b.linear(p + "attention.self.key", kHidden, kHidden, kTokens);
    b.linear(p + "attention.self.value", kHidden, kHidden, kTokens);
    b.fold(attention_flops(kBatch, kSeq));
    b.linear(p + "attention.output.dense", kHidden, kHidden, kTokens);
    b.norm(p + "attention.output.LayerNorm", kHidden, act);
    b.linear(p + "intermediate.dense", kHidden, kFfn, kTokens);
    b.linear(p + "output.dense", kFfn, kHidden, kTokens);
    b.norm(p + "output.LayerNorm", kHidden, act);
  }
  b.linear("pooler.dense", kHidden, kHidden, kBatch);  // the [CLS] token only
  return b.finish(kAdamBytesPerParamByte);
}

// GPT-2 medium as transformers' GPT2LMHeadModel (lm_head tied to wte, so not a
// parameter of its own), batch 8 x context 1024. Conv1D weights are [in, out].
Workload gpt2_medium() {
  constexpr double kBatch = 8, kSeq = 1024, kTokens = kBatch * kSeq;
  constexpr uint64_t kVocab = 50257;
  const double act = kTokens * kHidden;
  Builder b("gpt2-medium");
  b.layer({{"transformer.wte.weight", kVocab * kHidden}}, act);
  b.layer({{"transformer.wpe.weight", 1024 * kHidden}}, act);
  for (int i = 0; i < kLayers; ++i) {
    const std::string p = "transformer.h." + std::to_string(i) + ".";
    b.norm(p + "ln_1", kHidden, act);
    b.linear(p + "attn.c_attn", kHidden, 3 * kHidden, kTokens);
    b.fold(attention_flops(kBatch, kSeq));  // causal, but computed in full then masked
    b.linear(p + "attn.c_proj", kHidden, kHidden, kTokens);
    b.norm(p + "ln_2", kHidden, act);
    b.linear(p + "mlp.c_fc", kHidden, kFfn, kTokens);
    b.linear(p + "mlp.c_proj", kFfn, kHidden, kTokens);
  }
  b.norm("transformer.ln_f", kHidden, act);
  b.fold(2.0 * kTokens * kHidden * kVocab);  // the tied LM head's logits
  return b.finish(kAdamBytesPerParamByte);
}

}  // namespace

std::vector<std::string> preset_names() { return {"resnet50", "bert-large", "gpt2-medium"}; }

Workload preset_workload(const std::string& name) {
  if (name == "resnet50") return resnet50();
  if (name == "bert-large") return bert_large();
  if (name == "gpt2-medium") return gpt2_medium();
  throw InputError("unknown preset '" + name + "' (known: resnet50, bert-large, gpt2-medium)");
}

}  // namespace ddpscope::tuner
