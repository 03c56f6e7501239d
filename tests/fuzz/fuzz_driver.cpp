// A small deterministic mutation fuzzer for the targets in this folder (gcc has no libFuzzer).
// Each target defines LLVMFuzzerTestOneInput, so the same file also builds with clang's
// -fsanitize=fuzzer. The driver runs every seed as it is, then mutants of them: byte flips,
// JSON-ish tokens and boundary numbers spliced in, ranges deleted or repeated, seeds crossed.
// The same --seed gives the same inputs, so a failure found in CI is found again.
//   fuzz_x [--runs N] [--seconds S] [--seed K] [--max-len B] [--crash-file F] SEED_FILE_OR_DIR...
#include <sanitizer/common_interface_defs.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

namespace fs = std::filesystem;

struct Rng {  // splitmix64: tiny, fast, and the same everywhere
    uint64_t state;
    uint64_t next() {
        uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
    size_t below(size_t n) { return n ? static_cast<size_t>(next() % n) : 0; }
};

// Tokens that reach the interesting paths of JSON readers and number parsers.
constexpr std::string_view kTokens[] = {
    "[",
    "]",
    "{",
    "}",
    "\"",
    ",",
    ":",
    "\\",
    "\\u0000",
    "\\ud800",
    "null",
    "true",
    "false",
    "-",
    "+",
    "0",
    "-1",
    "1e999",
    "-1e999",
    "1.5",
    "4294967297",
    "2147483647",
    "2147483648",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999",
    "\"NaN\"",
    "\"Infinity\"",
    "\"-Infinity\"",
    "inf",
    "nan",
    "\xff",
    "\xc2\x9b",
    "\x1b[2J",
    "\n",
    "\"size\"",
    "\"sizes\"",
    "\"base\"",
    "\"model\"",
    "\"custom\"",
    "\"steps\"",
    "\"warmup\"",
    "\"seed\"",
    "\"context_length\"",
    "\"batch_size\"",
    "\"num_heads\"",
    "\"d_model\"",
    "\"vocab_size\"",
    "\"status\"",
    "\"learning_rate\"",
    "\"rope_theta\"",
    "\"devices\"",
    "\"cuda:99999\"",
    "\"tiny\"",
    ",,",
    "  ",
};

using nlohmann::json;

// Values that stress the readers once the text is valid JSON: boundaries, wrong types,
// non-finite numbers as this project writes them, invalid UTF-8, depth and length.
json interestingValue(Rng& rng) {
    switch (rng.below(20)) {
        case 0:
            return -1;
        case 1:
            return 0;
        case 2:
            return 2147483648LL;
        case 3:
            return std::numeric_limits<int64_t>::max();
        case 4:
            return std::numeric_limits<uint64_t>::max();
        case 5:
            return std::numeric_limits<int64_t>::min();
        case 6:
            return 1e308;
        case 7:
            return 0.5;
        case 8:
            return "NaN";
        case 9:
            return rng.below(2) ? "Infinity" : "-Infinity";
        case 10:
            return "";
        case 11:
            return std::string("\xff\xfe\x1b[2J\n");
        case 12:
            return json::array();
        case 13:
            return json::object();
        case 14:
            return nullptr;
        case 15:
            return true;
        case 16: {
            json deep = json::array();
            for (size_t i = 0, n = rng.below(80); i < n; ++i) deep = json::array({deep});
            return deep;
        }
        case 17:
            return json(std::vector<int>(rng.below(20000), 8));
        case 18:
            return rng.below(2) ? "tiny" : "custom";
        default:
            return static_cast<int64_t>(rng.next() >> rng.below(64));
    }
}

// Every node of a document, to pick one from.
void collect(json& j, std::vector<json*>& out) {
    out.push_back(&j);
    if (j.is_structured())
        for (auto& child : j) collect(child, out);
}

// Replaces one value of a seed that is JSON, or removes, copies or renames one key: inputs
// that get past the parser to the checks behind it.
std::string mutateJson(const std::string& seed, Rng& rng) {
    json doc = json::parse(seed, nullptr, false);
    if (doc.is_discarded()) return seed;
    std::vector<json*> nodes;
    collect(doc, nodes);
    json& node = *nodes[rng.below(nodes.size())];
    if (node.is_object() && !node.empty() && rng.below(2)) {
        auto it = std::next(node.begin(), static_cast<std::ptrdiff_t>(rng.below(node.size())));
        const std::string key = it.key();
        json value = *it;
        node.erase(key);
        if (rng.below(2))
            node[key + (rng.below(2) ? "z" : "")] = value;  // a typo, or back at the end
    } else if (node.is_array() && !node.empty() && rng.below(2)) {
        node.push_back(node[rng.below(node.size())]);
    } else {
        node = interestingValue(rng);
    }
    return doc.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string mutate(std::string s, const std::vector<std::string>& seeds, Rng& rng, size_t max_len) {
    if (rng.below(2) == 0) {  // half the inputs stay valid JSON
        s = mutateJson(s, rng);
        if (rng.below(2))
            return s.size() > max_len * 16 ? s.substr(0, max_len * 16) : mutateJson(s, rng);
        if (rng.below(2)) return s;
    }
    const int rounds = 1 + static_cast<int>(rng.below(4));
    for (int r = 0; r < rounds; ++r) {
        const size_t pos = rng.below(s.size() + 1);
        switch (rng.below(7)) {
            case 0:  // flip a bit
                if (!s.empty()) s[rng.below(s.size())] ^= static_cast<char>(1u << rng.below(8));
                break;
            case 1:  // splice in a token
                s.insert(pos, kTokens[rng.below(std::size(kTokens))]);
                break;
            case 2:  // replace a byte with a token
                if (!s.empty())
                    s.replace(rng.below(s.size()), 1, kTokens[rng.below(std::size(kTokens))]);
                break;
            case 3:  // delete a range
                if (!s.empty()) s.erase(rng.below(s.size()), 1 + rng.below(16));
                break;
            case 4: {  // repeat a range (nesting, long lists)
                if (s.empty()) break;
                const size_t from = rng.below(s.size()),
                             len = 1 + rng.below(std::min<size_t>(32, s.size() - from));
                const std::string piece = s.substr(from, len);
                for (size_t k = 1 + rng.below(64); k > 0 && s.size() < max_len; --k)
                    s.insert(from, piece);
                break;
            }
            case 5: {  // cross with another seed
                const std::string& other = seeds[rng.below(seeds.size())];
                if (other.empty()) break;
                const size_t from = rng.below(other.size());
                s.insert(pos, other.substr(from, 1 + rng.below(other.size() - from)));
                break;
            }
            default:  // a random byte
                s.insert(pos, 1, static_cast<char>(rng.next()));
                break;
        }
    }
    if (s.size() > max_len) s.resize(max_len);
    return s;
}

std::vector<std::string> loadSeeds(const std::vector<std::string>& paths) {
    std::vector<std::string> seeds;
    auto add = [&](const fs::path& p) {
        std::ifstream in(p, std::ios::binary);
        seeds.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    };
    for (const auto& p : paths) {
        if (fs::is_directory(p)) {
            std::vector<fs::path> files;
            for (const auto& e : fs::recursive_directory_iterator(p))
                if (e.is_regular_file()) files.push_back(e.path());
            std::sort(files.begin(), files.end());  // a stable order keeps runs reproducible
            for (const auto& f : files) add(f);
        } else if (fs::exists(p)) {
            add(p);
        } else {
            std::fprintf(stderr, "fuzz: no seed file or folder '%s'\n", p.c_str());
            std::exit(2);
        }
    }
    if (seeds.empty()) seeds.emplace_back("{}");
    return seeds;
}

// Where the input that crashed goes, written only when a sanitizer reports.
std::string g_crash_file = "fuzz-crash.bin";
const std::string* g_current = nullptr;

void saveCurrent() {
    if (!g_current) return;
    std::ofstream(g_crash_file, std::ios::binary) << *g_current;
    std::fprintf(stderr, "fuzz: the failing input (%zu bytes) is in %s\n", g_current->size(),
                 g_crash_file.c_str());
}

void runOne(const std::string& input) {
    g_current = &input;
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
}

}  // namespace

int main(int argc, char** argv) {
    uint64_t runs = 10000, seed = 1;
    double seconds = 0;
    size_t max_len = 4096;
    std::vector<std::string> paths;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        auto value = [&] {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "fuzz: %s needs a value\n", argv[i]);
                std::exit(2);
            }
            return std::string(argv[++i]);
        };
        if (a == "--runs")
            runs = std::stoull(value());
        else if (a == "--seconds")
            seconds = std::stod(value());
        else if (a == "--seed")
            seed = std::stoull(value());
        else if (a == "--max-len")
            max_len = std::stoull(value());
        else if (a == "--crash-file")
            g_crash_file = value();
        else
            paths.emplace_back(a);
    }
    __sanitizer_set_death_callback(saveCurrent);
    std::set_terminate([] {
        saveCurrent();
        std::abort();
    });
    const std::vector<std::string> seeds = loadSeeds(paths);
    Rng rng{seed};
    const auto start = std::chrono::steady_clock::now();
    auto elapsed = [&] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    uint64_t done = 0;
    for (const auto& s : seeds) runOne(s), ++done;
    // With --seconds the time limit rules and --runs is ignored: the long run of the docs.
    while (seconds > 0 ? elapsed() < seconds : done < runs) {
        runOne(mutate(seeds[rng.below(seeds.size())], seeds, rng, max_len));
        ++done;
    }
    g_current = nullptr;
    const double t = elapsed();
    std::printf("fuzz: %llu inputs (%zu seeds) in %.1f s, %.0f inputs/s, no failure\n",
                static_cast<unsigned long long>(done), seeds.size(), t, t > 0 ? done / t : 0.0);
    return 0;
}
