"""Simulation glue: channel and scenarios, Verilog export, Verilator/cocotb runner, reports."""
