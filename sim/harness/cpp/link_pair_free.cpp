// Free-running speed of the RTL link pair on Verilator, with no Python in the loop: the
// ceiling that the cocotb figures of `make bench` are compared with (sim/harness/verilator_free.py).
//
// The user inputs are constants (sim.link_scenarios.free_running_inputs), written by the
// generator into link_pair_inputs.inc as `apply_inputs(top)`, with readers of the status
// ports the loop watches. After reset the pair trains;
// then `segments` runs of `cycles` link cycles are timed, each one rising and one falling
// edge with an eval per edge, as under cocotb. Output: one JSON object on stdout.
//
// Usage: link_pair_free <cycles per segment> <segments>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <memory>
#include <vector>

#include "Vtop.h"
#include "verilated.h"
#include "verilated_ports.h"

namespace {

// Ports wider than 64 bits are VlWide arrays of 32-bit words; the rest are plain integers.
template <std::size_t N>
void put(VlWide<N>& port, std::initializer_list<uint32_t> words) {
    std::size_t i = 0;
    for (uint32_t w : words) port[i++] = w;
    for (; i < N; ++i) port[i] = 0;
}

template <typename T>
void put(T& port, std::initializer_list<uint32_t> words) {
    uint64_t value = 0;
    int shift = 0;
    for (uint32_t w : words) {
        value |= static_cast<uint64_t>(w) << shift;
        shift += 32;
    }
    port = static_cast<T>(value);
}

#include "link_pair_inputs.inc"

using ports::tick;

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s <cycles per segment> <segments>\n", argv[0]);
        return 2;
    }
    const long cycles = std::atol(argv[1]);
    const int segments = std::atoi(argv[2]);
    if (cycles < 1 || segments < 1) {
        std::fprintf(stderr, "cycles and segments must be positive\n");
        return 2;
    }
    auto context = std::make_unique<VerilatedContext>();
    auto top = std::make_unique<Vtop>(context.get());
    ports::reset(top.get());
    apply_inputs(top.get());

    long training = 0;
    while (!(a_state(top.get()) == 3 && b_state(top.get()) == 3)) {
        tick(top.get());
        if (++training > 100000) {
            std::fprintf(stderr, "the link did not come up within %ld cycles\n", training);
            return 1;
        }
    }
    const unsigned trainings = b_trainings(top.get());
    std::vector<double> rates;
    uint64_t frames = 0;
    for (int s = 0; s < segments; ++s) {
        const auto start = std::chrono::steady_clock::now();
        // The delivery counter is 16 bits: read it often enough that it cannot wrap unseen.
        for (long done = 0; done < cycles; done += 4096) {
            const unsigned before = b_frames_delivered(top.get());
            for (long c = done; c < cycles && c < done + 4096; ++c) tick(top.get());
            frames += (b_frames_delivered(top.get()) - before) & 0xffffu;
        }
        const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
        rates.push_back(cycles / took.count());
    }
    if (b_trainings(top.get()) != trainings) {
        std::fprintf(stderr, "the free-running link retrained\n");
        return 1;
    }
    std::printf("{\"verilator_cpp_link_cycles_per_s_runs\": [");
    for (std::size_t i = 0; i < rates.size(); ++i) std::printf("%s%.1f", i ? ", " : "", rates[i]);
    std::printf("], \"verilator_cpp_frames_at_b\": %llu, \"verilator_cpp_frames_per_cycle_at_b\": %.6f, "
                "\"training_cycles\": %ld}\n", static_cast<unsigned long long>(frames),
                static_cast<double>(frames) / (static_cast<double>(segments) * cycles), training);
    top->final();
    return 0;
}
