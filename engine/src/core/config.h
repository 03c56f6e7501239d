// Experiment configuration: plain value types, no LibTorch and no Qt, so that the CLI, the
// window and the results store can use them without the heavy headers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ts {

// Dimensions of the decoder-only Transformer LM (the course's model).
struct ModelConfig {
    std::string name = "custom";  // preset name, or "custom"
    int64_t vocab_size = 10000;
    int64_t context_length = 256;
    int64_t d_model = 768;
    int64_t d_ff = 3072;
    int64_t num_layers = 12;
    int64_t num_heads = 12;
    double rope_theta = 10000.0;

    int64_t headDim() const { return num_heads > 0 ? d_model / num_heads : 0; }
    bool operator==(const ModelConfig&) const = default;
};

// The presets: the course's five sizes plus tiny ones that run in seconds on a CPU.
// Context length and vocabulary keep their defaults; set them afterwards.
std::optional<ModelConfig> modelPreset(std::string_view name);
const std::vector<std::string>& modelPresetNames();

// Every problem with the dimensions, each as a sentence naming the bad value; empty if valid.
std::vector<std::string> validateModel(const ModelConfig& m);

// Trainable parameters: embedding, per layer 4·d² (q, k, v, o) + 3·d·d_ff (SwiGLU) + 2·d
// (two RMSNorm gains), final RMSNorm d, LM head d·vocab.
int64_t parameterCount(const ModelConfig& m);

enum class Mode { Forward, ForwardBackward, Train };
enum class Precision { FP32, BF16, FP16 };
// Naive: matmul + masked softmax + matmul as the course writes it. Sdpa: LibTorch's fused
// scaled_dot_product_attention (it picks flash / memory-efficient / cuDNN / math itself).
// Tiled: FlashAttention-2's algorithm in LibTorch ops. Flash: this project's CUDA kernels.
enum class Attention { Naive, Sdpa, Tiled, Flash };

std::string_view toString(Mode m);
std::string_view toString(Precision p);
std::string_view toString(Attention a);
std::optional<Mode> parseMode(std::string_view s);
std::optional<Precision> parsePrecision(std::string_view s);
std::optional<Attention> parseAttention(std::string_view s);

// One benchmark point: a model, a batch, a precision, an attention backend, a device.
struct BenchConfig {
    ModelConfig model;
    int64_t batch_size = 4;
    int warmup = 5;  // steps run and recorded but left out of the statistics
    int steps = 10;  // measured steps
    Mode mode = Mode::Train;
    Precision precision = Precision::FP32;
    Attention attention = Attention::Naive;
    std::string device = "cpu";  // "cpu", "cuda" or "cuda:N"
    uint64_t seed = 0;
    double learning_rate = 1e-4;  // AdamW, train mode

    bool operator==(const BenchConfig&) const = default;
};

// Every problem with a point (model dimensions included); empty if valid. Does not check
// that the device exists: that is a run-time failure with its own message.
std::vector<std::string> validateBench(const BenchConfig& c);

// A sweep: every combination of the listed values, in this nesting order (outermost first):
// size, context length, batch size, precision, attention, mode, warm-up, device. An empty
// list means "the base value". `sizes` holds preset names; "custom" keeps the base model's dimensions.
struct SweepSpec {
    BenchConfig base;
    std::vector<std::string> sizes;
    std::vector<int64_t> context_lengths;
    std::vector<int64_t> batch_sizes;
    std::vector<Precision> precisions;
    std::vector<Attention> attentions;
    std::vector<Mode> modes;
    std::vector<int> warmups;
    std::vector<std::string> devices;
};

// Expands a sweep into its points. Throws std::invalid_argument naming an unknown size.
std::vector<BenchConfig> expandSweep(const SweepSpec& spec);

}  // namespace ts
