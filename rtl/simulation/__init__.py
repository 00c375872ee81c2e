"""Designs for simulation only, never for an FPGA: the channel with its fault controls, and the pairs
that put two ends on it inside one Verilated model.
"""
