// What the fabric loops share (fabric_experiment.cpp, pcie_fabric_experiment.cpp): the scenario
// file's common directives and its events, and the log of each link's actual state. Include
// before the generated port access, whose functions the loops hand in.
//
// Common directives (one per line; event cycles count from the loop's origin):
//   train_limit N       fail if the fabric is not up N cycles after reset
//   settle W            cycles from up to the origin (traffic runs from up)
//   cycles N            run length after the origin
//   seed S              the users' generator
//   load P              per cycle and ordered pair of live nodes, the chance a frame is made
//   drain_quiet Q       after the run, no new frames: run until every frame between live nodes
//                       arrived, or none arrived for Q cycles
//   flows_from C        record, at cycle C, how many frames each stream had made; report the
//                       first cycle each stream delivers one of the frames made after
//   at C cut L D V      from cycle C, link L's direction D (0: from its lower node id) cut (V 1)
//                       or healed (V 0)
//   at C kill N         from cycle C, node N is dead: it sends no signal and is not run
#pragma once

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace fabric {

struct Event {
    long cycle;
    std::string kind;
    int a = 0, b = 0, v = 0;
};

struct Schedule {
    long cycles = 0, train_limit = 100000, settle = 0, drain_quiet = 0, flows_from = -1;
    uint64_t seed = 1;
    double load = 0;
    std::vector<Event> events;
};

// Read the scenario file of ``argv`` into ``s``; ``extra`` takes a directive of the loop's own
// (its word and the rest of the line) and says whether it knew it. Returns 0, or the exit code
// after saying what is wrong.
inline int read_schedule(int argc, char** argv, Schedule& s,
                         const std::function<bool(const std::string&, std::istringstream&)>& extra) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s <scenario file>\n", argv[0]);
        return 2;
    }
    std::ifstream in(argv[1]);
    if (!in) {
        std::fprintf(stderr, "cannot read %s\n", argv[1]);
        return 2;
    }
    for (std::string line; std::getline(in, line);) {
        std::istringstream r(line);
        std::string word;
        if (!(r >> word) || word[0] == '#') continue;
        if (word == "cycles") r >> s.cycles;
        else if (word == "train_limit") r >> s.train_limit;
        else if (word == "settle") r >> s.settle;
        else if (word == "seed") r >> s.seed;
        else if (word == "load") r >> s.load;
        else if (word == "drain_quiet") r >> s.drain_quiet;
        else if (word == "flows_from") r >> s.flows_from;
        else if (word == "at") {
            Event e;
            r >> e.cycle >> e.kind;
            if (e.kind == "cut") r >> e.a >> e.b >> e.v;
            else if (e.kind == "kill") r >> e.a;
            else { std::fprintf(stderr, "unknown event %s\n", e.kind.c_str()); return 2; }
            if (!r) { std::fprintf(stderr, "bad event line: %s\n", line.c_str()); return 2; }
            s.events.push_back(e);
        } else if (!extra(word, r)) {
            std::fprintf(stderr, "unknown directive %s\n", word.c_str());
            return 2;
        }
    }
    if (s.cycles < 1) { std::fprintf(stderr, "the scenario needs cycles >= 1\n"); return 2; }
    return 0;
}

// Apply the events due at cycle ``t`` (``origin`` the loop's origin): cuts into ``cut`` (index
// link * 2 + direction) and ``set_cut(link, dir, v)``, deaths into ``dead`` and
// ``set_dead(mask)`` (a bit per dead node).
template <typename SetCut, typename SetDead>
void apply_events(const Schedule& s, long origin, long t, std::size_t& next, std::vector<int>& cut,
                  std::vector<int>& dead, SetCut set_cut, SetDead set_dead) {
    while (origin >= 0 && t >= origin && next < s.events.size() && origin + s.events[next].cycle <= t) {
        const Event& e = s.events[next++];
        if (e.kind == "cut") {
            cut[e.a * 2 + e.b] = e.v;
            set_cut(e.a, e.b, e.v);
        } else {
            dead[e.a] = 1;
            unsigned mask = 0;
            for (std::size_t n = 0; n < dead.size(); ++n) mask |= dead[n] << n;
            set_dead(mask);
        }
    }
}

// Log each link's actual state at cycle ``t`` when it changed: up while neither direction is
// cut and both ends (``ends[l]``) live.
inline void log_actual(long t, const std::vector<int>& cut, const std::vector<int>& dead, const int (*ends)[2],
                       std::vector<int>& now, std::vector<std::string>& log) {
    for (std::size_t l = 0; l < now.size(); ++l) {
        const int v = !cut[l * 2] && !cut[l * 2 + 1] && !dead[ends[l][0]] && !dead[ends[l][1]];
        if (v != now[l]) {
            now[l] = v;
            log.push_back("[" + std::to_string(t) + ", " + std::to_string(l) + ", " + std::to_string(v) + "]");
        }
    }
}

// ``rows`` as the items of a JSON list.
inline std::string json_items(const std::vector<std::string>& rows) {
    std::string out;
    for (std::size_t i = 0; i < rows.size(); ++i) out += (i ? ", " : "") + rows[i];
    return out;
}

}  // namespace fabric
