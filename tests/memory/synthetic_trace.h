// A small allocator trace written by hand (one recorded step of a training step), shared by
// the memory lab's torch-free tests. Every number below is what the tests expect.
#pragma once

#include "memory/memory.h"

namespace ts::testing {

// Live before recording: parameters (4096 B at 0x1000) and AdamW's state (8192 B at 0x3000),
// 2 MiB reserved. Step 0: a 1 MiB segment; forward makes two activations (A1 1000 B, A2
// 2000 B, freed in backward) and a temporary (T1 500 B, freed in forward); backward makes a
// gradient (G1 4096 B, known) and a temporary (BT 3000 B) — the peak, 22384 B, is there —
// then frees BT, A2, A1; the optimizer makes and frees O1 (100 B); a last forward-phase
// block L (64 B) stays live (the loss).
inline RawMemoryTrace syntheticTrace() {
    RawMemoryTrace t;
    t.names = {"layer.0/attention", "aten::mm", "MmBackward0", "lm_head"};
    t.initial = {{0x1000, 4096}, {0x3000, 8192}};
    t.initial_reserved = 2 << 20;
    t.known = {{0x1000, 4096, MemoryCategory::Parameters, -1},
               {0x3000, 8192, MemoryCategory::OptimizerState, -1},
               {0x103000, 4096, MemoryCategory::Gradients, 0}};
    auto ev = [&](AllocAction a, uint64_t addr, int64_t size, Phase p, int32_t range = -1,
                  int32_t op = -1) {
        AllocEvent e;
        e.action = a;
        e.addr = addr;
        e.size = size;
        e.phase = p;
        e.step = 0;
        e.range = range;
        e.op = op;
        e.time_ns = static_cast<int64_t>(t.events.size()) * 1000;
        t.events.push_back(e);
    };
    using A = AllocAction;
    ev(A::SegmentAlloc, 0x100000, 1 << 20, Phase::Forward);  // 0
    ev(A::Alloc, 0x100000, 1000, Phase::Forward, 0, 1);      // 1 A1
    ev(A::Alloc, 0x101000, 500, Phase::Forward, 0, 1);       // 2 T1
    ev(A::FreeRequested, 0x101000, 500, Phase::Forward);     // 3
    ev(A::FreeCompleted, 0x101000, 500, Phase::Forward);     // 4
    ev(A::Alloc, 0x102000, 2000, Phase::Forward, 3, 1);      // 5 A2
    ev(A::Alloc, 0x103000, 4096, Phase::Backward, -1, 2);    // 6 G1
    ev(A::Alloc, 0x104000, 3000, Phase::Backward, -1, 2);    // 7 BT: the peak
    ev(A::FreeCompleted, 0x104000, 3000, Phase::Backward);   // 8
    ev(A::FreeCompleted, 0x102000, 2000, Phase::Backward);   // 9
    ev(A::FreeCompleted, 0x100000, 1000, Phase::Backward);   // 10
    ev(A::Alloc, 0x105000, 100, Phase::Optimizer);           // 11 O1
    ev(A::FreeCompleted, 0x105000, 100, Phase::Optimizer);   // 12
    ev(A::Alloc, 0x106000, 64, Phase::Forward);              // 13 L
    // At the end: G1 and L live in the segment, the rest free.
    t.segments = {{0x100000,
                   1 << 20,
                   0,
                   true,
                   {{0x100000, 0x3000, 0, false},
                    {0x103000, 4096, 4096, true},
                    {0x104000, 0x2000, 0, false},
                    {0x106000, 512, 64, true},
                    {0x106200, 0x100000 - 0x6200, 0, false}}}};
    t.driver = {{0, 500 << 20}, {6500, 510 << 20}, {99000, 505 << 20}};
    return t;
}

// The step above cut at its peak (event 7, in backward), then an allocation of 1 GiB that the
// allocator refused with 12345 bytes free on the device: a frontier probe's picture of its
// failure.
inline RawMemoryTrace syntheticOomTrace() {
    RawMemoryTrace t = syntheticTrace();
    t.events.resize(8);
    AllocEvent e;
    e.action = AllocAction::Oom;
    e.addr = 12345;
    e.size = int64_t{1} << 30;
    e.phase = Phase::Backward;
    e.step = 0;
    e.range = 0;
    e.op = 2;
    e.time_ns = 8000;
    t.events.push_back(e);
    return t;
}

// A long trace of `steps` training steps of `layers` layers, (4·layers + layers + 1) events a
// step: a segment, then per step and layer a forward activation (freed in backward, last
// layer first) and a temporary made and freed in forward (alloc, free_requested,
// free_completed); every tenth event names an op and a range. Parameters (1 MiB) are live
// before it starts. Five steps of 1,000 layers make 25,001 events; 200 steps over a million.
inline RawMemoryTrace longTrace(int steps, int layers) {
    RawMemoryTrace t;
    t.names = {"layer.0/attention", "aten::mm", "MmBackward0"};
    t.initial = {{0x1000, 1 << 20}};
    t.initial_reserved = 64 << 20;
    t.known = {{0x1000, 1 << 20, MemoryCategory::Parameters, -1}};
    const uint64_t base = 0x200000, temp = base + (uint64_t{1} << 30);
    auto ev = [&](AllocAction a, uint64_t addr, int64_t size, Phase p, int step) {
        AllocEvent e;
        e.action = a;
        e.addr = addr;
        e.size = size;
        e.phase = p;
        e.step = step;
        if (t.events.size() % 10 == 0) {
            e.range = 0;
            e.op = p == Phase::Backward ? 2 : 1;
        }
        e.time_ns = static_cast<int64_t>(t.events.size()) * 100;
        t.events.push_back(e);
    };
    using A = AllocAction;
    ev(A::SegmentAlloc, base, int64_t{2} << 30, Phase::Forward, 0);
    for (int s = 0; s < steps; ++s) {
        for (int l = 0; l < layers; ++l) {
            ev(A::Alloc, base + 4096 * static_cast<uint64_t>(l), 4096, Phase::Forward, s);
            ev(A::Alloc, temp, 512, Phase::Forward, s);
            ev(A::FreeRequested, temp, 512, Phase::Forward, s);
            ev(A::FreeCompleted, temp, 512, Phase::Forward, s);
        }
        for (int l = layers - 1; l >= 0; --l)
            ev(A::FreeCompleted, base + 4096 * static_cast<uint64_t>(l), 4096, Phase::Backward, s);
    }
    t.segments = {{base, int64_t{2} << 30, 0, true, {{base, int64_t{2} << 30, 0, false}}}};
    return t;
}

}  // namespace ts::testing
