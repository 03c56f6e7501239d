#include "trainscope/distributed/ring_allreduce.h"

#include <ATen/ATen.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace ts::dist {

std::pair<int64_t, int64_t> ringChunk(int64_t elements, int n, int c) {
    const int64_t base = elements / n, extra = elements % n;
    const int64_t first = c * base + std::min<int64_t>(c, extra);
    return {first, base + (c < extra ? 1 : 0)};
}

namespace {

int wrap(int i, int n) { return ((i % n) + n) % n; }

// One step of the ring: send `out` to the next rank while receiving `in` from the previous.
// NCCL runs the pair as one group (its point-to-point calls would otherwise wait for each
// other on a two-rank ring); Gloo's send and recv are asynchronous already.
void exchange(Group& g, at::Tensor out, at::Tensor in, int tag) {
    const int next = wrap(g.rank + 1, g.world_size), prev = wrap(g.rank - 1, g.world_size);
    std::vector<at::Tensor> send{std::move(out)}, recv{std::move(in)};
    const bool sending = send.front().numel() > 0, receiving = recv.front().numel() > 0;
    if (g.backend->supportsCoalescing()) {
        g.backend->startCoalescing();
        if (sending) g.backend->send(send, next, tag);
        if (receiving) g.backend->recv(recv, prev, tag);
        if (auto work = g.backend->endCoalescing()) work->wait();
        return;
    }
    c10::intrusive_ptr<c10d::Work> s, r;
    if (sending) s = g.backend->send(send, next, tag);
    if (receiving) r = g.backend->recv(recv, prev, tag);
    if (s) s->wait();
    if (r) r->wait();
}

}  // namespace

void ringAllReduce(Group& g, at::Tensor& tensor) {
    if (!tensor.is_contiguous())
        throw std::invalid_argument("ring all-reduce: the tensor must be contiguous");
    const int n = g.world_size;
    if (n <= 1) return;
    at::Tensor flat = tensor.view({-1});
    const int64_t elements = flat.numel();
    const int64_t longest = ringChunk(elements, n, 0).second;
    at::Tensor incoming = at::empty({longest}, flat.options());
    auto chunk = [&](int c) {
        const auto [first, count] = ringChunk(elements, n, c);
        return flat.narrow(0, first, count);
    };
    const int r = g.rank;
    // Reduce-scatter: at step s this rank passes on chunk r − s and adds chunk r − s − 1 from
    // the previous rank into its own; after N−1 steps it holds chunk r + 1 summed over all.
    for (int s = 0; s < n - 1; ++s) {
        at::Tensor mine = chunk(wrap(r - s - 1, n));
        at::Tensor in = incoming.narrow(0, 0, mine.numel());
        try {
            exchange(g, chunk(wrap(r - s, n)), in, s);
        } catch (const std::exception& e) {
            throw std::runtime_error("ring all-reduce, rank " + std::to_string(r) +
                                     ", reduce-scatter step " + std::to_string(s + 1) + ": " +
                                     e.what());
        }
        mine.add_(in);
    }
    // All-gather: at step s it passes on the summed chunk r + 1 − s and receives chunk r − s
    // in place.
    for (int s = 0; s < n - 1; ++s) {
        try {
            exchange(g, chunk(wrap(r + 1 - s, n)), chunk(wrap(r - s, n)), n + s);
        } catch (const std::exception& e) {
            throw std::runtime_error("ring all-reduce, rank " + std::to_string(r) +
                                     ", all-gather step " + std::to_string(s + 1) + ": " +
                                     e.what());
        }
    }
}

}  // namespace ts::dist
