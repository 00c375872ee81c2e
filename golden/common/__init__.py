"""Pieces every golden subsystem shares: the link word and its tag, the CRCs, the bisynchronous FIFO's
transaction model.
"""
