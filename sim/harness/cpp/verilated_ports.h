// What the C++ loops share (pair_experiment.cpp, fabric_experiment.cpp, link_pair_free.cpp): wide
// ports as 32-bit words, a field of a packed port, one clock cycle, the numbered frames the
// experiments send and the scoreboard's judgement of one delivered. Include after Vtop.h.
#pragma once

#include <cstddef>
#include <cstdint>

#include "verilated.h"

namespace ports {

template <std::size_t N>
void put_words(VlWide<N>& port, const uint32_t* words, std::size_t n) {
    for (std::size_t i = 0; i < N; ++i) port[i] = i < n ? words[i] : 0;
}

template <std::size_t N>
void get_words(const VlWide<N>& port, uint32_t* words, std::size_t n) {
    for (std::size_t i = 0; i < n && i < N; ++i) words[i] = port[i];
}

// Bits [offset, offset + width) of a port (width <= 32).
template <std::size_t N>
uint32_t bits(const VlWide<N>& port, unsigned offset, unsigned width) {
    uint64_t two = port[offset / 32];
    if (offset / 32 + 1 < N) two |= static_cast<uint64_t>(port[offset / 32 + 1]) << 32;
    return static_cast<uint32_t>((two >> (offset % 32)) & ((1ull << width) - 1));
}

template <typename T>
uint32_t bits(const T& port, unsigned offset, unsigned width) {
    return static_cast<uint32_t>((static_cast<uint64_t>(port) >> offset) & ((1ull << width) - 1));
}

// One clock cycle of a model with ``clk``: the rising edge, then the falling.
template <typename Top>
void tick(Top* top) {
    top->clk = 1;
    top->eval();
    top->clk = 0;
    top->eval();
}

// Two cycles of reset from power-up, then reset released.
template <typename Top>
void reset(Top* top) {
    top->clk = 0;
    top->rst = 1;
    top->eval();
    tick(top);
    tick(top);
    top->rst = 0;
}

// Frame ``number`` of stream (a, b) in ``n`` 32-bit words: the number, the stream, then words
// derived from all three, so a receiver can tell a frame of another stream, number or content.
inline void frame_words(int a, int b, uint64_t number, uint32_t* w, int n) {
    w[0] = static_cast<uint32_t>(number);
    w[1] = static_cast<uint32_t>(number >> 32);
    w[2] = static_cast<uint32_t>(a << 8 | b);
    uint64_t x = number * 0x9E3779B97F4A7C15ull + (a * 7 + b + 1) * 0xBF58476D1CE4E5B9ull;
    for (int k = 3; k < n; ++k) {
        x ^= x >> 31;
        x *= 0x94D049BB133111EBull;
        x ^= x >> 29;
        w[k] = static_cast<uint32_t>(x);
    }
}

// The scoreboard's judgement of frame ``number`` delivered on stream ``s`` (its ``offered``,
// ``expected`` and counts), ``words_match`` saying whether its words are that frame's: corrupted
// if it was never offered or its words differ, a duplicate if it is behind the next expected,
// else delivered, the frames skipped before it lost. True when delivered.
template <typename Stream>
bool score_delivery(Stream& s, uint64_t number, bool words_match) {
    if (number >= s.offered || !words_match) {
        ++s.corrupted;
        return false;
    }
    if (number < s.expected) {
        ++s.duplicated;
        return false;
    }
    s.lost += number - s.expected;
    s.expected = number + 1;
    ++s.delivered;
    return true;
}

}  // namespace ports
