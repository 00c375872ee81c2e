"""cocotb testbenches (run on Verilator through sim.tools.cocotb_run) and their pytest entry points."""


def replay_seed() -> int:
    """The regression seed (what OAE_SEED replays), not cocotb's per-test derivation of it."""
    import os

    import cocotb

    return int(os.environ.get("COCOTB_RANDOM_SEED", cocotb.RANDOM_SEED)) % (1 << 32)
