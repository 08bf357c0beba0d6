// The presets against the published architectures: parameter counts, tensor
// counts and names in model.parameters() order, and the FLOP-based times.
#include <catch2/catch.hpp>

#include "tuner/workload.h"

using namespace ddpscope;
using namespace ddpscope::tuner;

namespace {

uint64_t numel(const Workload& w) {
  uint64_t n = 0;
  for (const Param& p : w.params) n += p.numel;
  return n;
}

void check_common(const Workload& w) {
  validate(w, w.name);
  for (const Param& p : w.params) CHECK(p.dtype == Dtype::float32);
  for (size_t k = 0; k < w.params.size(); ++k) CHECK(w.ready_order[k] == w.params.size() - 1 - k);
  // Every layer's backward is 2x its forward, parameterless compute included.
  CHECK(w.backward_us() == Approx(2 * w.forward_us).epsilon(1e-9));
}

}  // namespace

TEST_CASE("preset names and an unknown one") {
  CHECK(preset_names() == std::vector<std::string>{"resnet50", "bert-large", "gpt2-medium"});
  for (const auto& name : preset_names()) CHECK(preset_workload(name).name == name);
  CHECK_THROWS_AS(preset_workload("vgg16"), InputError);
  CHECK_THROWS_WITH(preset_workload("vgg16"),
                    "unknown preset 'vgg16' (known: resnet50, bert-large, gpt2-medium)");
}

TEST_CASE("resnet50 matches torchvision's resnet50") {
  const Workload w = preset_workload("resnet50");
  check_common(w);
  // torchvision.models.resnet50(): 25,557,032 parameters in 161 tensors.
  CHECK(numel(w) == Approx(25'557'032).epsilon(0.01));
  CHECK(numel(w) == 25'557'032);
  CHECK(w.params.size() == 161);
  CHECK(w.params[0].name == "conv1.weight");
  CHECK(w.params[0].numel == 64 * 3 * 7 * 7);
  CHECK(w.params[3].name == "layer1.0.conv1.weight");
  CHECK(w.params[12].name == "layer1.0.downsample.0.weight");
  CHECK(w.params[12].numel == 256 * 64);
  CHECK(w.params[159].name == "fc.weight");
  CHECK(w.params[160].name == "fc.bias");
  // ~4.1 GMACs per 224x224 image; 32 images at 100 TFLOP/s is about 2.6 ms.
  CHECK(w.forward_us > 2500);
  CHECK(w.forward_us < 2900);
  // SGD with momentum: 5 x 4 bytes per parameter at 1.5 TB/s.
  CHECK(w.optimizer_us == Approx(25'557'032.0 * 20 / 1.5e12 * 1e6));
}

TEST_CASE("bert-large matches bert-large-uncased's BertModel") {
  const Workload w = preset_workload("bert-large");
  check_common(w);
  // transformers' BertModel for bert-large-uncased, pooler included.
  CHECK(numel(w) == Approx(335'141'888).epsilon(0.01));
  CHECK(numel(w) == 335'141'888);
  CHECK(w.params.size() == 5 + 24 * 16 + 2);
  CHECK(w.params[0].name == "embeddings.word_embeddings.weight");
  CHECK(w.params[0].numel == 30522 * 1024);
  CHECK(w.params[5].name == "encoder.layer.0.attention.self.query.weight");
  CHECK(w.params[5 + 16 * 23 + 10].name == "encoder.layer.23.intermediate.dense.weight");
  CHECK(w.params[5 + 16 * 23 + 10].numel == 1024 * 4096);
  CHECK(w.params.back().name == "pooler.dense.bias");
  // 2 x 302M weights x 4096 tokens + attention: about 2.7 TFLOP, 27 ms.
  CHECK(w.forward_us > 25'000);
  CHECK(w.forward_us < 30'000);
  CHECK(w.optimizer_us == Approx(335'141'888.0 * 28 / 1.5e12 * 1e6));
}

TEST_CASE("gpt2-medium matches GPT2LMHeadModel with the tied LM head") {
  const Workload w = preset_workload("gpt2-medium");
  check_common(w);
  // transformers' GPT2LMHeadModel("gpt2-medium").parameters(): lm_head.weight is wte.
  CHECK(numel(w) == Approx(354'823'168).epsilon(0.01));
  CHECK(numel(w) == 354'823'168);
  CHECK(w.params.size() == 2 + 24 * 12 + 2);
  CHECK(w.params[0].name == "transformer.wte.weight");
  CHECK(w.params[0].numel == 50257 * 1024);
  CHECK(w.params[4].name == "transformer.h.0.attn.c_attn.weight");
  CHECK(w.params[4].numel == 1024 * 3072);
  CHECK(w.params.back().name == "transformer.ln_f.bias");
  // 2 x 302M x 8192 tokens + attention + the 50257-way LM head: about 6.6 TFLOP.
  CHECK(w.forward_us > 60'000);
  CHECK(w.forward_us < 70'000);
  // The LM head's backward runs first, so it lands on ln_f, the first ready.
  CHECK(w.params.back().backward_us > 2 * 2.0 * 8192 * 1024 * 50257 / 100e12 * 1e6);
}
