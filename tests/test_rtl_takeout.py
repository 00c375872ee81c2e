"""rtl/link/takeout.py against golden/link/takeout.py (PROTOCOL.md 10.6): settles load the
frames from the confirmed count to the next to be numbered, a replay memory (modelled here)
answers the take-out's reads a cycle late, and a fabric takes what is offered at random; the
RTL's offer is compared with the golden take-out's every cycle."""

import pytest

from golden import encoding as enc
from golden.link.takeout import TakeOut as GoldenTakeOut
from rtl.link.takeout import TakeOut
from sim.harness.amaranth_sim import simulate
from sim.tools.seeds import examples, seeded_rng

SEQ_BITS = 8
SLOTS = 16


def _interleave(frame: bytes) -> int:
    """The replay memory's copy of a frame: bit j of slice k at bit j * 8 + k (sender.py)."""
    value = int.from_bytes(frame, "little")
    S, B = enc.SLICES_PER_FRAME, enc.SLICE_BITS
    out = 0
    for k in range(S):
        for j in range(B):
            out |= (value >> (k * B + j) & 1) << (j * S + k)
    return out


@pytest.mark.parametrize("classes", [1, 3])
def test_takeout_matches_golden(classes):
    rng = seeded_rng("takeout", classes)
    dut = TakeOut(num_classes=classes, seq_bits=SEQ_BITS)
    gold = GoldenTakeOut(classes)
    memory = [dict() for _ in range(classes)]  # per class: slot -> stored frame
    confirmed = [rng.randrange(1 << SEQ_BITS) for _ in range(classes)]
    seen = {"taken": 0, "loads": 0, "ignored": 0}

    async def bench(ctx):
        for c in range(classes):
            ctx.set(dut.confirmed[c], confirmed[c])
            ctx.set(dut.next_seq[c], confirmed[c])
        for cycle in range(examples(4000)):
            offer = gold.offer
            valid = [bool(ctx.get(dut.taken[c].valid)) for c in range(classes)]
            assert valid == [offer is not None and offer[0] == c for c in range(classes)], cycle
            assert bool(ctx.get(dut.busy)) == gold.busy, cycle
            if offer is not None:
                assert ctx.get(dut.taken[offer[0]].payload) == int.from_bytes(offer[1], "little"), cycle
            take = offer is not None and rng.random() < 0.5
            for c in range(classes):
                # A fabric ready for every class: only the class offered may take it.
                ctx.set(dut.taken[c].ready, take)
            # A settle now and then; one during a take-out brings nothing (no frame was handed
            # in since the last), and the RTL ignores it.
            load = rng.random() < (0.02 if not gold.busy else 0.05)
            frames = [[] for _ in range(classes)]
            if load and not gold.busy:
                for c in range(classes):
                    confirmed[c] = (confirmed[c] + rng.randrange(40)) % (1 << SEQ_BITS)
                    ctx.set(dut.confirmed[c], confirmed[c])
                    for i in range(rng.choice([0, 0, 1, 5, SLOTS])):
                        seq = (confirmed[c] + i) % (1 << SEQ_BITS)
                        frame = rng.getrandbits(512).to_bytes(64, "little")
                        memory[c][seq % SLOTS] = _interleave(frame)
                        frames[c].append(frame)
                    ctx.set(dut.next_seq[c], (confirmed[c] + len(frames[c])) % (1 << SEQ_BITS))
                seen["loads"] += 1
            elif load:
                seen["ignored"] += 1
                for c in range(classes):
                    ctx.set(dut.next_seq[c], confirmed[c])
            ctx.set(dut.load, load)
            addr = ctx.get(dut.addr) if ctx.get(dut.reading) else None
            await ctx.tick()
            # The golden end of the cycle: the take-out moves, a settle loads, the fabric takes.
            gold.tick()
            if load:
                gold.load(frames)
            if take:
                assert gold.take() == offer
                seen["taken"] += 1
            # The memory answers the address of the cycle before.
            for c in range(classes):
                ctx.set(dut.stored[c], memory[c].get(addr % SLOTS, 0) if addr is not None else 0)
        assert seen["taken"] > 50 and seen["loads"] > 10 and seen["ignored"] > 5, seen

    simulate(dut, bench)


def test_a_one_class_take_out_exports_no_empty_vector():
    """Verilator refuses a [-1:0] vector, which a zero-width signal becomes in Verilog: a
    one-class build (make bench's RTL goodput) must export none."""
    from amaranth.back import verilog

    text = verilog.convert(TakeOut(num_classes=1, seq_bits=8), name="take_out")
    assert "[-1:0]" not in text
