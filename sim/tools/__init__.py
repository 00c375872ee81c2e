"""Tool plumbing: the Verilator toolchain, Verilog export, the cocotb runner and its caches, synthesis,
the port table.
"""
