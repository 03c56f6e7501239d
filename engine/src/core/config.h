// Configuration shared by every lab: the model, precisions, attention implementations,
// devices. Plain value types, no LibTorch and no Qt.
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

// See Note [two model tables]: the course's sizes, as its two editions give them. The current
// (2026) edition: small, medium, large as before, xl = d_model 2560, d_ff 10240, 32 layers,
// 32 heads (what the 2025 edition called 2.7B), 10B (4608, 12288, 50, 36) and its leaderboard's
// 8B (4096, 11008, 34, 32; its vocabulary of 151,936 is set as any other's). The 2025
// edition: the same small, medium, large, its own xl (1600, 6400, 48, 25) and 2.7B. Every
// preset has one name in every table, so that a stored run's name means one model: the 2025
// xl is "xl-2025" (runs stored before the tables were two, named "xl" with its dimensions,
// read back as "xl-2025"), 2.7B keeps its name. tiny and mini (for a CPU) are in both.
// Context length and vocabulary keep their defaults; set them afterwards.
enum class ModelTable { Edition2026, Edition2025 };
inline constexpr ModelTable kDefaultModelTable = ModelTable::Edition2026;
std::string_view toString(ModelTable t);  // "2026", "2025"
std::optional<ModelTable> parseModelTable(std::string_view s);
std::optional<ModelConfig> modelPreset(std::string_view name);
// Every preset's name, both tables (the current one first): what --size and JSON accept.
const std::vector<std::string>& modelPresetNames();
// One table's sizes in display order: tiny, mini, small, ...
const std::vector<std::string>& modelPresetNames(ModelTable t);
// A size as a table names it: "xl" in the 2025 table is "xl-2025"; every other name as it is.
std::string presetName(std::string_view size, ModelTable t);
// The edition a preset belongs to only (xl and 10B: 2026; xl-2025 and 2.7B: 2025); nullopt
// for a size of both tables, a custom model or an unknown name.
std::optional<ModelTable> presetEdition(std::string_view name);
// One line naming the edition(s) whose table the models' sizes come from, for under a table
// or in a report: "Model table: the course's 2026 edition (xl = d_model 2560, ...)"; empty when
// no size belongs to one edition only (small, medium, large are the same in both).
std::string modelTableNote(const std::vector<std::string>& model_names);
// The name a stored model should carry: a run stored before the two tables named the 2025 xl
// "xl"; its dimensions say which one it is.
std::string canonicalPresetName(const ModelConfig& m);

// Every problem with the dimensions, each as a sentence naming the bad value; empty if valid.
std::vector<std::string> validateModel(const ModelConfig& m);

// Trainable parameters: embedding, per layer 4·d² (q, k, v, o) + 3·d·d_ff (SwiGLU) + 2·d
// (two RMSNorm gains), final RMSNorm d, LM head d·vocab.
int64_t parameterCount(const ModelConfig& m);

enum class Mode { Forward, ForwardBackward, Train };
enum class Precision { FP32, BF16, FP16 };
// Bytes a parameter holds in a mode, at the least: its fp32 weight, its gradient (unless forward
// mode) and AdamW's two moments (train mode): 4, 8 or 16. The host-memory checks' unit.
double bytesPerParameter(Mode m);
// One list of attention implementations for every lab. The model runs any of them; the
// attention lab compares them.
enum class AttentionImpl {
    Naive,      // QKᵀ/√d, mask, softmax, ·V as the course writes it
    Tiled,      // FlashAttention-2's algorithm in LibTorch ops (the reference)
    Sdpa,       // LibTorch's scaled_dot_product_attention; it picks the backend
    SdpaFlash,  // ... forced to one backend
    SdpaEfficient,
    SdpaCudnn,
    SdpaMath,
    Flash,  // this project's CUDA kernels
};
// How a training step is executed: op by op from the host (eager), or compiled. For
// TrainScope's own model, compiled is its forward, backward and optimizer each captured once as
// a CUDA graph and replayed (nn/training_step.h); for the user's Python model it is
// torch.compile in its default mode, and the other two are torch.compile's modes of those
// names (for the Python source only).
enum class ExecMode { Eager, Compiled, ReduceOverhead, MaxAutotuneNoCudagraphs };
// Whose code a point runs: TrainScope's own model (C++, LibTorch, our kernels), or the user's
// PyTorch model through the Python runner (runtime/python_runner.h).
enum class Source { TrainScope, Python };

// Names, one table each (config.cpp): toString gives the name the CLI, JSON files and the
// store use; parse* reads it back; all* lists every value in display order.
std::string_view toString(Mode m);
std::string_view toString(Precision p);
std::string_view toString(AttentionImpl a);  // "naive", "tiled", "sdpa", "sdpa-flash", ... "flash"
std::string_view toString(ExecMode e);       // "eager", "compiled", "reduce-overhead", ...
std::string_view toString(Source s);         // "trainscope", "python"
std::optional<Mode> parseMode(std::string_view s);
std::optional<Precision> parsePrecision(std::string_view s);
std::optional<AttentionImpl> parseAttentionImpl(std::string_view s);
std::optional<ExecMode> parseExecMode(std::string_view s);
std::optional<Source> parseSource(std::string_view s);
const std::vector<Mode>& allModes();
const std::vector<Precision>& allPrecisions();
const std::vector<AttentionImpl>& allAttentionImpls();
const std::vector<ExecMode>& allExecModes();
const std::vector<Source>& allSources();
// "a, b, c": every name of an enum, for messages.
std::string namesOf(const std::vector<Mode>&);
std::string namesOf(const std::vector<Precision>&);
std::string namesOf(const std::vector<AttentionImpl>&);
std::string namesOf(const std::vector<ExecMode>&);
std::string namesOf(const std::vector<Source>&);

// A device string: "cpu", "cuda" or "cuda:N". Empty when valid, else a sentence naming it.
std::string validateDevice(const std::string& device);

}  // namespace ts
