"""cocotb testbenches (run on Verilator through sim.cocotb_run) and their pytest entry points."""
