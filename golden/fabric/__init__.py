"""The fabric of PROTOCOL.md 10, golden: nodes with link ports, topology tables, REPORTs and VERDICTs,
failover.
"""
