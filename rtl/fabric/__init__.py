"""The fabric node in hardware (PROTOCOL.md 10): its building blocks, each the twin of a module of
golden/fabric/ of the same name. The node that composes them is not built yet.
"""
